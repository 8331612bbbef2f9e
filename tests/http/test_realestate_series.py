"""GET /api/v1/real-estate/pulse/series: period rules, missing periods, worst confidence."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svc_server import ingest
from svc_server.store import Store
from tests.http.realestate_support import (
    NRG_GANGNAM,
    ROW_FIELDS,
    Api,
    assert_error,
    assert_layer_envelope,
    contract_groups,
    contract_price,
    expected_stats,
    included,
    make_app,
    open_molit_store,
    xml_items,
)

# Two office sales in Gangnam in May 2025 from a second source: a low-confidence cohort
# (one source, fewer than 5 samples) beside June's medium one from MOLIT.
MAY_SAMPLES = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\r\n"
    "public_assessment,11680,역삼동,office,sale,2025-05-02,3000000000,,120\r\n"
    "public_assessment,11680,삼성동,office,sale,2025-05-20,5000000000,,200\r\n"
).encode()
OFFICE_JUNE = sum(1 for i in included(xml_items(NRG_GANGNAM)) if i["buildingUse"] == "업무")
OFFICE = {"sigungu_code": "11680", "property_type": "office", "transaction_type": "sale"}


@pytest.fixture(scope="module")
def series_store(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as s:
        ingest.ingest(s, "samples", MAY_SAMPLES, path="may.csv", now=0)
        yield s


@pytest.fixture
def api(series_store: Store) -> Api:
    return Api(make_app(series_store))


def test_some_periods_with_data_list_the_missing_ones_and_the_worst_confidence(api: Api) -> None:
    body = api.ok("pulse/series", {**OFFICE, "periods": "2025-06,2025-04,2025-05"})
    rows = body["data"]
    assert [(r["period"], r["sample_count"], r["confidence"]) for r in rows] == [
        ("2025-05", 2, "low"),
        ("2025-06", OFFICE_JUNE, "medium"),
    ]
    assert all(tuple(r) == ROW_FIELDS for r in rows)
    meta = body["_meta"]
    assert_layer_envelope(meta)
    assert meta["periods_requested"] == ["2025-04", "2025-05", "2025-06"]
    assert meta["periods_returned"] == ["2025-05", "2025-06"]
    assert meta["missing_periods"] == ["2025-04"]
    assert meta["count"] == 2
    assert meta["confidence"] == "low"
    assert meta["source_mix"] == {"public_assessment": 2, "rtms_official": OFFICE_JUNE}
    assert meta["data_sources"] == ["public_assessment", "rtms_official"]
    assert meta["query"]["periods"] == ["2025-04", "2025-05", "2025-06"]
    assert meta["query"]["period"] is None
    assert rows[0]["source_means"] == {"public_assessment": 4_000_000_000}
    assert rows[0]["median_price"] == 4_000_000_000


def test_series_rows_count_contracts_as_pulse_rows_do(api: Api) -> None:
    """The quarter pools May's two sales with June's 24 office rows, 12 of them one
    contract: the row's figures are over the contracts recomputed from the raw items."""
    june = [
        g
        for g in contract_groups(included(xml_items(NRG_GANGNAM)), "NRG")
        if g[0]["buildingUse"].strip() == "업무"
    ]
    [row] = api.ok("pulse/series", {**OFFICE, "periods": "2025-Q2"})["data"]
    assert row["sample_count"] == 2 + OFFICE_JUNE
    assert (row["contract_count"], row["bulk_contracts"]) == (2 + len(june), 1)
    prices = sorted([3_000_000_000, 5_000_000_000, *(contract_price(g) for g in june)])
    expected = expected_stats(prices)
    assert (row["avg_price"], row["p25_price"], row["median_price"], row["p75_price"]) == (
        expected["avg"],
        expected["p25"],
        expected["median"],
        expected["p75"],
    )
    assert row["confidence_factors"]["contract_count"] == 2 + len(june)
    [pulse] = api.ok("pulse", {**OFFICE, "period": "2025-Q2"})["data"]
    assert pulse == row


def test_a_range_expands_to_every_month_inclusive(api: Api) -> None:
    meta = api.ok("pulse/series", {**OFFICE, "from_period": "2024-07", "to_period": "2025-06"})[
        "_meta"
    ]
    assert meta["periods_requested"] == [
        *(f"2024-{m:02d}" for m in range(7, 13)),
        *(f"2025-{m:02d}" for m in range(1, 7)),
    ]
    assert meta["periods_returned"] == ["2025-05", "2025-06"]
    assert len(meta["missing_periods"]) == 10
    assert meta["query"]["from_period"] == "2024-07" and meta["query"]["to_period"] == "2025-06"


