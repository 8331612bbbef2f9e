"""One record of ``GET /api/v1/real-estate/transactions`` (``TransactionRecord``): a deal
as the source published it, with the contract it belongs to and what the source says of
the parties and the contract (issue 28).

``record_of`` builds it from a stored row (``ListingRow``: the server's listing), ``transaction_record``
from a ``Transaction`` (the library), so both serve the same record for the same deal.
"""

from __future__ import annotations

import datetime

import attrs

from svc_core.cohorts.contracts import ID_DIGITS, contract_id, own_contract_id
from svc_core.json_schema import Schema, boolean, doc, enum, integer, nullable, number, string
from svc_core.models import (
    BUILDING_TYPES,
    DEAL_TYPES,
    INDUSTRIAL_USES,
    LEASE_KINDS,
    PARTY_TYPES,
    TERM_MONTH,
    Transaction,
)
from svc_core.realestate.listing_row import ListingRow
from svc_core.realestate.row_docs import (
    BUILD_YEAR,
    JIBUN,
    KRW_OR_NULL,
    PROPERTY_TYPE,
    SIGUNGU_CODE,
    SOURCE,
    TRANSACTION_TYPE,
)
from svc_core.same_named import SameNamed

DEAL_TYPE_SINCE = "2021-11-01"
"""RTMS publishes ``dealingGbn`` and ``estateAgentSggNm`` for contracts from this date."""
PARTY_TYPE_SINCE = "2024-01-01"
"""RTMS publishes ``slerGbn`` and ``buyerGbn`` of commercial sales from this date."""
LEASE_TERMS_SINCE = "2021-06-01"
"""Leases are reported (and the officetel rent API carries ``contractType``,
``contractTerm``, ``useRRRight`` and the previous terms) for contracts from this date."""
PUBLISHED_SINCE: dict[str, str] = {
    "deal_type": DEAL_TYPE_SINCE,
    "broker_district": DEAL_TYPE_SINCE,
    "seller_type": PARTY_TYPE_SINCE,
    "buyer_type": PARTY_TYPE_SINCE,
    "lease_kind": LEASE_TERMS_SINCE,
    "term_start": LEASE_TERMS_SINCE,
    "term_end": LEASE_TERMS_SINCE,
    "renewal_right_used": LEASE_TERMS_SINCE,
    "previous_deposit_krw": LEASE_TERMS_SINCE,
    "previous_monthly_rent_krw": LEASE_TERMS_SINCE,
}
"""The first contract date for which the source publishes a field: a blank on an earlier
contract means "not collected", not "no"."""
TERM_PATTERN = f"^{TERM_MONTH.pattern}$"
"""A lease term's month, as a JSON schema pattern."""


def _since(date: str) -> str:
    return f"collected for contracts from {date} (null before: not collected)."


def _term_month(text: str) -> Schema:
    """A lease term's first or last month (``text``), ``YYYY-MM``."""
    return nullable(
        string(f"Leases: {text}, YYYY-MM; {_since(LEASE_TERMS_SINCE)}", pattern=TERM_PATTERN)
    )


def _previous_lease(text: str) -> Schema:
    """An amount (``text``) of the lease a renewal renews, in KRW."""
    return nullable(
        integer(
            f"Lease renewals: the previous lease's {text}; {_since(LEASE_TERMS_SINCE)}", minimum=0
        )
    )


def _party_type(role: str, tag: str) -> Schema:
    """A seller or buyer type of a record or contract."""
    return nullable(
        enum(
            PARTY_TYPES,
            f"The {role}'s kind (RTMS {tag}: 개인 individual, 법인 company, 공공기관 "
            f"public_body, 기타 other); sales only; for commercial sales "
            f"{_since(PARTY_TYPE_SINCE)}",
        )
    )


