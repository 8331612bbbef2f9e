"""The ``cohort_months`` rollup: samples, contracts and bulk contracts per cohort, month,
source and building type, kept in the transaction that writes the transactions it
counts. Part of ``RealEstateRepo``, kept in its own module.

Samples move by increments. Contracts cannot (a new row may join a stored contract, or
make it bulk): the rows of one contract share every rollup key, contract date included,
so a write sets them exactly by recounting the district-months it touched that held
rows before (``_recount_contracts``: one indexed read per district of those months);
the months it creates get the counts of the rows it wrote."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from svc_core.realestate.changes import ALL_TYPES, Types
from svc_core.realestate.rollup import RollupRow, tally
from svc_server.store.base import (
    IN_CHUNK,
    WRITE_CHUNK,
    Database,
    Tx,
    chunks,
    equal_filters,
    marks,
    rows_as,
    select_in,
)
from svc_server.store.changes import by_district, cohort_params, cohort_where, month_parts
from svc_server.store.realestate_rows import (
    ROLLUP_COLUMNS,
    TYPE_UPDATE_SQL,
    RollupKey,
    rollup_units,
    row_keys,
)

_RECOUNT_SELECT = (
    "SELECT dong, property_type, transaction_type, month, source, building_type, "
    "COALESCE(contract_id, natural_key) AS contract FROM transactions WHERE "
)
"""The rows of one district's months with their contract (a row without a contract id
is one of its own), filtered by ``cohort_where``: every type is named, as the pulse's
read does, so the ``transactions_cohort`` index is walked with equality on every column
and the cost follows the months recounted, not the district (with a ``GROUP BY``
SQLite's planner scans the district's ``transactions_dong`` range instead)."""


def district_codes(rows: Iterable[RollupRow]) -> set[str]:
    """The district codes of ``rollup`` rows."""
    return {row.sigungu_code for row in rows}


class RollupTable:
    """Reads and writes of ``cohort_months``."""

    db: Database

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
    ) -> list[RollupRow]:
        """Rollup rows (never raw transactions): one per cohort, month, source and
        building type (``''`` unknown), with ``samples``, ``contracts`` and
        ``bulk_contracts``. District-level rows (``dong`` ``''``) unless ``dong_level`` (dong
        rows); both when ``dong_level`` is None. Aggregation is left to the caller: a
        plain scan is several times faster than a SQL ``GROUP BY`` here. ``tx`` reads
        inside an open (write) transaction."""
        sql = (
            "SELECT sigungu_code, dong, property_type, transaction_type, month, source, "
            "building_type, samples, contracts, bulk_contracts FROM cohort_months WHERE 1 = 1"
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
            return rows_as(RollupRow, tx.fetchall(sql, params))
        with self.db.transaction(write=False) as read:
            return rows_as(RollupRow, read.fetchall(sql, params))


class RollupWrites:
    """The writes of the cohort_months roll-up: only the one write path reaches
    them (``store.loading``)."""

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

    def _bump_rollup(
        self,
        tx: Tx,
        counts: Mapping[RollupKey, int],
        contracts: Mapping[RollupKey, Sequence[int]] | None = None,
    ) -> None:
        """Add ``counts`` samples; a key new to the table takes its contracts and bulk
        contracts from ``contracts`` ([samples, contracts, bulk], 0 when absent)."""
        known = contracts or {}
        rollup = [(*key, n, *known.get(key, (n, 0, 0))[1:]) for key, n in counts.items()]
        columns = ", ".join(ROLLUP_COLUMNS)
        for part in chunks(rollup, WRITE_CHUNK):
            tx.executemany(
                f"INSERT INTO cohort_months ({columns}, samples, contracts, bulk_contracts) "
                f"VALUES ({marks(len(ROLLUP_COLUMNS) + 3)}) "
                f"ON CONFLICT ({columns}) "
                "DO UPDATE SET samples = cohort_months.samples + excluded.samples",
                part,
            )

    def _rollup_months(
        self, tx: Tx, codes: Sequence[str], types: Types = ALL_TYPES
    ) -> set[tuple[str, str]]:
        """The (district, month) pairs of ``codes`` the rollup holds rows of ``types`` in."""
        found: set[tuple[str, str]] = set()
        ptypes, ttypes = types
        for part in chunks(codes, IN_CHUNK):
            rows = tx.fetchall(
                "SELECT DISTINCT sigungu_code, month FROM cohort_months "
                f"WHERE dong = '' AND sigungu_code IN ({marks(len(part))}) "
                f"AND property_type IN ({marks(len(ptypes))}) "
                f"AND transaction_type IN ({marks(len(ttypes))})",
                (*part, *ptypes, *ttypes),
            )
            found.update((r["sigungu_code"], r["month"]) for r in rows)
        return found

    def _recount_contracts(
        self, tx: Tx, months: Iterable[tuple[str, str]], types: Types = ALL_TYPES
    ) -> None:
        """Set the contracts and bulk contracts of every rollup row of ``types`` of these
        (district, month) pairs from the transactions they count."""
        where = " AND ".join(f"{c} = ?" for c in ROLLUP_COLUMNS)
        for code, wanted in by_district(months).items():
            for part in month_parts(wanted):
                rows = tx.fetchall(
                    _RECOUNT_SELECT + cohort_where(len(part), types),
                    cohort_params(code, part, types),
                )
                counted = tally(
                    unit
                    for r in rows
                    for unit in rollup_units(
                        code,
                        r["dong"],
                        (
                            r["property_type"],
                            r["transaction_type"],
                            r["month"],
                            r["source"],
                            r["building_type"] or "",
                        ),
                        r["contract"],
                        1,
                    )
                )
                tx.executemany(
                    f"UPDATE cohort_months SET contracts = ?, bulk_contracts = ? WHERE {where}",
                    [(c, bulk, *key) for key, (_, c, bulk) in counted.items()],
                )

    def _drop_rollup(self, tx: Tx, counts: Mapping[RollupKey, int]) -> None:
        where = " AND ".join(f"{c} = ?" for c in ROLLUP_COLUMNS)
        tx.executemany(
            f"UPDATE cohort_months SET samples = samples - ? WHERE {where}",
            [(n, *key) for key, n in counts.items()],
        )
        tx.executemany(f"DELETE FROM cohort_months WHERE samples <= 0 AND {where}", list(counts))
