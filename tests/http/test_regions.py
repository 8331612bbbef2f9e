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
from pathlib import Path
from typing import Any

from werkzeug.test import Client

from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.store import Store, open_store
from tests.conftest import Accounts, LiveServer
from tests.http.realestate_support import FIXTURES, load

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
            "kind": "district",
            "dong": None,
            "market_area": None,
            "districts": [],
            "next": "/api/v1/real-estate/pulse?sigungu_code=41192",
        }
        assert old["in_use"] is False and old["sigungu"] == "부천시"
        assert (old["valid_from"], old["valid_to"]) == ("1988-04-23", "2024-01-01")
        assert old["replaced_by"] == ["41192", "41194", "41196"]
        meta = body["_meta"]
        assert meta["count"] == meta["total"] == 4
        assert meta["query"] == {"q": q, "limit": 50, "kind": None}
        assert meta["auth_method"] == "api_key"


def test_gangnam_and_a_name_several_cities_share(client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    for q in ("강남", "강남구", "Gangnam", "gangnam-gu", "서울 강남구", "11680"):
        body = get(client, key, q=q, kind="district").get_json()
        assert codes(body) == ["11680"], q
        assert get(client, key, q=q).get_json()["data"][0] == body["data"][0], q
        row = body["data"][0]
        assert (row["full_name"], row["full_name_roman"]) == (
            "서울특별시 강남구",
            "Seoul Gangnam-gu",
        )
        assert row["valid_to"] is None and row["match"] == "exact"
        assert row["market_area"] == "서울>강남"
    jung = get(client, key, q="중구", kind="district").get_json()
    assert {"11140", "26110", "27110", "30140", "31110", "28110"} <= set(codes(jung))
    assert all(row["sigungu"] == "중구" for row in jung["data"])
    assert codes(get(client, key, q="서울 중구").get_json()) == ["11140"]
    assert codes(get(client, key, q="Seoul Jung-gu").get_json()) == ["11140"]
    assert get(client, key, q="없는곳").get_json()["data"] == []
    assert get(client, key, q="xq").get_json()["data"] == []


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
        status, headers, body = call(REGIONS, q=q, kind="district")
        assert status == 200, body
        assert headers["X-Quota-Used"] == "1", q
        assert body["data"] and all(row["valid_from"] for row in body["data"])
    status, headers, body = call(REGIONS, q="역삼동")
    assert (status, headers["X-Quota-Used"]) == (200, "1")
    (yeoksam,) = body["data"]
    assert (yeoksam["kind"], yeoksam["sigungu_code"], yeoksam["sigungu"]) == (
        "dong",
        "11680",
        "강남구",
    )
    assert yeoksam["dong"]["dong_code"] == "1168010100"
    assert yeoksam["dong"]["name_roman"] == "Yeoksam-dong"  # RR: the unit after a hyphen
    status, _, body = call(REGIONS, q="성수동1가", kind="dong")
    assert [(r["dong"]["name"], r["dong"]["name_roman"]) for r in body["data"]] == [
        ("성수동1가", "Seongsu-dong 1-ga")
    ]
    status, _, pulse = call(
        yeoksam["next"].split("?")[0], **dict(urllib.parse.parse_qsl(yeoksam["next"].split("?")[1]))
    )
    assert status in (200, 404), pulse  # an empty store: the call is well-formed
    assert pulse.get("error", {}).get("code", "NOT_FOUND") == "NOT_FOUND"
    status, _, body = call(REGIONS, q="도심")
    assert body["data"][0]["kind"] == "market_area"
    assert (body["data"][0]["full_name"], body["data"][0]["districts"]) == (
        "서울>도심",
        ["11110", "11140"],
    )
    status, _, body = call(REGIONS, q="Bucheon")
    assert codes(body)[:3] == ["41192", "41194", "41196"]
    assert body["data"][3]["valid_to"] == "2024-01-01"
    status, headers, body = call(REGIONS, q="")
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    status, headers, _ = call(DIMENSIONS)
    assert headers["X-Quota-Used"] == "2"


def test_legal_dongs_with_the_district_holding_them(client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro")
    for q in ("역삼동", "역삼", "Yeoksam-dong", "강남구 역삼동", "서울 강남구 역삼", "1168010100"):
        body = get(client, key, q=q, kind="dong").get_json()
        assert [(r["sigungu_code"], r["dong"]["dong_code"]) for r in body["data"]] == [
            ("11680", "1168010100")
        ], q
        row = body["data"][0]
        assert (row["kind"], row["sigungu"], row["dong"]["name"]) == ("dong", "강남구", "역삼동")
        assert row["market_area"] == "서울>강남" and row["dong"]["in_use"]
        assert row["next"] == (
            "/api/v1/real-estate/pulse?sigungu_code=11680&geo_precision=dong"
            "&dong=%EC%97%AD%EC%82%BC%EB%8F%99"
        )
    (seongsu,) = get(client, key, q="성수동1가").get_json()["data"]
    assert (seongsu["sigungu_code"], seongsu["dong"]["dong_code"]) == ("11200", "1120011400")
    assert seongsu["match"] == "exact"


def test_a_dong_moved_by_a_renumbering_names_both_codes(client: Client, accounts: Accounts) -> None:
    """부천시's 심곡동 (4119010200) moved to 원미구 when Bucheon's gu were restored."""
    _, key = accounts.consumer("pro")
    rows = get(client, key, q="부천 심곡동").get_json()["data"]
    assert [(r["sigungu_code"], r["dong"]["dong_code"], r["dong"]["in_use"]) for r in rows] == [
        ("41192", "4119210200", True),
        ("41190", "4119010200", False),
    ]
    new, old = (r["dong"] for r in rows)
    assert (old["valid_to"], old["replaced_by"]) == ("2024-01-01", ["4119210200"])
    assert (new["valid_from"], new["code_source"]) == ("2024-01-01", "derived")
    # a dong named since the 2022 list (구지면 became 구지읍): its district, no code
    (guji,) = get(client, key, q="달성군 구지읍", kind="dong", limit="1").get_json()["data"]
    assert (guji["sigungu_code"], guji["dong"]["dong_code"]) == ("27710", None)
    assert guji["dong"]["code_source"] == "unlisted"


def test_market_areas_bundled_and_loaded(
    client: Client, accounts: Accounts, store: Store, tmp_path: Path
) -> None:
    _, key = accounts.consumer("pro")
    (dosim,) = get(client, key, q="도심", kind="market_area").get_json()["data"]
    assert (dosim["full_name"], dosim["sigungu_code"], dosim["districts"]) == (
        "서울>도심",
        None,
        ["11110", "11140"],
    )
    assert dosim["next"] == "/api/v1/real-estate/indices?sigungu_code=11110"
    table = "임대동향 수익률(분기)(2024년3분기~)_중대형 상가"
    load(store, "rone-index", FIXTURES / "rone" / "retail_yields_openapi.json", table_name=table)
    retail = tmp_path / "retail.json"
    retail.write_text(json.dumps(_retail_answer()), encoding="utf-8")
    load(store, "rone-index", retail, table_name="임대동향 공실률_중대형 상가")
    (dosim,) = get(client, key, q="도심", kind="market_area").get_json()["data"]
    assert (dosim["sigungu_code"], dosim["districts"]) == ("A510003", ["11110", "11140"])
    assert dosim["next"] == "/api/v1/real-estate/indices?sigungu_code=A510003"
    rows = get(client, key, q="여의도 마포").get_json()["data"]
    assert [(r["kind"], r["sigungu_code"]) for r in rows] == [("market_area", "A510005")]
    (street,) = get(client, key, q="강남대로", kind="market_area").get_json()["data"]
    assert (street["sigungu_code"], street["full_name"], street["districts"]) == (
        "A520012",
        "서울>강남대로",
        [],
    )


def _retail_answer() -> dict[str, Any]:
    """An R-ONE open-API answer of one retail area (시도>상권), which no table maps."""
    row = {
        "STATBL_ID": "T_RETAIL",
        "DTACYCLE_CD": "QY",
        "WRTTIME_IDTFR_ID": "202502",
        "CLS_ID": 520012,
        "CLS_NM": "강남대로",
        "CLS_FULLNM": "서울>강남대로",
        "ITM_ID": 100001,
        "ITM_NM": "공실률",
        "ITM_FULLNM": "공실률",
        "DTA_VAL": 7.5,
        "UI_NM": "%",
    }
    head = [{"list_total_count": 1}, {"RESULT": {"CODE": "INFO-000", "MESSAGE": "ok"}}]
    return {"SttsApiTblData": [{"head": head}, {"row": [row]}]}
