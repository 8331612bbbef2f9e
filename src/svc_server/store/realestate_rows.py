"""Rows of the real-estate tables built in memory: transactions, the ``cohort_months``
rollup (samples, contracts and bulk contracts), and what the repository hands to services (``DataState``, ``deal``). No SQL:
shared by the store, demo data and the ingest bench."""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from svc_core.cohorts.contracts import contract_id
from svc_core.realestate.deal import Deal
from svc_core.realestate.freshness import MonthKey
from svc_core.realestate.rollup import KEYS, RollupRow, tally
from svc_server.store.base import Row
from svc_server.store.data_version import Version

if TYPE_CHECKING:
    from svc_core.models import Transaction


DETAIL_COLUMNS = (
    "deal_type",
    "seller_type",
    "buyer_type",
    "land_use",
    "broker_district",
    "building_name",
    "lease_kind",
    "term_start",
    "term_end",
    "renewal_right_used",
    "previous_deposit_krw",
    "previous_monthly_rent_krw",
    "contract_id",
    "land_category",
    "zoning",
    "industrial_use",
)
"""The parties, contract fields and contract id of a record (migration 0016), then its
land category, zoning and industrial use (0027), in order."""

FILLED_COLUMNS = (
    "building_type",
    "land_area_m2",
    "building_use",
    "floor",
    "build_year",
    "jibun",
    "load_id",
    *DETAIL_COLUMNS,
)
"""The columns a later read fills in a record stored without them (``TYPE_UPDATE_SQL``),
in order: the building type and its details, the load, the parties and contract."""

TRANSACTION_COLUMNS = (
    "natural_key",
    "source",
    "sigungu_code",
    "sigungu",
    "dong",
    "property_type",
    "transaction_type",
    "deal_date",
    "month",
    "price_krw",
    "monthly_rent_krw",
    "area_m2",
    "synthetic",
    *FILLED_COLUMNS,
)
"""The columns ``transaction_rows`` fills, in order."""

RollupKey = tuple[str, str, str, str, str, str, str]
"""(sigungu_code, dong or '', property_type, transaction_type, month, source,
building_type or '' when the source does not say)."""
ROLLUP_COLUMNS = KEYS
"""The key columns of ``cohort_months``, in ``RollupKey`` order."""


def transaction_rows(
    records: Iterable[Transaction], *, synthetic: bool, load_id: str | None = None
) -> list[tuple[Any, ...]]:
    """The ``transactions`` table's rows for ``records``, in ``TRANSACTION_COLUMNS`` order;
    ``load_id`` is the ``ingest_log`` id of the load writing them."""
    flag = int(synthetic)
    days: dict[datetime.date, tuple[str, str]] = {}  # a file repeats a few dozen dates
    rows: list[tuple[Any, ...]] = []
    for r in records:
        day = days.get(r.deal_date)
        if day is None:
            day = days[r.deal_date] = (r.deal_date.isoformat(), r.period_month)
        rows.append(
            (
                r.natural_key,
                r.source,
                r.sigungu_code,
                r.sigungu,
                r.dong,
                r.property_type,
                r.transaction_type,
                day[0],
                day[1],
                r.price_krw,
                r.monthly_rent_krw,
                r.area_m2,
                flag,
                *filled(r, load_id),
            )
        )
    return rows


def filled(r: Transaction, load_id: str | None) -> tuple[Any, ...]:
    """The ``FILLED_COLUMNS`` values of a record written by load ``load_id``."""
    used = r.renewal_right_used
    return (
        r.building_type,
        r.land_area_m2,
        r.building_use,
        r.floor,
        r.build_year,
        r.jibun,
        load_id,
        r.deal_type,
        r.seller_type,
        r.buyer_type,
        r.land_use,
        r.broker_district,
        r.building_name,
        r.lease_kind,
        r.term_start,
        r.term_end,
        None if used is None else int(used),
        r.previous_deposit_krw,
        r.previous_monthly_rent_krw,
        contract_id(r),
        r.land_category,
        r.zoning,
        r.industrial_use,
    )


TYPE_UPDATE_SQL = (
    "UPDATE transactions SET "
    + ", ".join(f"{c} = COALESCE({c}, ?)" for c in FILLED_COLUMNS)
    + " WHERE natural_key = ? AND (building_type IS NULL OR load_id IS NULL "
    "OR contract_id IS NULL OR (zoning IS NULL AND land_use IS NOT NULL))"
)
"""Gives a record stored before migration 0008 (no building type), 0011 (no published
details, no load), 0016 (no parties, contract fields or contract id) or 0027 (no zoning)
what a new read found; a column already filled keeps its value."""


def type_updates(
    records: Iterable[Transaction], stored: Collection[str], load_id: str | None = None
) -> list[tuple[Any, ...]]:
    """``TYPE_UPDATE_SQL`` parameters for the ``stored`` records among ``records``."""
    return [(*filled(r, load_id), r.natural_key) for r in records if r.natural_key in stored]


