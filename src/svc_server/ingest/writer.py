"""The one commit of public data: every load (a file, a synced month or table, the demo
set, a marketplace file) is written here, in one transaction of the data store.

In that transaction: deals are retracted (cancelled, or gone from a month a sync read
whole) and inserted with their exclusions, the ``cohort_months`` roll-up moves with
them, the precomputed coverage of every district touched is rebuilt, index values and
marketplace records are written and the marketplace answers republished, what was
read of each district-month is recorded (what makes it loaded), a sync's state row is written,
and the load's ``ingest_log`` row (which moves the data version on). So a load is all
there or not at all, and readers see the data before it or after it. After the commit
the planner's statistics are refreshed when the load made them stale.

What changed is exact: a district-month changed when the load inserted or retracted a
record of it, or when what it holds (kept and excluded records, every column) differs
before and after the load's writes (``store.changes``: records stored before a
migration get the columns a reload finds). Only those district-months get their
building-use counts rebuilt, and only their districts are stamped with the load's time,
which ``_meta.data_as_of`` reports; a reload that changes nothing stamps nothing.
"""

from __future__ import annotations

import uuid

import attrs

from svc_core.models import LoadReport
from svc_core.sources import ParseResult
from svc_core.sync import gone_keys, month_prefix
from svc_server.ingest.completeness import record_file, record_sync, record_whole
from svc_server.ingest.coverage import refresh_coverage
from svc_server.ingest.load import Load, SyncMonth, SyncTable
from svc_server.ingest.markets import MarketWrite
from svc_server.ingest.markets import write as write_markets
from svc_server.store import Store
from svc_server.store.base import Tx
from svc_server.store.changes import MonthPair
from svc_server.store.realestate import RollupCounts, rollup_rows


@attrs.frozen(kw_only=True)
class Committed:
    """A committed load: its finished report (``loaded``, ``duplicate``, ``retracted``
    summed over its parts) and what each part wrote."""

    report: LoadReport
    transactions: int = 0
    duplicate_transactions: int = 0
    retracted: int = 0
    index_observations: int = 0
    markets: MarketWrite = attrs.field(factory=MarketWrite)
    load_id: str = ""


def commit(store: Store, load: Load, *, now: float) -> Committed:
    """Write ``load`` in one transaction (see the module); its ``Committed``."""
    load_id = str(uuid.uuid4())
    report = load.report
    with store.data.transaction() as tx:
        loaded, duplicate, retracted, changed = _transactions(store, tx, load, load_id)
        if changed:
            store.realestate.refresh_uses(tx, changed)
            store.realestate.record_changes(
                tx, "transactions", {code for code, _ in changed}, now=now
            )
        idx_loaded = idx_duplicate = 0
        if load.indices:
            new_indices: set[str] = set()
            idx_loaded, idx_duplicate = store.realestate.insert_indices(
                tx, load.indices, synthetic=load.synthetic, changed=new_indices
            )
            store.realestate.record_changes(tx, "indices", new_indices, now=now)
        market = MarketWrite()
        if load.listings or load.activity:
            market = write_markets(
                store,
                tx,
                load.listings,
                load.activity,
                synthetic=load.synthetic,
                activity_file=load.activity_file,
                path=report.path,
            )
            report = market.report or report
        report.loaded = loaded + idx_loaded + market.listings + market.activity
        report.duplicate = (
            duplicate + idx_duplicate + market.listings_unchanged + market.activity_unchanged
        )
        report.retracted = retracted
        if load.transactions is not None and load.file_kind is not None:
            record_file(store, tx, load.file_kind, load.transactions, now=now)
        if load.whole_months:
            record_whole(store, tx, load.whole_months, load.transactions, now=now)
        if load.sync_month is not None:
            _sync_month(store, tx, load.sync_month, now=now)
        if load.sync_table is not None:
            _sync_table(store, tx, load.sync_table, loaded=report.loaded, now=now)
        if load.logged:
            store.realestate.record_load(
                tx, kind=load.kind, report=report, now=now, digest=load.digest, load_id=load_id
            )
    store.realestate.refresh_statistics(loaded + retracted)
    if load.progress is not None:
        load.progress(report.read, report.read)
    return Committed(
        report=report,
        transactions=loaded,
        duplicate_transactions=duplicate,
        retracted=retracted,
        index_observations=idx_loaded,
        markets=market,
        load_id=load_id,
    )


