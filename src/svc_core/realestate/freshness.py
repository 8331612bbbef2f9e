"""Completeness and freshness of the data behind a figure (issue 14), pure: the clock is
passed in.

**Complete.** The RTMS API answers one query (a kind, a district, a month) in pages, and
every page states the query's ``totalCount``. What the store holds of a (kind, district,
month) is a ``MonthRead``: the latest total count and the items of each page loaded under
it. It is complete once those pages hold at least the total count. ``svc sync rtms``
writes a month only when every item is in: a whole read (page 0 holding all of them). A
page loaded under another total count starts over (the source changed, so the paging
shifted). A sync that read a month partially marks it incomplete unless the store holds
a complete read of it. A district-month never recorded (loaded from a file without paging
figures: the web site's CSV export, svc's samples) counts as complete: nothing says
otherwise. A figure is complete when none of the district-months it is built from (its
districts, the months of its period, the kinds that carry its property and transaction
type: ``kinds_of``) is incomplete.

**Provisional.** A deal must be reported within 30 days of its contract and is published
the next day (``REPORT_DAYS`` + ``PUBLISH_DAYS``), so deals of a month keep arriving until
``LAG_DAYS`` days after its last day: until then (inclusive) the month is provisional.
Cancellations arrive later still; a provisional figure may also lose deals, and ``svc sync
rtms`` re-reads recent months to apply them. In practice the current month and the one
before are provisional (the month before that too during the first days of a month).
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable, Mapping

import attrs

from svc_core.periods import parse_month, parse_quarter
from svc_core.sources import ParseResult
from svc_core.sync import COHORTS, PARSE_KINDS

REPORT_DAYS = 30
PUBLISH_DAYS = 1
LAG_DAYS = REPORT_DAYS + PUBLISH_DAYS
"""Days after a month's last day during which its deals may still be published."""
WHOLE_READ = 0
"""The page number of a whole read (every item of the total in one write)."""

MonthKey = tuple[str, str, str]
"""(sync kind, sigungu code, month ``YYYY-MM``) of a district-month."""
SYNC_KINDS = {reader: kind for kind, reader in PARSE_KINDS.items()}
"""The sync kind of each RTMS reader kind (``svc_core.sources.rtms.KINDS``)."""


@attrs.frozen(kw_only=True)
class MonthRead:
    """What the store holds of one district-month: the latest ``total_count`` the source
    stated (None when a read failed before learning it) and the items of each page
    loaded under that count (page number → items)."""

    total_count: int | None
    pages: Mapping[int, int] = attrs.field(factory=dict)

    @property
    def items(self) -> int:
        return sum(self.pages.values())

    @property
    def complete(self) -> bool:
        return self.total_count is not None and self.items >= self.total_count


def add_page(read: MonthRead | None, *, total_count: int, page_no: int, items: int) -> MonthRead:
    """``read`` after loading page ``page_no`` holding ``items`` of ``total_count`` items
    (a page loaded again replaces its earlier count)."""
    if read is None or read.total_count != total_count:
        return MonthRead(total_count=total_count, pages={page_no: items})
    return MonthRead(total_count=total_count, pages={**read.pages, page_no: items})


def whole_read(total_count: int) -> MonthRead:
    """A month read completely (``svc sync rtms``): every item in one write."""
    return MonthRead(total_count=total_count, pages={WHOLE_READ: total_count})


def partial_read(read: MonthRead | None, total_count: int | None) -> MonthRead:
    """``read`` after a sync read the month incompletely (nothing written): a complete
    read stays complete; otherwise the month is incomplete under the total it learnt
    (at least 1: a month the source says is empty is read whole at once)."""
    if read is not None and read.complete:
        return read
    if read is not None and (total_count is None or total_count == read.total_count):
        return MonthRead(total_count=read.total_count, pages=read.pages)
    return MonthRead(total_count=total_count, pages={})


def file_months(kind: str, result: ParseResult) -> list[MonthKey]:
    """The district-months (of sync kind ``kind``) of a file's records, kept or
    retracted (their natural keys start ``rtms:<reader kind>:<code>:<month>:``)."""
    found = {(kind, t.sigungu_code, t.period_month) for t in result.transactions}
    for key in result.retracted_keys:
        parts = key.split(":")
        if len(parts) > 3 and parts[0] == "rtms":
            found.add((kind, parts[2], parts[3]))
    return sorted(found)


def after_file(
    kind: str, result: ParseResult, stored: Mapping[MonthKey, MonthRead]
) -> dict[MonthKey, MonthRead]:
    """The reads of the district-months a file of sync kind ``kind`` holds once it is
    loaded over ``stored``; empty when the file states no total count (a CSV export,
    svc's samples: nothing says they are incomplete)."""
    report = result.report
    if report.total_count is None:
        return {}
    page_no = report.page_no if report.page_no is not None else 1
    return {
        key: add_page(
            stored.get(key), total_count=report.total_count, page_no=page_no, items=report.read
        )
        for key in file_months(kind, result)
    }


def incomplete_of(loads: Iterable[tuple[str, ParseResult]]) -> frozenset[MonthKey]:
    """The incomplete district-months after loading RTMS files in order, each given with
    its reader kind (``commercial``, ``officetel_trade``, ``officetel_rent``): what a
    store that loaded the same files records."""
    reads: dict[MonthKey, MonthRead] = {}
    for reader, result in loads:
        kind = SYNC_KINDS.get(reader)
        if kind is not None:
            reads.update(after_file(kind, result, reads))
    return frozenset(key for key, read in reads.items() if not read.complete)


def kinds_of(property_type: str, transaction_type: str) -> tuple[str, ...]:
    """The sync kinds whose records can have these types (``svc_core.sync.COHORTS``)."""
    return tuple(
        kind
        for kind, (ptypes, ttypes) in COHORTS.items()
        if property_type in ptypes and transaction_type in ttypes
    )


def label_months(label: str) -> tuple[str, ...]:
    """The months ``YYYY-MM`` of a month or quarter label."""
    if "-Q" in label:
        return tuple(m.label for m in parse_quarter(label).months())
    return (label,)


def months_complete(
    codes: Iterable[str],
    months: Iterable[str],
    property_type: str,
    transaction_type: str,
    incomplete: Collection[MonthKey],
) -> bool:
    """True when none of the district-months of ``codes`` × ``months`` × the kinds of
    the types is in ``incomplete``."""
    if not incomplete:
        return True
    kinds = kinds_of(property_type, transaction_type)
    wanted = list(months)
    return not any(
        (kind, code, month) in incomplete for code in codes for month in wanted for kind in kinds
    )


def provisional_until(month: str) -> datetime.date:
    """The last day on which deals of ``month`` may still be published."""
    return parse_month(month).last_day + datetime.timedelta(days=LAG_DAYS)


def is_provisional(month: str, today: datetime.date) -> bool:
    """True while deals of ``month`` may still be reported (see the module docstring)."""
    return today <= provisional_until(month)


def any_provisional(months: Iterable[str], today: datetime.date) -> bool:
    """True when one of ``months`` is provisional on ``today``."""
    return any(is_provisional(month, today) for month in months)


def period_months(period_of: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Period label → its months, inverting a month → period mapping (oldest first)."""
    out: dict[str, list[str]] = {}
    for month in sorted(period_of):
        out.setdefault(period_of[month], []).append(month)
    return {label: tuple(months) for label, months in out.items()}
