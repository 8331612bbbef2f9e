"""Completeness and freshness of the data behind a figure (issues 14 and 28), pure: the
clock is passed in.

**Loaded.** What the store holds of a district-month (a kind, a district, a month) is a
``MonthRead``. The RTMS API answers one query in pages, and every page states the
query's ``totalCount``: a read holds the latest total count and the items of each page
loaded under it, and is complete once those pages hold at least the total count. ``svc
sync rtms`` writes a month only when every item is in: a whole read (page ``WHOLE_READ``
holding all of them), also of a month the API says is empty (``totalCount`` 0). A page
loaded under another total count starts over (the source changed, so the paging
shifted). A file without paging figures (the RTMS web CSV export, svc's samples, the
demo set) is a whole read of every district-month it holds records of (page
``WHOLE_FILE``): the export is the whole search result; a month with no deal inside an
export's range cannot be seen in it and stays unloaded. Paging figures outrank such a
file: a file without them never replaces a read with them, and a page or a partial sync
replaces its read. A sync that read a month partially marks it incomplete unless the
store holds a complete read with paging figures. A district-month is **loaded** when
its read is complete; one never recorded is not loaded.

The kind of a district-month is the sync kind of its records' types (``kinds_of``:
``RtmsDataset.carries``); records of types no RTMS dataset carries (commercial leases,
from svc's samples or the demo) have ``OTHER_KIND`` (``load_kinds``).

**Complete.** A figure's month is loaded completely when, for every kind of its types,
the district (or one of its renumbering aliases) has a complete read of it and none of
its codes has an incomplete one (``loaded_months``). A figure is complete when every
month of its period is.

**Provisional.** A deal must be reported within 30 days of its contract and is published
the next day (``REPORT_DAYS`` + ``PUBLISH_DAYS``), so deals of a month keep arriving until
``LAG_DAYS`` days after its last day: until then (inclusive) the month is provisional.
Cancellations arrive later still; a provisional figure may also lose deals, and ``svc sync
rtms`` re-reads recent months to apply them. In practice the current month and the one
before are provisional (the month before that too during the first days of a month).
"""

from __future__ import annotations

import datetime
import functools
from collections import Counter
from collections.abc import Collection, Iterable, Mapping

import attrs

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.periods import parse_month, parse_quarter
from svc_core.sources import ParseResult
from svc_core.sources.datasets import RtmsDataset

REPORT_DAYS = 30
PUBLISH_DAYS = 1
LAG_DAYS = REPORT_DAYS + PUBLISH_DAYS
"""Days after a month's last day during which its deals may still be published."""
WHOLE_READ = 0
"""The page number of a whole read (every item of the total in one write)."""
WHOLE_FILE = -1
"""The page number of a whole read from a file without paging figures: the items the
file held of the month (also its ``total_count``, as nothing else states one)."""
OTHER_KIND = "other"
"""The kind of district-months of types no RTMS dataset carries (commercial leases):
only svc's samples and the demo set load them."""

MonthKey = tuple[str, str, str]
"""(kind, sigungu code, month ``YYYY-MM``) of a district-month: a dataset's
``sync_name``, or ``OTHER_KIND``."""


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

    @property
    def by_file(self) -> bool:
        """True for a read from a file without paging figures (``file_read``)."""
        return WHOLE_FILE in self.pages


def add_page(read: MonthRead | None, *, total_count: int, page_no: int, items: int) -> MonthRead:
    """``read`` after loading page ``page_no`` holding ``items`` of ``total_count`` items
    (a page loaded again replaces its earlier count; a read from a file without paging
    figures is replaced)."""
    if read is None or read.by_file or read.total_count != total_count:
        return MonthRead(total_count=total_count, pages={page_no: items})
    return MonthRead(total_count=total_count, pages={**read.pages, page_no: items})


def whole_read(total_count: int) -> MonthRead:
    """A month read completely (``svc sync rtms``): every item in one write."""
    return MonthRead(total_count=total_count, pages={WHOLE_READ: total_count})


def file_read(items: int) -> MonthRead:
    """A month read whole from a file without paging figures holding ``items`` records
    of it (a web CSV export, svc's samples, the demo set)."""
    return MonthRead(total_count=items, pages={WHOLE_FILE: items})


def partial_read(read: MonthRead | None, total_count: int | None) -> MonthRead:
    """``read`` after a sync read the month incompletely (nothing written): a complete
    read with paging figures stays complete; otherwise the month is incomplete under the
    total it learnt (at least 1: a month the source says is empty is read whole at
    once)."""
    if read is not None and read.by_file:
        read = None  # the source says how many items there are; a file could not
    if read is not None and read.complete:
        return read
    if read is not None and (total_count is None or total_count == read.total_count):
        return MonthRead(total_count=read.total_count, pages=read.pages)
    return MonthRead(total_count=total_count, pages={})


def file_months(kind: RtmsDataset, result: ParseResult) -> list[MonthKey]:
    """The district-months (of dataset ``kind``) of a file's records, kept or
    retracted (their natural keys start ``rtms:<reader kind>:<code>:<month>:``)."""
    name = kind.sync_name
    found = {(name, t.sigungu_code, t.period_month) for t in result.transactions}
    for key in result.retracted_keys:
        parts = key.split(":")
        if len(parts) > 3 and parts[0] == "rtms":
            found.add((name, parts[2], parts[3]))
    return sorted(found)


