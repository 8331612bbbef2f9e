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

A ``contract_id`` narrows the selection to one contract's rows; a row stored before
migration 0016 (NULL ``contract_id``) is its own contract, whose id
(``svc_core.cohorts.contracts.own_contract_id``) only its natural key gives, so such rows of the
selection are found by computing theirs. The contract listing reads whole contracts:
a page of contract keys (``CONTRACT_KEY``: the contract id, or the natural key of such a
row) in the order contract date, contract key, then every row of those contracts.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from svc_core.cohorts.contracts import own_contract_id
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.cursor import SortKey
from svc_core.realestate.listing_row import ListingRow
from svc_server.store.base import (
    WRITE_CHUNK,
    Database,
    Tx,
    chunks,
    equal_filters,
    marks,
    rows_as,
    select_in,
)
from svc_server.store.realestate_rows import (
    DETAIL_COLUMNS,
    TRANSACTION_COLUMNS,
    transaction_rows,
)

if TYPE_CHECKING:
    from svc_core.sources import ExcludedRecord

EXCLUDED_COLUMNS = ("reason", *TRANSACTION_COLUMNS, "cancellation_date")
"""The columns of ``excluded_transactions`` ``insert_excluded`` fills, in order."""
LISTED = (
    "natural_key, source, sigungu_code, sigungu, dong, property_type, transaction_type, "
    "deal_date, month, price_krw, monthly_rent_krw, area_m2, synthetic, building_type, "
    "land_area_m2, building_use, floor, build_year, jibun, load_id, " + ", ".join(DETAIL_COLUMNS)
)
"""What a listing reads of each record (both tables have these columns)."""
EXCLUDED_UPDATE = (
    "load_id = CASE WHEN excluded_transactions.reason <> excluded.reason "
    "THEN excluded.load_id ELSE excluded_transactions.load_id END, "
    "reason = excluded.reason, "
    "cancellation_date = COALESCE(excluded.cancellation_date, "
    "excluded_transactions.cancellation_date), "
    + ", ".join(f"{c} = COALESCE(excluded_transactions.{c}, excluded.{c})" for c in DETAIL_COLUMNS)
)
"""What a later load changes of an excluded record already kept: the reason (and its
load) when it changed, its cancellation date when the read gives one, and the columns of
migration 0016 it was stored without."""
CONTRACT_KEY = "COALESCE(contract_id, natural_key)"
"""What orders and groups the contract listing: the contract id, or for a row stored
before migration 0016 its natural key (a contract of its own)."""


@attrs.frozen(kw_only=True)
class Selection:
    """Which records a listing reads: districts ``codes`` (a code and its aliases), the
    ``months`` of the period (consecutive, ``YYYY-MM``), the type filters (None = every
    type), one ``dong`` or, with ``dong_level``, every record that names a dong,
    ``building_type``, ``lease_kind``, ``deal_type`` and ``buyer_type`` (None = whatever
    the record says) and ``contract_id`` (None = every contract)."""

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
    industrial_use: str | None = None
    land_category: str | None = None
    zoning: str | None = None
    include_excluded: bool = False
    contract_id: str | None = None


def _where(selection: Selection, own: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """The cohort's conditions (without ``WHERE``) and their parameters; ``own`` are the
    natural keys of rows without a stored contract id whose own contract is
    ``selection.contract_id`` (``_own_keys``)."""
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
        industrial_use=selection.industrial_use,
        land_category=selection.land_category,
        zoning=selection.zoning,
    )
    sql += more
    params += equal
    if selection.contract_id is not None:
        params.append(selection.contract_id)
        if own:
            sql += f" AND (contract_id = ? OR natural_key IN ({marks(len(own))}))"
            params += own
        else:
            sql += " AND contract_id = ?"
    return sql, params


def _own_keys(tx: Tx, table: str, selection: Selection) -> list[str]:
    """The natural keys of the rows of ``table`` in ``selection`` stored without a
    contract id (before migration 0016) whose own contract is the one it asks for."""
    wanted = selection.contract_id
    if wanted is None:
        return []
    where, params = _where(attrs.evolve(selection, contract_id=None))
    rows = tx.fetchall(
        f"SELECT natural_key FROM {table} WHERE {where} AND contract_id IS NULL", params
    )
    keys = (str(r["natural_key"]) for r in rows)
    return [k for k in keys if own_contract_id(k) == wanted]


