"""Names that tell the truth (issue 28, items 5 to 7), through HTTP on the real MOLIT
responses, SQLite and PostgreSQL.

- ``area_unit=pyeong`` answers name their per-area fields ``*_per_pyeong`` and carry no
  ``*_per_m2`` key, in JSON and in CSV columns;
- a row's ``transactions_url`` names its months (``from``/``to``): followed through
  HTTP, it lists exactly the row's ``sample_count`` deals, before and after a later
  month is loaded;
- ``building_use_mix`` and ``/dimensions``' ``building_uses`` count the building uses as
  the raw XML publishes them (read by a regular expression, not by svc).

``_meta.data_as_of`` (item 6b) is in ``test_realestate_data_as_of``.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from svc_server import ingest
from svc_server.store import open_store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    MOLIT_FILES,
    NRG_GANGNAM,
    PYEONG_ROW_FIELDS,
    ROW_FIELDS,
    Api,
    assert_error,
    included,
    load_molit,
    make_app,
    xml_items,
)
from tests.http.test_realestate_pulse import property_type

BASE = "https://api.example.com"


# item 5: units in names -----------------------------------------------------------------


PULSE_QUERIES = (
    ("pulse", {"sigungu_code": "11680"}),
    ("pulse", {"sigungu_code": "11680", "period": "2025-Q2", "geo_precision": "dong"}),
    ("pulse/series", {"sigungu_code": "11680", "periods": "2025-05,2025-06"}),
    ("pulse/series", {"sigungu_code": "11110", "from_period": "2025-Q1", "to_period": "2025-Q2"}),
)


def csv_rows(api: Api, endpoint: str, params: dict[str, str]) -> tuple[list[str], list[Any]]:
    response = api.get(endpoint, {**params, "format": "csv"})
    assert response.status_code == 200, response.get_data(as_text=True)
    reader = csv.DictReader(io.StringIO(response.get_data(as_text=True).lstrip("\ufeff")))
    rows = list(reader)
    return list(reader.fieldnames or ()), rows


@pytest.mark.parametrize(("endpoint", "params"), PULSE_QUERIES)
def test_pyeong_answers_name_the_unit_and_carry_no_per_m2_key(
    api: Api, endpoint: str, params: dict[str, str]
) -> None:
    m2 = api.ok(endpoint, params)
    pyeong = api.ok(endpoint, {**params, "area_unit": "pyeong"})
    assert m2["data"] and len(pyeong["data"]) == len(m2["data"])
    assert pyeong["_meta"]["query"]["area_unit"] == "pyeong"
    for by_m2, by_pyeong in zip(m2["data"], pyeong["data"], strict=True):
        assert tuple(by_m2) == ROW_FIELDS
        assert tuple(by_pyeong) == PYEONG_ROW_FIELDS
        assert not [k for k in by_pyeong if k.endswith("_per_m2")]
        for name in ROW_FIELDS:
            if name.endswith("_per_m2"):
                per_m2 = by_m2[name]
                per_pyeong = by_pyeong[name.replace("_per_m2", "_per_pyeong")]
                # the same deals, the area in pyeong: 3.305785 times the amount per m²
                assert (per_m2 is None) == (per_pyeong is None)
                if isinstance(per_m2, dict):  # a change over time: the same comparison
                    for key in ("base_period", "reason", "contract_count", "base_contract_count"):
                        assert per_pyeong[key] == per_m2[key], (name, key)
                elif per_m2 is not None:
                    assert per_pyeong == pytest.approx(per_m2 * 3.305785, rel=1e-3)
            else:
                assert by_pyeong[name] == by_m2[name], name
    columns, rows = csv_rows(api, endpoint, {**params, "area_unit": "pyeong"})
    assert tuple(columns) == PYEONG_ROW_FIELDS
    assert [r["median_price_per_pyeong"] for r in rows] == [
        str(r["median_price_per_pyeong"] or "") for r in pyeong["data"]
    ]
    assert tuple(csv_rows(api, endpoint, params)[0]) == ROW_FIELDS


def test_the_accept_header_csv_and_the_csv_route_name_the_unit_too(api: Api) -> None:
    params = {"sigungu_code": "11680", "area_unit": "pyeong"}
    by_header = api.get("pulse", params, Accept="text/csv")
    by_route = api.get("pulse.csv", params)
    for response in (by_header, by_route):
        assert response.status_code == 200
        header = response.get_data(as_text=True).lstrip("\ufeff").split("\r\n", 1)[0]
        assert "median_price_per_pyeong" in header and "_per_m2" not in header


# item 6a: links that keep meaning --------------------------------------------------------


def follow(api: Api, link: str) -> list[dict[str, Any]]:
    """Every record the link lists, page by page through HTTP (the link's own query)."""
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == BASE
    records: list[dict[str, Any]] = []
    query = f"{parts.query}&limit=1000"
    while True:
        response = api.client.get(f"{parts.path}?{query}", headers={"X-API-Key": api.key})
        assert response.status_code == 200, response.get_data(as_text=True)
        body = response.get_json()
        records += body["data"]
        if body["_meta"]["next_cursor"] is None:
            return records
        query = f"{parts.query}&limit=1000&cursor={body['_meta']['next_cursor']}"


@pytest.mark.parametrize(
    ("endpoint", "params"),
    [
        *PULSE_QUERIES,
        ("pulse", {"sigungu_code": "11680", "period": "last_12m", "building_type": "unit"}),
        ("pulse", {"sigungu_code": "11110", "period": "last_3m"}),
    ],
)
def test_a_rows_link_lists_exactly_its_deals(
    api: Api, endpoint: str, params: dict[str, str]
) -> None:
    body = api.ok(endpoint, params)
    assert body["data"]
    for row in body["data"]:
        link = row["transactions_url"]
        assert "period=" not in link and "from=" in link and "to=" in link
        records = follow(api, link)
        assert len(records) == row["sample_count"], link
        assert {r["property_type"] for r in records} == {row["property_type"]}
        assert {r["transaction_type"] for r in records} == {row["transaction_type"]}
        if row["dong"] is not None:
            assert {r["dong"] for r in records} == {row["dong"]}


def july(path: Path) -> bytes:
    """The same file's deals as contracts of July 2025 (a later month than any loaded)."""
    text = path.read_text(encoding="utf-8")
    return re.sub(r"<dealMonth>\s*6\s*</dealMonth>", "<dealMonth>7</dealMonth>", text).encode()


def test_a_rolling_rows_link_keeps_its_deals_after_a_later_month_is_loaded(db_url: str) -> None:
    store = open_store(db_url)
    store.migrate()
    try:
        load_molit(store)
        api = Api(make_app(store))
        params = {"sigungu_code": "11680", "property_type": "office", "transaction_type": "sale"}
        [before] = api.ok("pulse", params)["data"]
        assert before["period"] == "last_6m"
        link = before["transactions_url"]
        assert "from=2025-01&to=2025-06" in link
        assert len(follow(api, link)) == before["sample_count"]
        ingest.ingest(store, "rtms-commercial", july(NRG_GANGNAM), path="july.xml", now=RE_NOW)
        after = api.ok("pulse", params)
        [row] = after["data"]
        assert after["_meta"]["query"]["window_to"] == "2025-07"
        assert "from=2025-02&to=2025-07" in row["transactions_url"]
        assert row["sample_count"] == 2 * before["sample_count"]  # June and July
        assert len(follow(api, row["transactions_url"])) == row["sample_count"]
        assert len(follow(api, link)) == before["sample_count"]  # the old link: June's deals
    finally:
        store.close()


def test_from_and_to_list_the_same_deals_as_the_period_of_those_months(api: Api) -> None:
    base = {"sigungu_code": "11680", "limit": "1000"}
    for period, first, last in (
        ("2025-06", "2025-06", "2025-06"),
        ("2025-Q2", "2025-04", "2025-06"),
    ):
        by_period = api.ok("transactions", {**base, "period": period})
        by_range = api.ok("transactions", {**base, "from": first, "to": last})
        assert by_range["data"] == by_period["data"] and by_range["data"]
        query = by_range["_meta"]["query"]
        assert (query["from"], query["to"], query["period"]) == (first, last, None)
        assert (query["window_from"], query["window_to"]) == (first, last)
        assert by_period["_meta"]["query"]["from"] is None
    empty = api.ok("transactions", {"sigungu_code": "11680", "from": "2023-01", "to": "2024-12"})
    assert empty["data"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"from": "2025-01"},
        {"to": "2025-06"},
        {"from": "2025-06", "to": "2025-01"},
        {"from": "2022-01", "to": "2025-01"},  # 37 months
        {"from": "2025-01", "to": "2025-06", "period": "last_6m"},
        {"from": "2025-01", "to": "2025-06", "period": "2025-06"},
        {"from": "2025-13", "to": "2025-06"},
        {"from": "2025-1", "to": "2025-06"},
        {"from": "2025-Q1", "to": "2025-Q2"},
        {"from": "", "to": "2025-06"},
        {"from": "１２３４-05", "to": "2025-06"},
    ],
)
def test_bad_month_ranges_are_400_invalid_params(api: Api, params: dict[str, str]) -> None:
    response = api.get("transactions", {"sigungu_code": "11680", **params})
    error = assert_error(response, 400, "INVALID_PARAMS")
    assert error["hint"]