def held_counts(result: ParseResult) -> Counter[MonthKey]:
    """Records per district-month of a file, kept, excluded or retracted: each record
    under the kind of its types (``load_kinds``), a retracted RTMS key under the sync
    kind of its reader."""
    counts: Counter[MonthKey] = Counter()
    records = [*result.transactions, *(e.record for e in result.excluded)]
    for t in records:
        for kind in load_kinds(t.property_type, t.transaction_type):
            counts[(kind, t.sigungu_code, t.period_month)] += 1
    for key in result.retracted_keys:
        parts = key.split(":")
        dataset = RtmsDataset.of_reader(parts[1]) if len(parts) > 3 else None
        if parts[0] == "rtms" and dataset is not None:
            counts[(dataset.sync_name, parts[2], parts[3])] += 1
    return counts


def after_whole_file(
    counts: Mapping[MonthKey, int], stored: Mapping[MonthKey, MonthRead]
) -> dict[MonthKey, MonthRead]:
    """The reads a file without paging figures holding ``counts`` records of each
    district-month writes over ``stored``: a whole read of each month, except where a
    read with paging figures is recorded (it is left as it is)."""
    return {
        key: file_read(n)
        for key, n in counts.items()
        if (old := stored.get(key)) is None or old.by_file
    }


def after_file(
    kind: RtmsDataset | None, result: ParseResult, stored: Mapping[MonthKey, MonthRead]
) -> dict[MonthKey, MonthRead]:
    """The reads of the district-months a file holds once it is loaded over ``stored``:
    its page of each (``kind``, its dataset, names them; nothing when None) when it
    states a total count, else a whole read of each (``after_whole_file``)."""
    report = result.report
    if report.total_count is None:
        return after_whole_file(held_counts(result), stored)
    if kind is None:
        return {}
    page_no = report.page_no if report.page_no is not None else 1
    return {
        key: add_page(
            stored.get(key), total_count=report.total_count, page_no=page_no, items=report.read
        )
        for key in file_months(kind, result)
    }


def file_keys(kind: RtmsDataset | None, result: ParseResult) -> list[MonthKey]:
    """The district-months ``after_file`` writes for a file (sorted)."""
    if result.report.total_count is None:
        return sorted(held_counts(result))
    return [] if kind is None else file_months(kind, result)


def reads_of(
    loads: Iterable[tuple[RtmsDataset | str, ParseResult]],
) -> dict[MonthKey, MonthRead]:
    """The reads a store records after loading files in order, each given with its
    dataset or reader kind (``commercial``, ``officetel_trade``, ``officetel_rent``; any
    other name, e.g. ``samples``, for a file without paging figures)."""
    reads: dict[MonthKey, MonthRead] = {}
    for reader, result in loads:
        reads.update(after_file(RtmsDataset.of_reader(reader), result, reads))
    return reads


def incomplete_of(loads: Iterable[tuple[RtmsDataset | str, ParseResult]]) -> frozenset[MonthKey]:
    """The incomplete district-months after loading files in order (``reads_of``): what
    a store that loaded the same files records."""
    return frozenset(key for key, read in reads_of(loads).items() if not read.complete)


def loaded_of(loads: Iterable[tuple[RtmsDataset | str, ParseResult]]) -> frozenset[MonthKey]:
    """The loaded district-months (complete reads) after loading files in order
    (``reads_of``): what a store that loaded the same files counts as loaded."""
    return frozenset(key for key, read in reads_of(loads).items() if read.complete)


def kinds_of(property_type: str, transaction_type: str) -> tuple[str, ...]:
    """The sync kinds of the datasets whose records can have these types."""
    return tuple(d.sync_name for d in RtmsDataset if d.carries(property_type, transaction_type))


@functools.lru_cache(maxsize=256)
def load_kinds(property_type: str, transaction_type: str) -> tuple[str, ...]:
    """The kinds of the district-months records of these types are loaded under: their
    sync kinds, else ``OTHER_KIND``."""
    return kinds_of(property_type, transaction_type) or (OTHER_KIND,)


LOAD_KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(k for p in PROPERTY_TYPES for t in TRANSACTION_TYPES for k in load_kinds(p, t))
)
"""Every kind a district-month can have."""


def cohort_kinds(property_type: str | None, transaction_type: str | None) -> tuple[str, ...]:
    """The kinds of the type pairs a filter keeps (None: every type), in ``LOAD_KINDS``
    order."""
    wanted = {
        k
        for p in (PROPERTY_TYPES if property_type is None else (property_type,))
        for t in (TRANSACTION_TYPES if transaction_type is None else (transaction_type,))
        for k in load_kinds(p, t)
    }
    return tuple(k for k in LOAD_KINDS if k in wanted)


def label_months(label: str) -> tuple[str, ...]:
    """The months ``YYYY-MM`` of a month or quarter label."""
    if "-Q" in label:
        return tuple(m.label for m in parse_quarter(label).months())
    return (label,)


def loaded_months(
    codes: Collection[str],
    months: Iterable[str],
    kinds: Collection[str],
    *,
    loaded: Collection[MonthKey],
    incomplete: Collection[MonthKey],
) -> tuple[str, ...]:
    """The months among ``months`` loaded completely for the district ``codes`` (a code
    and its renumbering aliases) and every one of ``kinds``: each kind has a complete
    read under one of the codes, and none an incomplete one (in their order)."""
    return tuple(
        month
        for month in months
        if all(
            any((kind, code, month) in loaded for code in codes)
            and not any((kind, code, month) in incomplete for code in codes)
            for kind in kinds
        )
    )


def any_loaded(
    codes: Iterable[str],
    months: Iterable[str],
    kinds: Iterable[str],
    loaded: Collection[MonthKey],
) -> bool:
    """True when one of the district-months of ``codes`` × ``months`` × ``kinds`` is
    loaded: False says nothing at all was loaded for them."""
    if not loaded:
        return False
    wanted = list(months)
    kinds = list(kinds)
    return any(
        (kind, code, month) in loaded for code in codes for month in wanted for kind in kinds
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