RollupCounts = dict[RollupKey, list[int]]
"""[samples, contracts, bulk contracts] per rollup key (``svc_core.realestate.coverage``:
the rows of one contract share every key, so contracts are counted within a key)."""

_ROLLUP_AT = tuple(TRANSACTION_COLUMNS.index(c) for c in (*KEYS, "contract_id"))


def rollup_units(
    code: str,
    dong: str | None,
    base: tuple[str, str, str, str, str],
    contract: str,
    n: int,
) -> Iterator[tuple[RollupKey, str, int]]:
    """``tally`` units of ``n`` rows of one contract: once for the district (dong ``''``)
    and once more for the dong when there is one; ``base`` is (property type, transaction
    type, month, source, building type or '')."""
    yield (code, "", *base), contract, n
    if dong:
        yield (code, dong, *base), contract, n


def rollup_counts(rows: Iterable[tuple[Any, ...]]) -> RollupCounts:
    """The ``cohort_months`` counts of ``transaction_rows`` alone: each row counts once
    for its district (dong ``''``) and once more for its dong when it has one."""
    code_at, dong_at, ptype_at, ttype_at, month_at, source_at, btype_at, cid_at = _ROLLUP_AT
    units: list[tuple[RollupKey, str, int]] = []
    for r in rows:
        base = (r[ptype_at], r[ttype_at], r[month_at], r[source_at], r[btype_at] or "")
        units.extend(rollup_units(r[code_at], r[dong_at], base, r[cid_at], 1))
    return tally(units)


def row_keys(rows: Iterable[Row], building_type: str | None = None) -> Counter[RollupKey]:
    """The rollup keys of stored transaction rows (``building_type`` overriding theirs
    when given), counted as ``rollup_counts`` counts records."""
    counts: Counter[RollupKey] = Counter()
    for r in rows:
        btype = (building_type if building_type is not None else r["building_type"]) or ""
        base = (r["property_type"], r["transaction_type"], r["month"], r["source"], btype)
        counts[(r["sigungu_code"], "", *base)] += 1
        if r["dong"]:
            counts[(r["sigungu_code"], r["dong"], *base)] += 1
    return counts


def rollup_rows(counts: Mapping[RollupKey, Sequence[int]]) -> list[RollupRow]:
    """Rollup counts as the rows ``RealEstateRepo.rollup`` returns."""
    return [RollupRow(*key, *n) for key, n in counts.items()]


@attrs.frozen(kw_only=True)
class DataState:
    """What every real-estate answer needs to know about the store, per data version.

    ``latest_month`` ends rolling pulse windows, ``latest_index_period`` rolling index
    windows; ``exclusions`` (transactions excluded at ingest, by reason, each distinct
    RTMS file counted once) feed ``coverage_note``; ``synthetic`` is true once demo data
    was loaded; ``coverage_complete`` is false while some district lacks precomputed
    coverage rows; ``incomplete`` holds the district-months (sync kind, code, month)
    known to be incomplete (``svc_core.realestate.freshness``);
    ``transactions_changed`` and ``indices_changed`` say when each district's records
    and index values last changed (unix seconds; ``store.changes``), from which an
    answer's ``data_as_of`` follows (``svc_core.realestate.common.data_as_of``);
    ``transactions_versions`` and ``indices_versions`` hold each district's data version
    (the latest change id behind it, ``store.change_records``), an answer's
    ``data_version``.
    """

    version: Version
    latest_month: str | None
    latest_index_period: str | None
    exclusions: Mapping[str, int]
    synthetic: bool
    coverage_complete: bool = True
    incomplete: frozenset[MonthKey] = frozenset()
    transactions_changed: Mapping[str, int] = attrs.field(factory=dict)
    indices_changed: Mapping[str, int] = attrs.field(factory=dict)
    transactions_versions: Mapping[str, int] = attrs.field(factory=dict)
    indices_versions: Mapping[str, int] = attrs.field(factory=dict)


def deal(r: Row) -> Deal:
    """A stored transaction as the pulse computation reads it."""
    return Deal(
        price=int(r["price_krw"]),
        monthly_rent=None if r["monthly_rent_krw"] is None else int(r["monthly_rent_krw"]),
        area=None if r["area_m2"] is None else float(r["area_m2"]),
        source=str(r["source"]),
        sigungu_code=r["sigungu_code"],
        sigungu=str(r["sigungu"]),
        dong=r["dong"],
        property_type=r["property_type"],
        transaction_type=r["transaction_type"],
        month=r["month"],
        synthetic=bool(r["synthetic"]),
        building_type=r["building_type"],
        land_area=None if r["land_area_m2"] is None else float(r["land_area_m2"]),
        building_use=r["building_use"],
        contract_id=r["contract_id"],
        lease_kind=r["lease_kind"],
        deal_type=r["deal_type"],
        buyer_type=r["buyer_type"],
        deal_date=str(r["deal_date"]),
        industrial_use=r["industrial_use"],
        land_category=r["land_category"],
        zoning=r["zoning"],
    )
