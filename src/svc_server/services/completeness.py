"""Recording what the store holds of each RTMS district-month (``source_months``) as
files and syncs load it, in the load's transaction; the rule is
``svc_core.realestate.freshness``.

A file of the RTMS API states its query's ``totalCount`` and its page number: each
district-month among its records (kept, or retracted as cancelled) gets the page. A CSV
export or svc's samples state no paging and record nothing. ``svc sync rtms`` records a
whole read when it writes a month and a partial one when it could not.
"""

from __future__ import annotations

from svc_core.periods import Month
from svc_core.realestate import freshness
from svc_core.realestate.freshness import MonthKey
from svc_core.sources import ParseResult
from svc_core.sync import INGEST_KINDS
from svc_server.store import Store
from svc_server.store.base import Tx

SYNC_KINDS = {ingest_kind: kind for kind, ingest_kind in INGEST_KINDS.items()}
"""The sync kind of each ``svc ingest`` RTMS kind."""


def file_months(kind: str, result: ParseResult) -> list[MonthKey]:
    """The district-months of a file's records, kept or retracted (their natural keys
    start ``rtms:<kind>:<code>:<month>:``)."""
    found = {(kind, t.sigungu_code, t.period_month) for t in result.transactions}
    for key in result.retracted_keys:
        parts = key.split(":")
        if len(parts) > 3 and parts[0] == "rtms":
            found.add((kind, parts[2], parts[3]))
    return sorted(found)


def record_file(store: Store, tx: Tx, ingest_kind: str, result: ParseResult, *, now: float) -> None:
    """Record the page a file of ``ingest_kind`` holds for each of its district-months
    (nothing when it states no total count)."""
    kind = SYNC_KINDS.get(ingest_kind)
    report = result.report
    if kind is None or report.total_count is None:
        return
    keys = file_months(kind, result)
    if not keys:
        return
    stored = store.realestate.month_reads(tx, keys)
    reads = {
        key: freshness.add_page(
            stored.get(key),
            total_count=report.total_count,
            page_no=report.page_no if report.page_no is not None else 1,
            items=report.read,
        )
        for key in keys
    }
    store.realestate.save_month_reads(tx, reads, now=now)


def record_sync(
    store: Store,
    tx: Tx,
    kind: str,
    code: str,
    month: Month,
    *,
    total_count: int | None,
    complete: bool,
    now: float,
) -> None:
    """Record a sync's read of one month: whole (it wrote every item) or partial."""
    key = (kind, code, month.label)
    if complete and total_count is not None:
        read = freshness.whole_read(total_count)
    else:
        read = freshness.partial_read(store.realestate.month_reads(tx, [key]).get(key), total_count)
    store.realestate.save_month_reads(tx, {key: read}, now=now)