SELLER_TYPE = _party_type("seller", "slerGbn")
BUYER_TYPE = _party_type("buyer", "buyerGbn")
CONTRACT_ID = string(
    "The contract the record belongs to: the units of one bulk sale (same district, dong, "
    "lot, contract date, deal, seller and buyer type, building use, build year, property "
    "and building type) share it; a lease, or a sale naming no lot, is a contract of its "
    "own. c + 24 hex digits, the same on every load of the same data; pass it as "
    "contract_id to list the contract's records.",
    pattern=f"^c[0-9a-f]{{{ID_DIGITS}}}$",
)
DEAL_TYPE = nullable(
    enum(
        DEAL_TYPES,
        "brokered (RTMS dealingGbn 중개거래) or direct (직거래); sales only; "
        f"{_since(DEAL_TYPE_SINCE)}",
    )
)
CONTRACT_DATE = string("Contract date as published.", format="date")
SIGUNGU = string("District name as the record carries it.")
DONG = nullable(string("Legal dong, when published."))
BUILDING_TYPE = nullable(
    enum(BUILDING_TYPES, "whole_building (RTMS 일반) or unit (집합); null when unknown.")
)
BUILDING_USE = nullable(string("Building use (RTMS buildingUse, 용도) as published."))
"""The schemas of the fields a record and a contract share (``contract_record``)."""


