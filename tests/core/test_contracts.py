"""The contract rule (issue 28): rows of one bulk sale share an id, every other row has
its own, and the id is the same on every load of the same data."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import attrs
from hypothesis import given
from hypothesis import strategies as st

from svc_core.cohorts.contracts import CONTRACT_FIELDS, contract_id
from svc_core.models import Transaction
from svc_core.sources.rtms import parse_rtms

MOLIT = Path(__file__).resolve().parents[1] / "fixtures" / "molit"

SALE = Transaction(
    source="rtms_official",
    sigungu_code="11680",
    sigungu="강남구",
    dong="논현동",
    property_type="office",
    transaction_type="sale",
    deal_date=datetime.date(2025, 6, 23),
    price_krw=1_000_000_000,
    monthly_rent_krw=None,
    area_m2=100.0,
    natural_key="k1",
    building_type="unit",
    building_use="업무",
    floor=3,
    build_year=2006,
    jibun="61-3",
    deal_type="direct",
    seller_type="company",
    buyer_type="company",
)

OTHER_VALUES: dict[str, object] = {
    "source": "other_source",
    "sigungu_code": "11650",
    "dong": "역삼동",
    "jibun": "61-4",
    "deal_date": datetime.date(2025, 6, 24),
    "deal_type": "brokered",
    "seller_type": "individual",
    "buyer_type": None,
    "building_use": "제2종근린생활",
    "build_year": 2007,
    "property_type": "commercial_complex",
    "building_type": "whole_building",
}


@given(
    price=st.integers(1, 10**12),
    area=st.floats(1, 10_000),
    floor=st.none() | st.integers(-5, 80),
    key=st.text("abc0123456789", min_size=1, max_size=20),
)
def test_units_of_one_sale_share_the_id_whatever_their_price_area_floor_or_key(
    price: int, area: float, floor: int | None, key: str
) -> None:
    unit = attrs.evolve(SALE, price_krw=price, area_m2=area, floor=floor, natural_key=key)
    assert contract_id(unit) == contract_id(SALE)


@given(field=st.sampled_from(CONTRACT_FIELDS))
def test_any_field_of_the_rule_tells_contracts_apart(field: str) -> None:
    assert set(OTHER_VALUES) == set(CONTRACT_FIELDS)
    other = attrs.evolve(SALE, **{field: OTHER_VALUES[field]})
    assert contract_id(other) != contract_id(SALE)


@given(keys=st.lists(st.text("xyz", min_size=1, max_size=8), min_size=2, max_size=6, unique=True))
def test_leases_and_sales_without_a_lot_are_contracts_of_their_own(keys: list[str]) -> None:
    lease = attrs.evolve(
        SALE, transaction_type="chartered_lease", property_type="officetel", building_use=None
    )
    leases = {contract_id(attrs.evolve(lease, natural_key=k)) for k in keys}
    no_lot = {contract_id(attrs.evolve(SALE, jibun=None, natural_key=k)) for k in keys}
    assert len(leases) == len(no_lot) == len(keys)
    assert all(i.startswith("c") and len(i) == 25 for i in leases | no_lot)


def test_the_nonhyeon_company_purchase_is_one_contract_per_building_use_and_stable() -> None:
    data = (MOLIT / "NRG_11680_202506.xml").read_bytes()
    records = parse_rtms(data, "commercial").transactions
    again = parse_rtms(data, "commercial").transactions
    assert [contract_id(r) for r in records] == [contract_id(r) for r in again]
    bought = [r for r in records if r.jibun == "61-3" and r.deal_date.day == 23]
    by_use = Counter((r.building_use, contract_id(r)) for r in bought)
    assert sorted(by_use.values()) == [1, 2, 3, 12]
    assert len({use for use, _ in by_use}) == 4

    root = ET.fromstring(data)  # noqa: S314 - a fixture of ours
    items = [{c.tag: (c.text or "").strip() for c in i} for i in root.iter("item")]
    kept = [i for i in items if i["cdealType"] != "O" and i["shareDealingType"] != "지분"]
    rule = (
        "umdNm", "jibun", "dealDay", "dealingGbn", "slerGbn", "buyerGbn", "buildingUse",
        "buildYear", "buildingType",
    )  # fmt: skip
    assert len({contract_id(r) for r in records}) == len({tuple(i[f] for f in rule) for i in kept})
