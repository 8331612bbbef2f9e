"""CSV negotiation on the real-estate endpoints: same rows as JSON, envelope in headers."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from werkzeug.test import TestResponse

from svc_server.store import Store
from tests.http.realestate_support import (
    ALL_INDEX_FIELDS,
    COVERAGE_FIELDS,
    FIXTURES,
    ROW_FIELDS,
    Api,
    assert_error,
    load,
    make_app,
    open_molit_store,
)

CASES: tuple[tuple[str, dict[str, str], tuple[str, ...]], ...] = (
    ("pulse", {"sigungu_code": "11680"}, ROW_FIELDS),
    (
        "pulse",
        {"sigungu_code": "11680", "geo_precision": "dong", "period": "2025-Q2"},
        ROW_FIELDS,
    ),
    ("pulse/series", {"sigungu_code": "11680", "periods": "2025-05,2025-06"}, ROW_FIELDS),
    ("coverage", {"granularity": "month"}, COVERAGE_FIELDS),
    ("coverage", {"geo_precision": "dong", "limit": "20"}, COVERAGE_FIELDS),
    ("indices", {"sigungu_code": "11680", "period": "2025"}, ALL_INDEX_FIELDS),
)


@pytest.fixture(scope="module")
def csv_store(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as s:
        load(s, "rone-index", FIXTURES / "rone" / "indices.csv")
        load(
            s,
            "rone-index",
            FIXTURES / "rone" / "retail_yields_openapi.json",
            table_name="임대동향 수익률(분기)(2024년3분기~)_중대형 상가",
        )
        yield s


@pytest.fixture
def api(csv_store: Store) -> Api:
    return Api(make_app(csv_store))


def read_csv(response: TestResponse) -> tuple[list[str], list[dict[str, str]]]:
    raw = response.get_data()
    assert raw.startswith(b"\xef\xbb\xbf")
    reader = csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline=""))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def typed(cell: str, like: Any) -> Any:
    """A CSV cell read back as the type of the JSON value it should equal."""
    if like is None:
        return None if cell == "" else cell
    if isinstance(like, bool):
        return cell == "true"
    if isinstance(like, int):
        return int(cell)
    if isinstance(like, float):
        return float(cell)
    if isinstance(like, list | dict):
        return json.loads(cell)
    return cell


@pytest.mark.parametrize(("endpoint", "params", "columns"), CASES)
def test_csv_rows_equal_the_json_rows(
    api: Api, endpoint: str, params: dict[str, str], columns: tuple[str, ...]
) -> None:
    expected = api.ok(endpoint, params)
    response = api.get(endpoint, {**params, "format": "csv"})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Vary"] == "Accept, Accept-Encoding"
    names, rows = read_csv(response)
    assert tuple(names) == columns
    assert len(rows) == len(expected["data"]) > 0
    for row, want in zip(rows, expected["data"], strict=True):
        assert {k: typed(row[k], want[k]) for k in columns} == want


def test_the_envelope_travels_in_x_svc_headers(api: Api) -> None:
    params = {"sigungu_code": "11680", "periods": "2025-04,2025-06"}
    meta = api.ok("pulse/series", params)["_meta"]
    response = api.get("pulse/series", params, Accept="text/csv")
    assert response.mimetype == "text/csv"
    headers = response.headers
    assert headers["X-Svc-Api-Version"] == "v1"
    assert headers["X-Svc-Vertical"] == "real_estate"
    assert headers["X-Svc-Tier"] == "pro"
    assert headers["X-Svc-Auth-Method"] == "api_key"
    assert headers["X-Svc-Confidence"] == meta["confidence"]
    assert headers["X-Svc-Count"] == str(meta["count"])
    assert headers["X-Svc-Lease-Data-Status"] == meta["lease_data_status"]
    assert headers["X-Svc-Coverage-Note"] == meta["coverage_note"]
    assert headers["X-Svc-Coverage-Estimate"] == ""
    assert headers["X-Svc-Disclosure-Url"] == meta["disclosure_url"]
    for name in (
        "data_sources",
        "source_mix",
        "known_limitations",
        "query",
        "periods_requested",
        "periods_returned",
        "missing_periods",
    ):
        header = "X-Svc-" + "-".join(p.capitalize() for p in name.split("_"))
        assert json.loads(headers[header]) == meta[name], name
    assert headers["X-Svc-Missing-Periods"] == '["2025-04"]'
    assert "X-Svc-Request-Id" not in headers and headers["X-Request-ID"]
    assert "X-Svc-Rate-Limit" not in headers and headers["X-RateLimit-Limit"] == "120"
    for value in headers.values():
        assert value.isascii()


def test_coverage_csv_headers_carry_granularity_and_row_cap(api: Api) -> None:
    response = api.get("coverage", {"limit": "3"}, Accept="text/csv")
    assert (response.headers["X-Svc-Granularity"], response.headers["X-Svc-Row-Cap"]) == (
        "quarter",
        "3",
    )
    assert 'filename="coverage.csv"' in response.headers["Content-Disposition"]


@pytest.mark.parametrize(
    ("accept", "params", "is_csv"),
    [
        ("text/csv", {}, True),
        ("application/json", {}, False),
        ("*/*", {}, False),
        ("", {}, False),
        ("text/csv;q=0.5, application/json", {}, False),
        ("text/csv, application/json;q=0.9", {}, True),
        ("text/csv", {"format": "json"}, False),
        ("application/json", {"format": "csv"}, True),
    ],
)
def test_negotiation(api: Api, accept: str, params: Mapping[str, str], is_csv: bool) -> None:
    headers = {"Accept": accept} if accept else {}
    response = api.get("pulse", {"sigungu_code": "11680", **params}, **headers)
    assert response.status_code == 200
    assert (response.mimetype == "text/csv") is is_csv


@pytest.mark.parametrize(
    ("endpoint", "params", "status", "code"),
    [
        ("pulse", {"sigungu_code": "11650"}, 404, "NOT_FOUND"),
        ("pulse", {"sigungu_code": "bad"}, 400, "INVALID_PARAMS"),
        ("pulse/series", {"sigungu_code": "11680", "periods": "2020-01"}, 404, "NOT_FOUND"),
        ("pulse/series", {"sigungu_code": "11680"}, 400, "INVALID_PARAMS"),
        ("coverage", {"limit": "0"}, 400, "INVALID_PARAMS"),
        ("indices", {"sigungu_code": "26350"}, 404, "NOT_FOUND"),
    ],
)
def test_errors_are_json_even_when_csv_was_asked(
    api: Api, endpoint: str, params: dict[str, str], status: int, code: str
) -> None:
    for extra, headers in (({"format": "csv"}, {}), ({}, {"Accept": "text/csv"})):
        response = api.get(endpoint, {**params, **extra}, **headers)
        assert_error(response, status, code)
        if status == 404:
            assert response.get_json()["_meta"]["vertical"] == "real_estate"


def test_dimensions_has_no_csv(api: Api) -> None:
    assert api.get("dimensions", Accept="text/csv").mimetype == "application/json"
    assert_error(api.get("dimensions", {"format": "csv"}), 400, "INVALID_PARAMS")


def test_format_is_read_by_its_one_declaration(api: Api) -> None:
    """``format`` is checked by the same ``Param`` the API reference documents: a bad
    value is told the documented choices, an empty one means no choice (JSON)."""
    error = assert_error(
        api.get("pulse", {"sigungu_code": "11680", "format": "xml"}), 400, "INVALID_PARAMS"
    )
    assert "'format' must be one of: json, csv." in error["message"]
    assert "xml" in error["hint"]
    empty = api.get("pulse", {"sigungu_code": "11680", "format": ""}, Accept="text/csv")
    assert empty.status_code == 200
    assert empty.mimetype == "text/csv"  # no format given: the Accept header decides
