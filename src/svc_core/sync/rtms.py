"""Planning a sync of the MOLIT RTMS open API, pure: what to read, what it costs, what
changed.

A sync reads months × districts × kinds. Each (kind, sigungu, month) has a state
(``MonthState``): ``complete`` (every item of ``totalCount`` read and written),
``partial`` (read incompletely, nothing written) or ``failed`` (not read). ``plan``
decides which to read: every month without a complete read, and the complete months of
the refresh window (the latest ``refresh_months`` months up to the current one), because
deals are reported up to 30 days late and cancellations later still. Older complete
months are skipped, so a second run resumes where the first stopped.

The calls a plan costs are counted in pages (``pages_for``): a month whose size is known
from an earlier read costs that many pages; an unknown one at least one. ``Budget``
counts calls so a run never exceeds its budget. ``classify_gateway`` sorts the result
codes of refusals, in the gateway's form or in a normal answer's header, by what a retry
can fix (``VERDICTS``). ``Reach`` counts consecutive calls that could not connect, so a
run with the network down stops after ``CONNECT_FAILURE_LIMIT`` of them instead of
spending every month's retries.

Long because the plan, its budget, the result codes of data.go.kr with what each means
for a run (three forms of the per-second limit among them) and the status report are
one vocabulary, each table beside the rule that reads it. Pacing is ``svc_core.sync.pace``.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence

import attrs

from svc_core.periods import Month
from svc_core.sources.datasets import RtmsDataset


class ReadStatus(enum.StrEnum):
    """How completely a sync read a month (also an R-ONE table, ``svc_core.sync.rone``)."""

    COMPLETE = "complete"
    """Every item of ``totalCount`` read and written."""
    PARTIAL = "partial"
    """Read incompletely; nothing written."""
    FAILED = "failed"
    """Not read."""


DEFAULT_BUDGET = 9_000
"""Calls a run may make by default: below the 10,000 a day of a development key."""
DEFAULT_REFRESH_MONTHS = 3
DEFAULT_PAGE_ROWS = 1_000

KEY_REASONS = frozenset({"12", "20", "30", "31", "32", "33"})
"""Codes no retry can fix because of the key: no such service, access denied, key not
registered, key expired, unregistered IP, unsigned call."""
LIMIT_REASONS = frozenset({"22"})
"""``LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR``: the key's daily limit."""
PACE_REASONS = frozenset({"23", "34"})
"""``LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR`` and
``TOO_MANY_REQUEST_ERROR``: too many calls this second (official-apis.md §2.3, §2.4)."""
SUSPENDED_REASONS = frozenset({"21"})
"""``TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR``: the key is disabled for a while."""
PER_SECOND_MARKERS: tuple[str, ...] = ("PER_SECOND", "초당")
"""Words of a per-second refusal, in ``errMsg`` or ``returnAuthMsg``, whatever its code:
data.go.kr sends it as code 23, as code 22 (the daily limit's code) with a
``…PER_SECOND…`` message, and as code 99 with the marker in ``errMsg`` only and Korean
(``초당 서비스 요청제한 횟수 초과``) in ``returnAuthMsg`` (official-apis.md §2.4)."""
REQUEST_REASONS = frozenset({"10", "11"})
"""``INVALID_REQUEST_PARAMETER_ERROR``, ``NO_MANDATORY_REQUEST_PARAMETERS_ERROR``: the call
itself is wrong, and every call of a run is built the same way."""
RETRY_REASONS = frozenset({"1", "2", "4", "5"})
"""Server trouble a later call can get past: application error, database error, HTTP
error, service timeout."""
VERDICTS: tuple[str, ...] = ("key", "limit", "pace", "suspended", "request", "retry", "fail")
"""What a refusal means for a run: ``key`` stop at once (nothing a retry can fix),
``limit`` stop and resume after the daily reset, ``pace`` too many calls this second
(pause, ask again, call more slowly), ``suspended`` the key is temporarily disabled (back
off a bounded number of times, then stop the run), ``request`` stop at once (svc's
request is wrong), ``retry`` ask again, ``fail`` give up this month without retrying (any
other code, ``99`` unknown error and ``03`` no data included: the next run reads it
again)."""
KEY_HINTS: dict[str, str] = {
    "12": "the service does not exist at this address (check SVC_RTMS_BASE_URL)",
    "20": "the key is not approved for this service: request access (활용신청) on data.go.kr",
    "30": "the key is not registered (a new key can take an hour to be known)",
    "31": "the key has expired: extend the approval on data.go.kr",
    "32": "this machine's IP address is not registered for the key",
}
"""A line of advice per key code, for the operator."""

