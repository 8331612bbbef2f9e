"""Land and factory/warehouse sales through HTTP (issue 45): the pulse of the real 양평군
land samples by land category and by zoning equals a recomputation from their raw items
by an oracle written here (ElementTree, fractions, its own contract grouping), the
exclusions are counted as the files show, and the filters reach the listing."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from svc_server.store import open_store
from tests.http.realestate_support import Api, load, make_app, type7

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LAND = {
    m: FIXTURES / "molit" / f"LAND_41830_{m.replace('-', '')}.xml" for m in ("2024-08", "2024-09")
}
INDU = FIXTURES / "molit_constructed" / "INDU_41830_202408.xml"
SUFFIXES = ("지역", "구역")


def items(path: Path) -> list[dict[str, str]]:
    root = ET.fromstring(path.read_bytes())  # noqa: S314 - the repository's own samples
    return [{f.tag: (f.text or "").strip() for f in item} for item in root.iter("item")]


def full_zone(text: str) -> str:
    """The oracle's zone: the land service's names, plus 지역 where it left it off."""
    return text if text.endswith(SUFFIXES) else text + "지역"


def expected(rows: list[dict[str, str]]) -> dict[str, Any] | None:
    groups: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for i in rows:
        groups[(i["umdNm"], i["jibun"], i["dealDay"], i["dealingGbn"])].append(i)
    if len(groups) < 2:
        return None
    prices = [
        sum(Fraction(i["dealAmount"].replace(",", "")) * 10_000 for i in g) for g in groups.values()
    ]
    areas = [sum(Fraction(i["dealArea"]) for i in g) for g in groups.values()]
    p25, median, p75 = type7(prices)
    q25, qmed, q75 = type7([p / a for p, a in zip(prices, areas, strict=True)])
    return {
        "sample_count": len(rows),
        "contract_count": len(groups),
        "p25_price": p25,
        "median_price": median,
        "p75_price": p75,
        "p25_price_per_m2": q25,
        "median_price_per_m2": qmed,
        "p75_price_per_m2": q75,
    }


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('land') / 'svc.db'}")
    store.migrate()
    for path in LAND.values():
        load(store, "rtms-land", path)
    load(store, "rtms-industrial", INDU)
    try:
        yield Api(make_app(store))
    finally:
        store.close()


@pytest.mark.parametrize("month", sorted(LAND))
@pytest.mark.parametrize(
    ("parameter", "tag", "normal"),
    [("land_category", "jimok", str), ("zoning", "landUse", full_zone)],
)
def test_land_pulse_by_category_and_zone_equals_the_oracle(
    api: Api, month: str, parameter: str, tag: str, normal: Any
) -> None:
    raw = items(LAND[month])
    kept = [i for i in raw if i["cdealType"] != "O" and i["shareDealingType"] != "지분"]
    values = sorted({normal(i[tag]) for i in kept})
    assert len(values) > 5
    for value in values:
        want = expected([i for i in kept if normal(i[tag]) == value])
        query = {
            "sigungu_code": "41830",
            "period": month,
            "property_type": "land",
            parameter: value,
        }
        response = api.get("pulse", query)
        if want is None:
            assert response.status_code == 404, (value, response.get_json())
            continue
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        [row] = body["data"]
        assert {k: row[k] for k in want} == want, (parameter, value)
        assert row[parameter] == value
        assert row["property_type"] == "land" and row["transaction_type"] == "sale"
        mix = row["land_category_mix" if parameter == "land_category" else "zoning_mix"]
        assert mix == {value: want["sample_count"]}
        cancelled = sum(i["cdealType"] == "O" for i in raw)
        shares = sum(i["shareDealingType"] == "지분" and i["cdealType"] != "O" for i in raw)
        assert body["_meta"]["exclusions"] == {"cancelled": cancelled, "partial_share": shares}
        assert body["_meta"]["query"][parameter] == value
        # the row's link lists exactly its deals, with this value
        link = row["transactions_url"].split("?", 1)[1]
        listed = api.client.get(
            f"/api/v1/real-estate/transactions?{link}&limit=500", headers={"X-API-Key": api.key}
        ).get_json()
        assert listed["_meta"]["next_cursor"] is None
        assert len(listed["data"]) == want["sample_count"]
        assert {d[parameter] for d in listed["data"]} == {value}


def test_the_files_exclusions_are_as_the_files_show(api: Api) -> None:
    body = api.ok("pulse", {"sigungu_code": "41830", "period": "2024-08", "property_type": "land"})
    raw = items(LAND["2024-08"])
    assert len(raw) == 526
    assert sum(i["cdealType"] == "O" for i in raw) == 46
    assert sum(i["shareDealingType"] == "지분" for i in raw) == 263
    assert sum(i["cdealType"] == "O" and i["shareDealingType"] == "지분" for i in raw) == 17
    # a deal both cancelled and a share is counted once, as cancelled
    assert body["_meta"]["exclusions"] == {"cancelled": 46, "partial_share": 263 - 17}
    [row] = body["data"]
    assert row["sample_count"] == 526 - 46 - 263 + 17
    assert sum(row["land_category_mix"].values()) == row["sample_count"]


def test_the_short_zone_name_selects_the_same_deals(api: Api) -> None:
    params = {"sigungu_code": "41830", "period": "2024-08", "property_type": "land"}
    long = api.ok("pulse", {**params, "zoning": "계획관리지역"})
    short = api.ok("pulse", {**params, "zoning": "계획관리"})
    assert long["data"] == short["data"]


def test_factory_and_warehouse_pulse_by_use(api: Api) -> None:
    params = {"sigungu_code": "41830", "period": "2024-08", "property_type": "industrial"}
    [row] = api.ok("pulse", params)["data"]
    assert row["industrial_use_mix"] == {"factory": 5, "other": 2, "warehouse": 5}
    assert row["building_type_mix"] == {"unit": 3, "whole_building": 9}
    assert row["median_land_price_per_m2"] is not None
    [factories] = api.ok("pulse", {**params, "industrial_use": "factory"})["data"]
    # two floors of one building sold on one day: one contract
    assert (factories["sample_count"], factories["contract_count"]) == (5, 4)
    commercial = api.get("pulse", {**params, "property_type": "office"})
    assert commercial.status_code == 404


def kept_items(path: Path) -> list[dict[str, str]]:
    """The items a pulse counts: neither cancelled nor a partial share."""
    return [i for i in items(path) if i["cdealType"] != "O" and i["shareDealingType"] != "지분"]


def use_of(item: dict[str, str]) -> str:
    return {"공장": "factory", "창고": "warehouse", "창고시설": "warehouse"}.get(
        item["buildingUse"], "other"
    )


def test_dimensions_list_land_categories_zones_and_industrial_uses(api: Api) -> None:
    land = [i for path in LAND.values() for i in kept_items(path)]
    indu = kept_items(INDU)
    want: dict[str, dict[tuple[str, str], int]] = {
        "land_categories": defaultdict(int),
        "zonings": defaultdict(int),
        "industrial_uses": defaultdict(int),
    }
    for i in land:
        want["land_categories"][("land", i["jimok"])] += 1
        want["zonings"][("land", full_zone(i["landUse"]))] += 1
    for i in indu:
        want["industrial_uses"][("industrial", use_of(i))] += 1
        want["zonings"][("industrial", full_zone(i["landUse"]))] += 1
    data = api.ok("dimensions")["data"]
    for field, counts in want.items():
        listed = data[field]
        got = {(v["property_type"], v["value"]): v["sample_count"] for v in listed}
        assert got == dict(counts), field
        ranks = [-v["sample_count"] for v in listed]
        assert ranks == sorted(ranks), field
    assert {v["value"] for v in data["property_types"]} == {"land", "industrial"}


def test_coverage_takes_the_land_filters_as_pulse_does(api: Api) -> None:
    base = {"sigungu_code": "41830", "property_type": "land"}
    for value in ("대", "임야"):
        query = {**base, "land_category": value, "granularity": "month"}
        [row] = api.ok("coverage", query)["data"]
        assert row["periods_with_data"] == sorted(LAND)
        samples = [
            api.ok("pulse", {**base, "period": m, "land_category": value})["data"][0]
            for m in sorted(LAND)
        ]
        assert row["total_samples"] == sum(s["sample_count"] for s in samples)
        assert row["contract_count"] == sum(s["contract_count"] for s in samples)
    # no district: the same rows, from the same deals
    body = api.ok("coverage", {"property_type": "land", "zoning": "계획관리"})
    [row] = body["data"]
    assert body["_meta"]["query"]["zoning"] == "계획관리지역"
    pulse = api.ok(
        "pulse",
        {
            "sigungu_code": "41830",
            "property_type": "land",
            "period": "2024-Q3",
            "zoning": "계획관리지역",
        },
    )["data"][0]
    assert row["total_samples"] == pulse["sample_count"]
    [factories] = api.ok("coverage", {"industrial_use": "factory"})["data"]
    assert (factories["property_type"], factories["total_samples"]) == ("industrial", 5)


@pytest.mark.parametrize(
    ("parameter", "value"),
    [("land_category", "임야"), ("zoning", "계획관리"), ("zoning", "계획관리지역")],
)
def test_compare_takes_the_land_filters_and_each_row_is_its_pulse_row(
    api: Api, parameter: str, value: str
) -> None:
    """/compare with a land filter ranks each district by the filtered pulse: Yangpyeong's row
    is pulse's for the same filter (the short zone name too), and a district without
    land answers is listed not loaded."""
    asked = {"property_type": "land", "transaction_type": "sale", "period": "2024-08"}
    pulse = api.ok("pulse", {**asked, "sigungu_code": "41830", parameter: value})["data"][0]
    body = api.ok("compare", {**asked, "sigungu_codes": "41830,11680", parameter: value})
    yangpyeong, gangnam = body["data"]
    assert yangpyeong["sigungu_code"] == "41830" and gangnam["reason"] == "not_loaded"
    for field in ("sample_count", "contract_count", "median_price", "median_price_per_m2"):
        assert yangpyeong[field] == pulse[field], field
    assert body["_meta"]["query"][parameter] == pulse[parameter]
