"""``svc sync rone`` through the real ``svc`` command against the R-ONE stand-in, which
answers as the real service does (tests/server/rone_standin.py)."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import httpx
import pytest

from svc_core.sync.rtms import CONNECT_FAILURE_LIMIT
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import migrate, open_store
from svc_server.store.sync import SyncWrites
from tests.conftest import LiveServer
from tests.http.realestate_support import Api, make_app
from tests.server.rone_standin import (
    BY_NAME,
    CLASSES,
    FLOORS,
    KEY,
    TABLES,
    UNSEEN_ERAS,
    RoneStandIn,
    annual_value,
    areas,
    serve,
    value,
)
from tests.server.rtms_standin import closed_port_url
from tests.svc_cli import run_svc

GANGNAM = 510004  # 서울>강남 → 11680 강남구, 11650 서초구


LEAN = 8
"""Areas of each class the stand-in serves in most tests (its first ones: the Seoul total,
the areas the facts name, other 시도): fewer rows, every one as the service writes it."""


@pytest.fixture
def standin() -> Iterator[RoneStandIn]:
    with serve(area_limit=LEAN) as state:
        yield state
        # svc never sends a request the service refuses as malformed
        assert state.refused == []


def svc(
    url: str, standin: RoneStandIn, *args: str, key: str = KEY
) -> subprocess.CompletedProcess[str]:
    """``svc`` pointed at the stand-in and the database (in process)."""
    env = {
        "SVC_RONE_BASE_URL": standin.url,
        "SVC_DATABASE_URL": url,
        "SVC_RONE_KEY": key,
    }
    return run_svc(*args, env=env)


@attrs.frozen
class Synced:
    """A store one ``svc sync rone`` of the lean stand-in filled, and what the run printed."""

    url: str
    run: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Synced:
    """One sync of the lean stand-in, for the tests that only read what it loaded (each
    ran the same sync into a store of its own): a SQLite store shared by the module, which
    those tests do not change (the live-server test adds a consumer, which no index
    answer reads)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('rone') / 'svc.db'}"
    with serve(area_limit=LEAN) as standin:
        done = svc(url, standin, "sync", "rone", "--backoff", "0")
        assert standin.refused == []
    assert done.returncode == 0, done.stderr
    return Synced(url, done)


