"""One record of ``GET /api/v1/real-estate/transactions`` (``TransactionRecord``): a deal
as the source published it, with the contract it belongs to and what the source says of
the parties and the contract (issue 28).

``record_of`` builds it from a stored row (the server's listing), ``transaction_record``
from a ``Transaction`` (the library), so both serve the same record for the same deal.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import attrs

from svc_core.cohorts.contracts import contract_id, own_contract_id
from svc_core.models import Transaction

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

    natural_key: str
    contract_date: str
    sigungu_code: str
    sigungu: str
    dong: str | None
    property_type: str
    transaction_type: str
    building_type: str | None
    building_use: str | None
    price_krw: int | None
    deposit_krw: int | None
    monthly_rent_krw: int | None
    building_area_m2: float | None
    exclusive_area_m2: float | None
    land_area_m2: float | None
    floor: int | None
    build_year: int | None
    jibun: str | None
    source: str
    load_id: str | None
    excluded: bool
    excluded_reason: str | None
    contract_id: str
    deal_type: str | None
    seller_type: str | None
    buyer_type: str | None
    land_use: str | None
    broker_district: str | None
    building_name: str | None
    lease_kind: str | None
    term_start: str | None
    term_end: str | None
    renewal_right_used: bool | None
    previous_deposit_krw: int | None
    previous_monthly_rent_krw: int | None
    cancellation_date: str | None = None
    """A cancelled deal's cancellation date (RTMS ``cdealDay``), ``YYYY-MM-DD``: only on
    excluded records whose source gave one. Last, so the CSV's earlier columns keep
    their places."""

    @property
    def area_m2(self) -> float | None:
        """The area the deal's prices are per: building or exclusive area."""
        return (
            self.exclusive_area_m2 if self.property_type == "officetel" else self.building_area_m2
        )


TRANSACTION_COLUMNS = tuple(f.name for f in TransactionRecord.__attrs_attrs__)
"""CSV columns: the record's fields in order."""


def _number(value: Any) -> int | None:
    return None if value is None else int(value)


def record_of(row: Mapping[str, Any]) -> TransactionRecord:
    """A record from a listing row (the store's columns, ``is_excluded`` and ``reason``;
    a NULL ``contract_id`` is a contract of its own)."""
    sale = row["transaction_type"] == "sale"
    officetel = row["property_type"] == "officetel"
    area = None if row["area_m2"] is None else float(row["area_m2"])
    land = row["land_area_m2"]
    used = row["renewal_right_used"]
    key = str(row["natural_key"])
    return TransactionRecord(
        natural_key=key,
        contract_date=str(row["deal_date"]),
        sigungu_code=str(row["sigungu_code"]),
        sigungu=str(row["sigungu"]),
        dong=row["dong"] or None,
        property_type=str(row["property_type"]),
        transaction_type=str(row["transaction_type"]),
        building_type=row["building_type"],
        building_use=row["building_use"],
        price_krw=int(row["price_krw"]) if sale else None,
        deposit_krw=None if sale else int(row["price_krw"]),
        monthly_rent_krw=_number(row["monthly_rent_krw"]),
        building_area_m2=None if officetel else area,
        exclusive_area_m2=area if officetel else None,
        land_area_m2=None if land is None else float(land),
        floor=_number(row["floor"]),
        build_year=_number(row["build_year"]),
        jibun=row["jibun"],
        source=str(row["source"]),
        load_id=row["load_id"],
        excluded=bool(row["is_excluded"]),
        excluded_reason=row["reason"],
        contract_id=row["contract_id"] or own_contract_id(key),
        deal_type=row["deal_type"],
        seller_type=row["seller_type"],
        buyer_type=row["buyer_type"],
        land_use=row["land_use"],
        broker_district=row["broker_district"],
        building_name=row["building_name"],
        lease_kind=row["lease_kind"],
        term_start=row["term_start"],
        term_end=row["term_end"],
        renewal_right_used=None if used is None else bool(used),
        previous_deposit_krw=_number(row["previous_deposit_krw"]),
        previous_monthly_rent_krw=_number(row["previous_monthly_rent_krw"]),
        cancellation_date=row.get("cancellation_date"),
    )


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
    return record_of(
        {
            **attrs.asdict(tx),
            "load_id": load_id,
            "is_excluded": excluded_reason is not None,
            "reason": excluded_reason,
            "contract_id": contract_id(tx),
            "cancellation_date": None if cancelled_on is None else cancelled_on.isoformat(),
        }
    )
