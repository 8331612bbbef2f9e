"""GET /api/v1/real-estate/transactions through HTTP on the real MOLIT responses, SQLite
and PostgreSQL (issue 14, item 4).

For every pulse row of the samples, paging through the listing with the row's filters
returns exactly ``sample_count`` distinct records, and they are the raw items of the
row's cohort as an independent reading of the XML sees them (``realestate_support``).
``include_excluded=true`` adds the excluded items with their reason, and the reasons
count what each load's summary (``ingest_log``) counts.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from werkzeug.test import Client, TestResponse

from svc_core.realestate import listing
from svc_core.realestate.record import TRANSACTION_COLUMNS
from svc_server.app import SvcApp
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import Store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    assert_layer_envelope,
    building_type,
    make_app,
    manwon,
    xml_items,
)
from tests.http.test_realestate_pulse import property_type

Raw = dict[str, Any]
FILES = {"11680": (NRG_GANGNAM, OFFI_TRADE, OFFI_RENT), "11110": (NRG_JONGNO_PAGE,)}
QUARTER_MONTHS = {"2025-Q2": ("2025-04", "2025-05", "2025-06")}
PULSE_QUERIES: tuple[dict[str, str], ...] = (
    {"sigungu_code": "11680", "period": "2025-06"},
    {"sigungu_code": "11680", "period": "2025-Q2", "building_type": "unit"},
    {"sigungu_code": "11680", "period": "2025-06", "building_type": "whole_building"},
    {"sigungu_code": "11680", "period": "2025-06", "geo_precision": "dong"},
    {"sigungu_code": "11110", "period": "2025-05"},
    {
        "sigungu_code": "11680",
        "period": "last_3m",
        "geo_precision": "dong",
        "building_type": "unit",
    },
)
PUBLISHED = (
    "contract_date",
    "dong",
    "property_type",
    "transaction_type",
    "building_type",
    "building_use",
    "price_krw",
    "deposit_krw",
    "monthly_rent_krw",
    "building_area_m2",
    "exclusive_area_m2",
    "land_area_m2",
    "floor",
    "build_year",
    "jibun",
)
"""What a served record says about the deal, compared with the raw item."""


# the independent reading ---------------------------------------------------------------------


def _blank(text: str | None) -> bool:
    return text is None or text.strip() in ("", "-")


def _number(text: str | None) -> float | None:
    return None if _blank(text) or float(str(text)) == 0 else float(str(text))


def _whole(text: str | None) -> int | None:
    return None if _blank(text) else int(str(text))


def reason(item: Raw) -> str | None:
    """The documented exclusion of a raw item: cancelled first, then a partial share."""
    if item.get("cdealType", "").strip() == "O":
        return "cancelled"
    if "excluUseAr" not in item and item.get("shareDealingType", "").strip() == "지분":
        return "partial_share"
    return None


def raw_record(item: Raw) -> Raw:
    """A raw item as the listing should publish it."""
    contract = (
        f"{int(item['dealYear']):04d}-{int(item['dealMonth']):02d}-{int(item['dealDay']):02d}"
    )
    officetel = "excluUseAr" in item
    rent = manwon(item["monthlyRent"]) if "monthlyRent" in item else 0
    if not officetel:
        ptype, ttype = property_type(item), "sale"
    elif "deposit" in item:
        ptype, ttype = "officetel", "monthly_lease" if rent else "chartered_lease"
    else:
        ptype, ttype = "officetel", "sale"
    sale = ttype == "sale"
    btype = building_type(item)
    return {
        "contract_date": contract,
        "dong": item["umdNm"].strip() or None,
        "property_type": ptype,
        "transaction_type": ttype,
        "building_type": btype,
        "building_use": None if officetel else item["buildingUse"].strip() or None,
        "price_krw": manwon(item["dealAmount"]) if sale else None,
        "deposit_krw": None if sale else manwon(item["deposit"]),
        "monthly_rent_krw": rent or None,
        "building_area_m2": None if officetel else _number(item.get("buildingAr")),
        "exclusive_area_m2": _number(item.get("excluUseAr")) if officetel else None,
        "land_area_m2": _number(item.get("plottageAr")) if btype == "whole_building" else None,
        "floor": _whole(item.get("floor")),
        "build_year": _whole(item.get("buildYear")),
        "jibun": None if _blank(item.get("jibun")) else item["jibun"].strip(),
        "excluded_reason": reason(item),
        "cancellation_date": cancellation(item),
    }


def cancellation(item: Raw) -> str | None:
    """A cancelled item's ``cdealDay`` (``YY.MM.DD``, official-apis.md §2.5) as a date."""
    day = item.get("cdealDay", "").strip()
    if reason(item) != "cancelled" or not day:
        return None
    yy, mm, dd = day.split(".")
    return f"20{yy}-{mm}-{dd}"