@attrs.frozen(kw_only=True)
class TransactionRecord:
    """One record as the source published it (amounts in whole KRW, areas in m²).

    ``price_krw`` is a sale's price and ``deposit_krw`` a lease's deposit (the other is
    None); ``building_area_m2`` is a commercial deal's building area (RTMS
    ``buildingAr``) and ``exclusive_area_m2`` an officetel's exclusive area
    (``excluUseAr``); ``land_area_m2`` the land of a whole building. ``jibun`` is the lot
    number as published (masked digits such as ``1**`` stay masked). ``load_id`` is the
    ``ingest_log`` id of the load that stored the record. ``excluded`` records (only with
    ``include_excluded=true``) carry their ``excluded_reason``, and a cancelled one its
    ``cancellation_date`` when the source gave it.

    ``contract_id`` is the contract the record belongs to (``svc_core.cohorts.contracts``; the
    units of one bulk sale share it): never None, a record stored before contracts were
    kept has the id of a contract of its own. The fields after it are what the source
    publishes of the parties and the contract (``Transaction``'s, None when blank; from
    the contract dates of ``PUBLISHED_SINCE``).
    """

    natural_key: str = attrs.field(
        metadata=doc(
            string(
                "The record's stable id: source, district, month, digest of its published "
                "fields and ordinal; the listing's tiebreak."
            )
        )
    )
    contract_date: str = attrs.field(metadata=doc(CONTRACT_DATE))
    sigungu_code: str = attrs.field(metadata=doc(SIGUNGU_CODE))
    sigungu: str = attrs.field(metadata=doc(SIGUNGU))
    dong: str | None = attrs.field(metadata=doc(DONG))
    property_type: str = attrs.field(metadata=doc(PROPERTY_TYPE))
    transaction_type: str = attrs.field(metadata=doc(TRANSACTION_TYPE))
    building_type: str | None = attrs.field(metadata=doc(BUILDING_TYPE))
    building_use: str | None = attrs.field(metadata=doc(BUILDING_USE))
    price_krw: int | None = attrs.field(
        metadata=doc(nullable(integer("Sale price (sale only).", minimum=0)))
    )
    deposit_krw: int | None = attrs.field(
        metadata=doc(nullable(integer("Lease deposit (leases only).", minimum=0)))
    )
    monthly_rent_krw: int | None = attrs.field(metadata=doc(KRW_OR_NULL))
    building_area_m2: float | None = attrs.field(
        metadata=doc(
            nullable(
                number("Building area (RTMS buildingAr) of a commercial deal.", exclusiveMinimum=0)
            )
        )
    )
    exclusive_area_m2: float | None = attrs.field(
        metadata=doc(
            nullable(number("Exclusive area (excluUseAr) of an officetel.", exclusiveMinimum=0))
        )
    )
    land_area_m2: float | None = attrs.field(
        metadata=doc(
            nullable(number("Land area (plottageAr) of a whole building.", exclusiveMinimum=0))
        )
    )
    floor: int | None = attrs.field(
        metadata=doc(nullable(integer("Floor as published (negative below ground).")))
    )
    build_year: int | None = attrs.field(metadata=doc(BUILD_YEAR))
    jibun: str | None = attrs.field(metadata=doc(JIBUN))
    source: str = attrs.field(metadata=doc(SOURCE))
    load_id: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The load (ingest log id) that stored the record; null for records stored "
                    "before it was kept (until their file is loaded again)."
                )
            )
        )
    )
    excluded: bool = attrs.field(
        metadata=doc(boolean("True for a record the loader excluded (include_excluded only)."))
    )
    excluded_reason: str | None = attrs.field(
        metadata=doc(
            nullable(string("Why it was excluded (cancelled, partial_share, ...); null when kept."))
        )
    )
    contract_id: str = attrs.field(metadata=doc(CONTRACT_ID))
    deal_type: str | None = attrs.field(metadata=doc(DEAL_TYPE))
    seller_type: str | None = attrs.field(metadata=doc(SELLER_TYPE))
    buyer_type: str | None = attrs.field(metadata=doc(BUYER_TYPE))
    land_use: str | None = attrs.field(
        metadata=doc(
            nullable(
                string("Zoning of the lot (RTMS landUse, 용도지역) as published; commercial only.")
            )
        )
    )
    broker_district: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The brokers' districts (RTMS estateAgentSggNm) as published, "
                    f"comma-separated; brokered sales only; {_since(DEAL_TYPE_SINCE)}"
                )
            )
        )
    )
    building_name: str | None = attrs.field(
        metadata=doc(
            nullable(string("The officetel's name (RTMS offiNm) as published; officetels only."))
        )
    )
    lease_kind: str | None = attrs.field(
        metadata=doc(
            nullable(
                enum(
                    LEASE_KINDS,
                    "Leases: new (RTMS contractType 신규) or renewal (갱신); "
                    f"{_since(LEASE_TERMS_SINCE)}",
                )
            )
        )
    )
    term_start: str | None = attrs.field(
        metadata=doc(_term_month("first month of the contract term (RTMS contractTerm)"))
    )
    term_end: str | None = attrs.field(metadata=doc(_term_month("last month of the contract term")))
    renewal_right_used: bool | None = attrs.field(
        metadata=doc(
            nullable(
                boolean(
                    "Leases: true when the tenant used the statutory renewal right (RTMS "
                    "useRRRight 사용), false for a renewal without it, null otherwise; "
                    f"{_since(LEASE_TERMS_SINCE)}"
                )
            )
        )
    )
    previous_deposit_krw: int | None = attrs.field(
        metadata=doc(_previous_lease("deposit (RTMS preDeposit)"))
    )
    previous_monthly_rent_krw: int | None = attrs.field(
        metadata=doc(_previous_lease("monthly rent (RTMS preMonthlyRent)"))
    )
    cancellation_date: str | None = attrs.field(
        default=None,
        metadata=doc(
            nullable(
                string(
                    "A cancelled deal's cancellation date (RTMS cdealDay, 해제사유발생일, "
                    "published as YY.MM.DD), YYYY-MM-DD; only on excluded records "
                    "(excluded_reason cancelled) whose source gave it, null otherwise.",
                    format="date",
                )
            )
        ),
    )
    """A cancelled deal's cancellation date (RTMS ``cdealDay``), ``YYYY-MM-DD``: only on
    excluded records whose source gave one. Last, so the CSV's earlier columns keep
    their places."""
    industrial_use: str | None = attrs.field(
        default=None,
        metadata=doc(
            nullable(
                enum(
                    INDUSTRIAL_USES,
                    "A factory/warehouse sale's use, from RTMS buildingUse (공장 factory, "
                    "창고시설 warehouse, anything else other); null for other property types.",
                )
            )
        ),
    )
    land_category: str | None = attrs.field(
        default=None,
        metadata=doc(
            nullable(
                string("A land sale's land category (RTMS jimok, 지목) as published; land only.")
            )
        ),
    )
    zoning: str | None = attrs.field(
        default=None,
        metadata=doc(
            nullable(
                string(
                    "The zone of land_use by its full legal name (일반상업 and 일반상업지역 are "
                    "one zone, 일반상업지역); null when the source gives no zoning."
                )
            )
        ),
    )
    """Issue 45's fields, after ``cancellation_date`` so the earlier CSV columns keep their
    places."""

    @property
    def area_m2(self) -> float | None:
        """The area the deal's prices are per: building, exclusive or (land) land area."""
        if self.property_type == "land":
            return self.land_area_m2
        return (
            self.exclusive_area_m2 if self.property_type == "officetel" else self.building_area_m2
        )


