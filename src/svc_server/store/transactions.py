"""The records behind a figure: excluded records written at load, and the keyset reads of
``GET /api/v1/real-estate/transactions``.

``excluded_transactions`` (migration 0011) keeps what a load excluded by rule, with the
reason ``ingest_log.excluded`` counts and the load's id; nothing else reads it, so
excluded records never enter the rollup or any aggregate.

A listing reads one cohort (the same ``IN`` lists and filters as ``RealEstateRepo.samples``,
so it is exactly the records a pulse row is computed from) in a total order: contract
date, then natural key, then kept before excluded. Paging is by keyset: ``after`` is the
last sort key returned, so a page costs the same wherever it starts and a load between
two pages neither repeats nor skips a record that was there before. With
``include_excluded`` the two tables are read as one ``UNION ALL`` in that order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.cursor import SortKey
from svc_server.store.base import WRITE_CHUNK, Database, Row, Tx, chunks, equal_filters, marks
from svc_server.store.realestate_rows import TRANSACTION_COLUMNS, transaction_rows

if TYPE_CHECKING:
    from svc_core.sources import ExcludedRecord

EXCLUDED_COLUMNS = ("reason", *TRANSACTION_COLUMNS)
"""The columns of ``excluded_transactions`` ``insert_excluded`` fills, in order."""
LISTED = (
    "natural_key, source, sigungu_code, sigungu, dong, property_type, transaction_type, "
    "deal_date, month, price_krw, monthly_rent_krw, area_m2, synthetic, building_type, "
    "land_area_m2, building_use, floor, build_year, jibun, load_id"
)
"""What a listing reads of each record (both tables have these columns)."""


@attrs.frozen(kw_only=True)
class Selection:
    """Which records a listing reads: districts ``codes`` (a code and its aliases), the
    ``months`` of the period (consecutive, ``YYYY-MM``), the type filters (None = every
    type), one ``dong`` or, with ``dong_level``, every record that names a dong, and
    ``building_type``, ``lease_kind``, ``deal_type`` and ``buyer_type`` (None = whatever
    the record says)."""

    codes: tuple[str, ...]
    months: tuple[str, ...]
    property_type: str | None = None
    transaction_type: str | None = None
    dong: str | None = None
    dong_level: bool = False
    building_type: str | None = None
    lease_kind: str | None = None
    deal_type: str | None = None
    buyer_type: str | None = None
    include_excluded: bool = False


def _where(selection: Selection) -> tuple[str, list[Any]]:
    """The cohort's conditions (without ``WHERE``) and their parameters."""
    ptypes = PROPERTY_TYPES if selection.property_type is None else (selection.property_type,)
    ttypes = (
        TRANSACTION_TYPES if selection.transaction_type is None else (selection.transaction_type,)
    )
    months = sorted(selection.months)
    sql = (
        f"sigungu_code IN ({marks(len(selection.codes))})"
        f" AND property_type IN ({marks(len(ptypes))})"
        f" AND transaction_type IN ({marks(len(ttypes))})"
        f" AND month IN ({marks(len(months))})"
        " AND deal_date >= ? AND deal_date <= ?"
    )
    params: list[Any] = [*selection.codes, *ptypes, *ttypes, *months]
    params += [f"{months[0]}-01", f"{months[-1]}-31"]
    if selection.dong is not None:
        sql += " AND dong = ?"
        params.append(selection.dong)
    elif selection.dong_level:
        sql += " AND dong IS NOT NULL AND dong <> ''"
    more, equal = equal_filters(
        building_type=selection.building_type,
        lease_kind=selection.lease_kind,
        deal_type=selection.deal_type,
        buyer_type=selection.buyer_type,
    )
    return sql + more, params + equal


def _after(after: SortKey | None, flag: int) -> tuple[str, list[Any]]:
    """Records of a table whose flag is ``flag`` that sort after ``after``."""
    if after is None:
        return "", []
    date, key, last = after
    compare = ">=" if flag > last else ">"
    return (
        f" AND (deal_date > ? OR (deal_date = ? AND natural_key {compare} ?))",
        [date, date, key],
    )


def _branch(
    table: str, flag: int, selection: Selection, after: SortKey | None
) -> tuple[str, list[Any]]:
    where, params = _where(selection)
    later, more = _after(after, flag)
    reason = "reason" if flag else "CAST(NULL AS TEXT)"
    sql = f"SELECT {LISTED}, {flag} AS is_excluded, {reason} AS reason FROM {table} WHERE {where}"
    return sql + later, params + more


def any_synthetic(rows: Sequence[Row]) -> bool:
    """Whether any ``listing`` row is demonstration data (``synthetic``)."""
    return any(row["synthetic"] for row in rows)


class TransactionListing:
    """Excluded records and the listing reads (mixed into ``RealEstateRepo``)."""

    db: Database

    def insert_excluded(
        self,
        tx: Tx,
        records: Sequence[ExcludedRecord],
        *,
        load_id: str,
        synthetic: bool = False,
    ) -> int:
        """Keep the records a load excluded, with their reason and the load's id; a record
        already kept takes the reason a later load gives it (a partial share reported as
        cancelled afterwards). Returns the records written."""
        rows = [
            (item.reason, *row)
            for item, row in zip(
                records,
                transaction_rows([r.record for r in records], synthetic=synthetic, load_id=load_id),
                strict=True,
            )
        ]
        for part in chunks(rows, WRITE_CHUNK):
            tx.executemany(
                f"INSERT INTO excluded_transactions ({', '.join(EXCLUDED_COLUMNS)}) "
                f"VALUES ({marks(len(EXCLUDED_COLUMNS))}) ON CONFLICT (natural_key) DO UPDATE "
                "SET reason = excluded.reason, load_id = excluded.load_id "
                "WHERE excluded_transactions.reason <> excluded.reason",
                part,
            )
        return len(rows)

    def listing(self, selection: Selection, *, after: SortKey | None, limit: int) -> list[Row]:
        """Up to ``limit`` records of ``selection`` after ``after`` in the listing order,
        each with ``is_excluded`` (0 or 1) and ``reason`` (None for a kept record)."""
        if not selection.codes or not selection.months:
            return []
        sql, params = _branch("transactions", 0, selection, after)
        if selection.include_excluded:
            more, more_params = _branch("excluded_transactions", 1, selection, after)
            sql = f"{sql} UNION ALL {more}"
            params += more_params
        sql += " ORDER BY deal_date, natural_key, is_excluded LIMIT ?"
        params.append(limit)
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(sql, params)

    def listing_size(self, selection: Selection) -> tuple[dict[str, int], int]:
        """What ``selection`` holds: kept records per source, and excluded records (0
        unless ``include_excluded``)."""
        if not selection.codes or not selection.months:
            return {}, 0
        where, params = _where(selection)
        with self.db.transaction(write=False) as tx:
            kept = tx.fetchall(
                f"SELECT source, COUNT(*) AS n FROM transactions WHERE {where} GROUP BY source",
                params,
            )
            excluded = (
                tx.fetchone(
                    f"SELECT COUNT(*) AS n FROM excluded_transactions WHERE {where}", params
                )
                if selection.include_excluded
                else None
            )
        return {str(r["source"]): int(r["n"]) for r in kept}, int(excluded["n"]) if excluded else 0
