"""Real-estate persistence: transactions, rollups, precomputed coverage, indices, log.

``cohort_months`` (samples, contracts and bulk contracts per district, dong, property
type, transaction type, month, source and building type; dong ``''`` for the whole
district) is maintained in the same transaction as
the rows it counts. ``coverage_cohorts`` holds the finished coverage rows per cohort and
granularity, rebuilt at ingest for the districts a load touched (the service computes
them: ``svc_server.ingest.coverage.refresh_coverage``). So coverage and dimensions
never scan transactions, and coverage without a district reads only ``limit`` rows.

Pulse reads only its cohort (``store.cohort_reads``).

Answers that change only when a load commits (``DataState``, dimensions, one district's
coverage) are cached in-process per *data version*: every load writes one
``ingest_log`` row, so the version is the log's row count and latest load time. Each
process keeps its own cache and reads the version from the database, so several server
processes stay consistent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from svc_core.realestate.changes import kind_types
from svc_server.store.base import (
    WRITE_CHUNK,
    Database,
    Tx,
    chunks,
    existing_keys,
    insert_row,
    marks,
    select_in,
)
from svc_server.store.change_records import ChangeRecords, MovedRecord
from svc_server.store.changes import DataChanges, MonthPair
from svc_server.store.cohort_reads import CohortReads
from svc_server.store.contract_kinds import ContractKinds
from svc_server.store.coverage import CoverageTables
from svc_server.store.exclusions import ExclusionCounts
from svc_server.store.indices import IndexTable
from svc_server.store.realestate_rows import (
    TRANSACTION_COLUMNS,
    DataState,
    RollupCounts,
    RollupKey,
    rollup_counts,
    rollup_rows,
    row_keys,
    transaction_rows,
    type_updates,
)
from svc_server.store.rejections import Rejections
from svc_server.store.renumbered import RenumberedReads
from svc_server.store.rollup import RollupTable
from svc_server.store.source_months import SourceMonths
from svc_server.store.transactions import TransactionListing
from svc_server.store.uses import UseMonths
from svc_server.store.versioned import VERSION_TTL, Version, VersionedCache

if TYPE_CHECKING:
    from svc_core.models import LoadReport, Transaction

T = TypeVar("T")
log = logging.getLogger("svc.store")
__all__ = [
    "TRANSACTION_COLUMNS",
    "VERSION_TTL",
    "DataState",
    "RealEstateRepo",
    "RollupCounts",
    "RollupKey",
    "rollup_counts",
    "rollup_rows",
    "transaction_rows",
]
Progress = Callable[[int], None]
"""Called with the number of records written so far during a long write."""

_TRANSACTION_KINDS = "rtms-"
"""The prefix of the loads whose exclusions describe transactions (coverage_note);
R-ONE and marketplace exclusions are about other records."""


ANALYZED = ("transactions", "cohort_months", "coverage_cohorts")
"""The tables a load writes that cohort reads plan on."""


class RealEstateRepo(
    ChangeRecords,
    CohortReads,
    ContractKinds,
    CoverageTables,
    ExclusionCounts,
    DataChanges,
    IndexTable,
    Rejections,
    RenumberedReads,
    RollupTable,
    SourceMonths,
    TransactionListing,
    UseMonths,
):
    """Every real-estate query, in portable SQL (cohort reads in ``store.cohort_reads``,
    coverage in ``store.coverage``, index
    observations in ``store.indices``, the rollup in ``store.rollup``, what the store
    holds of each district-month in ``store.source_months``, listings and excluded
    records in ``store.transactions``, the dimensions' contract counts in
    ``store.contract_kinds``, building uses in ``store.uses``, when each district's data
    last changed in ``store.changes``, what each load changed in
    ``store.change_records``, a renumbered district's twins in ``store.renumbered``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.versions = VersionedCache(db)

    # versioned cache (svc_server.store.versioned) ------------------------------------------

    def data_version(self) -> Version:
        """Changes whenever a load commits (``VersionedCache.data_version``)."""
        return self.versions.data_version()

    def known_version(self) -> Version | None:
        """``data_version`` when it needs no read, else None (``VersionedCache``)."""
        return self.versions.known_version()

    def forget_version(self) -> None:
        """Make the next ``data_version`` read the database (a load just wrote)."""
        self.versions.forget_version()

    def cached(
        self,
        key: tuple[Any, ...],
        compute: Callable[[], T],
        *,
        version: Version | None = None,
    ) -> T:
        """``compute()`` once per data version and ``key`` (``VersionedCache.cached``)."""
        return self.versions.cached(key, compute, version=version)

    def state(self) -> DataState:
        """The store's current ``DataState`` (one cheap query when nothing changed)."""
        version = self.data_version()
        return self.cached(("state",), lambda: self._state(version), version=version)

    def _state(self, version: Version) -> DataState:
        with self.db.transaction(write=False) as tx:
            month = tx.fetchone("SELECT MAX(month) AS m FROM cohort_months")
            quarter = tx.fetchone(
                "SELECT MAX(period) AS p FROM index_observations WHERE period LIKE '%-Q%'"
            )
            demo = tx.fetchone("SELECT id FROM ingest_log WHERE kind = 'demo' LIMIT 1")
            logged = self.exclusion_counts(tx)
            stale = self.stale_coverage_districts(tx)
            incomplete = self.incomplete_months(tx)
            changed, versions = self.changes(tx)
        totals: Counter[str] = Counter()
        for excluded, reads in logged:
            for reason, n in json.loads(excluded).items():
                totals[reason] += int(n) * reads
        return DataState(
            version=version,
            latest_month=month["m"] if month and month["m"] else None,
            latest_index_period=quarter["p"] if quarter and quarter["p"] else None,
            exclusions=dict(sorted(totals.items())),
            synthetic=demo is not None,
            coverage_complete=not stale,
            incomplete=incomplete,
            transactions_changed=changed["transactions"],
            indices_changed=changed["indices"],
            transactions_versions=versions["transactions"],
            indices_versions=versions["indices"],
        )

    # writing -----------------------------------------------------------------------------

    def insert_transactions(
        self,
        tx: Tx,
        records: Sequence[Transaction],
        *,
        synthetic: bool = False,
        progress: Progress | None = None,
        added: RollupCounts | None = None,
        retyped: set[str] | None = None,
        load_id: str | None = None,
        moved: list[MovedRecord] | None = None,
    ) -> tuple[int, int]:
        """Insert new records (by natural key) and bump the rollup; (loaded, duplicate).
        A record already stored without a building type or load (stored before migration
        0008 or 0011) gets what the reader found now, and moves in the rollup when it
        gets its type; ``load_id`` names the load. The contracts of the district-months
        the records fall in are recounted when those months held rows already.

        ``progress(written)`` is called after each batch; ``added``, when given, receives
        the rollup counts of the new records alone, ``retyped`` the districts of records
        that got their type, ``moved`` the new records as ``added`` and the records stored
        before a migration that get the columns they lacked as ``changed``.
        """
        unique: dict[str, Transaction] = {}
        for record in records:
            unique.setdefault(record.natural_key, record)
        months = {(r.sigungu_code, r.period_month) for r in unique.values()}
        types = kind_types({(r.property_type, r.transaction_type) for r in unique.values()})
        held = self._rollup_months(tx, sorted({code for code, _ in months}), types)
        existing = existing_keys(tx, "transactions", list(unique))
        fresh = [r for key, r in unique.items() if key not in existing]
        rows = transaction_rows(fresh, synthetic=synthetic, load_id=load_id)
        written = 0
        for part in chunks(rows, WRITE_CHUNK):
            tx.executemany(
                f"INSERT INTO transactions ({', '.join(TRANSACTION_COLUMNS)}) "
                f"VALUES ({marks(len(TRANSACTION_COLUMNS))}) ON CONFLICT DO NOTHING",
                part,
            )
            written += len(part)
            if progress is not None:
                progress(written)
        updates = type_updates(unique.values(), existing, load_id)
        if moved is not None:
            moved.extend(
                ("added", r.sigungu_code, r.period_month, r.property_type, r.transaction_type)
                for r in fresh
            )
            if updates:
                moved.extend(self._lacking(tx, [u[-1] for u in updates]))
        if updates:
            typed = self._retype(tx, updates)
            if retyped is not None:
                retyped |= typed
        counts = rollup_counts(rows)
        self._bump_rollup(tx, {key: n[0] for key, n in counts.items()}, counts)
        self._recount_contracts(tx, months & held, types)
        if added is not None:
            added.update(counts)
        return len(rows), len(records) - len(rows)

    def _lacking(self, tx: Tx, keys: Sequence[str]) -> list[MovedRecord]:
        """The stored records among ``keys`` that ``TYPE_UPDATE_SQL`` fills, as changed."""
        rows = select_in(
            tx,
            "SELECT sigungu_code, month, property_type, transaction_type FROM transactions "
            "WHERE (building_type IS NULL OR load_id IS NULL OR contract_id IS NULL) "
            "AND natural_key IN",
            keys,
        )
        return [
            ("changed", r["sigungu_code"], r["month"], r["property_type"], r["transaction_type"])
            for r in rows
        ]

    def delete_transactions(
        self,
        tx: Tx,
        keys: Sequence[str],
        *,
        months: set[MonthPair] | None = None,
        moved: list[MovedRecord] | None = None,
    ) -> tuple[int, set[str]]:
        """Remove deals a later report cancelled and take them out of the rollup;
        (records removed, districts touched). ``months``, when given, receives the
        district-months of the removed records, ``moved`` each as ``retracted``."""
        rows = select_in(
            tx,
            "SELECT natural_key, sigungu_code, dong, property_type, transaction_type, "
            "month, source, building_type FROM transactions WHERE natural_key IN",
            keys,
        )
        if not rows:
            return 0, set()
        tx.executemany(
            "DELETE FROM transactions WHERE natural_key = ?", [(r["natural_key"],) for r in rows]
        )
        self._drop_rollup(tx, row_keys(rows))
        if months is not None:
            months.update((r["sigungu_code"], r["month"]) for r in rows)
        if moved is not None:
            moved.extend(
                (
                    "retracted",
                    r["sigungu_code"],
                    r["month"],
                    r["property_type"],
                    r["transaction_type"],
                )
                for r in rows
            )
        self._recount_contracts(
            tx,
            {(r["sigungu_code"], r["month"]) for r in rows},
            kind_types({(r["property_type"], r["transaction_type"]) for r in rows}),
        )
        return len(rows), {r["sigungu_code"] for r in rows}

    def log_ingest(self, tx: Tx, row: Mapping[str, Any]) -> None:
        """Record one load (this also moves the data version on), and count its
        exclusions when it is the latest read of its file (``count_exclusions``)."""
        self.forget_version()
        row = dict(row)
        row["excluded"] = json.dumps(row.get("excluded") or {}, ensure_ascii=False)
        row["rejected"] = json.dumps(row.get("rejected") or {}, ensure_ascii=False)
        insert_row(tx, "ingest_log", row)
        if str(row["kind"]).startswith(_TRANSACTION_KINDS):
            self.count_exclusions(tx, row)

    def record_load(
        self,
        tx: Tx,
        *,
        kind: str,
        report: LoadReport,
        now: float,
        data: bytes | None = None,
        digest: str | None = None,
        load_id: str | None = None,
    ) -> None:
        """One ``ingest_log`` row (id ``load_id``, a new one by default) for a load:
        provenance (``report.path``, the SHA-256 of ``data`` or the given ``digest``),
        counts, and the exclusions coverage_note reports. Rows of the same digest count
        their exclusions once."""
        if digest is None:
            digest = hashlib.sha256(data or b"").hexdigest()
        rejected: dict[str, Any] = {
            reason: {
                "count": count,
                "lines": [r.line for r in report.rejections if r.reason == reason],
            }
            for reason, count in report.rejected.items()
        }
        self.log_ingest(
            tx,
            {
                "id": load_id or str(uuid.uuid4()),
                "kind": kind,
                "path": report.path[:500],
                "sha256": digest,
                "read_count": report.read,
                "loaded": report.loaded,
                "duplicate": report.duplicate,
                "excluded": report.excluded,
                "rejected": rejected,
                "loaded_at": int(now),
            },
        )

    def refresh_statistics(self, loaded: int) -> bool:
        """After a load of ``loaded`` rows commits: refresh the planner's statistics of
        the tables loads write when they are stale (``Database.analyze``: PostgreSQL,
        by autovacuum's rule; True when it ran). Otherwise the planner keeps the
        estimates from before a large load: at 3.7M rows, stale ones turned one cohort's
        read from an 8 ms index range into 465 ms of filtering the whole district."""
        if loaded <= 0:
            return False
        try:  # the load is committed: a failure here is logged, never the load's
            return self.db.analyze("transactions", loaded, ANALYZED)
        except Exception:  # autovacuum, if on, does it later
            log.warning("refreshing statistics after a load failed", exc_info=True)
            return False

    def rollup_is_empty(self, tx: Tx) -> bool:
        return tx.fetchone("SELECT month FROM cohort_months LIMIT 1") is None

    def is_empty(self) -> bool:
        with self.db.transaction(write=False) as tx:
            return tx.fetchone("SELECT natural_key FROM transactions LIMIT 1") is None

    def counts(self) -> dict[str, int]:
        """Rows per real-estate table (for tests, the CLI and operators)."""
        out: dict[str, int] = {}
        tables = (
            "transactions",
            "cohort_months",
            "coverage_cohorts",
            "index_observations",
            "ingest_log",
        )
        with self.db.transaction(write=False) as tx:
            for table in tables:
                row = tx.fetchone(f"SELECT COUNT(*) AS n FROM {table}")
                out[table] = int(row["n"]) if row else 0
        return out
