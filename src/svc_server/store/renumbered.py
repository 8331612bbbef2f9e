"""What a load reads and removes to count a deal once across a district's renumbering
(``svc_core.realestate.renumbered``; the rule is applied by ``ingest.writer``).

``twins`` reads the records, kept and excluded, of some district-months with the fields
their ``twin_key`` is made of; ``delete_excluded`` removes excluded records a load
superseded (kept ones go through ``RealEstateRepo.delete_transactions``, which moves
the roll-up with them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from svc_core.realestate.renumbered import StoredTwin
from svc_server.store.base import Database, Tx, marks, select_in
from svc_server.store.change_records import MovedRecord
from svc_server.store.changes import MonthPair, by_district, month_parts

TWIN_COLUMNS = (
    "natural_key, sigungu_code, month, property_type, transaction_type, deal_date, dong, "
    "price_krw, monthly_rent_krw, area_m2, floor, building_type, building_name"
)
"""What ``twins`` reads of each record: ``StoredTwin``'s columns."""


class RenumberedReads:
    """Twins and excluded-record removal (mixed into ``RealEstateRepo``)."""

    db: Database

    def twins(self, tx: Tx, pairs: Iterable[MonthPair]) -> list[StoredTwin]:
        """Every record, kept and excluded, of the district-months ``pairs``."""
        out: list[StoredTwin] = []
        for code, months in by_district(pairs).items():
            for part in month_parts(months):
                for table, excluded in (("transactions", False), ("excluded_transactions", True)):
                    rows = tx.fetchall(
                        f"SELECT {TWIN_COLUMNS} FROM {table} WHERE sigungu_code = ? "
                        f"AND month IN ({marks(len(part))})",
                        (code, *part),
                    )
                    out.extend(StoredTwin(**r, excluded=excluded) for r in rows)
        return out


class RenumberedWrites:
    """The writes of a renumbered district's excluded twins: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def delete_excluded(
        self, tx: Tx, keys: Sequence[str], *, moved: list[MovedRecord] | None = None
    ) -> set[MonthPair]:
        """Remove the excluded records ``keys``; their district-months. ``moved``, when
        given, receives each as ``excluded`` (a move of an excluded record: its types,
        no kept deal counted)."""
        rows = select_in(
            tx,
            "SELECT natural_key, sigungu_code, month, property_type, transaction_type "
            "FROM excluded_transactions WHERE natural_key IN",
            keys,
        )
        tx.executemany(
            "DELETE FROM excluded_transactions WHERE natural_key = ?",
            [(r["natural_key"],) for r in rows],
        )
        if moved is not None:
            moved.extend(
                (
                    "excluded",
                    r["sigungu_code"],
                    r["month"],
                    r["property_type"],
                    r["transaction_type"],
                )
                for r in rows
            )
        return {(str(r["sigungu_code"]), str(r["month"])) for r in rows}
