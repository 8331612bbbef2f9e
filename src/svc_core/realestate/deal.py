"""A transaction as the pulse and its statistics read it (``Deal``), built from a
``Transaction`` (``deal_of``) or, by the server, from a stored row."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from svc_core.cohorts.contracts import contract_id
from svc_core.models import Transaction


class Deal(NamedTuple):
    """A transaction as the pulse sees it: the statistics' sample (``SampleLike``)
    plus where, what and when (``month`` is ``YYYY-MM``, ``deal_date`` the ISO contract
    date); ``synthetic`` marks demo data; ``contract_id`` the contract the row belongs to
    (``svc_core.cohorts.contracts``; None counts as a contract of its own).

    A NamedTuple rather than a frozen attrs value: as immutable and typed, and built
    several times faster, which matters because a cold pulse builds one per transaction
    of its window.
    """

    price: int
    monthly_rent: int | None
    area: float | None
    source: str
    sigungu_code: str
    sigungu: str
    dong: str | None
    property_type: str
    transaction_type: str
    month: str
    synthetic: bool = False
    building_type: str | None = None
    land_area: float | None = None
    building_use: str | None = None
    contract_id: str | None = None
    lease_kind: str | None = None
    deal_type: str | None = None
    buyer_type: str | None = None
    deal_date: str | None = None
    industrial_use: str | None = None
    land_category: str | None = None
    zoning: str | None = None


def deal_of(tx: Transaction) -> Deal:
    """The pulse view of a transaction."""
    return Deal(
        price=tx.price_krw,
        monthly_rent=tx.monthly_rent_krw,
        area=tx.area_m2,
        source=tx.source,
        sigungu_code=tx.sigungu_code,
        sigungu=tx.sigungu,
        dong=tx.dong,
        property_type=tx.property_type,
        transaction_type=tx.transaction_type,
        month=tx.period_month,
        building_type=tx.building_type,
        land_area=tx.land_area_m2,
        building_use=tx.building_use,
        contract_id=contract_id(tx),
        lease_kind=tx.lease_kind,
        deal_type=tx.deal_type,
        buyer_type=tx.buyer_type,
        deal_date=tx.deal_date.isoformat(),
        industrial_use=tx.industrial_use,
        land_category=tx.land_category,
        zoning=tx.zoning,
    )


def deals(records: Iterable[Transaction | Deal]) -> list[Deal]:
    """Transactions as deals (deals pass through)."""
    return [r if isinstance(r, Deal) else deal_of(r) for r in records]
