"""The marketplace endpoints over HTTP: fields, parameters, statuses, headers, privacy.

Data goes in through the ingest path, answers come out through the WSGI app (and once
through a real server), so these tests cover what an API user sees end to end.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import unicodedata
import urllib.error
import urllib.request
from collections.abc import Callable
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from werkzeug.test import Client, TestResponse

from svc_core.markets import (
    K_ANONYMITY,
    PRODUCT_TYPES,
    Activity,
    Listing,
    MarketRow,
    join_months,
    publishable_rows,
)
from svc_server.app import SvcApp
from svc_server.app.routes import ROUTES
from svc_server.openapi import build_document
from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.store import Store, open_store
from tests.conftest import Accounts, FakeClock, LiveServer
from tests.server.markets_support import (
    CATEGORIES,
    PERIODS,
    REGIONS,
    load_activity,
    load_fixture,
    load_listings,
    market_data,
    members,
)

PULSE = "/api/v1/markets/pulse"
DIMENSIONS = "/api/v1/markets/dimensions"
CACHE_CONTROL = "private, max-age=21600"
GENERATED_AT = "2026-09-21T14:13:20Z"  # the FakeClock's start, 1_790_000_000

GANGNAM_RENTAL = {
    "region": "강남",
    "category": "office",
    "period": "2026-05",
    "product_type": "rental",
    # effective prices 100, 150 (list 200), 300, 380 (list 400)
    "avg_price": 232.5,  # 930 / 4
    "median_price": 225.0,  # h = 1.5: 150 + 0.5 * 150
    "min_price": 100.0,
    "max_price": 380.0,
    "price_p25": 137.5,  # h = 0.75: 100 + 0.75 * 50
    "price_p75": 320.0,  # h = 2.25: 300 + 0.25 * 80
    "sample_size": 4,
    "total_views": 60,
    "total_bookings": 6,
    "demand_index": 125.0,  # 100 * (60 / 4) / (120 / 10)
    "booking_conv_rate": 0.1,  # 6 / 60
    "occupancy_proxy": 0.36,  # (50 + 30 + 0 + 100) / (100 + 100 + 100 + 200)
    "confidence": "low",
}


@pytest.fixture
def loaded(store: Store) -> Store:
    """The hand-computed fixture of ``tests/fixtures/markets``, loaded by the ingest path."""
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    return store


def get(client: Client, path: str, key: str | None, **query: str) -> TestResponse:
    headers = {"X-API-Key": key} if key else {}
    return client.get(path, query_string=query, headers=headers)


def cohort(
    client: Client,
    key: str,
    region: str,
    product_type: str | None = None,
    category: str = "office",
    period: str = "2026-05",
) -> TestResponse:
    query = {"region": region, "category": category, "period": period}
    if product_type is not None:
        query["product_type"] = product_type
    return get(client, PULSE, key, **query)


# --- pulse: fields ----------------------------------------------------------------------


def test_pulse_answers_the_hand_computed_row(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    r = cohort(client, key, "강남", "rental")
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["data"] == [GANGNAM_RENTAL]
    assert list(body["data"][0]) == list(GANGNAM_RENTAL)  # SPEC field order


def test_demand_index_prices_and_undefined_rates(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")

    def row(region: str, product_type: str | None = None, category: str = "office") -> Any:
        r = cohort(client, key, region, product_type, category)
        assert r.status_code == 200, r.get_json()
        return r.get_json()["data"][0]

    seocho = row("서초", "rental")
    assert [seocho[f] for f in ("avg_price", "median_price", "price_p25", "price_p75")] == [
        2000.0,
        2000.0,
        1500.0,
        2500.0,
    ]
    assert (seocho["min_price"], seocho["max_price"]) == (1000.0, 3000.0)
    assert seocho["demand_index"] == 100 * 20 / 12  # unrounded: 166.66...
    assert (seocho["booking_conv_rate"], seocho["occupancy_proxy"]) == (0.05, 0.2)
    combined = row("서초")
    assert combined["product_type"] is None
    assert combined["demand_index"] == 200.0  # combined peers: 서초 60 / 3, 마포 0 / 3
    assert {k: v for k, v in combined.items() if k not in ("product_type", "demand_index")} == {
        k: v for k, v in seocho.items() if k not in ("product_type", "demand_index")
    }
    mapo = row("마포", "rental")
    assert (mapo["total_views"], mapo["demand_index"]) == (0, 0.0)
    assert (mapo["booking_conv_rate"], mapo["occupancy_proxy"]) == (None, None)  # 0 / 0
    warehouse = row("마포", "rental", "warehouse")
    assert warehouse["demand_index"] is None  # the category had no views at all
    assert warehouse["occupancy_proxy"] == 0.1  # 30 / 300


def test_pulse_meta_describes_the_answer(loaded: Store, client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    r = cohort(client, key, "강남", "rental")
    assert r.get_json()["_meta"] == {
        "service": "svc",
        "api_version": "v1",
        "generated_at": GENERATED_AT,
        "count": 1,
        "confidence": "low",
        "auth_method": "api_key",
        "query": {
            "region": "강남",
            "category": "office",
            "period": "2026-05",
            "product_type": "rental",
        },
        "rate_limit": {"limit_per_min": 120, "remaining": 119},
        "request_id": r.headers["X-Request-ID"],
    }
    documented = build_document(ROUTES)["components"]["schemas"]["MarketMeta"]["properties"]
    assert set(documented) == set(r.get_json()["_meta"])  # no field promised and never sent
    combined = cohort(client, key, "서초").get_json()["_meta"]
    assert combined["query"]["product_type"] is None
    assert combined["rate_limit"] == {"limit_per_min": 120, "remaining": 118}


def test_a_region_in_decomposed_form_finds_its_row(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    nfd = unicodedata.normalize("NFD", "강남")
    assert nfd != "강남"
    r = cohort(client, key, nfd, "rental")
    assert r.status_code == 200
    assert r.get_json()["_meta"]["query"]["region"] == "강남"


# --- pulse: headers ---------------------------------------------------------------------


def test_pulse_headers_for_a_live_api_key(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    for used in (1, 2):
        r = cohort(client, key, "강남", "rental", period="2026-05")
        assert r.status_code == 200
        assert r.headers["X-Quota-Limit"] == "100000"
        assert r.headers["X-Quota-Used"] == str(used)
        assert r.headers["X-Quota-Resets-At"] == "2026-10-01T00:00:00Z"
        assert r.headers["X-RateLimit-Limit"] == "120"
        assert r.headers["X-RateLimit-Remaining"] == str(120 - used)
        assert r.headers["Cache-Control"] == CACHE_CONTROL
        assert r.headers["Content-Type"] == "application/json"
        assert r.get_json()["_meta"]["request_id"] == r.headers["X-Request-ID"]


def test_a_caller_supplied_request_id_is_mirrored(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    r = client.get(
        PULSE,
        query_string={"region": "강남", "category": "office", "period": "2026-05"},
        headers={"X-API-Key": key, "X-Request-ID": "trace-0123456789"},
    )
    assert r.status_code == 404
    assert r.headers["X-Request-ID"] == "trace-0123456789"
    assert r.get_json()["error"]["request_id"] == "trace-0123456789"


def test_a_signed_in_user_has_a_rate_limit_but_no_monthly_quota(
    loaded: Store, accounts: Accounts
) -> None:
    browser = accounts.browser("ana@example.com")
    r = cohort(browser, "", "강남", "rental")
    assert r.status_code == 200, r.get_json()
    meta = r.get_json()["_meta"]
    assert meta["auth_method"] == "session"
    assert meta["rate_limit"] == {"limit_per_min": 60, "remaining": 59}
    assert (r.headers["X-RateLimit-Limit"], r.headers["X-RateLimit-Remaining"]) == ("60", "59")
    for name in ("X-Quota-Limit", "X-Quota-Used", "X-Quota-Resets-At"):
        assert name not in r.headers


# --- pulse: parameters ------------------------------------------------------------------

VALID = "region=%EA%B0%95%EB%82%A8&category=office&period=2026-05"  # region=강남


BAD_QUERIES: list[tuple[str, str]] = [
    ("category=office&period=2026-05", "'region' is required"),
    ("region=%EA%B0%95%EB%82%A8&period=2026-05", "'category' is required"),
    ("region=%EA%B0%95%EB%82%A8&category=office", "'period' is required"),
    ("region=&category=office&period=2026-05", "'region' is required"),
    ("region=%EA%B0%95%EB%82%A8&category=&period=2026-05", "'category' is required"),
    ("region=%EA%B0%95%EB%82%A8&category=office&period=", "'period' is required"),
    (VALID + "&sigungu_code=11680", "Unknown query parameter 'sigungu_code'"),
    (VALID + "&format=csv", "Unknown query parameter 'format'"),
    (VALID + "&region=%EC%84%9C%EC%B4%88", "'region' is repeated"),
    (VALID.replace("office", "Office"), "'category' must be one of"),
    (VALID.replace("office", "apartment"), "'category' must be one of"),
    (VALID + "&product_type=lease", "'product_type' must be one of"),
    (VALID + "&product_type=Rental", "'product_type' must be one of"),
    (VALID.replace("2026-05", "2026-13"), "month 13"),
    (VALID.replace("2026-05", "2026-00"), "YYYY-MM"),
    (VALID.replace("2026-05", "2026-5"), "YYYY-MM"),
    (VALID.replace("2026-05", "202605"), "YYYY-MM"),
    (VALID.replace("2026-05", "2026-05-01"), "YYYY-MM"),
    (VALID.replace("2026-05", "last_6m"), "YYYY-MM"),
    (VALID.replace("2026-05", "2026-Q2"), "YYYY-MM"),
    (VALID.replace("2026-05", "1989-12"), "1990 to 2100"),
    (VALID.replace("%EA%B0%95%EB%82%A8", "x" * 65), "'region' must be a region name"),
    (VALID.replace("%EA%B0%95%EB%82%A8", "%01x"), "'region' must be a region name"),
    (VALID.replace("%EA%B0%95%EB%82%A8", "%E2%80%AEx"), "'region' must be a region name"),
    (VALID.replace("%EA%B0%95%EB%82%A8", "+x"), "'region' must be a region name"),
    (VALID.replace("%EA%B0%95%EB%82%A8", "x%00"), "NUL"),
    (VALID.replace("%EA%B0%95%EB%82%A8", "%FF"), "not valid UTF-8"),
]
"""(query string, words its error message or hint must contain)"""


def test_every_bad_parameter_is_a_400_that_costs_nothing(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("internal")
    for query, words in BAD_QUERIES:
        r = client.get(f"{PULSE}?{query}", headers={"X-API-Key": key})
        assert r.status_code == 400, query
        error = r.get_json()["error"]
        assert error["code"] == "INVALID_PARAMS", query
        assert words in error["message"] + " " + error.get("hint", ""), query
        assert error["request_id"] == r.headers["X-Request-ID"]
        assert r.headers["X-Quota-Used"] == "0", query
    assert cohort(client, key, "강남", "rental").headers["X-Quota-Used"] == "1"


def test_dimensions_takes_no_parameters(loaded: Store, client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    r = get(client, DIMENSIONS, key, region="강남")
    assert r.status_code == 400
    assert r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert r.headers["X-Quota-Used"] == "0"


def test_other_methods_are_405(loaded: Store, client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    r = client.post(PULSE, headers={"X-API-Key": key})
    assert r.status_code == 405
    assert r.get_json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert r.headers["Allow"] == "GET, HEAD"


# --- pulse: 404 -------------------------------------------------------------------------


UNPUBLISHED: list[tuple[str, str, str, str | None, str]] = [
    ("강남", "office", "2026-05", "meeting", "2 listings"),
    ("강남", "office", "2026-05", None, "combined minus rental = the 2 meeting listings"),
    ("강남", "office", "2026-06", "rental", "no activity that month"),
    ("부산", "office", "2026-05", None, "no such region"),
    ("강남", "residence", "2026-05", "rental", "no listing of the category"),
]


def test_empty_and_suppressed_cohorts_are_the_same_404(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    for region, category, period, product_type, why in UNPUBLISHED:
        r = cohort(client, key, region, product_type, category, period)
        assert r.status_code == 404, why
        body = r.get_json()
        products = product_type or "all product types"
        assert body["error"] == {
            "code": "NOT_FOUND",
            "message": f"No published marketplace data for {region}, {category}, {period} "
            f"({products}).",
            "hint": "A cohort is published only with at least 3 listings and when no other "
            "answer would reveal fewer. List regions, categories and periods with "
            "GET /api/v1/markets/dimensions.",
            "request_id": r.headers["X-Request-ID"],
        }, why
        meta = body["_meta"]
        assert (meta["count"], meta["confidence"], meta["auth_method"]) == (0, None, "api_key")
        assert meta["query"] == {
            "region": region,
            "category": category,
            "period": period,
            "product_type": product_type,
        }
        assert r.headers["X-Quota-Used"] == "0"  # a 404 is not counted
        assert "Cache-Control" not in r.headers


# --- pulse: 401, 402, 429 ---------------------------------------------------------------


def test_no_credentials_is_401(loaded: Store, client: Client) -> None:
    for path in (PULSE, DIMENSIONS):
        r = client.get(path, query_string={"region": "강남"} if path == PULSE else None)
        assert r.status_code == 401
        body = r.get_json()
        assert body["error"]["code"] == "UNAUTHORIZED"
        assert body["_meta"] == {"service": "svc", "api_version": "v1"}
    r = cohort(client, "svc_pk_live_" + "0" * 32, "강남", "rental")
    assert r.status_code == 401


def test_a_used_up_monthly_quota_is_402(loaded: Store, client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("starter", monthly_quota=2)
    assert cohort(client, key, "강남", "rental").status_code == 200
    assert get(client, DIMENSIONS, key).status_code == 200  # dimensions counts as a call
    r = cohort(client, key, "강남", "rental")
    assert r.status_code == 402
    assert r.get_json()["error"]["code"] == "QUOTA_EXCEEDED"
    assert (r.headers["X-Quota-Limit"], r.headers["X-Quota-Used"]) == ("2", "2")


def test_too_many_calls_a_minute_is_429(
    loaded: Store, client: Client, accounts: Accounts, clock: FakeClock
) -> None:
    _, key = accounts.consumer("pro", rate_limit=2)
    assert [cohort(client, key, "강남", "rental").status_code for _ in range(2)] == [200, 200]
    r = cohort(client, key, "강남", "rental")
    assert r.status_code == 429
    assert r.get_json()["error"]["code"] == "RATE_LIMITED"
    assert r.get_json()["_meta"]["rate_limit"] == {"limit_per_min": 2, "remaining": 0}
    assert int(r.headers["Retry-After"]) >= 1
    assert (r.headers["X-RateLimit-Limit"], r.headers["X-RateLimit-Remaining"]) == ("2", "0")
    clock.advance(61)
    assert cohort(client, key, "강남", "rental").status_code == 200


# --- dimensions -------------------------------------------------------------------------


def test_dimensions_list_published_combinations(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    r = get(client, DIMENSIONS, key)
    assert r.status_code == 200
    body = r.get_json()
    # published (region, category, period): (강남, office), (마포, office),
    # (마포, warehouse), (서초, office), all in 2026-05
    assert body["data"] == {
        "regions": [
            {"value": "강남", "sample_count": 1},
            {"value": "마포", "sample_count": 2},
            {"value": "서초", "sample_count": 1},
        ],
        "categories": [
            {"value": "office", "sample_count": 3},
            {"value": "warehouse", "sample_count": 1},
        ],
        "periods": [{"value": "2026-05", "sample_count": 4}],
    }
    assert body["_meta"] == {
        "service": "svc",
        "api_version": "v1",
        "generated_at": GENERATED_AT,
        "total_combinations": 6,  # 3 regions x 2 categories x 1 period
        "auth_method": "api_key",
        "rate_limit": {"limit_per_min": 120, "remaining": 119},
        "request_id": r.headers["X-Request-ID"],
    }
    schemas = build_document(ROUTES)["components"]["schemas"]
    assert set(schemas["MarketDimensionsMeta"]["properties"]) == set(body["_meta"])
    assert r.headers["X-Quota-Used"] == "1"
    assert r.headers["Cache-Control"] == CACHE_CONTROL


def test_dimensions_without_data_are_empty(
    store: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    r = get(client, DIMENSIONS, key)
    assert r.status_code == 200
    body = r.get_json()
    assert body["data"] == {"regions": [], "categories": [], "periods": []}
    assert body["_meta"]["total_combinations"] == 0
    assert cohort(client, key, "강남", "rental").status_code == 404


def test_a_load_changes_the_answers_at_once(
    loaded: Store, client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    assert cohort(client, key, "강남", "meeting").status_code == 404
    listings = [
        Listing(
            listing_id="gn-m3",
            region="강남",
            category="office",
            product_type="meeting",
            list_price=30.0,
        )
    ]
    load_listings(loaded, listings)
    load_activity(
        loaded,
        [
            Activity(
                listing_id="gn-m3",
                period="2026-05",
                views=5,
                bookings=0,
                booked_hours=0,
                available_hours=10,
            )
        ],
    )
    meeting = cohort(client, key, "강남", "meeting")
    assert meeting.status_code == 200
    assert meeting.get_json()["data"][0]["avg_price"] == 20.0  # 10, 20, 30
    combined = cohort(client, key, "강남")
    assert combined.get_json()["data"][0]["sample_size"] == 7


# --- privacy through HTTP: the differencing attack --------------------------------------


def _answers(client: Client, key: str) -> dict[tuple[str, str, str, str | None], Any]:
    """Every pulse answer on the grid, by key: the row, or None for a 404."""
    out: dict[tuple[str, str, str, str | None], Any] = {}
    for region in REGIONS:
        for category in CATEGORIES:
            for period in PERIODS:
                for product_type in (*PRODUCT_TYPES, None):
                    r = cohort(client, key, region, product_type, category, period)
                    assert r.status_code in (200, 404), r.get_json()
                    body = r.get_json()
                    if r.status_code == 404:
                        assert body["_meta"]["count"] == 0
                        assert "sample_size" not in json.dumps(body)
                        out[(region, category, period, product_type)] = None
                    else:
                        (row,) = body["data"]
                        out[(region, category, period, product_type)] = row
    return out


def _small(size: int) -> bool:
    return 0 < size < K_ANONYMITY


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(market_data(min_listings=8))
def test_no_http_answer_or_pair_of_answers_reveals_fewer_than_three_listings(
    make_app: Callable[..., SvcApp],
    clock: FakeClock,
    data: tuple[list[Listing], list[Activity]],
) -> None:
    listings, activities = data
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'svc.db'}")
        try:
            store.migrate()
            load_listings(store, listings)
            load_activity(store, activities[::2], path="a1.csv")
            load_activity(store, activities[1::2], path="a2.csv")
            client = Client(make_app(store))
            key = consumer_service.create_consumer(
                store, plan="internal", now=clock(), entropy=os.urandom(16), ids=new_id
            ).api_key
            answers = _answers(client, key)
            dims = get(client, DIMENSIONS, key).get_json()
        finally:
            store.close()

    months = join_months(listings, activities)
    expected = {r.key: r.as_dict() for r in publishable_rows(months)}
    assert {k: v for k, v in answers.items() if v is not None} == expected

    published = [MarketRow(**row) for row in answers.values() if row is not None]
    with_ids = [(row, members(months, row)) for row in published]
    for row, ids in with_ids:
        assert row.sample_size == len(ids) >= K_ANONYMITY
    for (a, sa), (b, sb) in combinations(with_ids, 2):
        if (a.region, a.category, a.period) == (b.region, b.category, b.period):
            assert not _small(len(sa ^ sb))  # e.g. combined minus rental
        if (a.region, a.category) == (b.region, b.category) and None not in (
            a.avg_price,
            b.avg_price,
        ):
            assert not _small(len(sa ^ sb))  # prices of two months
    for row in published:  # demand index: a function of published answers only
        peers = [
            p
            for p in published
            if (p.category, p.period, p.product_type)
            == (row.category, row.period, row.product_type)
        ]
        views = sum(p.total_views for p in peers)
        listings_n = sum(p.sample_size for p in peers)
        expected_index = None
        if views:
            expected_index = float(
                Fraction(100 * row.total_views * listings_n, row.sample_size * views)
            )
        assert row.demand_index == expected_index

    combos = {(r.region, r.category, r.period) for r in published}
    for name in ("regions", "categories", "periods"):
        assert sum(v["sample_count"] for v in dims["data"][name]) == len(combos)
    assert dims["_meta"]["total_combinations"] == (
        len(dims["data"]["regions"])
        * len(dims["data"]["categories"])
        * len(dims["data"]["periods"])
    )


# --- a real server ----------------------------------------------------------------------


def _call(server: LiveServer, path: str, key: str) -> tuple[int, Any, Any]:
    req = urllib.request.Request(server.url + path, headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.loads(exc.read())


def test_pulse_and_headers_through_a_real_server(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    store = open_store(sqlite_url)
    try:
        store.migrate()
        load_fixture(store, "listings")
        load_fixture(store, "activity")
        key = consumer_service.create_consumer(
            store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
        ).api_key
    finally:
        store.close()
    server = live_server_factory(sqlite_url)
    query = "?region=%EA%B0%95%EB%82%A8&category=office&period=2026-05&product_type=rental"
    status, headers, body = _call(server, PULSE + query, key)
    assert status == 200, body
    assert body["data"] == [GANGNAM_RENTAL]
    assert body["_meta"]["request_id"] == headers["X-Request-ID"]
    assert headers["X-Quota-Limit"] == "100000" and headers["X-Quota-Used"] == "1"
    assert headers["X-Quota-Resets-At"].endswith("T00:00:00Z")
    assert (headers["X-RateLimit-Limit"], headers["X-RateLimit-Remaining"]) == ("120", "119")
    assert headers["Cache-Control"] == CACHE_CONTROL

    status, headers, body = _call(server, PULSE + query.replace("rental", "meeting"), key)
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
    status, headers, body = _call(server, PULSE + query.replace("2026-05", "2026-5"), key)
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    status, headers, body = _call(server, DIMENSIONS, key)
    assert status == 200 and body["_meta"]["total_combinations"] == 6
    assert headers["X-Quota-Used"] == "2"  # the 404 and the 400 were not counted