_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("suspended", ("TEMPORARILY_DISABLE",)),
    ("pace", ("TOO_MANY_REQUEST",)),
    ("limit", ("LIMITED_NUMBER_OF_SERVICE_REQUESTS",)),
    (
        "key",
        (
            "SERVICE_KEY_IS_NOT_REGISTERED",
            "DEADLINE_HAS_EXPIRED",
            "ACCESS_DENIED",
            "UNREGISTERED_IP",
            "UNSIGNED_CALL",
            "NO_OPENAPI_SERVICE",
        ),
    ),
    ("request", ("INVALID_REQUEST_PARAMETER", "NO_MANDATORY_REQUEST_PARAMETERS")),
    ("retry", ("APPLICATION_ERROR", "DB_ERROR", "HTTP_ERROR", "TIMEOUT", "TIME_OUT")),
)


def bare_code(code: str) -> str:
    """A result code without its leading zeros (``"05"`` and ``"5"`` are one code)."""
    return code.strip().lstrip("0") or "0"


@attrs.frozen(kw_only=True)
class MonthState:
    """What the store holds for one (kind, sigungu, month)."""

    kind: RtmsDataset
    sigungu_code: str
    month: Month
    status: ReadStatus = attrs.field(converter=ReadStatus)
    total_count: int | None = None
    pages: int = 0
    digest: str | None = None
    fetched_at: float | None = None
    attempted_at: float | None = None


@attrs.frozen(kw_only=True)
class Task:
    """One month of one district and kind to read; ``reason`` is ``new``, ``retry``
    (partial or failed before) or ``refresh`` (complete, inside the refresh window);
    ``calls`` the calls it is expected to cost."""

    kind: RtmsDataset
    sigungu_code: str
    month: Month
    reason: str
    calls: int


StateKey = tuple[RtmsDataset, str, str]
"""(kind, sigungu_code, month label)."""


