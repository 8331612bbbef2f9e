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
counts calls so a run never exceeds its budget. ``classify_gateway`` sorts gateway
refusals into a wrong key (stop at once), the daily limit (stop, resume tomorrow) and
passing trouble (retry).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence

import attrs

from svc_core.datasets import RtmsDataset
from svc_core.periods import Month

KINDS: tuple[str, ...] = tuple(d.sync_name for d in RtmsDataset)
"""Sync kinds, as ``--kinds`` names them (``RtmsDataset.sync_name``)."""
SERVICES: dict[str, str] = {d.sync_name: d.operation for d in RtmsDataset}
"""The API operation of each kind, under the base URL."""
INGEST_KINDS: dict[str, str] = {d.sync_name: d.ingest_kind for d in RtmsDataset}
"""The ``svc ingest`` kind the same records load as."""
PARSE_KINDS: dict[str, str] = {d.sync_name: d.parse_kind for d in RtmsDataset}
"""The ``svc_core.sources.rtms`` kind of each sync kind."""
STATUSES: tuple[str, ...] = ("complete", "partial", "failed")
COHORTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    d.sync_name: (d.property_types, d.transaction_types) for d in RtmsDataset
}
"""The property and transaction types a sync kind's records can have."""

DEFAULT_BUDGET = 9_000
"""Calls a run may make by default: below the 10,000 a day of a development key."""
DEFAULT_REFRESH_MONTHS = 3
DEFAULT_PAGE_ROWS = 1_000

KEY_REASONS = frozenset({"12", "20", "30", "31", "32", "33"})
"""Gateway reasons no retry can fix: no such service, access denied, key not registered,
key expired, unregistered IP, unsigned call."""
LIMIT_REASONS = frozenset({"22"})
"""``LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR``: the key's daily limit."""


@attrs.frozen(kw_only=True)
class MonthState:
    """What the store holds for one (kind, sigungu, month)."""

    kind: str
    sigungu_code: str
    month: Month
    status: str
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

    kind: str
    sigungu_code: str
    month: Month
    reason: str
    calls: int


StateKey = tuple[str, str, str]
"""(kind, sigungu_code, month label)."""


def pages_for(total_count: int, page_rows: int) -> int:
    """Pages of ``page_rows`` items holding ``total_count`` items (at least one call)."""
    if page_rows < 1:
        raise ValueError("page_rows must be positive")
    return max(1, -(-max(total_count, 0) // page_rows))


def months(first: Month, last: Month) -> tuple[Month, ...]:
    """``first`` to ``last`` inclusive (empty when ``last`` is earlier)."""
    return tuple(Month.from_index(i) for i in range(first.index, last.index + 1))


def in_refresh_window(month: Month, current: Month, refresh_months: int) -> bool:
    """Whether ``month`` is among the latest ``refresh_months`` months up to ``current``
    (months after ``current`` count as inside)."""
    return month.index > current.index - refresh_months


def plan(
    kinds: Sequence[str],
    districts: Sequence[str],
    first: Month,
    last: Month,
    states: Mapping[StateKey, MonthState],
    *,
    current: Month,
    refresh_months: int = DEFAULT_REFRESH_MONTHS,
    page_rows: int = DEFAULT_PAGE_ROWS,
) -> tuple[Task, ...]:
    """The months to read, oldest first, then by district and kind.

    Skipped: complete months before the refresh window. Read: everything else.
    """
    if refresh_months < 0:
        raise ValueError("refresh_months must not be negative")
    tasks: list[Task] = []
    for month in months(first, last):
        for code in districts:
            for kind in kinds:
                state = states.get((kind, code, month.label))
                if state is None:
                    reason = "new"
                elif state.status != "complete":
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


def classify_gateway(reason_code: str, auth_message: str = "") -> str:
    """``key`` (stop at once: nothing a retry can fix), ``limit`` (the daily limit:
    stop, resume tomorrow) or ``retry`` (timeouts and other passing trouble)."""
    code = reason_code.strip().lstrip("0") or "0"
    message = auth_message.upper()
    if code in LIMIT_REASONS or "LIMITED_NUMBER_OF_SERVICE_REQUESTS" in message:
        return "limit"
    if code in KEY_REASONS or any(
        word in message
        for word in ("SERVICE_KEY_IS_NOT_REGISTERED", "DEADLINE_HAS_EXPIRED", "ACCESS_DENIED")
    ):
        return "key"
    return "retry"


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


def month_prefix(kind: str, sigungu_code: str, month: Month) -> str:
    """The natural-key prefix of a month's records from the API (``svc_core.sources.rtms``)."""
    return f"rtms:{PARSE_KINDS[kind]}:{sigungu_code}:{month.label}:"


@attrs.frozen(kw_only=True)
class DistrictStatus:
    """The months of one kind and district by state, and when it was last synced."""

    kind: str
    sigungu_code: str
    complete: tuple[str, ...]
    partial: tuple[str, ...]
    failed: tuple[str, ...]
    missing: tuple[str, ...]
    last_synced_at: float | None


def district_status(
    states: Iterable[MonthState],
    *,
    kinds: Sequence[str] = (),
    districts: Sequence[str] = (),
    first: Month | None = None,
    last: Month | None = None,
) -> tuple[DistrictStatus, ...]:
    """Per kind and district (those of ``states``, plus every ``kinds`` × ``districts``
    pair when both are given): months complete, partial and failed inside
    ``first``..``last``, and missing ones: months of that range without a state. The
    range defaults to the earliest and latest month recorded for the pair."""
    by_pair: dict[tuple[str, str], list[MonthState]] = {}
    for state in states:
        if first is not None and state.month < first:
            continue
        if last is not None and state.month > last:
            continue
        by_pair.setdefault((state.kind, state.sigungu_code), []).append(state)
    if kinds and districts:
        for kind in kinds:
            for code in districts:
                by_pair.setdefault((kind, code), [])
    out: list[DistrictStatus] = []
    for (kind, code), found in sorted(by_pair.items()):
        recorded = {s.month: s for s in found}
        low = first if first is not None else min(recorded, default=None)
        high = last if last is not None else max(recorded, default=None)
        span = months(low, high) if low is not None and high is not None else ()
        labels: dict[str, list[str]] = {status: [] for status in STATUSES}
        for month in sorted(recorded):
            labels[recorded[month].status].append(month.label)
        times = [s.attempted_at for s in found if s.attempted_at is not None]
        out.append(
            DistrictStatus(
                kind=kind,
                sigungu_code=code,
                complete=tuple(labels["complete"]),
                partial=tuple(labels["partial"]),
                failed=tuple(labels["failed"]),
                missing=tuple(m.label for m in span if m not in recorded),
                last_synced_at=max(times, default=None),
            )
        )
    return tuple(out)
