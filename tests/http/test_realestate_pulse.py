"""GET /api/v1/real-estate/pulse over the real MOLIT responses, on SQLite and PostgreSQL.

Expected numbers are computed here from the raw XML with a regular expression and the
standard library (``realestate_support``), never through svc's own readers or statistics.
Figures are over contracts (issue 28): the raw items are grouped by the documented rule
written out again (``contract_groups``), a bulk contract entering once with its total
price and total area.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from svc_server.store import Store
from tests.http.realestate_support import (
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    ROW_FIELDS,
    Api,
    assert_error,
    assert_layer_envelope,
    building_type,
    contract_groups,
    contract_price,
    expected_stats,
    included,
    make_app,
    manwon,
    mean_contract_area,
    per_area,
    total_area,
    xml_items,
)

RETAIL_USES = {"제1종근린생활", "제2종근린생활", "판매"}


def property_type(item: dict[str, str]) -> str:
    """The documented mapping of building use and type, written out again by hand."""
    use = item["buildingUse"].strip()
    if use == "업무":
        return "office"
    if use in RETAIL_USES:
        return "commercial_complex" if item["buildingType"].strip() == "집합" else "retail"
    return "mixed_use"


GANGNAM = included(xml_items(NRG_GANGNAM))
CONTRACTS = contract_groups(GANGNAM, "NRG")
"""Gangnam's 2025-06 commercial sales as contracts (lists of raw items)."""


def contracts_of(kind: str, **tags: str) -> list[list[dict[str, str]]]:
    """The Gangnam contracts of one property type whose first item has ``tags``."""
    return [
        g
        for g in CONTRACTS
        if property_type(g[0]) == kind and all(g[0][t].strip() == v for t, v in tags.items())
    ]


def office_prices() -> list[int]:
    return sorted(manwon(i["dealAmount"]) for i in GANGNAM if property_type(i) == "office")


def test_gangnam_office_sales_match_values_computed_from_the_raw_xml(api: Api) -> None:
    """24 office rows, 12 of them floors of one Nonhyeon-dong building bought by one
    company on one day: 13 contracts, the figures over those."""
    office = contracts_of("office")
    prices = sorted(contract_price(g) for g in office)
    expected = expected_stats(prices)
    areas = [total_area(g, "buildingAr") for g in office]
    body = api.ok(
        "pulse",
        {
            "sigungu_code": "11680",
            "property_type": "office",
            "transaction_type": "sale",
            "period": "2025-06",
        },
    )
    [row] = body["data"]
    assert tuple(row) == ROW_FIELDS
    assert row["sigungu_code"] == "11680"
    assert row["sigungu"] == "강남구"
    assert (row["gu"], row["dong"]) == (None, None)
    assert (row["property_type"], row["transaction_type"], row["period"]) == (
        "office",
        "sale",
        "2025-06",
    )
    assert row["sample_count"] == len(office_prices()) == 24
    assert row["contract_count"] == len(office) == 13
    assert row["bulk_contracts"] == sum(len(g) > 1 for g in office) == 1
    assert row["largest_contract_units"] == max(len(g) for g in office) == 12
    assert row["avg_price"] == expected["avg"]
    assert row["p25_price"] == expected["p25"]
    assert row["median_price"] == expected["median"]
    assert row["p75_price"] == expected["p75"]
    assert row["avg_area_m2"] == mean_contract_area(areas)
    assert (row["p25_price_per_m2"], row["median_price_per_m2"], row["p75_price_per_m2"]) == (
        per_area((contract_price(g), total_area(g, "buildingAr")) for g in office)
    )
    for name in ("avg_monthly_rent", "p25_monthly_rent", "median_monthly_rent", "p75_monthly_rent"):
        assert row[name] is None
    assert row["source_mix"] == {"rtms_official": 24}
    assert row["source_means"] == {"rtms_official": expected["avg"]}
    assert row["confidence"] == "medium"
    factors = row["confidence_factors"]
    assert factors["distinct_sources"] == 1
    assert factors["relative_spread"] == 0
    assert factors["sample_count"] == 24
    assert factors["contract_count"] == 13
    assert factors["ladder_reason"].startswith("single source, 13 contracts (24 samples) >= 5")
    meta = body["_meta"]
    assert "contracts, not rows" in meta["methodology"]
    [bulk] = [line for line in meta["known_limitations"] if "bulk contract" in line]
    assert "2025-06 office sale: 12 of 24" in bulk


