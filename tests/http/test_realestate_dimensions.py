"""GET /api/v1/real-estate/dimensions: what has data in the last 6 months with data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from svc_server import ingest
from svc_server.store import Store
from tests.http.realestate_support import (
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    assert_layer_envelope,
    included,
    make_app,
    open_molit_store,
    type_mix,
    xml_items,
)

# A sale in 2024-10, outside the 6 months that end at the latest month (2025-06).
OLD = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\r\n"
    "public_assessment,11650,서초동,office,sale,2024-12-31,3000000000,,100\r\n"
).encode()


@pytest.fixture(scope="module")
def dims_store(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as s:
        ingest.ingest(s, "samples", OLD, path="old.csv", now=0)
        yield s


@pytest.fixture
def api(dims_store: Store) -> Api:
    return Api(make_app(dims_store))


def counts() -> tuple[int, int]:
    gangnam = (
        len(included(xml_items(NRG_GANGNAM)))
        + len(included(xml_items(OFFI_TRADE)))
        + len(included(xml_items(OFFI_RENT)))
    )
    return gangnam, len(included(xml_items(NRG_JONGNO_PAGE)))


def test_districts_and_types_with_their_sample_counts(api: Api) -> None:
    body = api.ok("dimensions", {})
    data = body["data"]
    gangnam, jongno = counts()
    assert data["sigungus"] == [
        {"value": "강남구", "code": "11680", "sample_count": gangnam},
        {"value": "종로구", "code": "11110", "sample_count": jongno},
    ]
    assert data["gu_dongs"] == []
    rent = xml_items(OFFI_RENT)
    monthly = sum(1 for i in rent if i["monthlyRent"].strip() != "0")
    assert {t["value"]: t["sample_count"] for t in data["transaction_types"]} == {
        "sale": gangnam + jongno - len(rent),
        "monthly_lease": monthly,
        "chartered_lease": len(rent) - monthly,
    }
    types = data["property_types"]
    assert [t["sample_count"] for t in types] == sorted(
        (t["sample_count"] for t in types), reverse=True
    )
    assert sum(t["sample_count"] for t in types) == gangnam + jongno
    meta = body["_meta"]
    assert_layer_envelope(meta)
    assert meta["count"] == 2
    assert meta["query"] == {
        "geo_precision": "sigungu",
        "period": "last_6m",
        "window_from": "2025-01",
        "window_to": "2025-06",
    }


def test_building_types_with_their_sample_counts(api: Api) -> None:
    """Whole buildings and units counted from the raw items (officetels are units)."""
    data = api.ok("dimensions", {})["data"]
    items = [
        i
        for path in (NRG_GANGNAM, NRG_JONGNO_PAGE, OFFI_TRADE, OFFI_RENT)
        for i in included(xml_items(path))
    ]
    expected = type_mix(items)
    assert set(expected) == {"unit", "whole_building"}
    assert data["building_types"] == [
        {"value": v, "sample_count": n}
        for v, n in sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    assert sum(t["sample_count"] for t in data["building_types"]) == sum(
        t["sample_count"] for t in data["property_types"]
    )


def test_gu_dongs_only_with_dong_precision(api: Api) -> None:
    data = api.ok("dimensions", {"geo_precision": "dong"})["data"]
    dongs = Counter(
        i["umdNm"]
        for path in (NRG_GANGNAM, OFFI_TRADE, OFFI_RENT)
        for i in included(xml_items(path))
    )
    gangnam = [d for d in data["gu_dongs"] if d["code"] == "11680"]
    assert {d["value"]: d["sample_count"] for d in gangnam} == {
        f"강남구 > {dong}": n for dong, n in dongs.items()
    }
    assert all(" > " in d["value"] for d in data["gu_dongs"])
    assert "11650" not in {d["code"] for d in data["gu_dongs"]}  # outside the window


@pytest.mark.parametrize("query", ["geo_precision=gu", "sigungu_code=11680", "format=csv"])
def test_unknown_or_malformed_parameters_are_400(api: Api, query: str) -> None:
    response = api.client.get(
        f"/api/v1/real-estate/dimensions?{query}", headers={"X-API-Key": api.key}
    )
    assert_error(response, 400, "INVALID_PARAMS")


def test_an_empty_store_has_empty_dimensions(store: Store) -> None:
    body = Api(make_app(store)).ok("dimensions", {"geo_precision": "dong"})
    assert body["data"] == {
        "sigungus": [],
        "gu_dongs": [],
        "property_types": [],
        "transaction_types": [],
        "building_types": [],
        "lease_kinds": [],
        "deal_types": [],
        "buyer_types": [],
        "building_uses": [],
        "land_categories": [],
        "zonings": [],
        "industrial_uses": [],
    }
    assert body["_meta"]["query"]["window_from"] is None
