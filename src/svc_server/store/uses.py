"""The building uses behind each property type (``use_months``, migration 0018): samples
per district, property type, month and published building use (``''`` when the source
publishes none), what ``GET /dimensions`` lists as ``building_uses``.

A load rebuilds the district-months whose records it changed from ``transactions``, in
its own transaction (one ``INSERT ... SELECT`` per district), so the table always equals
a count of the stored records and dimensions never scan transactions. Part of
``RealEstateRepo``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.building_uses import UseRow
from svc_server.store.base import Database, Tx, marks
from svc_server.store.changes import (
    MonthPair,
    by_district,
    cohort_params,
    cohort_where,
    month_parts,
)


class UseMonths:
    """Writes and reads of ``use_months`` (mixed into ``RealEstateRepo``)."""

    db: Database

    def uses(self, *, month_from: str, month_to: str) -> list[UseRow]:
        """``use_months`` rows (``property_type``, ``building_use``, ``samples``) of the
        months from ``month_from`` to ``month_to``; aggregation is the caller's."""
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT property_type, building_use, samples FROM use_months "
                "WHERE month >= ? AND month <= ?",
                (month_from, month_to),
            )
        return [UseRow(**r) for r in rows]


class UseWrites:
    """The writes of building uses per month: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def refresh_uses(
        self, tx: Tx, pairs: Iterable[MonthPair], property_types: Sequence[str] = PROPERTY_TYPES
    ) -> None:
        """Recount the rows of ``property_types`` (every transaction type: a row counts
        them all) of the district-months ``pairs`` from the stored records."""
        types = (tuple(property_types), TRANSACTION_TYPES)
        for code, months in by_district(pairs).items():
            for part in month_parts(months):
                tx.execute(
                    f"DELETE FROM use_months WHERE sigungu_code = ? "
                    f"AND property_type IN ({marks(len(types[0]))}) "
                    f"AND month IN ({marks(len(part))})",
                    (code, *types[0], *part),
                )
                tx.execute(
                    "INSERT INTO use_months "
                    "(sigungu_code, property_type, month, building_use, samples) "
                    "SELECT sigungu_code, property_type, month, COALESCE(building_use, ''), "
                    f"COUNT(*) FROM transactions WHERE {cohort_where(len(part), types)} "
                    "GROUP BY sigungu_code, property_type, month, COALESCE(building_use, '')",
                    cohort_params(code, part, types),
                )