def test_a_bulk_contract_counts_once_in_confidence(api: Api) -> None:
    """Nonhyeon-dong office units: 13 rows, but 12 are one company's purchase of one
    building's floors: 2 contracts, below the ladder's 5, so low (13 rows said medium)."""
    units = [g for g in contracts_of("office", umdNm="논현동") if building_type(g[0]) == "unit"]
    [row] = api.ok(
        "pulse",
        {
            "sigungu_code": "11680",
            "property_type": "office",
            "period": "2025-06",
            "geo_precision": "dong",
            "dong": "논현동",
            "building_type": "unit",
        },
    )["data"]
    assert (row["sample_count"], row["contract_count"]) == (sum(map(len, units)), len(units))
    assert (row["sample_count"], row["contract_count"], row["bulk_contracts"]) == (13, 2, 1)
    assert row["confidence"] == "low"
    assert row["confidence_factors"]["ladder_reason"] == (
        "single source, 2 contracts (13 samples) < 5"
    )
    prices = sorted(contract_price(g) for g in units)
    assert row["median_price"] == expected_stats(prices)["median"] == sum(prices) // 2


def test_a_cohort_whose_rows_are_one_contract_has_no_row(api: Api) -> None:
    """Nonhyeon-dong's mixed-use sales: 2 rows, one contract (two 기타 floors of the same
    building, same buyer and day): below the 2-contract minimum, so 404."""
    [contract] = contracts_of("mixed_use", umdNm="논현동")
    assert len(contract) == 2
    params = {
        "sigungu_code": "11680",
        "property_type": "mixed_use",
        "period": "2025-06",
        "geo_precision": "dong",
        "dong": "논현동",
    }
    error = assert_error(api.get("pulse", params), 404, "NOT_FOUND")
    assert "at least 2 contracts" in error["message"]
    series = {**params, "periods": "2025-06"}
    del series["period"]
    assert api.get("pulse/series", series).status_code == 404


def test_every_commercial_type_follows_the_documented_mapping(api: Api) -> None:
    by_type: dict[str, list[list[dict[str, str]]]] = {}
    for group in CONTRACTS:
        by_type.setdefault(property_type(group[0]), []).append(group)
    rows = api.ok(
        "pulse", {"sigungu_code": "11680", "transaction_type": "sale", "period": "2025-06"}
    )["data"]
    got = {r["property_type"]: r for r in rows}
    assert set(got) == {*by_type, "officetel"}
    for ptype, groups in by_type.items():
        row = got[ptype]
        prices = sorted(contract_price(g) for g in groups)
        assert row["sample_count"] == sum(map(len, groups)), ptype
        assert row["contract_count"] == len(groups), ptype
        assert row["bulk_contracts"] == sum(len(g) > 1 for g in groups), ptype
        assert row["median_price"] == expected_stats(prices)["median"], ptype
        assert row["avg_price"] == expected_stats(prices)["avg"], ptype
        assert row["avg_area_m2"] == mean_contract_area(total_area(g, "buildingAr") for g in groups)
    officetel = contract_groups(included(xml_items(OFFI_TRADE)), "OFFICETEL")
    prices = sorted(contract_price(g) for g in officetel)
    assert got["officetel"]["sample_count"] == sum(map(len, officetel)) == 55
    assert got["officetel"]["contract_count"] == len(officetel) == 51
    assert got["officetel"]["p75_price"] == expected_stats(prices)["p75"]
    assert (
        got["officetel"]["p25_price_per_m2"],
        got["officetel"]["median_price_per_m2"],
        got["officetel"]["p75_price_per_m2"],
    ) == per_area((contract_price(g), total_area(g, "excluUseAr")) for g in officetel)