def _after(after: SortKey | None, flag: int) -> tuple[str, list[Any]]:
    """Records of a table whose flag is ``flag`` that sort after ``after``. The plain
    ``deal_date >= ?`` is what lets PostgreSQL start the index walk at the cursor: from
    the ``OR`` alone it walked from the selection's first day on every page (19 ms for a
    page deep in a 100,000-deal CSV at 5M deals, 2 ms with it)."""
    if after is None:
        return "", []
    date, key, last = after
    compare = ">=" if flag > last else ">"
    return (
        f" AND deal_date >= ? AND (deal_date > ? OR (deal_date = ? AND natural_key {compare} ?))",
        [date, date, date, key],
    )


def _after_contract(after: SortKey | None) -> tuple[str, list[Any]]:
    """Rows of the contracts that sort after the contract ``after`` ends (``deal_date >=
    ?`` as in ``_after``)."""
    if after is None:
        return "", []
    date, key, _ = after
    return (
        f" AND deal_date >= ? AND (deal_date > ? OR (deal_date = ? AND {CONTRACT_KEY} > ?))",
        [date, date, date, key],
    )


def _branch(
    tx: Tx, table: str, flag: int, selection: Selection, after: SortKey | None
) -> tuple[str, list[Any]]:
    where, params = _where(selection, _own_keys(tx, table, selection))
    later, more = _after(after, flag)
    reason, cancelled = ("reason", "cancellation_date") if flag else (_NULL, _NULL)
    sql = (
        f"SELECT {LISTED}, {flag} AS is_excluded, {reason} AS reason, "
        f"{cancelled} AS cancellation_date, {CONTRACT_KEY} AS contract_key "
        f"FROM {table} WHERE {where}"
    )
    return sql + later, params + more


_NULL = "CAST(NULL AS TEXT)"


def _iso(day: datetime.date | None) -> str | None:
    return None if day is None else day.isoformat()


def any_synthetic(rows: Sequence[ListingRow]) -> bool:
    """Whether any ``listing`` row is demonstration data (``synthetic``)."""
    return any(row.synthetic for row in rows)