def _transactions(
    store: Store, tx: Tx, load: Load, load_id: str
) -> tuple[int, int, int, set[MonthPair]]:
    """Retract, insert and keep the exclusions of the load's deals, then rebuild the
    coverage of every district touched; (loaded, duplicate, retracted, the
    district-months whose records changed)."""
    result: ParseResult | None = load.transactions
    if result is None:
        return 0, 0, 0, set()
    touched = {t.sigungu_code for t in result.transactions}
    read = {(t.sigungu_code, t.period_month) for t in result.transactions}
    read |= {(e.record.sigungu_code, e.record.period_month) for e in result.excluded}
    before = store.realestate.month_digests(tx, read)
    changed: set[MonthPair] = set()
    gone = [*result.retracted_keys, *_gone_from_month(store, tx, load, result)]
    retracted = 0
    if gone:
        retracted, codes = store.realestate.delete_transactions(tx, gone, months=changed)
        touched |= codes
    # Into an empty store the roll-up is exactly what this load adds: coverage is built
    # from it in memory instead of reading it back.
    first = store.realestate.rollup_is_empty(tx)
    added: RollupCounts = {}
    retyped: set[str] = set()
    total = load.records
    progress = load.progress

    def step(done: int) -> None:
        if progress is not None:
            progress(done, total)

    loaded, duplicate = store.realestate.insert_transactions(
        tx,
        result.transactions,
        synthetic=load.synthetic,
        progress=step,
        added=added,
        retyped=retyped,
        load_id=load_id,
    )
    if result.excluded:
        store.realestate.insert_excluded(tx, result.excluded, load_id=load_id)
    if loaded or retracted or retyped:
        rollup = rollup_rows(added) if first and not retracted else None
        refresh_coverage(store, tx, touched | retyped, rollup=rollup)
    changed |= {(key[0], key[4]) for key in added}  # (district, month) of each new record
    after = store.realestate.month_digests(tx, read - changed)
    changed |= {pair for pair, digest in after.items() if digest != before[pair]}
    return loaded, duplicate, retracted, changed


def _gone_from_month(store: Store, tx: Tx, load: Load, result: ParseResult) -> tuple[str, ...]:
    """Stored records of a month a sync read whole that the read no longer holds."""
    month = load.sync_month
    if month is None or month.status != "complete":
        return ()
    prefix = month_prefix(month.kind, month.sigungu_code, month.month)
    stored = store.sync.stored_keys(tx, month.kind, month.sigungu_code, month.month, prefix)
    return gone_keys(stored, {t.natural_key for t in result.transactions})


def _sync_month(store: Store, tx: Tx, month: SyncMonth, *, now: float) -> None:
    """The month's sync state and completeness. A read that was not whole never
    replaces a complete month: only the attempt is noted."""
    whole = month.status == "complete"
    old = store.sync.get(tx, month.kind, month.sigungu_code, month.month)
    if not whole and old is not None and old.status == "complete":
        store.sync.note_attempt(
            tx,
            kind=month.kind,
            code=month.sigungu_code,
            month=month.month,
            attempt=month.status,
            at=now,
            detail=month.detail,
        )
        return
    store.sync.record(
        tx,
        kind=month.kind,
        code=month.sigungu_code,
        month=month.month,
        status=month.status,
        attempt=month.status,
        attempted_at=now,
        fetched_at=now if whole else None,
        detail=month.detail,
        total_count=month.total_count,
        pages=month.pages,
        digest=month.digest,
    )
    record_sync(
        store,
        tx,
        month.kind,
        month.sigungu_code,
        month.month,
        total_count=month.total_count,
        complete=whole,
        now=now,
    )


def _sync_table(store: Store, tx: Tx, table: SyncTable, *, loaded: int, now: float) -> None:
    store.sync.record_table(
        tx,
        table_id=table.table_id,
        era=table.era,
        table_name=table.table_name,
        status=table.status,
        at=now,
        total_count=table.total_count,
        pages=table.pages,
        loaded=loaded,
        detail=table.detail,
    )