def test_officetel_leases_split_by_rent_with_deposit_and_rent_quartiles(api: Api) -> None:
    items = xml_items(OFFI_RENT)
    monthly = [i for i in items if int(i["monthlyRent"].replace(",", "")) > 0]
    jeonse = [i for i in items if int(i["monthlyRent"].replace(",", "")) == 0]
    rows = api.ok(
        "pulse", {"sigungu_code": "11680", "property_type": "officetel", "period": "2025-Q2"}
    )["data"]
    got = {r["transaction_type"]: r for r in rows}
    lease = got["monthly_lease"]
    rents = expected_stats(sorted(manwon(i["monthlyRent"]) for i in monthly))
    deposits = expected_stats(sorted(manwon(i["deposit"]) for i in monthly))
    assert lease["sample_count"] == len(monthly)
    assert lease["period"] == "2025-Q2"
    assert (lease["avg_monthly_rent"], lease["p25_monthly_rent"]) == (rents["avg"], rents["p25"])
    assert (lease["median_monthly_rent"], lease["p75_monthly_rent"]) == (
        rents["median"],
        rents["p75"],
    )
    assert (lease["avg_price"], lease["median_price"]) == (deposits["avg"], deposits["median"])
    chartered = got["chartered_lease"]
    assert chartered["sample_count"] == len(jeonse)
    assert (
        chartered["median_price"]
        == expected_stats(sorted(manwon(i["deposit"]) for i in jeonse))["median"]
    )
    assert chartered["avg_monthly_rent"] is None


def test_default_period_is_last_6m_ending_at_the_latest_month_with_data(api: Api) -> None:
    body = api.ok("pulse", {"sigungu_code": "11680", "property_type": "office"})
    [row] = body["data"]
    assert row["period"] == "last_6m"
    assert row["sample_count"] == len(office_prices())
    query = body["_meta"]["query"]
    assert query["period"] == "last_6m"
    assert (query["window_from"], query["window_to"]) == ("2025-01", "2025-06")
    short = api.ok("pulse", {"sigungu_code": "11110", "period": "last_3m"})["_meta"]["query"]
    assert (short["window_from"], short["window_to"]) == ("2025-04", "2025-06")


def test_dong_precision_gives_one_row_per_legal_dong(api: Api) -> None:
    counts = Counter(i["umdNm"] for i in GANGNAM if property_type(i) == "office")
    contracts = Counter(g[0]["umdNm"] for g in contracts_of("office"))
    body = api.ok(
        "pulse",
        {
            "sigungu_code": "11680",
            "property_type": "office",
            "transaction_type": "sale",
            "period": "2025-06",
            "geo_precision": "dong",
        },
    )
    rows = body["data"]
    assert {r["dong"]: (r["sample_count"], r["contract_count"]) for r in rows} == {
        dong: (n, contracts[dong]) for dong, n in counts.items() if contracts[dong] >= 2
    }
    assert {r["gu"] for r in rows} == {"강남구"}
    assert [r["dong"] for r in rows] == sorted(r["dong"] for r in rows)
    assert body["_meta"]["query"]["geo_precision"] == "dong"
    dong, n = counts.most_common(1)[0]
    one = api.ok(
        "pulse",
        {
            "sigungu_code": "11680",
            "property_type": "office",
            "period": "2025-06",
            "geo_precision": "dong",
            "dong": dong,
        },
    )
    assert [(r["dong"], r["sample_count"]) for r in one["data"]] == [(dong, n)]
    assert one["_meta"]["query"]["dong"] == dong


def test_dong_without_dong_precision_is_refused(api: Api) -> None:
    r = api.get("pulse", {"sigungu_code": "11680", "property_type": "office", "dong": "역삼동"})
    error = r.get_json()["error"]
    assert (r.status_code, error["code"]) == (400, "INVALID_PARAMS")
    assert "geo_precision=dong" in error["hint"]