class TransactionListing:
    """Excluded records and the listing reads (mixed into ``RealEstateRepo``)."""

    db: Database

    def listed_months(self) -> list[tuple[str, str]]:
        """Every (district code, month) holding a record, kept or excluded, in order."""
        sql = (
            "SELECT sigungu_code, month FROM transactions UNION "
            "SELECT sigungu_code, month FROM excluded_transactions ORDER BY 1, 2"
        )
        with self.db.transaction(write=False) as tx:
            return [(str(r["sigungu_code"]), str(r["month"])) for r in tx.fetchall(sql, [])]

    def listing(
        self, selection: Selection, *, after: SortKey | None, limit: int
    ) -> list[ListingRow]:
        """Up to ``limit`` records of ``selection`` after ``after`` in the listing order,
        each with ``is_excluded`` (0 or 1) and ``reason`` (None for a kept record)."""
        if not selection.codes or not selection.months:
            return []
        with self.db.transaction(write=False) as tx:
            sql, params = _branch(tx, "transactions", 0, selection, after)
            if selection.include_excluded:
                # Each table's first ``limit`` in order, then the two merged: each branch
                # walks its listing index and stops. Over a plain UNION ALL, PostgreSQL
                # sorted the whole rest of the selection for every page (a CSV of 100,000
                # deals: 100 pages, each slower than the one before).
                more, more_params = _branch(tx, "excluded_transactions", 1, selection, after)
                sql = (
                    f"SELECT * FROM ({sql} ORDER BY deal_date, natural_key LIMIT ?) AS kept "
                    f"UNION ALL SELECT * FROM ({more} ORDER BY deal_date, natural_key LIMIT ?) "
                    "AS dropped"
                )
                params += [limit, *more_params, limit]
            sql += " ORDER BY deal_date, natural_key, is_excluded LIMIT ?"
            params.append(limit)
            rows = tx.fetchall(sql, params)
        return rows_as(ListingRow, rows)

    def contract_listing(
        self, selection: Selection, *, after: SortKey | None, limit: int
    ) -> tuple[list[ListingRow], bool]:
        """Every kept row of the first ``limit`` contracts of ``selection`` after the
        contract ``after`` (a ``contract_sort_key``), in the order contract date, contract
        key (``contract_key``), natural key; and whether more contracts follow."""
        if not selection.codes or not selection.months:
            return [], False
        with self.db.transaction(write=False) as tx:
            where, params = _where(selection, _own_keys(tx, "transactions", selection))
            later, more = _after_contract(after)
            keys = tx.fetchall(
                f"SELECT DISTINCT deal_date, {CONTRACT_KEY} AS contract_key FROM transactions "
                f"WHERE {where}{later} ORDER BY deal_date, contract_key LIMIT ?",
                [*params, *more, limit + 1],
            )
            if not keys:
                return [], False
            last = keys[min(limit, len(keys)) - 1]
            date, key = str(last["deal_date"]), str(last["contract_key"])
            rows = tx.fetchall(
                f"SELECT {LISTED}, 0 AS is_excluded, {_NULL} AS reason, "
                f"{_NULL} AS cancellation_date, {CONTRACT_KEY} AS contract_key "
                f"FROM transactions WHERE {where}{later} "
                f"AND (deal_date < ? OR (deal_date = ? AND {CONTRACT_KEY} <= ?)) "
                "ORDER BY deal_date, contract_key, natural_key",
                [*params, *more, date, date, key],
            )
        return rows_as(ListingRow, rows), len(keys) > limit

    def listing_size(
        self, selection: Selection, *, by_contract: bool = False
    ) -> tuple[dict[str, int], int]:
        """What ``selection`` holds: kept records (contracts, ``by_contract``) per source,
        and excluded records (0 unless ``include_excluded``)."""
        if not selection.codes or not selection.months:
            return {}, 0
        count = f"COUNT(DISTINCT {CONTRACT_KEY})" if by_contract else "COUNT(*)"
        with self.db.transaction(write=False) as tx:
            where, params = _where(selection, _own_keys(tx, "transactions", selection))
            kept = tx.fetchall(
                f"SELECT source, {count} AS n FROM transactions WHERE {where} GROUP BY source",
                params,
            )
            excluded = None
            if selection.include_excluded:
                where, params = _where(selection, _own_keys(tx, "excluded_transactions", selection))
                excluded = tx.fetchone(
                    f"SELECT COUNT(*) AS n FROM excluded_transactions WHERE {where}", params
                )
        return {str(r["source"]): int(r["n"]) for r in kept}, int(excluded["n"]) if excluded else 0


class ExcludedWrites:
    """The writes of excluded records: only the one write path reaches them (``store.loading``)."""

    db: Database

    def insert_excluded(
        self,
        tx: Tx,
        records: Sequence[ExcludedRecord],
        *,
        load_id: str,
        synthetic: bool = False,
        moved: list[tuple[str, str, str, str, str]] | None = None,
    ) -> int:
        """Keep the records a load excluded, with their reason and the load's id; a record
        already kept takes the reason (and load) a later load gives it (a partial share
        reported as cancelled afterwards), and a record kept before migration 0016 the
        parties, contract fields and contract id it read. Returns the records written;
        ``moved``, when given, receives those new or rewritten as ``excluded``
        (``store.change_records.MovedRecord``)."""
        if moved is not None:
            stored = {
                r["natural_key"]: r
                for r in select_in(
                    tx,
                    "SELECT natural_key, reason, contract_id, cancellation_date "
                    "FROM excluded_transactions "
                    "WHERE natural_key IN",
                    [item.record.natural_key for item in records],
                )
            }
            for item in records:
                old = stored.get(item.record.natural_key)
                dated = item.cancelled_on is not None and old is not None
                if (
                    old is None
                    or old["reason"] != item.reason
                    or old["contract_id"] is None
                    or (dated and old["cancellation_date"] is None)
                ):
                    r = item.record
                    moved.append(
                        (
                            "excluded",
                            r.sigungu_code,
                            r.period_month,
                            r.property_type,
                            r.transaction_type,
                        )
                    )
        rows = [
            (item.reason, *row, _iso(item.cancelled_on))
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
                f"SET {EXCLUDED_UPDATE} WHERE excluded_transactions.reason <> excluded.reason "
                "OR excluded_transactions.contract_id IS NULL OR (excluded.cancellation_date "
                "IS NOT NULL AND excluded_transactions.cancellation_date IS NULL)",
                part,
            )
        return len(rows)
