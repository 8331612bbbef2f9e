"""The writes of public data, and the one way to reach them: ``loading(store)``.

Real-estate records, index observations, marketplace records and sync state are written
only by the one commit of ``svc_server.ingest`` (``ingest.writer.commit``). The objects
every service reads through (``store.realestate``, ``store.markets``, ``store.sync``)
have no write method; ``loading`` opens one transaction of the data store and hands its
writers (``Writer``): a service that wrote past the commit would not type-check, and the
``only-ingest-loads`` import-linter contract keeps every module but ``ingest`` from
importing this one.

Long because it holds the writes of deals themselves (insert, retract, the load's log
row), which move the roll-up, the contract counts and the exclusion counts with them.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs

from svc_core.realestate.changes import kind_types
from svc_server.store.base import (
    WRITE_CHUNK,
    Tx,
    chunks,
    existing_keys,
    insert_row,
    marks,
    select_in,
)
from svc_server.store.change_records import ChangeRecordWrites, MovedRecord
from svc_server.store.changes import DataChangeWrites, MonthPair
from svc_server.store.coverage import CoverageWrites
from svc_server.store.exclusions import ExclusionWrites
from svc_server.store.indices import IndexWrites
from svc_server.store.markets import MarketWrites
from svc_server.store.realestate import Progress, RealEstateRepo
from svc_server.store.realestate_rows import (
    TRANSACTION_COLUMNS,
    RollupCounts,
    rollup_counts,
    row_keys,
    transaction_rows,
    type_updates,
)
from svc_server.store.rejections import RejectionWrites
from svc_server.store.renumbered import RenumberedWrites
from svc_server.store.rollup import RollupWrites
from svc_server.store.source_months import SourceMonthWrites
from svc_server.store.sync import SyncWrites
from svc_server.store.transactions import ExcludedWrites
from svc_server.store.uses import UseWrites

if TYPE_CHECKING:
    from svc_core.models import LoadReport, Transaction
    from svc_server.store.store import Store

_TRANSACTION_KINDS = "rtms-"
"""The prefix of the loads whose exclusions describe transactions (coverage_note);
R-ONE and marketplace exclusions are about other records."""


class RealEstateWriter(
    RealEstateRepo,
    ChangeRecordWrites,
    CoverageWrites,
    DataChangeWrites,
    ExcludedWrites,
    ExclusionWrites,
    IndexWrites,
    RejectionWrites,
    RenumberedWrites,
    RollupWrites,
    SourceMonthWrites,
    UseWrites,
):
    """Every real-estate read, and the writes of deals, indices, coverage, exclusions,
    rejections, change records and what was read of each district-month."""

    def __init__(self, reads: RealEstateRepo) -> None:
        self.db = reads.db  # the readers' database and load count
        self.loads = reads.loads

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


@attrs.frozen
class Writer:
    """The writers of one load, bound to its transaction of the data store."""

    tx: Tx
    realestate: RealEstateWriter
    markets: MarketWrites
    sync: SyncWrites


@contextmanager
def loading(store: Store) -> Iterator[Writer]:
    """One transaction of the data store and its writers: committed when the block
    ends, rolled back when it raises. A commit is counted (``RealEstateRepo.loads``):
    the next answer of this process reads the data version again."""
    with store.data.transaction() as tx:
        yield Writer(
            tx=tx,
            realestate=RealEstateWriter(store.realestate),
            markets=MarketWrites(store.data),
            sync=SyncWrites(store.data),
        )
    store.realestate.loads.add()