def test_quarters_pool_their_months(api: Api) -> None:
    body = api.ok("pulse/series", {**OFFICE, "from_period": "2025-Q1", "to_period": "2025-Q2"})
    [row] = body["data"]
    assert (row["period"], row["sample_count"]) == ("2025-Q2", OFFICE_JUNE + 2)
    assert row["source_mix"] == {"public_assessment": 2, "rtms_official": OFFICE_JUNE}
    assert body["_meta"]["missing_periods"] == ["2025-Q1"]


def test_a_repeated_period_is_requested_once(api: Api) -> None:
    meta = api.ok("pulse/series", {**OFFICE, "periods": "2025-06,2025-06"})["_meta"]
    assert meta["periods_requested"] == ["2025-06"]


def test_twelve_periods_are_allowed(api: Api) -> None:
    periods = ",".join(f"2025-{m:02d}" for m in range(1, 13))
    assert (
        len(api.ok("pulse/series", {**OFFICE, "periods": periods})["_meta"]["missing_periods"])
        == 10
    )


def test_all_periods_empty_is_404_with_the_envelope_and_every_period_missing(api: Api) -> None:
    response = api.get("pulse/series", {**OFFICE, "periods": "2024-01,2024-02"})
    error = assert_error(response, 404, "NOT_FOUND")
    assert "/api/v1/real-estate/dimensions" in error["hint"]
    meta = response.get_json()["_meta"]
    assert_layer_envelope(meta)
    assert meta["periods_requested"] == ["2024-01", "2024-02"]
    assert meta["periods_returned"] == []
    assert meta["missing_periods"] == ["2024-01", "2024-02"]
    assert meta["count"] == 0 and meta["confidence"] is None
    assert api.usage() == 0


def test_dong_precision_series(api: Api) -> None:
    rows = api.ok(
        "pulse/series", {**OFFICE, "periods": "2025-05,2025-06", "geo_precision": "dong"}
    )["data"]
    assert all(r["gu"] == "강남구" and r["dong"] for r in rows)
    assert all(r["period"] == "2025-06" for r in rows)  # May's two deals are in two dongs


THIRTEEN = ",".join([*(f"2024-{m:02d}" for m in range(1, 13)), "2025-01"])


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"periods": ""}, "empty"),
        ({"periods": THIRTEEN}, "at most 12"),
        ({"periods": "2025-06,"}, "empty item"),
        ({"periods": "2025-13"}, "month"),
        ({"periods": "2025-Q0"}, "Q1 to Q4"),
        ({"periods": "2025"}, "YYYY-MM or YYYY-Qn"),
        ({"periods": "2025-06, 2025-07"}, "YYYY-MM or YYYY-Qn"),
        ({"periods": "last_6m"}, "Rolling"),
        ({"periods": "2025-05,last_3m"}, "Rolling"),
        ({"from_period": "2025-01"}, "to_period"),
        ({"to_period": "2025-01"}, "from_period"),
        ({"from_period": "2024-01", "to_period": "2025-01"}, "at most 12"),
        ({"from_period": "2023-Q1", "to_period": "2026-Q1"}, "at most 12"),
        ({"from_period": "2025-06", "to_period": "2025-01"}, "after"),
        ({"periods": "2025-05,2025-Q2"}, "mix"),
        ({"from_period": "2025-01", "to_period": "2025-Q2"}, "mix"),
        ({}, "Give periods"),
        ({"periods": "2025-06", "from_period": "2025-01", "to_period": "2025-06"}, "either"),
        ({"periods": "2025-06", "period": "2025-06"}, "Unknown"),
    ],
)
def test_every_series_rule_is_a_400(api: Api, params: dict[str, str], says: str) -> None:
    error = assert_error(
        api.get("pulse/series", {"sigungu_code": "11680", **params}), 400, "INVALID_PARAMS"
    )
    assert says in error["message"], error
    assert error.get("hint")
    assert api.usage() == 0


@pytest.mark.parametrize(
    "params",
    [
        {"periods": "2025-06"},
        {"sigungu_code": "11680x", "periods": "2025-06"},
        {"sigungu_code": "11680", "periods": "2025-06", "property_type": "apartment"},
        {"sigungu_code": "11680", "periods": "2025-06", "transaction_type": "lease"},
        {"sigungu_code": "11680", "periods": "2025-06", "geo_precision": "gu"},
    ],
)
def test_the_pulse_parameters_are_checked_as_on_pulse(api: Api, params: dict[str, str]) -> None:
    assert_error(api.get("pulse/series", params), 400, "INVALID_PARAMS")
