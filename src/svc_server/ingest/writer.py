"""The one commit of public data: every load (a file, a synced month or table, the demo
set, a marketplace file) is written here, in one transaction of the data store.

In that transaction: deals are retracted (cancelled, gone from a month a sync read
whole, or read again under the code that replaced their district's:
``svc_core.realestate.renumbered``) and inserted with their exclusions (none whose twin
is stored under the code in force) and rejections (which replace those of the
district-months it read whole: ``store.rejections``), the ``cohort_months`` roll-up
moves with them, the precomputed coverage of every district touched is rebuilt, index
values and marketplace records are written and the marketplace answers republished,
what was read of each district-month is recorded (what makes it loaded), a sync's state
row is written, and the load's ``ingest_log`` row (which moves the data version on). So
a load is all there or not at all, and readers see the data before it or after it.
After the commit the planner's statistics are refreshed when the load made them stale.

What changed is exact: a (source kind, district, month) changed when what it holds
(kept and excluded records, every column) differs before and after the load's writes
(its content digest, ``store.change_records``: records stored before a migration get
the columns a reload finds). Each such one gets a change record (``GET /changes``,
``data.updated``), last in the transaction so it says whether the month is now
complete; its district-month gets its building-use counts rebuilt, and its district is
stamped with the load's time (``_meta.data_as_of``) and the record's id
(``_meta.data_version``). A reload that changes nothing writes and stamps nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import attrs

from svc_core.models import LoadReport
from svc_core.realestate import changes
from svc_core.realestate.changes import ContentKey
from svc_core.realestate.renumbered import (
    StoredTwin,
    record_twin,
    replaced_codes,
    retired_into,
    superseded,
)
from svc_core.regions import replaces
from svc_core.sources import ParseResult
from svc_core.sync.rtms import gone_keys, month_prefix
from svc_server.ingest.completeness import file_whole, record_file, record_sync, record_whole
from svc_server.ingest.coverage import refresh_coverage
from svc_server.ingest.load import Load, SyncMonth, SyncTable
from svc_server.ingest.markets import MarketWrite
from svc_server.ingest.markets import write as write_markets
from svc_server.store import Store
from svc_server.store.change_records import MovedRecord
from svc_server.store.changes import MonthPair
from svc_server.store.loading import Writer, loading
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
    with loading(store) as w:
        written = _transactions(w, load, load_id)
        loaded, duplicate, retracted = written.loaded, written.duplicate, written.retracted
        if written.diffs:
            w.realestate.refresh_uses(w.tx, written.months, written.types[0])
        idx_loaded = idx_duplicate = 0
        new_indices: set[str] = set()
        if load.indices:
            idx_loaded, idx_duplicate = w.realestate.insert_indices(
                w.tx, load.indices, synthetic=load.synthetic, changed=new_indices
            )
        market = MarketWrite()
        if load.listings or load.activity:
            market = write_markets(
                w,
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
            record_file(w, load.file_kind, load.transactions, now=now)
        if load.whole_months:
            record_whole(w, load.whole_months, load.transactions, now=now)
        if load.sync_month is not None:
            _sync_month(w, load.sync_month, now=now)
        if load.sync_table is not None:
            _sync_table(w, load.sync_table, loaded=report.loaded, now=now)
        if load.unread_tables is not None:
            w.sync.record_unread_tables(w.tx, load.unread_tables, at=now)
        _record_changes(w, load, written, new_indices, load_id=load_id, now=now)
        if load.logged:
            w.realestate.record_load(
                w.tx, kind=load.kind, report=report, now=now, digest=load.digest, load_id=load_id
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


@attrs.frozen(kw_only=True)
class _Written:
    """What ``_transactions`` wrote: counts, and the change of each (source kind,
    district, month) whose content it changed."""

    loaded: int = 0
    duplicate: int = 0
    retracted: int = 0
    diffs: Mapping[ContentKey, changes.Diff] = attrs.field(factory=dict)
    types: changes.Types = changes.ALL_TYPES

    @property
    def months(self) -> set[MonthPair]:
        """The district-months whose records changed."""
        return {(code, month) for _, code, month in self.diffs}


def _transactions(w: Writer, load: Load, load_id: str) -> _Written:
    """Retract, insert and keep the exclusions of the load's deals, then rebuild the
    coverage of every district touched."""
    result: ParseResult | None = load.transactions
    if result is None:
        return _Written()
    result, older, dropped = _renumbered(w, result)
    touched = {t.sigungu_code for t in result.transactions}
    read = {(t.sigungu_code, t.period_month) for t in result.transactions}
    read |= {(e.record.sigungu_code, e.record.period_month) for e in result.excluded}
    read |= {(t.sigungu_code, t.month) for t in older}
    gone = [
        *result.retracted_keys,
        *_gone_from_month(w, load, result),
        *(t.natural_key for t in older if not t.excluded),
    ]
    if gone:
        read |= w.realestate.months_of_keys(w.tx, gone)
    # Only the source kinds the load's records have can change (a retraction may name
    # any record: then every kind).
    types = changes.ALL_TYPES
    if not gone:
        types = changes.kind_types(
            {(t.property_type, t.transaction_type) for t in result.transactions}
            | {(e.record.property_type, e.record.transaction_type) for e in result.excluded}
        )
    if any(t.excluded for t in older):
        types = changes.ALL_TYPES
    before = w.realestate.content_digests(w.tx, read, types)
    moved: list[MovedRecord] = []
    retracted = 0
    if any(t.excluded for t in older):
        w.realestate.delete_excluded(
            w.tx, [t.natural_key for t in older if t.excluded], moved=moved
        )
    if gone:
        retracted, codes = w.realestate.delete_transactions(w.tx, gone, moved=moved)
        touched |= codes
    # Into an empty store the roll-up is exactly what this load adds: coverage is built
    # from it in memory instead of reading it back.
    first = w.realestate.rollup_is_empty(w.tx)
    added: RollupCounts = {}
    retyped: set[str] = set()
    total = load.records
    progress = load.progress

    def step(done: int) -> None:
        if progress is not None:
            progress(done, total)

    loaded, duplicate = w.realestate.insert_transactions(
        w.tx,
        result.transactions,
        synthetic=load.synthetic,
        progress=step,
        added=added,
        retyped=retyped,
        load_id=load_id,
        moved=moved,
    )
    if result.excluded:
        w.realestate.insert_excluded(w.tx, result.excluded, load_id=load_id, moved=moved)
    again = {r.natural_key for r in result.rejected}
    w.realestate.clear_rejected(w.tx, kind=load.kind, months=_read_whole(load), keep=again)
    if result.rejected:
        w.realestate.insert_rejected(
            w.tx, result.rejected, kind=load.kind, path=load.report.path, load_id=load_id
        )
    if (loaded or retracted or retyped) and load.defer_coverage:
        w.realestate.mark_coverage_stale(w.tx, sorted(touched | retyped))
    elif loaded or retracted or retyped:
        rollup = rollup_rows(added) if first and not retracted else None
        refresh_coverage(w, touched | retyped, rollup=rollup)
    after = w.realestate.content_digests(w.tx, read, types)
    by_key: dict[ContentKey, list[changes.Moved]] = {}
    for what, code, month, ptype, ttype in moved:
        kind = changes.source_kind(ptype, ttype)
        by_key.setdefault((kind, code, month), []).append((what, ptype, ttype, kind))
    diffs = {}
    for key in sorted(before.keys() | after.keys()):
        found = changes.diff(
            before.get(key, changes.EMPTY_DIGEST),
            after.get(key, changes.EMPTY_DIGEST),
            by_key.get(key, ()),
        )
        if found is not None:
            diffs[key] = found
    return _Written(
        loaded=loaded,
        duplicate=duplicate + dropped,
        retracted=retracted,
        diffs=diffs,
        types=types,
    )


def _renumbered(w: Writer, result: ParseResult) -> tuple[ParseResult, list[StoredTwin], int]:
    """A deal counts once across a renumbering (``svc_core.realestate.renumbered``): the
    stored records of retired codes that the load's records under the codes replacing
    them stand for (to retract), and the load without its records under a retired code
    whose twin is stored, or in the load, under a code that replaced it (with how many
    it dropped)."""
    records = [*result.transactions, *(e.record for e in result.excluded)]
    newer = {r.sigungu_code for r in records if replaces(r.sigungu_code)}
    retired = {r.sigungu_code for r in records if retired_into(r.sigungu_code)}
    if not newer and not retired:
        return result, [], 0
    months = {r.period_month for r in records}
    older: list[StoredTwin] = []
    if newer:
        stored = w.realestate.twins(w.tx, {(c, m) for c in replaced_codes(newer) for m in months})
        taken: set[str] = set()
        for code in sorted(newer):
            pool = [
                (s.natural_key, s.twin)
                for s in stored
                if s.sigungu_code in replaces(code) and s.natural_key not in taken
            ]
            twins = [record_twin(r) for r in records if r.sigungu_code == code]
            taken.update(superseded(pool, twins))
        older = [s for s in stored if s.natural_key in taken]
    drop: set[str] = set()
    for code in sorted(retired):
        codes = set(retired_into(code))
        held = w.realestate.twins(w.tx, {(c, m) for c in codes for m in months})
        twins = [s.twin for s in held] + [
            record_twin(r) for r in records if r.sigungu_code in codes
        ]
        mine = [(r.natural_key, record_twin(r)) for r in records if r.sigungu_code == code]
        drop.update(superseded(mine, twins))
    if not drop:
        return result, older, 0
    kept = [t for t in result.transactions if t.natural_key not in drop]
    excluded = tuple(e for e in result.excluded if e.record.natural_key not in drop)
    trimmed = attrs.evolve(result, transactions=kept, excluded=excluded)
    return trimmed, older, len(result.transactions) - len(kept)


def _record_changes(
    w: Writer,
    load: Load,
    written: _Written,
    indices: set[str],
    *,
    load_id: str,
    now: float,
) -> None:
    """The load's change records and the data versions of the districts it changed,
    last in its transaction (a record says whether its month is now complete)."""
    if not written.diffs and not indices:
        return
    first = w.realestate.take_ids(w.tx, len(written.diffs) + bool(indices))
    reads = w.realestate.month_reads(w.tx, list(written.diffs))
    records = [
        changes.ChangeRecord(
            id=first + n,
            changed_at=int(now),
            load_id=load_id,
            load_kind=load.kind,
            source_kind=kind,
            sigungu_code=code,
            month=month,
            **attrs.asdict(diff, recurse=False),  # the counts, types and digests
            complete=(read := reads.get((kind, code, month))) is not None and read.complete,
        )
        for n, ((kind, code, month), diff) in enumerate(sorted(written.diffs.items()))
    ]
    w.realestate.write_records(w.tx, records)
    versions: dict[str, int] = {}
    for record in records:
        versions[record.sigungu_code] = max(versions.get(record.sigungu_code, 0), record.id)
    w.realestate.record_changes(w.tx, "transactions", versions, now=now)
    if indices:
        latest = dict.fromkeys(indices, first + len(records))
        w.realestate.record_changes(w.tx, "indices", latest, now=now)


def _read_whole(load: Load) -> set[tuple[str, str]]:
    """The (district, month) pairs the load read whole: its whole months (the demo
    set), a complete sync month, the months of an RTMS API file holding every page."""
    whole = {(code, month) for _, code, month in load.whole_months}
    if load.sync_month is not None and load.sync_month.status == "complete":
        whole.add((load.sync_month.sigungu_code, load.sync_month.month.label))
    if load.transactions is not None and load.file_kind is not None:
        whole |= {(code, month) for _, code, month in file_whole(load.file_kind, load.transactions)}
    return whole


def _gone_from_month(w: Writer, load: Load, result: ParseResult) -> tuple[str, ...]:
    """Stored records of a month a sync read whole that the read no longer holds."""
    month = load.sync_month
    if month is None or month.status != "complete":
        return ()
    prefix = month_prefix(month.kind, month.sigungu_code, month.month)
    stored = w.sync.stored_keys(w.tx, month.kind, month.sigungu_code, month.month, prefix)
    return gone_keys(stored, {t.natural_key for t in result.transactions})


def _sync_month(w: Writer, month: SyncMonth, *, now: float) -> None:
    """The month's sync state and completeness. A read that was not whole never
    replaces a complete month: only the attempt is noted."""
    whole = month.status == "complete"
    old = w.sync.get(w.tx, month.kind, month.sigungu_code, month.month)
    if not whole and old is not None and old.status == "complete":
        w.sync.note_attempt(
            w.tx,
            kind=month.kind,
            code=month.sigungu_code,
            month=month.month,
            attempt=month.status,
            at=now,
            detail=month.detail,
        )
        return
    w.sync.record(
        w.tx,
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
        w,
        month.kind,
        month.sigungu_code,
        month.month,
        total_count=month.total_count,
        complete=whole,
        now=now,
    )


def _sync_table(w: Writer, table: SyncTable, *, loaded: int, now: float) -> None:
    w.sync.record_table(
        w.tx,
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
