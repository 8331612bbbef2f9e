"""GET /api/v1/real-estate/indices over the R-ONE fixtures (JSON and CSV forms)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svc_server.store import Store, open_store
from tests.http.realestate_support import (
    ALL_INDEX_FIELDS,
    FIXTURES,
    Api,
    assert_error,
    assert_layer_envelope,
    load,
    make_app,
)

RONE = FIXTURES / "rone"
YIELDS = "임대동향 수익률(분기)(2024년3분기~)_{}"


@pytest.fixture(scope="module")
def index_store(module_db_url: str) -> Iterator[Store]:
    s = open_store(module_db_url, pool_size=4)
    s.migrate()
    load(s, "rone-index", RONE / "indices.csv")
    yields = RONE / "retail_yields_openapi.json"
    # the same answer as the current yields table of two retail classes: two series
    load(s, "rone-index", yields, table_name=YIELDS.format("중대형 상가"))
    load(s, "rone-index", yields, table_name=YIELDS.format("소규모 상가"))
    load(s, "rone-index", RONE / "office_vacancy_openapi.json", property_type="office")
    load(s, "rone-index", RONE / "rent_level.csv")
    yield s
    s.close()


@pytest.fixture
def api(index_store: Store) -> Api:
    return Api(make_app(index_store))


def test_gangnam_rows_in_the_default_window(api: Api) -> None:
    body = api.ok("indices", {"sigungu_code": "11680"})
    rows = body["data"]
    assert all(tuple(r) == ALL_INDEX_FIELDS for r in rows)
    assert [
        (
            r["property_type"],
            r["metric_type"],
            r["period"],
            r["value_pct"],
            r["annualized_cap_rate"],
        )
        for r in rows
    ] == [
        ("office", "vacancy_rate", "2025-Q1", 5.9, None),
        ("office", "income_yield", "2025-Q1", 1.05, pytest.approx(4.2)),
        ("retail", "income_yield", "2025-Q2", 1.12, pytest.approx(4.48)),
        ("retail", "capital_yield", "2025-Q2", 0.35, None),
        ("retail", "total_return", "2025-Q2", 1.47, None),
        ("retail", "rent_index", "2025-Q2", 100.4, None),
    ]
    assert {r["period_end_date"] for r in rows} == {"2025-03-31", "2025-06-30"}
    # each row says its series: the yields from the table's name and era, the rest from
    # files that name a class but no table (CSV) or neither (the vacancy answer)
    assert [(r["survey_class"], r["era"], r["source_table"]) for r in rows] == [
        (None, None, "PLACEHOLDER_01"),
        ("오피스", None, None),
        ("중대형 상가", "2024Q3~", "PLACEHOLDER_08"),
        ("중대형 상가", "2024Q3~", "PLACEHOLDER_08"),
        ("중대형 상가", "2024Q3~", "PLACEHOLDER_08"),
        ("중대형 상가", None, None),
    ]
    assert {(r["sigungu_code"], r["sigungu"]) for r in rows} == {("11680", "강남구")}
    meta = body["_meta"]
    assert_layer_envelope(meta)
    assert "rone_official" in meta["data_sources"]
    assert meta["source_mix"] == {"rone_official": 6}
    assert meta["count"] == 6
    assert meta["query"] == {
        "sigungu_code": "11680",
        "property_type": None,
        "metric_type": None,
        "period": "last_4q",
        "series": "preferred",
        "window_from": "2024-Q3",
        "window_to": "2025-Q2",
    }


def test_every_series_with_series_all_the_preferred_one_by_default(api: Api) -> None:
    query = {"sigungu_code": "11650", "metric_type": "income_yield", "period": "2025-Q2"}
    (row,) = api.ok("indices", query)["data"]
    assert (row["property_type"], row["survey_class"], row["value_pct"]) == (
        "retail",
        "중대형 상가",
        1.12,
    )
    rows = api.ok("indices", {**query, "series": "all"})["data"]
    assert [(r["survey_class"], r["era"], r["value_pct"]) for r in rows] == [
        ("중대형 상가", "2024Q3~", 1.12),
        ("소규모 상가", "2024Q3~", 1.12),
    ]
    bad = api.get("indices", {**query, "series": "every"})
    assert_error(bad, 400, "INVALID_PARAMS")


def test_every_market_area_under_its_own_code_named_in_full(api: Api) -> None:
    rows = api.ok("indices", {"sigungu_code": "A510004", "period": "2025-Q2"})["data"]
    assert {(r["sigungu_code"], r["sigungu"]) for r in rows} == {("A510004", "서울>강남")}
    assert [(r["metric_type"], r["value_pct"]) for r in rows] == [
        ("income_yield", 1.12),
        ("capital_yield", 0.35),
        ("total_return", 1.47),
    ]
    # 서울>기타 (510006), mapped to the other 19 gu, is served for them too
    (other,) = api.ok(
        "indices", {"sigungu_code": "11710", "period": "2025-Q2", "metric_type": "income_yield"}
    )["data"]
    assert (other["sigungu"], other["value_pct"]) == ("송파구", 1.21)


def test_rent_level_only_when_asked_for(api: Api) -> None:
    # not one of SPEC's metrics: a SPEC client asking for all metrics never sees it
    rows = api.ok("indices", {"sigungu_code": "11680", "period": "2025-Q2"})["data"]
    assert "rent_level" not in {r["metric_type"] for r in rows}
    (row,) = api.ok(
        "indices", {"sigungu_code": "11680", "period": "2025-Q2", "metric_type": "rent_level"}
    )["data"]
    assert (row["property_type"], row["value_pct"], row["annualized_cap_rate"]) == (
        "office",
        38.2,
        None,
    )


def test_annualized_cap_rate_is_four_quarterly_income_yields(api: Api) -> None:
    rows = api.ok("indices", {"sigungu_code": "11650", "metric_type": "income_yield"})["data"]
    assert rows
    for row in rows:
        assert row["annualized_cap_rate"] == pytest.approx(row["value_pct"] * 4)


def test_a_year_finds_annual_and_quarterly_values(api: Api) -> None:
    rows = api.ok("indices", {"sigungu_code": "11110", "period": "2024"})["data"]
    assert [(r["property_type"], r["metric_type"], r["period"], r["value_pct"]) for r in rows] == [
        ("office", "vacancy_rate", "2024", 9.1),
        ("commercial_complex", "total_return", "2024", 5.12),
    ]
    assert rows[0]["period_end_date"] == "2024-12-31"


def test_a_quarter_and_the_filters(api: Api) -> None:
    rows = api.ok(
        "indices",
        {"sigungu_code": "11110", "period": "2025-Q2", "property_type": "office"},
    )["data"]
    assert [(r["metric_type"], r["value_pct"]) for r in rows] == [("vacancy_rate", 10.2)]
    rows = api.ok(
        "indices", {"sigungu_code": "11560", "period": "last_8q", "metric_type": "vacancy_rate"}
    )["data"]
    assert [(r["period"], r["value_pct"]) for r in rows] == [("2025-Q1", 6.7), ("2025-Q2", 7.05)]


def test_no_values_is_404_with_the_envelope(api: Api) -> None:
    for params in (
        {"sigungu_code": "26350"},
        {"sigungu_code": "11680", "period": "2020"},
        {"sigungu_code": "11680", "metric_type": "sale_price_index"},
    ):
        response = api.get("indices", params)
        error = assert_error(response, 404, "NOT_FOUND")
        assert error["hint"]
        meta = response.get_json()["_meta"]
        assert_layer_envelope(meta)
        assert meta["data_sources"] == ["rone_official"]
        assert meta["count"] == 0
    assert api.usage() == 0


@pytest.mark.parametrize(
    "query",
    [
        "",
        "sigungu_code=116",
        "sigungu_code=11680&metric_type=cap_rate",
        "sigungu_code=11680&property_type=apartment",
        "sigungu_code=11680&period=2025-06",
        "sigungu_code=11680&period=last_6m",
        "sigungu_code=11680&period=2025-Q5",
        "sigungu_code=11680&period=25",
        "sigungu_code=11680&period=2025-Q1,2025-Q2",
        "sigungu_code=11680&geo_precision=dong",
        "sigungu_code=11680&transaction_type=sale",
    ],
)
def test_malformed_parameters_are_400(api: Api, query: str) -> None:
    response = api.client.get(
        f"/api/v1/real-estate/indices?{query}", headers={"X-API-Key": api.key}
    )
    assert_error(response, 400, "INVALID_PARAMS")