def rows(url: str, sql: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            return tx.fetchall(sql)
    finally:
        store.close()


READ_TABLES = "SELECT table_id, era, status FROM sync_tables WHERE status <> 'not_read'"


def _values(url: str, code: str, survey_class: str) -> dict[tuple[str, str, str], float]:
    """(metric, period, era) → value of one place and survey class (all floors)."""
    found = rows(
        url,
        "SELECT metric_type, period, era, value_pct FROM index_observations "
        f"WHERE sigungu_code = '{code}' AND survey_class = '{survey_class}' AND floor = ''",
    )
    return {(r["metric_type"], r["period"], r["era"]): float(r["value_pct"]) for r in found}


ERAS = {"(2024년3분기~)": "2024Q3~", "(2022년~)": "2022~", "(시계열)": "linked"}
PROPERTY = {"오피스": "office", "집합 상가": "commercial_complex"}


def era(table: str) -> str:
    """The era svc files a stand-in table under (docs/sync.md, "Eras")."""
    return next(label for mark, label in ERAS.items() if mark in table)


EXPECTED = {
    # office metric: (table of the 2025 quarter, table of the 2023 quarter, item)
    "vacancy_rate": (
        "임대동향 지역별 공실률(2024년3분기~)",
        "임대동향 지역별 공실률(2022년~)",
        "공실률",
    ),
    "rent_level": (
        "임대동향 지역별 임대료(2024년3분기~)",
        "임대동향 지역별 임대료(2022년~)",
        "임대료",
    ),
    "rent_index": (
        "임대동향 지역별 임대가격지수(시계열)",
        "임대동향 지역별 임대가격지수(시계열)",
        "지수",
    ),
    "income_yield": (
        "임대동향 수익률(분기)(2024년3분기~)",
        "임대동향 수익률(분기)(2022년~)",
        "소득수익률",
    ),
    "capital_yield": (
        "임대동향 수익률(분기)(2024년3분기~)",
        "임대동향 수익률(분기)(2022년~)",
        "자본수익률",
    ),
    "total_return": (
        "임대동향 수익률(분기)(2024년3분기~)",
        "임대동향 수익률(분기)(2022년~)",
        "투자수익률",
    ),
}
GANGNAM_DAERO = 520001
"""서울>강남대로: a retail area of every retail class (stand-in placeholder id)."""
NOT_READ = [t for t in TABLES if any(mark in t["STATBL_NM"] for mark in UNSEEN_ERAS)]


def test_every_metric_loads_for_2025_and_2023_each_from_its_era(
    db_url: str, standin: RoneStandIn
) -> None:
    done = svc(db_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    data_calls = [c for c in standin.calls if c["path"].endswith("SttsApiTblData.do")]
    # every call asks XML (R-ONE's default), 1,000 rows a page; every data call names its
    # table and one cycle code: quarterly, and the annual values of the tables offering both
    assert {c["Type"] for c in standin.calls} == {"xml"}
    assert {c["pSize"] for c in standin.calls} == {"1000"}
    cycles = {(c["STATBL_ID"], c["DTACYCLE_CD"]) for c in data_calls}
    both = {t["STATBL_ID"] for t in TABLES if t["DTACYCLE_CD"] == "YY,QY" and t not in NOT_READ}
    assert both and {(t, "YY") for t in both} <= cycles
    assert {c for _, c in cycles} == {"QY", "YY"}
    read = {c["STATBL_ID"] for c in data_calls}
    # every survey table of every class but those whose era svc cannot read
    survey = {t["STATBL_ID"] for t in TABLES if t["STATBL_NM"].startswith("임대동향")}
    assert read == survey - {t["STATBL_ID"] for t in NOT_READ}
    assert "A_2024_00900" not in read  # another survey's table
    # the tables not read are said, by id and name, in the output and in the status
    for table in NOT_READ:
        assert f"  {table['STATBL_ID']} {table['STATBL_NM']}: not read (its name fits" in (
            done.stdout
        )
    assert f"{len(NOT_READ)} survey (임대동향) tables not read" in done.stdout
    status = svc(db_url, standin, "sync", "status")
    for table in NOT_READ:
        assert f"rone {table['STATBL_ID']} {table['STATBL_NM']}: not read (" in status.stdout
    listed = json.loads(svc(db_url, standin, "sync", "status", "--json").stdout)["rone_tables"]
    assert {(t["table_id"], t["table_name"]) for t in listed if t["status"] == "not_read"} == {
        (t["STATBL_ID"], t["STATBL_NM"]) for t in NOT_READ
    }
    for code in ("11680", "11650", f"A{GANGNAM}"):
        held = _values(db_url, code, "오피스")
        for metric, (new, old, item) in EXPECTED.items():
            new_table, old_table = f"{new}_오피스", f"{old}_오피스"
            assert held[(metric, "2025-Q1", era(new))] == value(new_table, GANGNAM, "202501", item)
            assert held[(metric, "2023-Q3", era(old))] == value(old_table, GANGNAM, "202303", item)
    # each retail class under its own areas (retail areas are 시도>상권)
    for survey_class in CLASSES[1:]:
        held = _values(db_url, f"A{GANGNAM_DAERO}", survey_class)
        table = f"임대동향 지역별 공실률(2024년3분기~)_{survey_class}"
        assert held[("vacancy_rate", "2025-Q1", "2024Q3~")] == value(
            table, GANGNAM_DAERO, "202501", "공실률"
        )
    classes = rows(db_url, "SELECT DISTINCT survey_class, property_type FROM index_observations")
    assert {(r["survey_class"], r["property_type"]) for r in classes} == {
        (c, PROPERTY.get(c, "retail")) for c in CLASSES
    }
    # each table under its own era; no table supplies a value another one does
    names = {t["STATBL_ID"]: t["STATBL_NM"] for t in TABLES}
    eras = {names[t["table_id"]]: t["era"] for t in rows(db_url, READ_TABLES)}
    assert eras["임대동향 지역별 공실률(2024년3분기~)_오피스"] == "2024Q3~"
    assert eras["임대동향 지역별 공실률(2022년~)_오피스"] == "2022~"
    assert eras["임대동향 지역별 공실률(2021년)_오피스"] == "2021"
    assert eras["임대동향 지역별 공실률(2013~2016)_오피스"] == "2013~2016"
    assert eras["임대동향 지역별 임대가격지수(시계열)_오피스"] == "linked"
    assert {t["status"] for t in rows(db_url, READ_TABLES)} == {"complete"}
    # the areas no district stands for are listed with their full name and CLS_ID
    assert "market areas map to no district" in done.stdout
    assert "서울 (500002)" in done.stdout and "서울>기타 (510006)" not in done.stdout
    # every area R-ONE returned is held under its own code, named by its full name
    places = rows(db_url, "SELECT DISTINCT sigungu_code, sigungu FROM index_observations")
    held_areas = {(r["sigungu_code"], r["sigungu"]) for r in places if r["sigungu_code"][0] == "A"}
    assert held_areas == {(f"A{i}", path) for c in CLASSES for i, path in areas(c)[:LEAN]}
    # a second run adds nothing and still succeeds
    again = svc(db_url, standin, "sync", "rone", "--backoff", "0")
    assert again.returncode == 0, again.stderr
    assert "; 0 values loaded" in again.stdout


FLOOR_TABLE = "임대동향 층별임대료 및 층별효용비율(2024년3분기~)_중대형 상가"


def test_floor_rents_are_served_per_market_area_and_floor(sqlite_url: str) -> None:
    # every area of the class, as many as R-ONE publishes (287 상권 and 17 시도)
    with serve() as standin:
        standin.tables = [
            BY_NAME[FLOOR_TABLE],
            BY_NAME["임대동향 지역별 임대료(2024년3분기~)_중대형 상가"],
        ]
        done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    served = areas("중대형 상가")
    quarters = 8  # 2024 Q3 to 2026 Q2
    # no region dropped: every area's every floor and quarter, rent and utility ratio
    counted = rows(
        sqlite_url,
        "SELECT metric_type, COUNT(*) AS n FROM index_observations WHERE floor <> '' "
        "AND sigungu_code LIKE 'A%' GROUP BY metric_type",
    )
    assert {r["metric_type"]: r["n"] for r in counted} == {
        "rent_level": len(served) * len(FLOORS) * quarters,
        "floor_utility_ratio": len(served) * len(FLOORS) * quarters,
    }
    assert "duplicate_in_file" not in done.stdout + done.stderr
    store = open_store(sqlite_url)
    try:
        api = Api(make_app(store))
        for area_id, path in (served[0], (GANGNAM_DAERO, "서울>강남대로"), served[-1]):
            query = {"sigungu_code": f"A{area_id}", "period": "2026-Q2"}
            rents = api.ok("indices", {**query, "metric_type": "rent_level"})["data"]
            # the rent of all floors (regional table), then each floor's
            assert [(r["floor"], r["value_pct"], r["unit"]) for r in rents] == [
                (
                    None,
                    value(
                        "임대동향 지역별 임대료(2024년3분기~)_중대형 상가",
                        area_id,
                        "202602",
                        "임대료",
                    ),
                    "천원/㎡/month",
                ),
                *sorted(
                    (f, value(FLOOR_TABLE, area_id, "202602", "임대료", f), "천원/㎡/month")
                    for f in FLOORS
                ),
            ]
            assert {r["sigungu"] for r in rents} == {path}
            ratios = api.ok("indices", {**query, "metric_type": "floor_utility_ratio"})["data"]
            assert sorted((r["floor"], r["value_pct"], r["unit"]) for r in ratios) == sorted(
                (f, value(FLOOR_TABLE, area_id, "202602", "효용비율", f), "%") for f in FLOORS
            )
            # never among the rents, nor in an answer that names no metric
            # an answer naming no metric gives SPEC's metrics only: none here
            assert api.get("indices", query).status_code == 404
    finally:
        store.close()


def test_net_operating_income_and_annual_values_are_served(synced: Synced) -> None:
    store = open_store(synced.url)
    try:
        api = Api(make_app(store))
        query = {"sigungu_code": "11680", "property_type": "office"}
        noi = api.ok("indices", {**query, "metric_type": "net_operating_income", "period": "2025"})
        yields = api.ok("indices", {**query, "metric_type": "income_yield", "period": "2023"})
        spec = api.ok("indices", {**query, "period": "2025-Q1"})
    finally:
        store.close()
    table = "임대동향 순영업소득(2024년3분기~)_오피스"
    assert [(r["period"], r["value_pct"], r["unit"]) for r in noi["data"]] == [
        (f"2025-Q{q}", value(table, GANGNAM, f"20250{q}", "순영업소득(천원/㎡)"), "천원/㎡/quarter")
        for q in range(1, 5)
    ]
    # the NOI's percentage item is not served as NOI; NOI only when asked for
    assert "net_operating_income" not in {r["metric_type"] for r in spec["data"]}
    # the annual (YY) yield of a table offering 매년,분기, beside its quarters
    old = "임대동향 수익률(분기)(2022년~)_오피스"
    by_period = {r["period"]: r for r in yields["data"]}
    assert set(by_period) == {"2023", "2023-Q1", "2023-Q2", "2023-Q3", "2023-Q4"}
    year = by_period["2023"]
    assert (year["value_pct"], year["unit"], year["era"]) == (
        annual_value(old, GANGNAM, 2023, "소득수익률"),
        "%",
        "2022~",
    )
    assert year["annualized_cap_rate"] == year["value_pct"]  # a year's yield already
    quarter = by_period["2023-Q3"]
    assert quarter["annualized_cap_rate"] == pytest.approx(4 * quarter["value_pct"])


def test_indices_serve_the_synced_values_and_the_cap_rate_past_2024_q2(synced: Synced) -> None:
    store = open_store(synced.url)
    try:
        api = Api(make_app(store))
        body = api.ok(
            "indices",
            {
                "sigungu_code": "11680",
                "property_type": "office",
                "metric_type": "income_yield",
                "period": "2025",
            },
        )
        # 서울>기타 maps to no district: served under its own code, A + its CLS_ID
        other = api.ok(
            "indices",
            {"sigungu_code": "A510006", "metric_type": "vacancy_rate", "period": "2023"},
        )
        bad = api.get("indices", {"sigungu_code": "B510006"})
    finally:
        store.close()
    assert bad.status_code == 400
    assert "market-area code such as A510006" in bad.get_data(as_text=True)
    assert {(r["sigungu"], r["property_type"]) for r in other["data"]} == {("서울>기타", "office")}
    first = other["data"][0]
    assert first["period"] == "2023-Q1"
    assert first["value_pct"] == value(
        "임대동향 지역별 공실률(2022년~)_오피스", 510006, "202301", "공실률"
    )
    got = {r["period"]: r["annualized_cap_rate"] for r in body["data"]}
    name = "임대동향 수익률(분기)(2024년3분기~)_오피스"
    assert set(got) == {"2025", "2025-Q1", "2025-Q2", "2025-Q3", "2025-Q4"}
    assert got["2025-Q3"] == pytest.approx(4 * value(name, GANGNAM, "202503", "소득수익률"))
    assert got["2025"] == annual_value(name, GANGNAM, 2025, "소득수익률")


def test_error_300_stops_at_once_naming_the_table(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.fail.extend(["", "ERROR-300"])  # the list, then the first data call
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 1
    assert len(standin.calls) == 2
    first = standin.calls[1]["STATBL_ID"]
    name = next(t["STATBL_NM"] for t in TABLES if t["STATBL_ID"] == first)
    assert f"svc: error: table {name} ({first}): R-ONE refused the request" in done.stderr
    assert "ERROR-300" in done.stderr


def test_a_run_that_finds_no_table_exits_non_zero(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.tables = [t for t in TABLES if t["STATBL_ID"] == "A_2024_00900"]
    done = svc(sqlite_url, standin, "sync", "rone")
    assert done.returncode == 1
    assert "names no rental-survey (임대동향) table" in done.stderr


@pytest.mark.parametrize("code", ["ERROR-290", "INFO-300"])
def test_a_refused_key_writes_nothing(sqlite_url: str, standin: RoneStandIn, code: str) -> None:
    if code == "ERROR-290":
        done = svc(sqlite_url, standin, "sync", "rone", key="wrong")
    else:
        standin.fail.append(code)
        done = svc(sqlite_url, standin, "sync", "rone")
    assert done.returncode == 2
    assert done.stderr.startswith("svc: error: R-ONE refused the key")
    assert len(standin.calls) == 1
    assert rows(sqlite_url, "SELECT COUNT(*) AS n FROM index_observations")[0]["n"] == 0


def test_the_daily_limit_stops_with_its_own_code(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.fail.extend(["", "", "", "ERROR-337"])  # list, two one-page tables, then the next
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 3, done.stderr
    assert "run again tomorrow" in done.stderr
    assert len(standin.calls) == 4
    assert len(rows(sqlite_url, READ_TABLES)) == 2


def test_server_trouble_is_retried_then_recorded(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.fail.extend(["", "ERROR-500", "ERROR-601", "", "500", "ERROR-600"])
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0", "--retries", "1")
    assert done.returncode == 1, done.stderr
    states = [r["status"] for r in rows(sqlite_url, READ_TABLES)]
    assert states.count("failed") == 2 and states.count("complete") == len(states) - 2


def test_a_declared_charset_is_honoured(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.charset = "EUC-KR"
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    assert _values(sqlite_url, "11680", "오피스")


def test_korean_garbled_in_json_answers_does_not_reach_svc(
    sqlite_url: str, standin: RoneStandIn
) -> None:
    # one public client found Korean garbled in Type=json answers, never in XML: svc asks
    # XML, so a service garbling its JSON is read in full
    standin.garble = True
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    assert {c["Type"] for c in standin.calls} == {"xml"}
    assert _values(sqlite_url, "11680", "오피스")


def test_the_standin_refuses_what_the_real_service_refuses() -> None:
    with serve() as state, httpx.Client() as http:
        base = state.url
        ok = {"KEY": KEY, "STATBL_ID": "TT244763134428698", "DTACYCLE_CD": "QY", "Type": "json"}

        def get(path: str, **params: str) -> httpx.Response:
            return http.get(f"{base}/{path}", params=params)

        without = {k: v for k, v in ok.items() if k != "DTACYCLE_CD"}
        assert get("SttsApiTblData.do", **without).json()["RESULT"]["CODE"] == "ERROR-300"
        big = get("SttsApiTblData.do", **ok, pIndex="1", pSize="1001")
        assert big.json()["RESULT"]["CODE"] == "ERROR-336"
        bad = get("SttsApiTblData.do", **ok, pIndex="x", pSize="10")
        assert bad.json()["RESULT"]["CODE"] == "ERROR-333"
        wrong = get("SttsApiTblData.do", **{**ok, "KEY": "nope"})
        assert wrong.json()["RESULT"]["CODE"] == "ERROR-290"
        page = get("SttsApiTblData.do", **ok, pIndex="1", pSize="5")
        assert page.headers["content-type"] == "application/json;charset=UTF-8"
        head, body = page.json()["SttsApiTblData"]
        assert head["head"][1]["RESULT"]["CODE"] == "INFO-000" and len(body["row"]) == 5
        xml = get("SttsApiTblData.do", **{**ok, "Type": "xml"}, pIndex="1", pSize="5")
        assert xml.text.startswith('<?xml version="1.0" encoding="UTF-8"?><SttsApiTblData>')
        missing = get("SttsApiTblData.do", **{**without, "Type": "xml"})
        assert "<RESULT><CODE>ERROR-300</CODE>" in missing.text
        assert ("ERROR-300", "DTACYCLE_CD") in state.refused


def test_a_run_that_loads_nothing_exits_non_zero(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.no_data = True  # INFO-200 for every table: zero rows, not an error
    done = svc(sqlite_url, standin, "sync", "rone")
    assert done.returncode == 1
    assert "nothing loaded" in done.stderr
    assert rows(sqlite_url, "SELECT COUNT(*) AS n FROM index_observations")[0]["n"] == 0
    status = svc(sqlite_url, standin, "sync", "status", "--json")
    listed = [t for t in json.loads(status.stdout)["rone_tables"] if t["status"] != "not_read"]
    assert {t["era"] for t in listed} == {
        "linked", "2024Q3~", "2022~", "2021", "2020", "2019", "2013~2016"
    }  # fmt: skip
    assert all(t["status"] == "complete" and t["loaded"] == 0 for t in listed)


def test_a_real_server_serves_what_the_sync_loaded(
    synced: Synced, live_server_factory: Callable[..., LiveServer]
) -> None:
    url = synced.url
    store = open_store(url)
    made = consumers.create_consumer(
        store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
    )
    store.close()
    server = live_server_factory(url)

    def indices(**params: str) -> list[dict[str, Any]]:
        request = urllib.request.Request(
            f"{server.url}/api/v1/real-estate/indices?{urllib.parse.urlencode(params)}",
            headers={"X-API-Key": str(made.api_key)},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            found: list[dict[str, Any]] = json.loads(answer.read())["data"]
            return found

    (row,) = indices(
        sigungu_code="11650", property_type="office", metric_type="income_yield", period="2025-Q2"
    )
    name = "임대동향 수익률(분기)(2024년3분기~)_오피스"
    income = value(name, GANGNAM, "202502", "소득수익률")
    assert (row["sigungu"], row["value_pct"]) == ("서초구", income)
    assert row["annualized_cap_rate"] == pytest.approx(4 * income)
    # each value says its class, era and table
    assert (row["survey_class"], row["era"], row["source_table"]) == (
        "오피스",
        "2024Q3~",
        BY_NAME[name]["STATBL_ID"],
    )
    # the rent index is the linked series, its item 지수
    linked = "임대동향 지역별 임대가격지수(시계열)_오피스"
    rent = {"sigungu_code": "11680", "property_type": "office", "metric_type": "rent_index"}
    (preferred,) = indices(**rent, period="2025-Q1")
    assert (preferred["era"], preferred["source_table"], preferred["value_pct"]) == (
        "linked",
        BY_NAME[linked]["STATBL_ID"],
        value(linked, GANGNAM, "202501", "지수"),
    )
    assert [r["era"] for r in indices(**rent, period="2013-Q1", series="all")] == ["linked"]
    # three survey classes give retail: 중대형 상가 by default, each of them with series=all
    area = f"A{GANGNAM_DAERO}"
    vacancy = {"sigungu_code": area, "property_type": "retail", "metric_type": "vacancy_rate"}
    (retail,) = indices(**vacancy, period="2025-Q1")
    assert retail["survey_class"] == "중대형 상가"
    stem = "임대동향 지역별 공실률(2024년3분기~)"
    assert [
        (r["survey_class"], r["value_pct"])
        for r in indices(**vacancy, period="2025-Q1", series="all")
    ] == [
        (c, value(f"{stem}_{c}", GANGNAM_DAERO, "202501", "공실률"))
        for c in ("중대형 상가", "일반 상가", "소규모 상가")
    ]
    # every area R-ONE returned, under its own code and full name, mapped or not
    for cls_id, path in areas("오피스")[:LEAN]:
        found = indices(sigungu_code=f"A{cls_id}", metric_type="vacancy_rate", period="2025-Q1")
        office = next(r for r in found if r["property_type"] == "office")
        assert (office["sigungu"], office["property_type"]) == (path, "office")
        assert office["value_pct"] == value(f"{stem}_오피스", cls_id, "202501", "공실률")
    # rent_level (not one of SPEC's metrics) only when asked for
    spec = indices(sigungu_code="11680", property_type="office", period="2025-Q1")
    assert "rent_level" not in {r["metric_type"] for r in spec}
    (level,) = indices(
        sigungu_code="11680", property_type="office", metric_type="rent_level", period="2025-Q1"
    )
    assert level["value_pct"] == value(
        "임대동향 지역별 임대료(2024년3분기~)_오피스", GANGNAM, "202501", "임대료"
    )
    assert (level["floor"], level["unit"]) == (None, "천원/㎡/month")
    # a retail area's rent of all floors, then each floor's, from the floor table
    floors = indices(
        sigungu_code=area, property_type="retail", metric_type="rent_level", period="2025-Q1"
    )
    table = "임대동향 층별임대료 및 층별효용비율(2024년3분기~)_중대형 상가"
    assert [(r["floor"], r["value_pct"]) for r in floors] == [
        (
            None,
            value(
                "임대동향 지역별 임대료(2024년3분기~)_중대형 상가",
                GANGNAM_DAERO,
                "202501",
                "임대료",
            ),
        ),
        *sorted((f, value(table, GANGNAM_DAERO, "202501", "임대료", f)) for f in FLOORS),
    ]


def test_an_unreachable_r_one_stops_after_a_few_calls_and_writes_nothing(db_url: str) -> None:
    url = closed_port_url("/r-one/openapi")
    env = {"SVC_RONE_BASE_URL": url, "SVC_DATABASE_URL": db_url, "SVC_RONE_KEY": KEY}
    done = run_svc("sync", "rone", "--backoff", "0.2", env=env)
    assert done.returncode == 5, done.stderr
    assert (
        done.stderr == f"svc: error: cannot reach {url}: check the network or SVC_RONE_BASE_URL\n"
    )
    assert f"sync rone: {CONNECT_FAILURE_LIMIT} calls; tables: 0 complete" in done.stdout
    for table in ("sync_tables", "index_observations", "ingest_log"):
        assert rows(db_url, f"SELECT * FROM {table}") == [], table


def test_a_sync_of_r_one_writes_a_progress_line_per_table(synced: Synced) -> None:
    done = synced.run
    progress = [
        line
        for line in done.stdout.splitlines()
        if line.startswith("  ") and "/" in line.split()[0]
    ]
    read = len(rows(synced.url, READ_TABLES))
    assert read > 2
    assert [line.split()[0] for line in progress] == [f"{n}/{read}" for n in range(1, read + 1)]
    assert all(": complete, " in line for line in progress)


def test_values_loaded_before_eras_were_recorded_give_way_to_a_new_sync(
    sqlite_url: str, standin: RoneStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 21])
    old = open_store(sqlite_url)
    old.migrate()
    with old.data.transaction() as tx:  # as an older sync stored it: no class, era or table
        tx.execute(
            "INSERT INTO index_observations (natural_key, sigungu_code, sigungu, "
            "property_type, metric_type, period, period_end_date, value_pct, source, "
            "synthetic) VALUES ('rone:11680:office:rent_index:2025-Q1', '11680', '강남구', "
            "'office', 'rent_index', '2025-Q1', '2025-03-31', 1.5, 'rone_official', 0)"
        )
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: every)
    store = open_store(sqlite_url)
    try:
        assert "0021_index_series.sql" in store.migrate()
        (held,) = rows(sqlite_url, "SELECT survey_class, era, source_table FROM index_observations")
        assert held == {"survey_class": "오피스", "era": "", "source_table": ""}
        done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
        assert done.returncode == 0, done.stderr
        api = Api(make_app(store))
        query = {
            "sigungu_code": "11680",
            "property_type": "office",
            "metric_type": "rent_index",
            "period": "2025-Q1",
        }
        (row,) = api.ok("indices", query)["data"]
        linked = "임대동향 지역별 임대가격지수(시계열)_오피스"
        assert (row["era"], row["value_pct"]) == (
            "linked",
            value(linked, GANGNAM, "202501", "지수"),
        )
        every_series = api.ok("indices", {**query, "series": "all"})["data"]
        assert [(r["era"], r["survey_class"]) for r in every_series] == [
            ("linked", "오피스"),
            (None, "오피스"),  # the older value, last
        ]
    finally:
        store.close()


def test_values_read_wrongly_from_floor_tables_are_deleted_by_the_migration(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 25])
    old = open_store(db_url)
    old.migrate()
    columns = (
        "natural_key, sigungu_code, sigungu, property_type, metric_type, period, "
        "period_end_date, value_pct, source, synthetic, survey_class, era, source_table, floor"
    )
    held = [  # as the older reader stored a floor table: the floor as the area, 효용비율 a rent
        ("k1", "A600002", "1층", "T241873134863890", ""),
        ("k2", "A600001", "지하1층", "T9", ""),
        ("k3", "A510004", "서울>강남", "T9", "효용비율"),
        ("k4", "A510004", "서울>강남", "TT249843134237374", ""),  # a regional rent: kept
    ]
    with old.data.transaction() as tx:
        for key, code, name, table, floor in held:
            tx.execute(
                f"INSERT INTO index_observations ({columns}) VALUES "
                "(?, ?, ?, 'retail', 'rent_level', '2025-Q1', '2025-03-31', 1.5, "
                "'rone_official', 0, '중대형 상가', '2024Q3~', ?, ?)",
                (key, code, name, table, floor),
            )
        SyncWrites(old.data).record_table(
            tx, table_id="T241873134863890", era="2024Q3~", table_name=FLOOR_TABLE,
            status="complete", at=0, total_count=1, pages=1, loaded=1,
        )  # fmt: skip
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: every)
    store = open_store(db_url)
    try:
        assert "0025_floor_tables.sql" in store.migrate()
    finally:
        store.close()
    kept = rows(db_url, "SELECT natural_key FROM index_observations")
    assert [r["natural_key"] for r in kept] == ["k4"]