def test_the_envelope_has_every_field_and_echoes_the_resolved_query(api: Api) -> None:
    response = api.get("pulse", {"sigungu_code": "11680", "transaction_type": "sale"})
    meta = response.get_json()["_meta"]
    assert_layer_envelope(meta)
    assert meta["query"] == {
        "sigungu_code": "11680",
        "property_type": None,
        "transaction_type": "sale",
        "period": "last_6m",
        "geo_precision": "sigungu",
        "dong": None,
        "window_from": "2025-01",
        "window_to": "2025-06",
        "building_type": None,
        "lease_kind": None,
        "deal_type": None,
        "buyer_type": None,
        "industrial_use": None,
        "land_category": None,
        "zoning": None,
        "area_unit": "m2",
    }
    assert meta["request_id"] == response.headers["X-Request-ID"]
    assert meta["count"] == len(response.get_json()["data"])
    assert meta["data_sources"] == ["rtms_official"]
    assert meta["source_mix"] == {
        "rtms_official": sum(r["sample_count"] for r in response.get_json()["data"])
    }
    levels = [r["confidence"] for r in response.get_json()["data"]]
    assert meta["confidence"] == min(levels, key=("low", "medium", "high").index)
    assert meta["rate_limit"]["limit_per_min"] == 120
    assert meta["lease_data_status"] == "absent"
    # Gangnam's sales of the window: 3 + 4 cancelled, 7 partial-share deals (Jongno's one
    # partial share is not this answer's: issue 42).
    assert "7 cancelled deals" in meta["coverage_note"]
    assert "7 partial-share deals" in meta["coverage_note"]
    assert meta["exclusions"] == {"cancelled": 7, "partial_share": 7}
    assert meta["rejected_rows"] == []
    assert not any("Synthetic" in item for item in meta["known_limitations"])


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"property_type": "officetel", "transaction_type": "monthly_lease"}, "reported"),
        ({"property_type": "officetel"}, "reported"),
        ({"transaction_type": "sale"}, "absent"),
        ({}, "not_mandated"),
        ({"transaction_type": "monthly_lease"}, "not_mandated"),
    ],
)
def test_lease_data_status_follows_the_query(api: Api, params: dict[str, str], status: str) -> None:
    meta = api.ok("pulse", {"sigungu_code": "11680", **params})["_meta"]
    assert meta["lease_data_status"] == status
    assert meta["lease_data_note"]


def test_no_cohort_is_404_with_hint_and_the_full_envelope(api: Api) -> None:
    for params in (
        {"sigungu_code": "11650"},
        {"sigungu_code": "11680", "period": "2024-01"},
        {"sigungu_code": "11680", "property_type": "office", "transaction_type": "monthly_lease"},
    ):
        response = api.get("pulse", params)
        error = assert_error(response, 404, "NOT_FOUND")
        assert "/api/v1/real-estate/dimensions" in error["hint"]
        meta = response.get_json()["_meta"]
        assert_layer_envelope(meta)
        assert meta["count"] == 0
        assert meta["confidence"] is None
        assert meta["query"]["sigungu_code"] == params["sigungu_code"]


def test_a_cohort_of_one_transaction_is_not_shown(api: Api) -> None:
    jongno = included(xml_items(NRG_JONGNO_PAGE))
    counts = Counter(property_type(i) for i in jongno)
    rows = api.ok("pulse", {"sigungu_code": "11110", "period": "2025-05"})["data"]
    assert {r["property_type"]: r["sample_count"] for r in rows} == {
        t: n for t, n in counts.items() if n >= 2
    }


