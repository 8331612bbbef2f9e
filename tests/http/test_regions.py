"""GET /api/v1/real-estate/regions: find a district by name or code, in-process on both
backends and through a real ``svc serve``; a key is needed, no quota is used."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from werkzeug.test import Client

from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.store import open_store
from tests.conftest import Accounts, LiveServer

REGIONS = "/api/v1/real-estate/regions"
DIMENSIONS = "/api/v1/real-estate/dimensions"


def get(client: Client, key: str, **query: str) -> Any:
    return client.get(REGIONS, query_string=query, headers={"X-API-Key": key})


def codes(body: dict[str, Any]) -> list[str]:
    return [row["sigungu_code"] for row in body["data"]]


def test_bucheon_in_korean_and_romanised_with_its_history(
    client: Client, accounts: Accounts
) -> None:
    _, key = accounts.consumer("pro")
    for q in ("부천", "Bucheon", "bucheon", "경기 부천", "Gyeonggi-do Bucheon"):
        r = get(client, key, q=q)
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        assert codes(body) == ["41192", "41194", "41196", "41190"], q
        wonmi, old = body["data"][0], body["data"][3]
        assert wonmi == {
            "sigungu_code": "41192",
            "sido": "경기도",
            "sigungu": "부천시 원미구",
            "full_name": "경기도 부천시 원미구",
            "sido_roman": "Gyeonggi-do",
            "sigungu_roman": "Bucheon-si Wonmi-gu",
            "full_name_roman": "Gyeonggi-do Bucheon-si Wonmi-gu",
            "in_use": True,
            "valid_from": "2024-01-01",
            "valid_to": None,
            "replaced_by": [],
            "replaces": ["41190"],
            "match": "prefix",
        }
        assert old["in_use"] is False and old["sigungu"] == "부천시"
        assert (old["valid_from"], old["valid_to"]) == ("1988-04-23", "2024-01-01")
        assert old["replaced_by"] == ["41192", "41194", "41196"]
        meta = body["_meta"]
        assert meta["count"] == meta["total"] == 4
        assert meta["query"] == {"q": q, "limit": 50}
        assert meta["auth_method"] == "api_key"


def test_gangnam_and_a_name_several_cities_share(client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    for q in ("강남", "강남구", "Gangnam", "gangnam-gu", "서울 강남구", "11680"):
        body = get(client, key, q=q).get_json()
        assert codes(body) == ["11680"], q
        row = body["data"][0]
        assert (row["full_name"], row["full_name_roman"]) == (
            "서울특별시 강남구",
            "Seoul Gangnam-gu",
        )
        assert row["valid_to"] is None and row["match"] == "exact"
    jung = get(client, key, q="중구").get_json()
    assert {"11140", "26110", "27110", "30140", "31110", "28110"} <= set(codes(jung))
    assert all(row["sigungu"] == "중구" for row in jung["data"])
    assert codes(get(client, key, q="서울 중구").get_json()) == ["11140"]
    assert codes(get(client, key, q="Seoul Jung-gu").get_json()) == ["11140"]
    assert get(client, key, q="없는곳").get_json()["data"] == []


def test_limit_and_bad_queries(client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    body = get(client, key, q="4").get_json()  # every code of Gyeonggi, Chungcheong, ...
    assert body["_meta"]["count"] == 50 and body["_meta"]["total"] > 100
    assert all(row["sigungu_code"].startswith("4") for row in body["data"])
    gyeonggi = get(client, key, q="경기", limit="3").get_json()
    assert codes(gyeonggi) == ["41111", "41113", "41115"]
    assert gyeonggi["_meta"]["total"] == 49  # 47 in use, Bucheon and Hwaseong retired
    for query in ({"q": ""}, {}, {"q": "  - "}, {"q": "강남", "limit": "51"}, {"q": "x" * 101}):
        r = get(client, key, **query)
        assert r.status_code == 400, query
        assert r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert client.get(REGIONS, query_string={"q": "강남"}).status_code == 401


def test_through_a_real_server_the_quota_does_not_move(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    store = open_store(sqlite_url)
    try:
        store.migrate()
        key = consumer_service.create_consumer(
            store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
        ).api_key
    finally:
        store.close()
    server = live_server_factory(sqlite_url)

    def call(path: str, **query: str) -> tuple[int, Any, Any]:
        url = f"{server.url}{path}?{urllib.parse.urlencode(query)}"
        req = urllib.request.Request(url, headers={"X-API-Key": key})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.headers, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, json.loads(exc.read())

    status, headers, _ = call(DIMENSIONS)
    assert status == 200 and headers["X-Quota-Used"] == "1"
    for q in ("Bucheon", "부천", "강남"):
        status, headers, body = call(REGIONS, q=q)
        assert status == 200, body
        assert headers["X-Quota-Used"] == "1", q
        assert body["data"] and all(row["valid_from"] for row in body["data"])
    status, _, body = call(REGIONS, q="Bucheon")
    assert codes(body)[:3] == ["41192", "41194", "41196"]
    assert body["data"][3]["valid_to"] == "2024-01-01"
    status, headers, body = call(REGIONS, q="")
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    status, headers, _ = call(DIMENSIONS)
    assert headers["X-Quota-Used"] == "2"
