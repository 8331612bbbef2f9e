"""GET /api/v1/real-estate/coverage: rows, ordering, limits, empty answers and 400s.

A period counts with at least 2 contracts (issue 28): the units of one bulk sale are one
(``contract_groups``, the documented rule written out again on the raw items)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svc_server import ingest
from svc_server.store import Store
from tests.http.realestate_support import (
    COVERAGE_FIELDS,
    NRG_GANGNAM,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    assert_layer_envelope,
    contract_groups,
    included,
    make_app,
    open_molit_store,
    type_mix,
    xml_items,
)
from tests.http.test_realestate_pulse import property_type

HEADER = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\r\n"
)
# Gangnam office sales: 3 in January, 1 in February 2025 (a month of one sale does not
# count, but the quarter pools it). Seocho: one sale in March and one in April, which
# gives no month and no quarter with two sales.
EXTRA = (
    HEADER
    + "public_assessment,11680,역삼동,office,sale,2025-01-03,3000000000,,100\r\n"
    + "public_assessment,11680,역삼동,office,sale,2025-01-04,3100000000,,100\r\n"
    + "public_assessment,11680,삼성동,office,sale,2025-01-05,3200000000,,100\r\n"
    + "public_assessment,11680,삼성동,office,sale,2025-02-05,3300000000,,100\r\n"
    + "public_assessment,11650,서초동,office,sale,2025-03-05,3300000000,,100\r\n"
    + "public_assessment,11650,서초동,office,sale,2025-04-05,3300000000,,100\r\n"
).encode()
OFFICE_JUNE = sum(1 for i in included(xml_items(NRG_GANGNAM)) if i["buildingUse"] == "업무")
OFFICE_TYPES = type_mix(i for i in included(xml_items(NRG_GANGNAM)) if i["buildingUse"] == "업무")
OFFICE_CONTRACTS = [
    g
    for g in contract_groups(included(xml_items(NRG_GANGNAM)), "NRG")
    if property_type(g[0]) == "office"
]


@pytest.fixture(scope="module")
def coverage_store(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as s:
        ingest.ingest(s, "samples", EXTRA, path="extra.csv", now=0)
        yield s


@pytest.fixture
def api(coverage_store: Store) -> Api:
    return Api(make_app(coverage_store))


def office(rows: list[dict[str, object]]) -> dict[str, object]:
    [row] = [
        r
        for r in rows
        if (r["sigungu_code"], r["property_type"], r["transaction_type"])
        == ("11680", "office", "sale")
    ]
    return row


def test_quarter_rows_count_periods_of_at_least_two_samples(api: Api) -> None:
    body = api.ok("coverage", {"sigungu_code": "11680", "property_type": "office"})
    row = office(body["data"])
    assert tuple(row) == COVERAGE_FIELDS
    assert row == {
        "sigungu_code": "11680",
        "sigungu": "강남구",
        "gu": None,
        "dong": None,
        "property_type": "office",
        "transaction_type": "sale",
        "earliest_period": "2025-Q1",
        "latest_period": "2025-Q2",
        "period_count": 2,
        "periods_with_data": ["2025-Q1", "2025-Q2"],
        "total_samples": 4 + OFFICE_JUNE,
        "samples_per_period_median": (4 + OFFICE_JUNE) // 2,
        "data_sources": ["public_assessment", "rtms_official"],
        "contract_count": 4 + len(OFFICE_CONTRACTS),
        "bulk_contracts": sum(len(g) > 1 for g in OFFICE_CONTRACTS),
        "building_type": None,
        "building_type_mix": {**OFFICE_TYPES, "unknown": 4},
        # neither quarter is loaded whole: the files hold January, February and June
        "complete": False,
        "provisional": False,
    }
    assert (row["contract_count"], row["bulk_contracts"]) == (4 + 13, 1)
    assert body["_meta"]["incomplete_periods"] == ["2025-Q1", "2025-Q2"]
    meta = body["_meta"]
    assert_layer_envelope(meta)
    assert "at least 2 contracts" in meta["methodology"]
    assert (meta["granularity"], meta["row_cap"]) == ("quarter", 200)
    assert meta["query"]["granularity"] == "quarter" and meta["query"]["limit"] == 200


def test_month_granularity_drops_months_of_one_sample_and_rounds_the_median(api: Api) -> None:
    row = office(api.ok("coverage", {"sigungu_code": "11680", "granularity": "month"})["data"])
    assert row["periods_with_data"] == ["2025-01", "2025-06"]
    assert row["total_samples"] == 3 + OFFICE_JUNE
    # median of 3 and 24 is 13.5: rounded half to even
    assert row["samples_per_period_median"] == round((3 + OFFICE_JUNE) / 2)
    assert row["period_count"] == 2


def dong_contracts() -> dict[tuple[str, str, str], list[list[dict[str, str]]]]:
    """Gangnam's June contracts per (dong, property type, transaction type)."""
    out: dict[tuple[str, str, str], list[list[dict[str, str]]]] = {}
    for path, kind in ((NRG_GANGNAM, "NRG"), (OFFI_TRADE, "OFFICETEL")):
        for group in contract_groups(included(xml_items(path)), kind):
            ptype = "officetel" if kind == "OFFICETEL" else property_type(group[0])
            out.setdefault((group[0]["umdNm"], ptype, "sale"), []).append(group)
    return out