@pytest.mark.parametrize(
    "query",
    [
        "",
        "property_type=office",
        "sigungu_code=",
        "sigungu_code=1168",
        "sigungu_code=116800",
        "sigungu_code=1168O",
        "sigungu_code=11680&property_type=warehouse",
        "sigungu_code=11680&property_type=Office",
        "sigungu_code=11680&transaction_type=rent",
        "sigungu_code=11680&geo_precision=city",
        "sigungu_code=11680&period=last_5m",
        "sigungu_code=11680&period=2025-13",
        "sigungu_code=11680&period=2025-Q5",
        "sigungu_code=11680&period=2025-q2",
        "sigungu_code=11680&period=2025",
        "sigungu_code=11680&period=last_4q",
        "sigungu_code=11680&period=1989-12",
        "sigungu_code=11680&period=%202025-06",
        "sigungu_code=11680&geo_precision=dong&dong=" + "가" * 41,
        "sigungu_code=11680&sigungu=강남구",
        "sigungu_code=11680&sigungu_code=11650",
        "sigungu_code=11680&format=xml",
    ],
)
def test_malformed_parameters_are_400_invalid_params(api: Api, query: str) -> None:
    response = api.client.get(f"/api/v1/real-estate/pulse?{query}", headers={"X-API-Key": api.key})
    error = assert_error(response, 400, "INVALID_PARAMS")
    assert error["message"]
    assert api.usage() == 0


@pytest.mark.parametrize(
    ("endpoint", "params"),
    [
        ("pulse", {"sigungu_code": "11680", "geo_precision": "dong"}),
        ("pulse/series", {"sigungu_code": "11680", "periods": "2025-06", "geo_precision": "dong"}),
        ("coverage", {"geo_precision": "dong"}),
        ("dimensions", {"geo_precision": "dong"}),
    ],
)
def test_dong_precision_on_starter_is_403_with_the_tier_body(
    molit_store: Store, endpoint: str, params: dict[str, str]
) -> None:
    starter = Api(make_app(molit_store), plan="starter")
    error = assert_error(starter.get(endpoint, params), 403, "TIER_RESTRICTED")
    assert error["current_tier"] == "starter"
    assert error["required_tier"] == "pro"
    assert error["upgrade_url"] == "https://api.example.com/pricing"
    assert starter.usage() == 0
    same = {k: v for k, v in params.items() if k != "geo_precision"}
    assert starter.get(endpoint, same).status_code == 200


def test_only_successful_calls_count_against_the_quota(api: Api) -> None:
    api.ok("pulse", {"sigungu_code": "11680"})
    assert api.usage() == 1
    assert api.get("pulse", {"sigungu_code": "11650"}).status_code == 404
    assert api.get("pulse", {"sigungu_code": "x"}).status_code == 400
    assert api.usage() == 1
    api.ok(
        "pulse/series", {"sigungu_code": "11680", "from_period": "2025-01", "to_period": "2025-12"}
    )
    api.ok("coverage", {})
    api.ok("dimensions", {})
    assert api.get("pulse", {"sigungu_code": "11680", "format": "csv"}).status_code == 200
    assert api.usage() == 5


def test_codes_of_a_renumbered_district_are_found_by_either_code(store: Store) -> None:
    """Gangwon's 42xxx became 51xxx in 2023: a query by either finds both."""

    def response(code: str, day: int) -> bytes:
        items = [
            {
                "sggCd": code,
                "sggNm": "춘천시",
                "umdNm": "효자동",
                "buildingType": "일반",
                "buildingUse": "업무",
                "buildingAr": "100",
                "dealYear": 2023,
                "dealMonth": 6,
                "dealDay": day,
                "dealAmount": f"{day * 1000:,}",
            }
        ]
        doc = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": items}}}}
        return json.dumps(doc).encode()

    from svc_server import ingest

    for code, day in (("42110", 1), ("51110", 2), ("51110", 3)):
        ingest.ingest(store, "rtms-commercial", response(code, day), path=f"{code}-{day}", now=0)
    api = Api(make_app(store))
    for code in ("42110", "51110"):
        [row] = api.ok("pulse", {"sigungu_code": code, "period": "2023-06"})["data"]
        assert row["sigungu_code"] == code
        assert row["sigungu"] == "춘천시"
        assert row["sample_count"] == 3
        assert row["median_price"] == 20_000_000
        [cov] = api.ok("coverage", {"sigungu_code": code})["data"]
        assert (cov["sigungu_code"], cov["total_samples"]) == (code, 3)
