"""R-ONE index observations (``index_observations``): part of ``RealEstateRepo``, kept
in its own module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from svc_core.realestate.indices import IndexValue
from svc_server.store.base import (
    WRITE_CHUNK,
    Database,
    Tx,
    chunks,
    equal_filters,
    existing_keys,
    marks,
    row_typed,
)

if TYPE_CHECKING:
    from svc_core.models import IndexObservation


class IndexTable:
    """Writes and reads of index observations."""

    db: Database

    def indices(
        self,
        codes: Sequence[str],
        periods: Sequence[str],
        *,
        property_type: str | None = None,
        metric_type: str | None = None,
    ) -> list[IndexValue]:
        """Index observations of districts ``codes`` in ``periods``, ordered for output."""
        if not codes or not periods:
            return []
        sql = (
            "SELECT sigungu_code, sigungu, property_type, metric_type, period, period_end_date, "
            "value_pct, source, synthetic, survey_class, era, source_table, floor "
            "FROM index_observations "
            f"WHERE sigungu_code IN ({marks(len(codes))}) AND period IN ({marks(len(periods))})"
        )
        where, equal = equal_filters(property_type=property_type, metric_type=metric_type)
        params = [*codes, *periods, *equal]
        sql += where + " ORDER BY property_type, metric_type, period, sigungu_code"
        with self.db.transaction(write=False) as tx:
            return [row_typed(IndexValue, r) for r in tx.fetchall(sql, params)]

    def market_areas(self) -> dict[str, str]:
        """The market areas served under their own code (``A`` + R-ONE ``CLS_ID``) that
        have values: code → the path R-ONE publishes (``서울>도심``), in code order."""
        sql = (
            "SELECT DISTINCT sigungu_code, sigungu FROM index_observations "
            "WHERE sigungu_code LIKE 'A%' ORDER BY sigungu_code, sigungu"
        )
        with self.db.transaction(write=False) as tx:
            return {str(r["sigungu_code"]): str(r["sigungu"]) for r in tx.fetchall(sql, [])}


class IndexWrites:
    """The writes of index observations: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def insert_indices(
        self,
        tx: Tx,
        records: Sequence[IndexObservation],
        *,
        synthetic: bool = False,
        changed: set[str] | None = None,
    ) -> tuple[int, int]:
        """Insert new index observations by natural key; (loaded, duplicate). A stored
        observation is never rewritten, so ``changed``, when given, receives exactly the
        districts of the new ones."""
        unique: dict[str, IndexObservation] = {}
        for record in records:
            unique.setdefault(record.natural_key, record)
        existing = existing_keys(tx, "index_observations", list(unique))
        fresh = [r for k, r in unique.items() if k not in existing]
        rows = [
            (
                r.natural_key,
                r.sigungu_code,
                r.sigungu,
                r.property_type,
                r.metric_type,
                r.period,
                r.period_end_date.isoformat(),
                r.value_pct,
                r.source,
                int(synthetic),
                r.survey_class,
                r.era,
                r.source_table,
                r.floor,
            )
            for r in fresh
        ]
        for part in chunks(rows, WRITE_CHUNK):
            tx.executemany(
                "INSERT INTO index_observations (natural_key, sigungu_code, sigungu, "
                "property_type, metric_type, period, period_end_date, value_pct, source, "
                "synthetic, survey_class, era, source_table, floor) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                part,
            )
        if changed is not None:
            changed.update(r.sigungu_code for r in fresh)
        return len(fresh), len(records) - len(fresh)
