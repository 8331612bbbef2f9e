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
from svc_core.sources import ParseResult
from svc_core.sync import INGEST_KINDS
from svc_server.store import Store
from svc_server.store.base import Tx

SYNC_KINDS = {ingest_kind: kind for kind, ingest_kind in INGEST_KINDS.items()}
"""The sync kind of each ``svc ingest`` RTMS kind."""


def record_file(store: Store, tx: Tx, ingest_kind: str, result: ParseResult, *, now: float) -> None:
    """Record the page a file of ``ingest_kind`` holds for each of its district-months
    (nothing when it states no total count)."""
    kind = SYNC_KINDS.get(ingest_kind)
    if kind is None or result.report.total_count is None:
        return
    keys = freshness.file_months(kind, result)
    if keys:
        stored = store.realestate.month_reads(tx, keys)
        store.realestate.save_month_reads(tx, freshness.after_file(kind, result, stored), now=now)


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