TRANSACTION_COLUMNS = tuple(f.name for f in TransactionRecord.__attrs_attrs__)
"""CSV columns: the record's fields in order."""


def record_of(row: ListingRow) -> TransactionRecord:
    """The served record of a listing row (a NULL ``contract_id`` is a contract of its
    own)."""
    sale = row.transaction_type == "sale"
    officetel = row.property_type == "officetel"
    used = row.renewal_right_used
    return TransactionRecord(
        natural_key=row.natural_key,
        contract_date=row.deal_date,
        sigungu_code=row.sigungu_code,
        sigungu=row.sigungu,
        dong=row.dong or None,
        property_type=row.property_type,
        transaction_type=row.transaction_type,
        building_type=row.building_type,
        building_use=row.building_use,
        price_krw=row.price_krw if sale else None,
        deposit_krw=None if sale else row.price_krw,
        monthly_rent_krw=row.monthly_rent_krw,
        building_area_m2=None if officetel or row.property_type == "land" else row.area_m2,
        exclusive_area_m2=row.area_m2 if officetel else None,
        land_area_m2=row.land_area_m2,
        floor=row.floor,
        build_year=row.build_year,
        jibun=row.jibun,
        source=row.source,
        load_id=row.load_id,
        excluded=bool(row.is_excluded),
        excluded_reason=row.reason,
        contract_id=row.contract_id or own_contract_id(row.natural_key),
        deal_type=row.deal_type,
        seller_type=row.seller_type,
        buyer_type=row.buyer_type,
        land_use=row.land_use,
        broker_district=row.broker_district,
        building_name=row.building_name,
        lease_kind=row.lease_kind,
        term_start=row.term_start,
        term_end=row.term_end,
        renewal_right_used=None if used is None else bool(used),
        previous_deposit_krw=row.previous_deposit_krw,
        previous_monthly_rent_krw=row.previous_monthly_rent_krw,
        cancellation_date=row.cancellation_date,
        industrial_use=row.industrial_use,
        land_category=row.land_category,
        zoning=row.zoning,
    )


_FROM_TRANSACTION = SameNamed(ListingRow, Transaction)
"""A listing row of a ``Transaction``: the fields it has as they are (its ``deal_date``,
a date, is given as the row's ISO text)."""


def transaction_record(
    tx: Transaction,
    *,
    excluded_reason: str | None = None,
    load_id: str | None = None,
    cancelled_on: datetime.date | None = None,
) -> TransactionRecord:
    """The record the listing serves for ``tx`` (``excluded_reason``: a deal a load
    excluded, as ``ExcludedRecord.reason`` says, and ``cancelled_on`` its
    ``ExcludedRecord.cancelled_on``; ``load_id``: the load that stored it)."""
    contract = contract_id(tx)
    return record_of(
        _FROM_TRANSACTION(
            tx,
            deal_date=tx.deal_date.isoformat(),
            month=tx.period_month,
            synthetic=0,
            load_id=load_id,
            contract_id=contract,
            is_excluded=int(excluded_reason is not None),
            reason=excluded_reason,
            cancellation_date=None if cancelled_on is None else cancelled_on.isoformat(),
            contract_key=contract,
        )
    )
