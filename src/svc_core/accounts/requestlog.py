"""The request log: what an account's API keys called, kept for a bounded time and size.

Every ``/api/v1`` call made with a known API key (successful or refused) is one
``LoggedCall``; the log keeps an account's calls for ``RETENTION_SECONDS`` and at most
its ``MAX_ROWS_PER_ACCOUNT`` newest. The dashboard reads it filtered by key and by status
(``StatusFilter``: a class such as ``4xx`` or an exact code such as ``429``). The same
calls, when successful and counted against the quota, are counted per key and month
(``counts_per_key``), which is how the dashboard shows usage per key.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

import attrs

from svc_core.errors import InvalidParams
from svc_core.paging import OFFSET, limit_param
from svc_core.params import Param

RETENTION_SECONDS = 7 * 86400
"""How long a call stays in its account's log."""
MAX_ROWS_PER_ACCOUNT = 1000
"""The most calls an account's log keeps (the newest)."""
PATH_MAX = 512
"""Characters of the path and query kept per call (the rest is cut, marked ``…``)."""
LIST_DEFAULT = 100
STATUS_PATTERN = r"[1-5]([0-9]{2}|xx)"
_STATUS = re.compile(STATUS_PATTERN, re.ASCII)


@attrs.frozen(kw_only=True)
class StatusFilter:
    """HTTP statuses from ``low`` to ``high`` inclusive."""

    low: int
    high: int

    def __contains__(self, status: object) -> bool:
        return isinstance(status, int) and self.low <= status <= self.high


def parse_status(text: str) -> StatusFilter:
    """``2xx``/``4xx``/... (a class) or an exact three-digit status from 100 to 599."""
    if not _STATUS.fullmatch(text):
        raise InvalidParams(
            f"Query parameter 'status' must be a class such as 4xx or a code such as 429: "
            f"{text[:16]!r}.",
            hint="Use 2xx, 4xx, 5xx or an exact status like 404.",
        )
    if text.endswith("xx"):
        low = int(text[0]) * 100
        return StatusFilter(low=low, high=low + 99)
    return StatusFilter(low=int(text), high=int(text))


KEY = Param(
    name="key",
    description="Only the calls of this API key (its id).",
    pattern=r"[0-9a-fA-F-]{36}",
    message="must be an API key id (a UUID).",
    hint="Key ids are listed by GET /api/auth/me/keys.",
)
STATUS = Param(
    name="status",
    description="Only calls answered with this status: a class (2xx, 4xx, 5xx) or an "
    "exact code (429).",
    pattern=STATUS_PATTERN,
    message="must be a class such as 4xx or a code such as 429.",
    example="4xx",
)
LIMIT = limit_param(
    high=MAX_ROWS_PER_ACCOUNT, default=LIST_DEFAULT, description="How many calls, newest first."
)
LOG_PARAMS: tuple[Param, ...] = (KEY, STATUS, LIMIT, OFFSET)


@attrs.frozen(kw_only=True)
class LogQuery:
    """Which of an account's logged calls to list."""

    key_id: str | None = None
    status: StatusFilter | None = None
    limit: int = LIST_DEFAULT
    offset: int = 0


def read_query(query: Mapping[str, str]) -> LogQuery:
    """The filters of ``GET /api/auth/me/requests`` from its strict-parsed query."""
    key = KEY.read(query)
    status = STATUS.read(query)
    return LogQuery(
        key_id=str(key).lower() if key else None,
        status=parse_status(str(status)) if status else None,
        limit=int(LIMIT.read(query) or LIST_DEFAULT),
        offset=int(OFFSET.read(query) or 0),
    )


@attrs.frozen(kw_only=True)
class LoggedCall:
    """One call of an API key as the log keeps it (``at_ms``: Unix milliseconds)."""

    consumer_id: str
    key_id: str
    at_ms: int
    method: str
    path: str
    status: int
    request_id: str
    duration_ms: float
    counted: bool = False
    """The call held a unit of the month's quota (a counted route)."""
    error_code: str | None = None
    """The ``code`` of the error body a failed call was answered with."""


RawCall = tuple[str, str, int, str, str, str, int, str, float, bool, "str | None"]
"""A call as the server hands it over, cheap to make: consumer id, key id, Unix ms, the
WSGI method, path and query string (latin-1 text of the raw bytes), status, request id,
duration in ms, counted, error code. ``from_raw`` makes it a ``LoggedCall``, off the
request's path."""


def from_raw(raw: RawCall) -> LoggedCall:
    """The log line of a call handed over as ``RawCall``: the path and query decoded as
    UTF-8 (undecodable bytes replaced) and clipped (``clip_path``)."""
    consumer_id, key_id, at_ms, method, path, query, status, request_id, ms, counted, code = raw
    return LoggedCall(
        consumer_id=consumer_id,
        key_id=key_id,
        at_ms=at_ms,
        method=clip_text(method, 16),
        path=clip_path(_wsgi_text(path), _wsgi_text(query)),
        status=status,
        request_id=request_id,
        duration_ms=round(ms, 1),
        counted=counted,
        error_code=code,
    )


def _wsgi_text(text: str) -> str:
    """WSGI text (each byte one latin-1 character) as the UTF-8 it carries."""
    return text.encode("latin-1", "replace").decode("utf-8", "replace")


def clip_text(text: str, most: int) -> str:
    """``text`` as any database stores it (NUL and unpaired surrogates replaced), at most
    ``most`` characters; a cut one ends in ``…``."""
    clean = text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")
    if len(clean) <= most:
        return clean
    return clean[: most - 1] + "…"


def clip_path(path: str, query: str = "") -> str:
    """The path with its query as the log keeps it (``clip_text`` to ``PATH_MAX``)."""
    return clip_text(f"{path}?{query}" if query else path, PATH_MAX)


def month_of(at_ms: int) -> str:
    """The UTC month (``YYYY-MM``) of a Unix time in milliseconds."""
    return _month_of_day(at_ms // 86_400_000)


@functools.lru_cache(maxsize=64)
def _month_of_day(day: int) -> str:
    """``month_of`` a Unix day: worked out once a day, not per logged call."""
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m")


def oldest_kept_ms(now: float) -> int:
    """Calls logged before this Unix millisecond are past the retention time."""
    return int(now * 1000) - RETENTION_SECONDS * 1000


def counts_per_key(calls: Iterable[RawCall]) -> dict[tuple[str, str], int]:
    """Successful (2xx) counted calls per (key id, UTC month): what the quota counted."""
    return dict(Counter((c[1], month_of(c[2])) for c in calls if c[9] and 200 <= c[6] < 300))


def newest_per_account(calls: Sequence[RawCall], keep: int) -> list[RawCall]:
    """The last ``keep`` of each account's ``calls`` (in order): a batch never writes
    more lines of an account than its log keeps, however many calls it made."""
    seen: Counter[str] = Counter()
    kept = []
    for call in reversed(calls):
        seen[call[0]] += 1
        if seen[call[0]] <= keep:
            kept.append(call)
    kept.reverse()
    return kept
