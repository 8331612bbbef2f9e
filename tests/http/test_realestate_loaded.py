"""What was loaded, through HTTP on the real MOLIT responses, SQLite and PostgreSQL (issue
28): a row is ``complete`` only when every month of its period was loaded completely for
its district and types (``months_loaded`` of ``months_expected``), ``_meta.
incomplete_periods`` lists the months missing, and a period with nothing loaded answers
404 with ``error.reason`` ``not_loaded``, unlike a loaded one with too few deals.

The June files of Gangnam (``NRG_11680_202506.xml`` and the two officetel files) are
whole answers of one month each: a store holding only them holds one month. The months
a window covers are written out by hand.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_server import ingest
from svc_server.store import Store
from tests.http.realestate_support import (
    NRG_GANGNAM,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    assert_layer_envelope,
    is_partial,
    load,
    make_app,
)

JUNE_FILES: tuple[tuple[str, Path], ...] = (
    ("rtms-commercial", NRG_GANGNAM),
    ("rtms-officetel-trade", OFFI_TRADE),
    ("rtms-officetel-rent", OFFI_RENT),
)
YEAR_TO_JUNE = [
    *(f"2024-{m:02d}" for m in (7, 8, 9, 10, 11, 12)),
    *(f"2025-{m:02d}" for m in (1, 2, 3, 4, 5, 6)),
]
"""``last_12m`` ending at June 2025, the latest month in the store."""
GANGNAM = {"sigungu_code": "11680"}


@pytest.fixture(scope="module")
def june_store(module_db_url: str) -> Iterator[Store]:
    from svc_server.store import open_store

    store = open_store(module_db_url, pool_size=4)
    store.migrate()
    for kind, path in JUNE_FILES:
        assert not is_partial(path)
        load(store, kind, path)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def api(june_store: Store) -> Api:
    return Api(make_app(june_store))


def months_of(rows: list[dict[str, Any]]) -> set[tuple[bool, int, int]]:
    return {(r["complete"], r["months_loaded"], r["months_expected"]) for r in rows}


def test_a_year_over_the_one_loaded_month_is_one_month_of_twelve(api: Api) -> None:
    body = api.ok("pulse", {**GANGNAM, "period": "last_12m"})
    meta = body["_meta"]
    assert (meta["query"]["window_from"], meta["query"]["window_to"]) == ("2024-07", "2025-06")
    assert body["data"] and months_of(body["data"]) == {(False, 1, 12)}
    assert meta["incomplete_periods"] == YEAR_TO_JUNE[:-1]
    quarter = api.ok("pulse", {**GANGNAM, "period": "2025-Q2"})
    assert quarter["data"] and months_of(quarter["data"]) == {(False, 1, 3)}
    assert quarter["_meta"]["incomplete_periods"] == ["2025-04", "2025-05"]
    june = api.ok("pulse", {**GANGNAM, "period": "2025-06"})
    assert june["data"] and months_of(june["data"]) == {(True, 1, 1)}
    assert june["_meta"]["incomplete_periods"] == []
    # every type of the three files: commercial sales, officetel sales and leases
    assert {(r["property_type"], r["transaction_type"]) for r in june["data"]} >= {
        ("office", "sale"),
        ("officetel", "sale"),
        ("officetel", "monthly_lease"),
    }


def test_csv_carries_the_months_as_columns(api: Api) -> None:
    response = api.get("pulse", {**GANGNAM, "period": "last_12m", "format": "csv"})
    assert response.status_code == 200, response.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True).lstrip("\ufeff"))))
    assert rows and {(r["complete"], r["months_loaded"], r["months_expected"]) for r in rows} == {
        ("false", "1", "12")
    }
    assert list(rows[0])[-13:-10] == ["months_loaded", "months_expected", "building_use_mix"]
    assert json.loads(response.headers["X-Svc-Incomplete-Periods"]) == YEAR_TO_JUNE[:-1]


@pytest.mark.parametrize("scope", [GANGNAM, {}], ids=["district", "every-district"])
def test_coverage_calls_a_quarter_with_months_never_loaded_incomplete(
    api: Api, scope: dict[str, str]
) -> None:
    """The store holds June 2025 only: its quarter, 2025-Q2, has April and May never
    loaded, so a quarter row is not complete, while a month row of June is (with and
    without a district: the precomputed rows are finished the same way)."""
    quarters = api.ok("coverage", {**scope, "granularity": "quarter"})
    assert quarters["data"]
    assert {(tuple(r["periods_with_data"]), r["complete"]) for r in quarters["data"]} == {
        (("2025-Q2",), False)
    }
    assert quarters["_meta"]["incomplete_periods"] == ["2025-Q2"]
    months = api.ok("coverage", {**scope, "granularity": "month"})
    assert months["data"]
    assert {(tuple(r["periods_with_data"]), r["complete"]) for r in months["data"]} == {
        (("2025-06",), True)
    }
    assert months["_meta"]["incomplete_periods"] == []


@pytest.mark.parametrize(
    "params",
    [
        {**GANGNAM, "period": "2025-03"},
        {**GANGNAM, "period": "2024-Q4"},
        {**GANGNAM, "period": "2025-03", "geo_precision": "dong", "dong": "역삼동"},
        {"sigungu_code": "11650"},  # Seocho: nothing loaded at all
        {"sigungu_code": "11650", "period": "2025-06"},
    ],
)
def test_a_period_never_loaded_answers_404_not_loaded(api: Api, params: dict[str, str]) -> None:
    response = api.get("pulse", params)
    error = assert_error(response, 404, "NOT_FOUND")
    assert error["reason"] == "not_loaded"
    assert error["message"].startswith("Nothing was loaded for ")
    assert f"district {params['sigungu_code']}" in error["message"]
    assert "/api/v1/real-estate/dimensions" in error["hint"]
    meta = response.get_json()["_meta"]
    assert_layer_envelope(meta)
    assert (meta["count"], meta["incomplete_periods"]) == (0, [])


@pytest.mark.parametrize(
    "params",
    [
        {**GANGNAM, "period": "2025-06", "geo_precision": "dong", "dong": "없는동"},
        {**GANGNAM, "period": "last_3m", "geo_precision": "dong", "dong": "없는동"},
    ],
)
def test_a_loaded_period_without_a_cohort_answers_404_too_few(
    api: Api, params: dict[str, str]
) -> None:
    error = assert_error(api.get("pulse", params), 404, "NOT_FOUND")
    assert error["reason"] == "too_few_transactions"
    assert error["message"].startswith("No cohort with at least 2 contracts")


def test_each_dataset_is_loaded_on_its_own(store: Store) -> None:
    """Commercial sales, officetel sales and officetel leases come from three files: a
    month loaded for one of them is not loaded for the others."""
    api = Api(make_app(store))
    june = {**GANGNAM, "period": "2025-06"}
    load(store, "rtms-commercial", NRG_GANGNAM)
    rows = api.ok("pulse", june)["data"]
    assert {r["property_type"] for r in rows} <= {
        "office",
        "retail",
        "commercial_complex",
        "mixed_use",
    }
    assert months_of(rows) == {(True, 1, 1)}
    officetel = api.get("pulse", {**june, "property_type": "officetel"})
    assert assert_error(officetel, 404, "NOT_FOUND")["reason"] == "not_loaded"
    load(store, "rtms-officetel-trade", OFFI_TRADE)
    sales = api.ok("pulse", {**june, "property_type": "officetel", "transaction_type": "sale"})
    assert months_of(sales["data"]) == {(True, 1, 1)}
    leases = api.get(
        "pulse", {**june, "property_type": "officetel", "transaction_type": "monthly_lease"}
    )
    assert assert_error(leases, 404, "NOT_FOUND")["reason"] == "not_loaded"


def test_series_names_the_periods_nothing_was_loaded_for(api: Api) -> None:
    body = api.ok("pulse/series", {**GANGNAM, "periods": "2025-04,2025-05,2025-06"})
    meta = body["_meta"]
    assert {r["period"] for r in body["data"]} == {"2025-06"}
    assert months_of(body["data"]) == {(True, 1, 1)}
    assert meta["missing_periods"] == ["2025-04", "2025-05"]
    assert meta["unloaded_periods"] == ["2025-04", "2025-05"]
    assert meta["incomplete_periods"] == []
    quarters = api.ok("pulse/series", {**GANGNAM, "from_period": "2025-Q1", "to_period": "2025-Q2"})
    assert months_of(quarters["data"]) == {(False, 1, 3)}
    assert quarters["_meta"]["unloaded_periods"] == ["2025-Q1"]
    assert quarters["_meta"]["incomplete_periods"] == ["2025-04", "2025-05"]

    nothing = api.get("pulse/series", {**GANGNAM, "periods": "2025-03,2025-04"})
    error = assert_error(nothing, 404, "NOT_FOUND")
    assert error["reason"] == "not_loaded" and "2025-03, 2025-04" in error["message"]
    meta = nothing.get_json()["_meta"]
    assert meta["missing_periods"] == meta["unloaded_periods"] == ["2025-03", "2025-04"]

    few = api.get(
        "pulse/series",
        {**GANGNAM, "periods": "2025-05,2025-06", "geo_precision": "dong", "dong": "없는동"},
    )
    assert assert_error(few, 404, "NOT_FOUND")["reason"] == "too_few_transactions"
    assert few.get_json()["_meta"]["unloaded_periods"] == ["2025-05"]


def renumbered(code: str, month: int, days: tuple[int, ...]) -> bytes:
    """An open-API JSON answer (no paging figures) of office sales in Chuncheon."""
    items = [
        {
            "sggCd": code,
            "sggNm": "춘천시",
            "umdNm": "효자동",
            "buildingType": "일반",
            "buildingUse": "업무",
            "buildingAr": "100",
            "dealYear": 2023,
            "dealMonth": month,
            "dealDay": day,
            "dealAmount": f"{day * 1000:,}",
        }
        for day in days
    ]
    doc = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": items}}}}
    return json.dumps(doc).encode()


def test_a_month_loaded_under_a_renumbered_code_counts_for_either(store: Store) -> None:
    """Gangwon's 42xxx became 51xxx in 2023: May under the old code and June and July under
    the new one make a whole window for a query by either."""
    for code, month in (("42110", 5), ("51110", 6), ("51110", 7)):
        data = renumbered(code, month, (1, 2))
        ingest.ingest(store, "rtms-commercial", data, path=f"{code}-{month}.json", now=0)
    api = Api(make_app(store))
    for code in ("42110", "51110"):
        body = api.ok("pulse", {"sigungu_code": code, "period": "last_3m"})
        assert body["_meta"]["query"]["window_from"] == "2023-05"
        assert months_of(body["data"]) == {(True, 3, 3)}
        error = assert_error(
            api.get("pulse", {"sigungu_code": code, "period": "2023-04"}), 404, "NOT_FOUND"
        )
        assert error["reason"] == "not_loaded"


LEASES = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\r\n"
    "public_assessment,11680,역삼동,office,monthly_lease,2025-06-10,50000000,4500000,150\r\n"
    "public_assessment,11680,삼성동,office,monthly_lease,2025-06-20,60000000,5000000,170\r\n"
).encode()


def test_svcs_samples_load_the_months_they_hold_commercial_leases_included(
    store: Store,
) -> None:
    """No RTMS dataset carries commercial leases: the samples CSV loads them, and the
    months it holds them in count as loaded; a month it holds no lease of does not."""
    ingest.ingest(store, "samples", LEASES, path="leases.csv", now=0)
    api = Api(make_app(store))
    june = {**GANGNAM, "period": "2025-06", "property_type": "office"}
    rows = api.ok("pulse", {**june, "transaction_type": "monthly_lease"})["data"]
    assert months_of(rows) == {(True, 1, 1)}
    for params in ({**june, "period": "2025-05"}, {**june, "transaction_type": "sale"}):
        assert assert_error(api.get("pulse", params), 404, "NOT_FOUND")["reason"] == "not_loaded"
