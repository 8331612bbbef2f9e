"""GET /api/v1/real-estate/compare through HTTP on the real MOLIT samples (issue 46).

Every district's row must be what GET /pulse answers for that district (the same
figures and flags), ranked as documented; a district pulse has nothing for is listed
with pulse's own reason.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from svc_core.realestate.compare import COMPARE_COLUMNS, MAX_DISTRICTS
from svc_core.regions import regions_in_use
from tests.http.realestate_support import Api, assert_error

SEOUL = sorted(r.code for r in regions_in_use() if r.sido == "서울특별시")
UNRANKED = {
    "rank",
    "sigungu_code",
    "sigungu",
    "sido",
    "reason",
    "property_type",
    "transaction_type",
    "period",
    "sort_value",
    "interval_low",
    "interval_high",
}


def compared(api: Api, **params: str) -> dict[str, Any]:
    body = api.ok("compare", {"period": "2025-Q2", "transaction_type": "sale", **params})
    return dict(body)


@pytest.mark.parametrize("kind", ["office", "retail", "commercial_complex", "mixed_use"])
def test_each_seoul_district_is_its_pulse_row(api: Api, kind: str) -> None:
    body = compared(api, sido="서울", property_type=kind)
    rows = body["data"]
    assert sorted(r["sigungu_code"] for r in rows) == SEOUL  # none dropped
    assert body["_meta"]["count"] == len(SEOUL)
    asked = {"property_type": kind, "transaction_type": "sale", "period": "2025-Q2"}
    with_figures = 0
    for row in rows:
        assert tuple(row) == COMPARE_COLUMNS
        code = row["sigungu_code"]
        response = api.get("pulse", {**asked, "sigungu_code": code})
        if response.status_code == 404:
            assert row["reason"] == response.get_json()["error"]["reason"]
            assert row["rank"] is None
            assert all(row[f] is None for f in COMPARE_COLUMNS if f not in UNRANKED)
            continue
        with_figures += 1
        [pulse] = response.get_json()["data"]
        [pyeong] = api.ok("pulse", {**asked, "sigungu_code": code, "area_unit": "pyeong"})["data"]
        assert row["reason"] is None
        for field in COMPARE_COLUMNS:
            if field in UNRANKED:
                continue
            source = pyeong if field.endswith("_per_pyeong") else pulse
            assert row[field] == source[field], (code, field)
        assert (row["sigungu"], row["period"]) == (pulse["sigungu"], pulse["period"])
    assert with_figures >= 1
    assert body["_meta"]["ranked"] <= with_figures


def test_not_loaded_districts_are_listed_with_their_reason(api: Api) -> None:
    """Gangnam (loaded), Jongno (a page of May), Songpa (never loaded), 99999 (no such
    district): all four listed."""
    body = compared(api, sigungu_codes="11710,99999,11680,11110", property_type="office")
    by_code = {r["sigungu_code"]: r for r in body["data"]}
    assert set(by_code) == {"11710", "99999", "11680", "11110"}
    assert by_code["11710"]["reason"] == "not_loaded"
    assert by_code["99999"]["reason"] == "unknown_district"
    assert by_code["11680"]["reason"] is None and by_code["11680"]["rank"] == 1
    assert body["_meta"]["without_figures"]["not_loaded"] >= 1
    # the ranked first, then those without figures by code
    reasons = [r["reason"] for r in body["data"]]
    assert reasons.index(None) < reasons.index("not_loaded")
    unranked = [r["sigungu_code"] for r in body["data"] if r["reason"] is not None]
    assert unranked == sorted(unranked)


@pytest.mark.parametrize(
    ("sort", "field"),
    [
        ("median_per_m2", "median_price_per_m2"),
        ("median", "median_price"),
        ("contract_count", "contract_count"),
    ],
)
@pytest.mark.parametrize("order", ["desc", "asc"])
def test_rows_are_ranked_by_the_sort_field(api: Api, sort: str, field: str, order: str) -> None:
    body = compared(
        api, sigungu_codes="11680,11110", property_type="retail", sort=sort, order=order
    )
    ranked = [r for r in body["data"] if r["rank"] is not None]
    assert [r["rank"] for r in ranked] == list(range(1, len(ranked) + 1))
    values = [r["sort_value"] for r in ranked]
    assert values == [r[field] for r in ranked]
    assert values == sorted(values, reverse=order == "desc")
    for r in ranked:
        if r["interval_low"] is not None:
            assert r["interval_low"] <= r["sort_value"] <= r["interval_high"]
    if sort == "contract_count":
        assert all(r["interval_low"] is None for r in ranked)


def test_a_comparison_counts_once_against_the_quota(api: Api) -> None:
    before = api.usage()
    response = api.get(
        "compare",
        {"sido": "Seoul", "property_type": "office", "transaction_type": "sale"},
    )
    assert response.status_code == 200
    assert len(response.get_json()["data"]) == len(SEOUL)
    assert api.usage() == before + 1
    assert response.headers["X-Quota-Used"] == str(before + 1)
    refused = api.get("compare", {"property_type": "office", "transaction_type": "sale"})
    assert_error(refused, 400, "INVALID_PARAMS")
    assert api.usage() == before + 1


@pytest.mark.parametrize(
    "params",
    [
        {"property_type": "office", "transaction_type": "sale"},  # no district
        {
            "sido": "서울",
            "sigungu_codes": "11680",
            "property_type": "office",
            "transaction_type": "sale",
        },
        {"sido": "Atlantis", "property_type": "office", "transaction_type": "sale"},
        {"sigungu_codes": "11680", "transaction_type": "sale"},  # no property type
        {"sigungu_codes": "11680", "property_type": "office"},  # no transaction type
        {"sigungu_codes": "11680,", "property_type": "office", "transaction_type": "sale"},
        {
            "sigungu_codes": ",".join(SEOUL * 3)[: 6 * (MAX_DISTRICTS + 1) - 1],
            "property_type": "office",
            "transaction_type": "sale",
        },
        {
            "sigungu_codes": "11680",
            "property_type": "office",
            "transaction_type": "sale",
            "sort": "x",
        },
        {
            "sigungu_codes": "11680",
            "property_type": "officetel",
            "transaction_type": "sale",
            "lease_kind": "new",
        },
    ],
)
def test_malformed_comparisons_are_refused(api: Api, params: dict[str, str]) -> None:
    error = assert_error(api.get("compare", params), 400, "INVALID_PARAMS")
    assert error["hint"]


def test_csv_has_the_row_fields_as_columns(api: Api) -> None:
    response = api.get(
        "compare.csv",
        {"sigungu_codes": "11680,11710", "property_type": "office", "transaction_type": "sale"},
    )
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    text = response.get_data(as_text=True).lstrip("\ufeff")
    records = list(csv.reader(io.StringIO(text)))
    assert tuple(records[0]) == COMPARE_COLUMNS
    assert [r[1] for r in records[1:]] == ["11680", "11710"]
    assert response.headers["X-Svc-Count"] == "2"


def test_ndjson_lines_are_the_json_rows_in_rank_order(api: Api) -> None:
    """``format=ndjson`` takes the comparison away one district a line: each line is the
    JSON answer's row, in the same order, and the envelope travels as headers."""
    import json

    asked = {"sido": "서울", "property_type": "office", "transaction_type": "sale"}
    as_json = compared(api, **asked)
    response = api.get(
        "compare", {"period": "2025-Q2", "transaction_type": "sale", **asked, "format": "ndjson"}
    )
    assert response.status_code == 200
    assert response.mimetype == "application/x-ndjson"
    lines = response.get_data(as_text=True).splitlines()
    assert [json.loads(line) for line in lines] == as_json["data"]
    assert response.headers["X-Svc-Count"] == str(len(SEOUL))
    again = api.get(
        "compare", {"period": "2025-Q2", "transaction_type": "sale", **asked, "format": "ndjson"}
    )
    assert again.get_data() == response.get_data()  # the kept answer, encoded once


def test_ndjson_is_refused_where_a_route_does_not_offer_it(api: Api) -> None:
    params = {"sigungu_code": "11680", "property_type": "office", "format": "ndjson"}
    assert_error(api.get("pulse", params), 400, "INVALID_PARAMS")
