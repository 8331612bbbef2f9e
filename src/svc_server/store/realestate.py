"""Real-estate persistence: transactions, rollups, precomputed coverage, indices, log.

``cohort_months`` (samples, contracts and bulk contracts per district, dong, property
type, transaction type, month, source and building type; dong ``''`` for the whole
district) is maintained in the same transaction as
the rows it counts. ``coverage_cohorts`` holds the finished coverage rows per cohort and
granularity, rebuilt at ingest for the districts a load touched (the service computes
them: ``svc_server.ingest.coverage.refresh_coverage``). So coverage and dimensions
never scan transactions, and coverage without a district reads only ``limit`` rows.

Pulse reads only its cohort (``store.cohort_reads``).

The *data version* (``store.data_version``: every load writes one ``ingest_log`` row)
is read plainly, with the ``DataState`` behind it; the services keep answers per version
(``svc_server.services.versioned``), told by ``loads`` of a load this process committed.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable

from svc_server.store.base import (
    Database,
    Tx,
)
from svc_server.store.change_records import ChangeRecords
from svc_server.store.changes import DataChanges
from svc_server.store.cohort_reads import CohortReads
from svc_server.store.contract_kinds import ContractKinds
from svc_server.store.coverage import CoverageTables
from svc_server.store.data_version import LoadCount, Version, read_version
from svc_server.store.exclusions import ExclusionCounts
from svc_server.store.indices import IndexTable
from svc_server.store.realestate_rows import (
    TRANSACTION_COLUMNS,
    DataState,
    RollupCounts,
    RollupKey,
    rollup_counts,
    rollup_rows,
    transaction_rows,
)
from svc_server.store.rejections import Rejections
from svc_server.store.renumbered import RenumberedReads
from svc_server.store.rollup import RollupTable
from svc_server.store.source_months import SourceMonths
from svc_server.store.transactions import TransactionListing
from svc_server.store.uses import UseMonths

log = logging.getLogger("svc.store")
__all__ = [
    "TRANSACTION_COLUMNS",
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
        self.loads = LoadCount()
        """The loads this process committed (``store.loading`` counts them)."""

    def data_version(self) -> Version:
        """The current data version (``store.data_version``): read on every call."""
        return read_version(self.db)

    def state(self, version: Version | None = None) -> DataState:
        """The store's ``DataState`` at ``version`` (the one read before it; by default,
        the current one): read on every call (``services.versioned`` keeps it)."""
        if version is None:
            version = self.data_version()
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