def test_a_range_of_36_months_is_allowed(api: Api) -> None:
    body = api.ok("transactions", {"sigungu_code": "11680", "from": "2022-07", "to": "2025-06"})
    assert body["data"] and body["_meta"]["query"]["window_from"] == "2022-07"


# item 7: names that tell the truth ------------------------------------------------------


def raw_deals() -> list[tuple[str, str, str]]:
    """(district, property type, published use or unknown) of every kept raw deal."""
    out = []
    for _, path in MOLIT_FILES:
        for item in included(xml_items(path)):
            if "buildingUse" in item:
                use = item["buildingUse"].strip() or "unknown"
                out.append((item["sggCd"], property_type(item), use))
            else:
                out.append((item["sggCd"], "officetel", "unknown"))
    return out


def test_dimensions_list_the_building_uses_behind_each_property_type(api: Api) -> None:
    body = api.ok("dimensions")
    uses = body["data"]["building_uses"]
    expected = Counter((ptype, use) for _, ptype, use in raw_deals())
    assert {(u["property_type"], u["value"]): u["sample_count"] for u in uses} == expected
    counts = [u["sample_count"] for u in uses]
    assert counts == sorted(counts, reverse=True)
    mixed = {u["value"] for u in uses if u["property_type"] == "mixed_use"}
    assert mixed == {"기타", "숙박"}  # neither is mixed use: the name is SPEC's
    by_type = Counter[str]()
    for u in uses:
        by_type[u["property_type"]] += u["sample_count"]
    assert {p["value"]: p["sample_count"] for p in body["data"]["property_types"]} == by_type


def test_rows_count_their_building_uses(api: Api) -> None:
    rows = api.ok("pulse", {"sigungu_code": "11680", "period": "2025-06"})["data"]
    deals = [d for d in raw_deals() if d[0] == "11680"]
    for row in rows:
        mix = row["building_use_mix"]
        assert sum(mix.values()) == row["sample_count"]
        wanted = Counter(use for _, ptype, use in deals if ptype == row["property_type"])
        if row["property_type"] != "officetel":  # officetel rows split by transaction type
            assert mix == dict(wanted)
        else:
            assert mix == {"unknown": row["sample_count"]}
    [mixed] = [r for r in rows if r["property_type"] == "mixed_use"]
    assert set(mixed["building_use_mix"]) <= {"기타", "숙박"}


def test_every_record_carries_its_building_use_in_json_and_csv(api: Api) -> None:
    params = {"sigungu_code": "11680", "period": "2025-06", "property_type": "mixed_use"}
    records = api.ok("transactions", {**params, "limit": "1000"})["data"]
    assert records and {r["building_use"] for r in records} <= {"기타", "숙박"}
    columns, rows = csv_rows(api, "transactions", params)
    assert "building_use" in columns
    assert [r["building_use"] for r in rows] == [r["building_use"] for r in records]