def test_a_period_counts_with_two_contracts_not_two_rows(api: Api) -> None:
    """Per dong, June sales: a cohort whose rows are one contract (Nonhyeon-dong's two
    mixed-use floors of one building, one buyer, one day) has no period with data."""
    rows = api.ok(
        "coverage",
        {
            "sigungu_code": "11680",
            "geo_precision": "dong",
            "granularity": "month",
            "transaction_type": "sale",
        },
    )["data"]
    got = {
        (r["dong"], r["property_type"], r["transaction_type"]): (
            r["periods_with_data"],
            r["total_samples"],
            r["contract_count"],
            r["bulk_contracts"],
        )
        for r in rows
    }
    expected = {
        key: (["2025-06"], sum(map(len, groups)), len(groups), sum(len(g) > 1 for g in groups))
        for key, groups in dong_contracts().items()
        if len(groups) >= 2
    }
    # EXTRA adds two Yeoksam-dong office sales in January (a month of 2 contracts), and
    # one Samseong-dong sale in each of January and February (months of 1 contract).
    periods, samples, contracts, bulk = expected[("역삼동", "office", "sale")]
    expected[("역삼동", "office", "sale")] = (
        ["2025-01", *periods],
        samples + 2,
        contracts + 2,
        bulk,
    )
    assert got == expected
    assert ("논현동", "mixed_use", "sale") not in got
    assert len(dong_contracts()[("논현동", "mixed_use", "sale")][0]) == 2


def test_leases_are_contracts_of_their_own(api: Api) -> None:
    rows = api.ok(
        "coverage", {"sigungu_code": "11680", "property_type": "officetel", "granularity": "month"}
    )["data"]
    leases = {r["transaction_type"]: r for r in rows if r["transaction_type"] != "sale"}
    rent = xml_items(OFFI_RENT)
    assert sum(r["total_samples"] for r in leases.values()) == len(rent)
    assert all(r["contract_count"] == r["total_samples"] for r in leases.values())
    assert all(r["bulk_contracts"] == 0 for r in leases.values())
    [sale] = [r for r in rows if r["transaction_type"] == "sale"]
    groups = contract_groups(included(xml_items(OFFI_TRADE)), "OFFICETEL")
    assert (sale["total_samples"], sale["contract_count"]) == (55, len(groups))


def test_rows_are_ordered_by_total_samples_descending(api: Api) -> None:
    rows = api.ok("coverage", {})["data"]
    totals = [r["total_samples"] for r in rows]
    assert totals == sorted(totals, reverse=True)
    assert rows[0]["property_type"] == "officetel" and rows[0]["transaction_type"] == (
        "monthly_lease"
    )
    assert {r["sigungu_code"] for r in rows} == {"11680", "11110"}


