"""The ``cohort_months`` rollup: samples per cohort, month, source and building type,
kept in the transaction that writes the transactions it counts. Part of
``RealEstateRepo``, kept in its own module."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from svc_server.store.base import (
    WRITE_CHUNK,
    Database,
    Row,
    Tx,
    chunks,
    equal_filters,
    marks,
    select_in,
)
from svc_server.store.realestate_rows import (
    ROLLUP_COLUMNS,
    TYPE_UPDATE_SQL,
    RollupKey,
    row_keys,
)


def district_codes(rows: Sequence[Mapping[str, Any]]) -> set[str]:
    """The district codes of ``rollup`` rows (which ``svc_core`` reads as mappings)."""
    return {str(row["sigungu_code"]) for row in rows}


class RollupTable:
    """Reads and writes of ``cohort_months``."""

    db: Database

    def _retype(self, tx: Tx, updates: Sequence[tuple[Any, ...]]) -> set[str]:
        """Apply ``TYPE_UPDATE_SQL`` (rows of ``type_updates``: building type first,
        natural key last) and move the records that had no type in the rollup from the
        unknown type to theirs; return their districts."""
        typed = {u[-1]: u[0] for u in updates if u[0] is not None}
        rows = select_in(
            tx,
            "SELECT natural_key, sigungu_code, dong, property_type, transaction_type, month, "
            "source, building_type FROM transactions WHERE building_type IS NULL "
            "AND natural_key IN",
            list(typed),
        )
        for part in chunks(updates, WRITE_CHUNK):
            tx.executemany(TYPE_UPDATE_SQL, part)
        if not rows:
            return set()
        self._drop_rollup(tx, row_keys(rows))
        gained: Counter[RollupKey] = Counter()
        for r in rows:
            gained.update(row_keys([r], typed[r["natural_key"]]))
        self._bump_rollup(tx, gained)
        return {r["sigungu_code"] for r in rows}

    def _bump_rollup(self, tx: Tx, counts: Mapping[RollupKey, int]) -> None:
        rollup = [(*key, n) for key, n in counts.items()]
        columns = ", ".join(ROLLUP_COLUMNS)
        for part in chunks(rollup, WRITE_CHUNK):
            tx.executemany(
                f"INSERT INTO cohort_months ({columns}, samples) "
                f"VALUES ({marks(len(ROLLUP_COLUMNS) + 1)}) "
                f"ON CONFLICT ({columns}) "
                "DO UPDATE SET samples = cohort_months.samples + excluded.samples",
                part,
            )

    def _drop_rollup(self, tx: Tx, counts: Mapping[RollupKey, int]) -> None:
        where = " AND ".join(f"{c} = ?" for c in ROLLUP_COLUMNS)
        tx.executemany(
            f"UPDATE cohort_months SET samples = samples - ? WHERE {where}",
            [(n, *key) for key, n in counts.items()],
        )
        tx.executemany(f"DELETE FROM cohort_months WHERE samples <= 0 AND {where}", list(counts))

    def rollup(
        self,
        *,
        codes: Sequence[str] | None = None,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong_level: bool | None = False,
        dong: str | None = None,
        month_from: str | None = None,
        month_to: str | None = None,
        tx: Tx | None = None,
    ) -> list[Row]:
        """Rollup rows (never raw transactions): one per cohort, month, source and
        building type (``''`` unknown), with ``samples``. District-level rows (``dong`` ``''``) unless ``dong_level`` (dong
        rows); both when ``dong_level`` is None. Aggregation is left to the caller: a
        plain scan is several times faster than a SQL ``GROUP BY`` here. ``tx`` reads
        inside an open (write) transaction."""
        sql = (
            "SELECT sigungu_code, dong, property_type, transaction_type, month, source, "
            "building_type, samples FROM cohort_months WHERE 1 = 1"
        )
        if dong_level is not None:
            sql += " AND dong <> ''" if dong_level else " AND dong = ''"
        params: list[Any] = []
        if codes is not None:
            if not codes:
                return []
            sql += f" AND sigungu_code IN ({marks(len(codes))})"
            params.extend(codes)
        where, equal = equal_filters(
            property_type=property_type, transaction_type=transaction_type, dong=dong
        )
        sql += where
        params.extend(equal)
        if month_from is not None:
            sql += " AND month >= ?"
            params.append(month_from)
        if month_to is not None:
            sql += " AND month <= ?"
            params.append(month_to)
        if tx is not None:
            return tx.fetchall(sql, params)
        with self.db.transaction(write=False) as read:
            return read.fetchall(sql, params)
