"""GET /api/v1/real-estate/indices over the R-ONE fixtures (JSON and CSV forms)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svc_server.store import Store, open_store
from tests.http.realestate_support import (
    FIXTURES,
    INDEX_FIELDS,
    Api,
    assert_error,
    assert_layer_envelope,
    load,
    make_app,
)

RONE = FIXTURES / "rone"


@pytest.fixture(scope="module")
def index_store(module_db_url: str) -> Iterator[Store]:
    s = open_store(module_db_url, pool_size=4)
    s.migrate()
    load(s, "rone-index", RONE / "indices.csv")
    load(s, "rone-index", RONE / "retail_yields_openapi.json")
    load(s, "rone-index", RONE / "office_vacancy_openapi.json", property_type="office")
    yield s
    s.close()


@pytest.fixture
def api(index_store: Store) -> Api:
    return Api(make_app(index_store))


def test_gangnam_rows_in_the_default_window(api: Api) -> None:
    body = api.ok("indices", {"sigungu_code": "11680"})
    rows = body["data"]
    assert all(tuple(r) == INDEX_FIELDS for r in rows)
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
        "window_from": "2024-Q3",
        "window_to": "2025-Q2",
    }


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
        "sigungu_code=11680&property_type=land",
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