def test_limit_keeps_the_top_rows(api: Api) -> None:
    everything = api.ok("coverage", {})["data"]
    body = api.ok("coverage", {"limit": "2"})
    assert body["data"] == everything[:2]
    assert body["_meta"]["row_cap"] == 2 and body["_meta"]["count"] == 2
    assert api.ok("coverage", {"limit": "500"})["data"] == everything


def test_filters_without_a_district_match_the_district_answer(api: Api) -> None:
    """Precomputed rows (no district) and rows built per district agree."""
    for granularity in ("quarter", "month"):
        for geo in ("sigungu", "dong"):
            params = {"property_type": "office", "granularity": granularity, "geo_precision": geo}
            everywhere = [
                r for r in api.ok("coverage", params)["data"] if r["sigungu_code"] == "11680"
            ]
            district = api.ok("coverage", {**params, "sigungu_code": "11680"})["data"]
            assert everywhere == district


def test_dong_precision_fills_gu_and_dong(api: Api) -> None:
    rows = api.ok("coverage", {"geo_precision": "dong", "sigungu_code": "11680"})["data"]
    assert rows and all(r["gu"] == "강남구" and r["dong"] for r in rows)
    one = api.ok(
        "coverage", {"geo_precision": "dong", "dong": "역삼동", "property_type": "office"}
    )["data"]
    assert {r["dong"] for r in one} == {"역삼동"}


def test_no_data_is_200_with_an_empty_list(api: Api) -> None:
    for params in (
        {"sigungu_code": "11650"},  # two sales, in two different months and quarters
        {"sigungu_code": "26350"},
        {"geo_precision": "dong", "dong": "없는동"},
    ):
        body = api.ok("coverage", params)
        assert body["data"] == []
        assert body["_meta"]["count"] == 0
        assert_layer_envelope(body["_meta"])
    assert api.usage() == 3


def test_coverage_without_a_district_reads_only_precomputed_rows(
    api: Api, coverage_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("coverage without a district must not read the rollup")

    monkeypatch.setattr(coverage_store.realestate, "rollup", refuse)
    monkeypatch.setattr(coverage_store.realestate, "samples", refuse)
    assert api.ok("coverage", {"limit": "3", "granularity": "month"})["data"]


@pytest.mark.parametrize(
    "query",
    [
        "sigungu_code=1168",
        "sigungu_code=abcde",
        "sigungu_code=11680&sigungu_code=11650",
        "granularity=year",
        "granularity=Quarter",
        "limit=0",
        "limit=501",
        "limit=abc",
        "limit=-1",
        "limit=1.5",
        "limit=%205",
        "property_type=house",
        "transaction_type=sales",
        "geo_precision=gu",
        "period=2025-06",
        "offset=10",
    ],
)
def test_malformed_parameters_are_400(api: Api, query: str) -> None:
    response = api.client.get(
        f"/api/v1/real-estate/coverage?{query}", headers={"X-API-Key": api.key}
    )
    error = assert_error(response, 400, "INVALID_PARAMS")
    assert "_meta" not in response.get_json() or "vertical" not in response.get_json()["_meta"]
    assert error["message"]


def test_a_load_updates_the_precomputed_coverage(store: Store) -> None:
    api = Api(make_app(store))
    assert api.ok("coverage", {})["data"] == []
    ingest.ingest(store, "samples", EXTRA, path="extra.csv", now=0)
    [row] = api.ok("coverage", {})["data"]
    assert (row["sigungu_code"], row["total_samples"]) == ("11680", 4)
    again = HEADER + "rone_index_derived,11650,서초동,office,sale,2025-03-07,1,,\r\n"
    ingest.ingest(store, "samples", again.encode(), path="again.csv", now=1)
    rows = api.ok("coverage", {})["data"]
    assert [(r["sigungu_code"], r["total_samples"]) for r in rows] == [("11680", 4), ("11650", 2)]
    assert rows[1]["data_sources"] == ["public_assessment", "rone_index_derived"]