def raw_records(code: str) -> list[Raw]:
    return [raw_record(item) for path in FILES[code] for item in xml_items(path)]


def months_of(period: str) -> tuple[str, ...]:
    if period in QUARTER_MONTHS:
        return QUARTER_MONTHS[period]
    if period == "last_3m":  # the latest month of the samples is 2025-06
        return ("2025-04", "2025-05", "2025-06")
    return (period,)


def cohort_of(row: Raw, query: dict[str, str]) -> list[Raw]:
    """The raw records of one pulse row (kept ones only)."""
    months = months_of(query["period"])
    return [
        r
        for r in raw_records(query["sigungu_code"])
        if r["excluded_reason"] is None
        and r["contract_date"][:7] in months
        and r["property_type"] == row["property_type"]
        and r["transaction_type"] == row["transaction_type"]
        and (query.get("building_type") is None or r["building_type"] == query["building_type"])
        and (row["dong"] is None or r["dong"] == row["dong"])
    ]


def published(record: Raw) -> tuple[Any, ...]:
    return tuple(record[name] for name in PUBLISHED)


# calling the listing -------------------------------------------------------------------------


class LeasedApi(Api):
    """An ``Api`` whose account's limits lease (10^8 calls a month, 10^6 a minute, set
    as ``svc consumer create --monthly-quota --rate-limit`` sets them): its calls are
    admitted and counted in memory, not by two writes each, for the tests that page
    through the listing hundreds of times and assert what it lists, not what a call
    costs (``test_each_page_counts_once_and_a_csv_answer_once`` and the lease tests
    do). Close ``app`` afterwards: it gives its leases back."""

    def __init__(self, app: SvcApp, plan: str = "pro") -> None:
        out = consumers.create_consumer(
            app.store,
            plan=plan,
            now=RE_NOW,
            entropy=os.urandom(16),
            ids=new_id,
            monthly_quota=10**8,
            rate_limit=10**6,
        )
        self.app = app
        self.consumer_id = str(out.consumer_id)
        self.key = str(out.api_key)
        self.client = Client(app)


@pytest.fixture
def api(molit_store: Store) -> Iterator[Api]:
    api = LeasedApi(make_app(molit_store))
    yield api
    api.app.close()


def every_page(api: Api, params: dict[str, str]) -> tuple[list[Raw], int]:
    """Every record of a listing, following ``_meta.next_cursor``; (records, pages)."""
    records: list[Raw] = []
    cursor: str | None = None
    pages = 0
    while True:
        body = api.ok("transactions", {**params, **({"cursor": cursor} if cursor else {})})
        pages += 1
        assert body["_meta"]["count"] == len(body["data"])
        records += body["data"]
        cursor = body["_meta"]["next_cursor"]
        if cursor is None:
            return records, pages
        assert len(body["data"]) == int(params.get("limit", "100"))


def row_filters(row: Raw, query: dict[str, str]) -> dict[str, str]:
    """The listing filters of a pulse row, as ``transactions_url`` spells them."""
    out = {
        "sigungu_code": query["sigungu_code"],
        "period": query["period"],
        "property_type": row["property_type"],
        "transaction_type": row["transaction_type"],
    }
    if query.get("building_type"):
        out["building_type"] = query["building_type"]
    if row["dong"]:
        out |= {"geo_precision": "dong", "dong": row["dong"]}
    return out


def assert_order(records: list[Raw]) -> None:
    keys = [r["natural_key"] for r in records]
    assert len(set(keys)) == len(keys), "a record came twice"
    dates = [r["contract_date"] for r in records]
    assert dates == sorted(dates)


