"""Recording what the store holds of each district-month (``source_months``) as files,
syncs and the demo set load it, in the load's transaction; the rule is
``svc_core.realestate.freshness``.

A file of the RTMS API states its query's ``totalCount`` and its page number: each
district-month among its records (kept, or retracted as cancelled) gets the page. A file
without paging figures (a web CSV export, svc's samples) is a whole read of every
district-month it holds records of, and the demo set of every month of its districts and
kinds; neither replaces a read with paging figures. ``svc sync rtms`` records a whole
read when it writes a month (also an empty one) and a partial one when it could not.

``file_whole`` names the district-months one file reads whole on its own: those of an
RTMS API file holding every page of its query (what makes earlier rejections of them
stale, ``ingest.writer``). A file without paging figures names none there: nothing in
it says it holds a month's every record (a web CSV export's search may cover part of a
month; svc's samples are a selection).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from svc_core.periods import Month
from svc_core.realestate import freshness
from svc_core.sources import ParseResult
from svc_core.sources.datasets import RtmsDataset
from svc_server.store.loading import Writer


def record_file(w: Writer, ingest_kind: str, result: ParseResult, *, now: float) -> None:
    """Record what a file of ``ingest_kind`` holds of each of its district-months: its
    page when it states a total count, else a whole read of each."""
    kind = RtmsDataset.of_ingest_kind(ingest_kind)
    keys = freshness.file_keys(kind, result)
    if keys:
        stored = w.realestate.month_reads(w.tx, keys)
        w.realestate.save_month_reads(w.tx, freshness.after_file(kind, result, stored), now=now)


def file_whole(ingest_kind: str, result: ParseResult) -> list[freshness.MonthKey]:
    """The district-months a file of ``ingest_kind`` reads whole by itself: a page
    stating a total count that it holds all of (as ``after_file`` records it over no
    earlier read). None for a file without paging figures."""
    kind = RtmsDataset.of_ingest_kind(ingest_kind)
    if kind is None or result.report.total_count is None:
        return []
    reads = freshness.after_file(kind, result, {})
    return sorted(key for key, read in reads.items() if read.complete)


def record_whole(
    w: Writer,
    keys: Iterable[freshness.MonthKey],
    result: ParseResult | None,
    *,
    now: float,
) -> None:
    """Record ``keys`` as read whole by a load without paging figures (the demo set),
    with the records ``result`` holds of each (0 for a month without any)."""
    counts: Mapping[freshness.MonthKey, int] = (
        freshness.held_counts(result) if result is not None else {}
    )
    wanted = {key: counts.get(key, 0) for key in keys}
    if wanted:
        stored = w.realestate.month_reads(w.tx, list(wanted))
        w.realestate.save_month_reads(w.tx, freshness.after_whole_file(wanted, stored), now=now)


def record_sync(
    w: Writer,
    kind: RtmsDataset,
    code: str,
    month: Month,
    *,
    total_count: int | None,
    complete: bool,
    now: float,
) -> None:
    """Record a sync's read of one month: whole (it wrote every item) or partial."""
    key = (kind.sync_name, code, month.label)
    if complete and total_count is not None:
        read = freshness.whole_read(total_count)
    else:
        read = freshness.partial_read(w.realestate.month_reads(w.tx, [key]).get(key), total_count)
    w.realestate.save_month_reads(w.tx, {key: read}, now=now)