def pages_for(total_count: int, page_rows: int) -> int:
    """Pages of ``page_rows`` items holding ``total_count`` items (at least one call)."""
    if page_rows < 1:
        raise ValueError("page_rows must be positive")
    return max(1, -(-max(total_count, 0) // page_rows))


MAX_TOTAL_COUNT = 100_000
"""The most items a month of one district and kind is taken to hold (a real one holds a
few hundred): a larger ``totalCount`` is an upstream fault, not pages to pay for."""


def paging_fault(
    asked: int,
    answered: int | None,
    items: Sequence[object],
    earlier: Sequence[Sequence[object]],
) -> str | None:
    """Why page ``asked`` of a month's read cannot be trusted, or None.

    ``answered`` is the page number the answer states (None when it states none, as
    live answers sometimes do): another number than the one asked means the upstream
    ignored ``pageNo``. ``items`` are the page's items, ``earlier`` those of the pages
    read before it: a page of two or more items that repeats an earlier page item for
    item is the same page served again, not new deals. Identical deals within a month
    exist (each kept with its ordinal), so pages of one item are never compared.
    """
    if answered is not None and answered != asked:
        return f"page {asked} was asked and the answer is page {answered} (pageNo ignored?)"
    if len(items) < 2:
        return None
    for number, page in enumerate(earlier, start=1):
        if len(page) == len(items) and list(page) == list(items):
            return f"page {asked} repeats page {number} item for item (pageNo ignored?)"
    return None


def months(first: Month, last: Month) -> tuple[Month, ...]:
    """``first`` to ``last`` inclusive (empty when ``last`` is earlier)."""
    return tuple(Month.from_index(i) for i in range(first.index, last.index + 1))


def in_refresh_window(month: Month, current: Month, refresh_months: int) -> bool:
    """Whether ``month`` is among the latest ``refresh_months`` months up to ``current``
    (months after ``current`` count as inside)."""
    return month.index > current.index - refresh_months


def plan(
    kinds: Sequence[RtmsDataset],
    districts: Sequence[str],
    first: Month,
    last: Month,
    states: Mapping[StateKey, MonthState],
    *,
    current: Month,
    refresh_months: int = DEFAULT_REFRESH_MONTHS,
    page_rows: int = DEFAULT_PAGE_ROWS,
    loaded_whole: Collection[StateKey] = (),
) -> tuple[Task, ...]:
    """The months to read, oldest first, then by district and kind.

    Skipped: complete months before the refresh window, and months no sync read that
    ``svc ingest`` loaded whole from API files (``loaded_whole``: their paging said every
    item was there). Read: everything else.
    """
    if refresh_months < 0:
        raise ValueError("refresh_months must not be negative")
    tasks: list[Task] = []
    for month in months(first, last):
        for code in districts:
            for kind in kinds:
                state = states.get((kind, code, month.label))
                if state is None and (kind, code, month.label) in loaded_whole:
                    if not in_refresh_window(month, current, refresh_months):
                        continue
                    reason = "refresh"
                elif state is None:
                    reason = "new"
                elif state.status is not ReadStatus.COMPLETE:
                    reason = "retry"
                elif in_refresh_window(month, current, refresh_months):
                    reason = "refresh"
                else:
                    continue
                known = state.total_count if state is not None else None
                calls = pages_for(known, page_rows) if known is not None else 1
                tasks.append(
                    Task(kind=kind, sigungu_code=code, month=month, reason=reason, calls=calls)
                )
    return tuple(tasks)


def planned_calls(tasks: Iterable[Task]) -> int:
    """The calls a plan is expected to cost (a month of unknown size counts one)."""
    return sum(t.calls for t in tasks)


@attrs.frozen
class Budget:
    """Calls allowed (``limit``) and made (``used``); never lets ``used`` pass ``limit``."""

    limit: int
    used: int = 0

    @property
    def left(self) -> int:
        return max(self.limit - self.used, 0)

    def allows(self, calls: int = 1) -> bool:
        return calls <= self.left

    def spend(self, calls: int = 1) -> Budget:
        """The budget after ``calls`` more; ValueError when they do not fit."""
        if not self.allows(calls):
            raise ValueError(f"{calls} call(s) do not fit in the {self.left} left")
        return Budget(self.limit, self.used + calls)


CONNECT_FAILURE_LIMIT = 3
"""Consecutive calls that could not connect (refused, unknown host, connect timeout)
after which a run stops: the API is unreachable, and every further month would only
spend its retries and its back-off."""


@attrs.frozen
class Reach:
    """Consecutive calls of a run that could not connect (``failures``). Any answer at
    all, an HTTP error or a gateway refusal included, proves the API reachable and
    resets the count; ``unreachable`` once ``limit`` calls in a row could not connect."""

    limit: int = attrs.field(default=CONNECT_FAILURE_LIMIT)
    failures: int = 0

    @limit.validator
    def _positive(self, _: object, value: int) -> None:
        if value < 1:
            raise ValueError("limit must be at least 1")

    def after(self, connected: bool) -> Reach:
        """After a call: ``connected`` when it got an answer, whatever it said (a read
        timeout after connecting counts as one), False when it could not connect."""
        return Reach(self.limit, 0 if connected else self.failures + 1)

    @property
    def unreachable(self) -> bool:
        return self.failures >= self.limit


def classify_gateway(reason_code: str, message: str = "", error_message: str = "") -> str:
    """The verdict (``VERDICTS``) on a refusal with result code ``reason_code`` (the
    gateway's ``returnReasonCode`` or a header's ``resultCode``), ``message``
    (``returnAuthMsg`` or ``resultMsg``) and ``error_message`` (the gateway's ``errMsg``).

    The messages are read before the code, since the code alone misleads: a per-second
    refusal (``PER_SECOND_MARKERS`` in either message) is ``pace`` whatever its code (22 is
    also the daily limit's, 99 "unknown"). Then by the code when it is known, then by the
    words of the messages, else ``fail``."""
    text = f"{message} {error_message}".upper()
    if any(marker in text for marker in PER_SECOND_MARKERS):
        return "pace"
    code = bare_code(reason_code)
    for verdict, codes in (
        ("limit", LIMIT_REASONS),
        ("pace", PACE_REASONS),
        ("suspended", SUSPENDED_REASONS),
        ("key", KEY_REASONS),
        ("request", REQUEST_REASONS),
        ("retry", RETRY_REASONS),
    ):
        if code in codes:
            return verdict
    for verdict, words in _WORDS:
        if any(word in text for word in words):
            return verdict
    return "fail"


def month_digest(keys: Iterable[str], retracted: Iterable[str]) -> str:
    """A digest of what a read of a month holds: its kept and its cancelled records'
    natural keys (order does not matter). Equal digests: nothing changed."""
    text = "\n".join(sorted(keys)) + "\n--\n" + "\n".join(sorted(retracted))
    return hashlib.sha256(text.encode()).hexdigest()


def gone_keys(stored: Collection[str], read: Collection[str]) -> tuple[str, ...]:
    """Stored records of a month that a complete read of it no longer holds: deals
    withdrawn from the source (cancelled ones are also in the read's retracted keys)."""
    present = set(read)
    return tuple(sorted(k for k in stored if k not in present))


def month_prefix(kind: RtmsDataset, sigungu_code: str, month: Month) -> str:
    """The natural-key prefix of a month's records from the API (``svc_core.sources.rtms``)."""
    return f"rtms:{kind.parse_kind}:{sigungu_code}:{month.label}:"


@attrs.frozen(kw_only=True)
class IngestedMonth:
    """A month of one kind and district holding records that ``svc ingest`` loaded:
    the files they came from, and whether the store knows it holds every item of the
    month (``complete``: True or False from the files' paging, None when the files say
    nothing, as a web CSV export)."""

    kind: RtmsDataset
    sigungu_code: str
    month: Month
    sources: tuple[str, ...]
    complete: bool | None = None


@attrs.frozen(kw_only=True)
class DistrictStatus:
    """The months of one kind and district by state, the months loaded by ``svc ingest``
    (``ingested``), and when it was last synced."""

    kind: RtmsDataset
    sigungu_code: str
    complete: tuple[str, ...]
    partial: tuple[str, ...]
    failed: tuple[str, ...]
    missing: tuple[str, ...]
    last_synced_at: float | None
    ingested: tuple[IngestedMonth, ...] = ()


def district_status(
    states: Iterable[MonthState],
    *,
    kinds: Sequence[RtmsDataset] = (),
    districts: Sequence[str] = (),
    first: Month | None = None,
    last: Month | None = None,
    ingested: Iterable[IngestedMonth] = (),
) -> tuple[DistrictStatus, ...]:
    """Per kind and district (those of ``states`` and ``ingested``, plus every ``kinds`` ×
    ``districts`` pair when both are given): months complete, partial and failed inside
    ``first``..``last``, months loaded by ``svc ingest``, and missing ones: months of
    that range with neither a state nor ingested records. The range defaults to the
    earliest and latest month recorded or ingested for the pair."""

    def inside(month: Month) -> bool:
        return (first is None or month >= first) and (last is None or month <= last)

    by_pair: dict[tuple[RtmsDataset, str], list[MonthState]] = {}
    loaded: dict[tuple[RtmsDataset, str], dict[Month, IngestedMonth]] = {}
    for state in states:
        if inside(state.month):
            by_pair.setdefault((state.kind, state.sigungu_code), []).append(state)
    for item in ingested:
        if inside(item.month):
            loaded.setdefault((item.kind, item.sigungu_code), {})[item.month] = item
            by_pair.setdefault((item.kind, item.sigungu_code), [])
    if kinds and districts:
        for kind in kinds:
            for code in districts:
                by_pair.setdefault((kind, code), [])
    out: list[DistrictStatus] = []
    for (kind, code), found in sorted(by_pair.items(), key=lambda p: (p[0][0].sync_name, p[0][1])):
        recorded = {s.month: s for s in found}
        files = loaded.get((kind, code), {})
        known = [*recorded, *files]
        low = first if first is not None else min(known, default=None)
        high = last if last is not None else max(known, default=None)
        span = months(low, high) if low is not None and high is not None else ()
        labels: dict[ReadStatus, list[str]] = {status: [] for status in ReadStatus}
        for month in sorted(recorded):
            labels[recorded[month].status].append(month.label)
        times = [s.attempted_at for s in found if s.attempted_at is not None]
        out.append(
            DistrictStatus(
                kind=kind,
                sigungu_code=code,
                complete=tuple(labels[ReadStatus.COMPLETE]),
                partial=tuple(labels[ReadStatus.PARTIAL]),
                failed=tuple(labels[ReadStatus.FAILED]),
                missing=tuple(m.label for m in span if m not in recorded and m not in files),
                last_synced_at=max(times, default=None),
                ingested=tuple(files[m] for m in sorted(files)),
            )
        )
    return tuple(out)