@pytest.mark.parametrize("query", PULSE_QUERIES, ids=lambda q: "-".join(q.values()))
def test_paging_through_a_pulse_row_returns_exactly_its_records(
    api: Api, query: dict[str, str]
) -> None:
    rows = api.ok("pulse", query)["data"]
    assert rows
    for row in rows:
        filters = row_filters(row, query)
        records, pages = every_page(api, {**filters, "limit": "7"})
        assert len(records) == row["sample_count"], filters
        assert pages == max(1, -(-row["sample_count"] // 7))
        assert_order(records)
        assert not any(r["excluded"] or r["excluded_reason"] for r in records)
        assert Counter(published(r) for r in records) == Counter(
            published(r) for r in cohort_of(row, query)
        ), filters
        for record in records:
            assert record["sigungu_code"] == query["sigungu_code"]
            assert record["source"] == "rtms_official"
            assert record["load_id"]


def test_a_listing_without_type_filters_is_every_row_of_the_pulse(api: Api) -> None:
    query = {"sigungu_code": "11680", "period": "2025-06"}
    rows = api.ok("pulse", query)["data"]
    records, _ = every_page(api, {**query, "limit": "1000"})
    # pulse leaves out cohorts of one sample; the listing shows them too
    kept = [r for r in raw_records("11680") if r["excluded_reason"] is None]
    assert len(records) == len(kept) >= sum(r["sample_count"] for r in rows)
    assert Counter(published(r) for r in records) == Counter(published(r) for r in kept)
    assert_order(records)


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 50])
def test_pages_with_excluded_records_hold_every_record_once_in_order(
    molit_store: Store, limit: int
) -> None:
    """Kept and excluded records interleave by contract date; each page reads the first
    ``limit`` of each table after the cursor, and the pages together are every record of
    both, once, in order, whatever the page size (a caller whose per-minute limit allows
    a page per record)."""
    api = LeasedApi(make_app(molit_store), plan="enterprise")
    query = {"sigungu_code": "11680", "period": "2025-06", "include_excluded": "true"}
    try:
        records, pages = every_page(api, {**query, "limit": str(limit)})
    finally:
        api.app.close()
    every = raw_records("11680")
    assert any(r["excluded_reason"] for r in every) and not all(r["excluded_reason"] for r in every)
    assert len(records) == len(every)
    assert pages == max(1, -(-len(every) // limit))
    assert Counter(published(r) for r in records) == Counter(published(r) for r in every)
    assert_order(records)


def test_records_are_as_published(api: Api) -> None:
    records, _ = every_page(api, {"sigungu_code": "11110", "period": "2025-05"})
    masked = [r for r in records if r["jibun"] and "*" in r["jibun"]]
    assert masked, "the Jongno sample publishes masked lot numbers such as 1**"
    whole = [r for r in records if r["building_type"] == "whole_building"]
    assert whole and all(r["land_area_m2"] for r in whole)
    assert all(r["building_use"] for r in records)
    assert any(r["build_year"] for r in records) and any(r["floor"] for r in records)
    rents, _ = every_page(
        api, {"sigungu_code": "11680", "period": "2025-06", "transaction_type": "monthly_lease"}
    )
    assert rents and all(
        r["deposit_krw"] is not None and r["monthly_rent_krw"] and r["price_krw"] is None
        for r in rents
    )
    assert all(r["exclusive_area_m2"] and r["building_area_m2"] is None for r in rents)


def load_summaries(store: Store) -> dict[str, dict[str, int]]:
    with store.data.transaction(write=False) as tx:
        rows = tx.fetchall("SELECT id, excluded FROM ingest_log")
    return {r["id"]: json.loads(r["excluded"]) for r in rows}


@pytest.mark.parametrize("code", ["11680", "11110"])
def test_include_excluded_adds_the_excluded_records_with_the_load_summary_reasons(
    api: Api, molit_store: Store, code: str
) -> None:
    query = {"sigungu_code": code, "period": "last_12m"}
    kept, _ = every_page(api, {**query, "limit": "50"})
    every, _ = every_page(api, {**query, "limit": "50", "include_excluded": "true"})
    excluded = [r for r in every if r["excluded"]]
    assert excluded, "each sample district has excluded deals"
    assert [r for r in every if not r["excluded"]] == kept
    assert_order(every)
    raw = raw_records(code)
    shown = ("excluded_reason", "cancellation_date")
    assert Counter((*published(r), *(r[k] for k in shown)) for r in excluded) == Counter(
        (*published(r), *(r[k] for k in shown)) for r in raw if r["excluded_reason"]
    )
    assert all(r["cancellation_date"] is None for r in every if not r["excluded"])
    summaries = load_summaries(molit_store)
    by_load: dict[str, Counter[str]] = {}
    for record in excluded:
        by_load.setdefault(record["load_id"], Counter())[record["excluded_reason"]] += 1
    for load_id, reasons in by_load.items():
        assert dict(reasons) == summaries[load_id]
    loads = {r["load_id"] for r in every}
    assert {i for i in loads if summaries[i]} == set(by_load)


def test_excluded_records_never_enter_a_figure(api: Api) -> None:
    query = {"sigungu_code": "11680", "period": "2025-06"}
    rows = api.ok("pulse", query)["data"]
    every, _ = every_page(api, {**query, "limit": "1000", "include_excluded": "true"})
    for row in rows:
        same = [
            r
            for r in every
            if (r["property_type"], r["transaction_type"])
            == (row["property_type"], row["transaction_type"])
        ]
        assert row["sample_count"] == len([r for r in same if not r["excluded"]])
        assert len(same) >= row["sample_count"]


# cursors, limits and the Link header ---------------------------------------------------------


def test_the_link_header_follows_the_cursor(api: Api) -> None:
    params = {"sigungu_code": "11680", "period": "2025-06", "limit": "40"}
    first = api.get("transactions", params)
    body = first.get_json()
    assert first.headers["Vary"] == "Accept, Accept-Encoding"
    link = first.headers["Link"]
    assert link.startswith("<https://api.example.com/api/v1/real-estate/transactions?")
    assert link.endswith('>; rel="next"')
    url = urlsplit(link[1 : link.index(">")])
    sent = dict(parse_qsl(url.query))
    assert sent == {**params, "cursor": body["_meta"]["next_cursor"]}
    seen = [r["natural_key"] for r in body["data"]]
    response = first
    while "Link" in response.headers:
        link = response.headers["Link"]
        target = urlsplit(link[1 : link.index(">")])
        response = api.client.get(f"{target.path}?{target.query}", headers={"X-API-Key": api.key})
        assert response.status_code == 200
        seen += [r["natural_key"] for r in response.get_json()["data"]]
    assert response.get_json()["_meta"]["next_cursor"] is None
    everything, _ = every_page(api, {**params, "limit": "1000"})
    assert seen == [r["natural_key"] for r in everything]


def _forged(parts: Any) -> str:
    text = json.dumps(parts, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


def test_garbled_forged_and_foreign_cursors_are_400(api: Api) -> None:
    params = {"sigungu_code": "11680", "period": "2025-06", "limit": "5"}
    real = api.ok("transactions", params)["_meta"]["next_cursor"]
    decoded = json.loads(base64.urlsafe_b64decode(real + "=" * (-len(real) % 4)))
    bad = [
        "abc",
        "!!!",
        real[:-3],
        real + "x",
        "A" * 1300,
        _forged(["2025-06-31", decoded[1], 0, decoded[3]]),
        _forged([decoded[0], decoded[1], 2, decoded[3]]),
        _forged([decoded[0], decoded[1], 0, "0" * 16]),
        _forged({"a": 1}),
        _forged([decoded[0], "", 0, decoded[3]]),
    ]
    for cursor in bad:
        response = api.get("transactions", {**params, "cursor": cursor})
        error = assert_error(response, 400, "INVALID_PARAMS")
        assert "cursor" in error["message"]
    other = {**params, "property_type": "office"}
    assert_error(api.get("transactions", {**other, "cursor": real}), 400, "INVALID_PARAMS")
    assert_error(api.get("transactions", {**params, "cursor": ""}), 400, "INVALID_PARAMS")
    resumed = api.ok("transactions", {**params, "cursor": real})
    assert resumed["_meta"]["query"]["cursor"] == real


@pytest.mark.parametrize("limit", ["0", "1001", "-1", "ten", "1.5", ""])
def test_limit_outside_1_to_1000_is_400(api: Api, limit: str) -> None:
    response = api.get("transactions", {"sigungu_code": "11680", "limit": limit})
    assert_error(response, 400, "INVALID_PARAMS")


def test_filters_are_validated_like_pulse(api: Api) -> None:
    for params in (
        {},
        {"sigungu_code": "1168"},
        {"sigungu_code": "11680", "period": "2025-13"},
        {"sigungu_code": "11680", "dong": "역삼동"},
        {"sigungu_code": "11680", "include_excluded": "yes"},
        {"sigungu_code": "11680", "building_type": "house"},
        {"sigungu_code": "11680", "unknown": "1"},
    ):
        assert_error(api.get("transactions", params), 400, "INVALID_PARAMS")


def test_dong_precision_needs_the_pro_plan(molit_store: Store) -> None:
    free = Api(make_app(molit_store), plan="starter")
    params = {"sigungu_code": "11680", "geo_precision": "dong", "dong": "역삼동"}
    assert_error(free.get("transactions", params), 403, "TIER_RESTRICTED")
    assert free.ok("transactions", {"sigungu_code": "11680"})["_meta"]["tier"] == "starter"


def test_the_envelope_is_the_layer_envelope(api: Api) -> None:
    body = api.ok("transactions", {"sigungu_code": "11680", "period": "2025-Q2", "limit": "3"})
    meta = body["_meta"]
    assert_layer_envelope(meta)
    assert meta["count"] == 3 and meta["confidence"] is None
    assert meta["query"]["window_from"] == "2025-04" and meta["query"]["window_to"] == "2025-06"
    assert meta["query"]["include_excluded"] is False and meta["query"]["limit"] == 3
    empty = api.ok("transactions", {"sigungu_code": "26110", "period": "2025-06"})
    assert empty["data"] == [] and empty["_meta"]["next_cursor"] is None


# CSV and quota -------------------------------------------------------------------------------


def read_csv(
    response: TestResponse, columns: tuple[str, ...] = TRANSACTION_COLUMNS
) -> list[dict[str, str]]:
    raw = response.get_data()
    assert raw.startswith(b"\xef\xbb\xbf")
    reader = csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline=""))
    assert tuple(reader.fieldnames or ()) == columns
    return list(reader)


def test_csv_streams_every_record_of_the_selection(api: Api) -> None:
    params = {"sigungu_code": "11680", "period": "2025-06", "include_excluded": "true"}
    records, _ = every_page(api, {**params, "limit": "1000"})
    response = api.get("transactions", {**params, "limit": "5"}, Accept="text/csv")
    assert response.status_code == 200
    assert response.is_streamed and "Content-Length" not in response.headers
    assert response.mimetype == "text/csv"
    assert response.headers["X-Svc-Count"] == str(len(records))
    assert "Link" not in response.headers
    rows = read_csv(response)
    assert [r["natural_key"] for r in rows] == [r["natural_key"] for r in records]
    assert {r["excluded_reason"] for r in rows} == {"", "cancelled", "partial_share"}
    dates = {r["cancellation_date"] for r in rows if r["excluded_reason"] == "cancelled"}
    assert dates == {"2025-06-27", "2025-07-01", "2025-07-02", "2025-06-17", "2025-06-19"} | {
        "2025-06-24",
        "2025-06-25",
    }  # the samples' cdealDay 25.06.27, ... (each cancelled item of 11680 gives one)
    assert {r["cancellation_date"] for r in rows if r["excluded_reason"] != "cancelled"} == {""}
    again = api.get("transactions", {**params, "format": "csv"})
    assert read_csv(again) == rows


def test_csv_over_the_cap_is_400_asking_to_narrow(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "CSV_CAP", 10)
    response = api.get("transactions", {"sigungu_code": "11680", "format": "csv"})
    error = assert_error(response, 400, "INVALID_PARAMS")
    assert "10" in error["message"] and "Narrow" in error["hint"]
    small = api.get(
        "transactions",
        {"sigungu_code": "11110", "period": "2025-05", "format": "csv"},
    )
    assert small.status_code == 200 and len(read_csv(small)) <= 10


def test_each_page_counts_once_and_a_csv_answer_once(molit_store: Store) -> None:
    api = Api(make_app(molit_store))  # limits too small to lease: each call writes its count
    before = api.usage()
    _, pages = every_page(api, {"sigungu_code": "11680", "period": "2025-06", "limit": "30"})
    assert pages > 2
    assert api.usage() == before + pages
    api.get("transactions", {"sigungu_code": "11680", "format": "csv"})
    assert api.usage() == before + pages + 1
    api.get("transactions", {"sigungu_code": "11680", "limit": "0"})
    assert api.usage() == before + pages + 1
