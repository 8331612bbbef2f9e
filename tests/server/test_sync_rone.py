"""``svc sync rone`` through the real ``svc`` command against the R-ONE stand-in, which
answers as the real service does (tests/server/rone_standin.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc_core.sync import CONNECT_FAILURE_LIMIT
from svc_server.http.deps import new_id
from svc_server.services import consumers
from svc_server.store import migrate, open_store
from tests.conftest import LiveServer
from tests.http.realestate_support import Api, make_app
from tests.server.rone_standin import (
    AREAS,
    BY_NAME,
    CLASSES,
    KEY,
    TABLES,
    RoneStandIn,
    serve,
    value,
)
from tests.server.rtms_standin import closed_port_url
from tests.svc_cli import run_svc

SVC = Path(sys.executable).with_name("svc")
GANGNAM = 510004  # 서울>강남 → 11680 강남구, 11650 서초구


@pytest.fixture
def standin() -> Iterator[RoneStandIn]:
    with serve() as state:
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


def rows(url: str, sql: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            return tx.fetchall(sql)
    finally:
        store.close()


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
    # metric: (table of the 2025 quarter, table of the 2023 quarter, item)
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
        "임대가격지수",
    ),
    "income_yield": (
        "임대동향 수익률(분기)(2024년3분기~)",
        "임대동향 소득수익률(2022년~)",
        "소득수익률",
    ),
    "capital_yield": (
        "임대동향 수익률(분기)(2024년3분기~)",
        "임대동향 자본수익률(2022년~)",
        "자본수익률",
    ),
    "total_return": (
        "임대동향 수익률(분기)(2024년3분기~)",
        "임대동향 투자수익률(2022년~)",
        "투자수익률",
    ),
}


def test_every_metric_loads_for_2025_and_2023_each_from_its_era(
    db_url: str, standin: RoneStandIn
) -> None:
    done = svc(db_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    data_calls = [c for c in standin.calls if c["path"].endswith("SttsApiTblData.do")]
    # every data call names its table and one cycle code, 1,000 rows a page
    assert data_calls and all(c["DTACYCLE_CD"] == "QY" for c in data_calls)
    assert {c["pSize"] for c in standin.calls} == {"1000"}
    read = {c["STATBL_ID"] for c in data_calls}
    names = {t["STATBL_ID"]: t["STATBL_NM"] for t in TABLES}
    # the linked rent index is read (two pages), and so is the era table of that metric:
    # each is a series of its own
    linked = BY_NAME["임대동향 지역별 임대가격지수(시계열)_오피스"]["STATBL_ID"]
    assert [c["pIndex"] for c in data_calls if c["STATBL_ID"] == linked] == ["1", "2"]
    assert BY_NAME["임대동향 지역별 임대가격지수(2024년3분기~)_오피스"]["STATBL_ID"] in read
    # every table of every one of the five classes, and nothing else
    assert read == {t["STATBL_ID"] for t in TABLES if t["STATBL_NM"].endswith(CLASSES)}
    assert "PLACEHOLDER_99" not in read  # another survey's table
    for survey_class in CLASSES:
        for code in ("11680", "11650", f"A{GANGNAM}"):
            held = _values(db_url, code, survey_class)
            for metric, (new, old, item) in EXPECTED.items():
                new_table, old_table = f"{new}_{survey_class}", f"{old}_{survey_class}"
                assert held[(metric, "2025-Q1", era(new))] == value(
                    new_table, GANGNAM, "202501", item
                )
                assert held[(metric, "2023-Q3", era(old))] == value(
                    old_table, GANGNAM, "202303", item
                )
            # the current era's rent index table beside the linked series, in its era only
            current = f"임대동향 지역별 임대가격지수(2024년3분기~)_{survey_class}"
            assert held[("rent_index", "2025-Q1", "2024Q3~")] == value(
                current, GANGNAM, "202501", "임대가격지수"
            )
            assert ("rent_index", "2023-Q3", "2024Q3~") not in held
    classes = rows(db_url, "SELECT DISTINCT survey_class, property_type FROM index_observations")
    assert {(r["survey_class"], r["property_type"]) for r in classes} == {
        (c, PROPERTY.get(c, "retail")) for c in CLASSES
    }
    # each table under its own era; no table supplies a value another one does
    tables = rows(db_url, "SELECT table_id, era, status FROM sync_tables")
    eras = {names[t["table_id"]]: t["era"] for t in tables}
    assert eras["임대동향 지역별 공실률(2024년3분기~)_오피스"] == "2024Q3~"
    assert eras["임대동향 지역별 공실률(2022년~)_오피스"] == "2022~"
    assert eras["임대동향 지역별 공실률(2021년)_오피스"] == "2021"
    assert eras["임대동향 지역별 임대가격지수(시계열)_오피스"] == "linked"
    assert {t["status"] for t in tables} == {"complete"}
    # the areas no district stands for are listed with their full name and CLS_ID
    assert "market areas map to no district" in done.stdout
    assert "서울 (500002)" in done.stdout and "서울>기타 (510006)" not in done.stdout
    # every area R-ONE returned is held under its own code, named by its full name
    places = rows(db_url, "SELECT DISTINCT sigungu_code, sigungu FROM index_observations")
    held_areas = {(r["sigungu_code"], r["sigungu"]) for r in places if r["sigungu_code"][0] == "A"}
    assert held_areas == {(f"A{cls_id}", path) for cls_id, path in AREAS}
    # a second run adds nothing and still succeeds
    again = svc(db_url, standin, "sync", "rone", "--backoff", "0")
    assert again.returncode == 0, again.stderr
    assert "; 0 values loaded" in again.stdout


def test_indices_serve_the_synced_values_and_the_cap_rate_past_2024_q2(
    sqlite_url: str, standin: RoneStandIn
) -> None:
    assert svc(sqlite_url, standin, "sync", "rone", "--backoff", "0").returncode == 0
    store = open_store(sqlite_url)
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
    assert {(r["sigungu"], r["property_type"]) for r in other["data"]} == {
        ("서울>기타", "office"),
        ("서울>기타", "retail"),
        ("서울>기타", "commercial_complex"),
    }
    first = next(r for r in other["data"] if r["property_type"] == "office")
    assert first["period"] == "2023-Q1"
    assert first["value_pct"] == value(
        "임대동향 지역별 공실률(2022년~)_오피스", 510006, "202301", "공실률"
    )
    got = {r["period"]: r["annualized_cap_rate"] for r in body["data"]}
    name = "임대동향 수익률(분기)(2024년3분기~)_오피스"
    assert set(got) == {"2025-Q1", "2025-Q2", "2025-Q3", "2025-Q4"}
    assert got["2025-Q3"] == pytest.approx(4 * value(name, GANGNAM, "202503", "소득수익률"))


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
    standin.tables = [t for t in TABLES if t["STATBL_ID"] == "PLACEHOLDER_99"]
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
    standin.fail.extend(["", "", "", "ERROR-337"])  # list, linked x2, then the next table
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 3, done.stderr
    assert "run again tomorrow" in done.stderr
    assert len(standin.calls) == 4
    assert len(rows(sqlite_url, "SELECT table_id FROM sync_tables")) == 1


def test_server_trouble_is_retried_then_recorded(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.fail.extend(["", "ERROR-500", "ERROR-601", "", "500", "ERROR-600"])
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0", "--retries", "1")
    assert done.returncode == 1, done.stderr
    states = [r["status"] for r in rows(sqlite_url, "SELECT status FROM sync_tables")]
    assert states.count("failed") == 2 and states.count("complete") == len(states) - 2


def test_a_declared_charset_is_honoured(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.charset = "EUC-KR"
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    assert _values(sqlite_url, "11680", "오피스")


def test_garbled_names_are_an_error_not_a_silent_miss(
    sqlite_url: str, standin: RoneStandIn
) -> None:
    standin.garble = True
    done = svc(sqlite_url, standin, "sync", "rone")
    assert done.returncode == 1
    assert "did not decode" in done.stderr


def test_the_standin_refuses_what_the_real_service_refuses() -> None:
    with serve() as state:
        base = state.url
        ok = {"KEY": KEY, "STATBL_ID": "PLACEHOLDER_01", "DTACYCLE_CD": "QY", "Type": "json"}

        def get(path: str, **params: str) -> httpx.Response:
            return httpx.get(f"{base}/{path}", params=params)

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
    listed = json.loads(status.stdout)["rone_tables"]
    assert {t["era"] for t in listed} == {"linked", "2024Q3~", "2022~", "2021"}
    assert all(t["status"] == "complete" and t["loaded"] == 0 for t in listed)


def test_a_real_server_serves_what_the_sync_loaded(
    tmp_path: Path, standin: RoneStandIn, live_server_factory: Callable[..., LiveServer]
) -> None:
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    assert svc(url, standin, "sync", "rone", "--backoff", "0").returncode == 0
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
    # the linked rent index is its own series, preferred; series=all shows the era table too
    linked = "임대동향 지역별 임대가격지수(시계열)_오피스"
    current = "임대동향 지역별 임대가격지수(2024년3분기~)_오피스"
    rent = {"sigungu_code": "11680", "property_type": "office", "metric_type": "rent_index"}
    (preferred,) = indices(**rent, period="2025-Q1")
    assert (preferred["era"], preferred["source_table"], preferred["value_pct"]) == (
        "linked",
        BY_NAME[linked]["STATBL_ID"],
        value(linked, GANGNAM, "202501", "임대가격지수"),
    )
    every = indices(**rent, period="2025-Q1", series="all")
    assert [(r["era"], r["source_table"], r["value_pct"]) for r in every] == [
        ("linked", BY_NAME[linked]["STATBL_ID"], preferred["value_pct"]),
        (
            "2024Q3~",
            BY_NAME[current]["STATBL_ID"],
            value(current, GANGNAM, "202501", "임대가격지수"),
        ),
    ]
    assert [r["era"] for r in indices(**rent, period="2023-Q3", series="all")] == ["linked"]
    # three survey classes give retail: 중대형 상가 by default, each of them with series=all
    vacancy = {"sigungu_code": "11680", "property_type": "retail", "metric_type": "vacancy_rate"}
    (retail,) = indices(**vacancy, period="2025-Q1")
    assert retail["survey_class"] == "중대형 상가"
    stem = "임대동향 지역별 공실률(2024년3분기~)"
    assert [
        (r["survey_class"], r["value_pct"])
        for r in indices(**vacancy, period="2025-Q1", series="all")
    ] == [
        (c, value(f"{stem}_{c}", GANGNAM, "202501", "공실률"))
        for c in ("중대형 상가", "일반 상가", "소규모 상가")
    ]
    # every area R-ONE returned, under its own code and full name, mapped or not
    for cls_id, path in AREAS:
        found = indices(sigungu_code=f"A{cls_id}", metric_type="vacancy_rate", period="2025-Q1")
        assert {(r["sigungu"], r["property_type"]) for r in found} == {
            (path, p) for p in ("office", "retail", "commercial_complex")
        }
        office = next(r for r in found if r["property_type"] == "office")
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
    assert level["floor"] is None
    # the stand-in serves no floor-rent table (the facts name none): no row has a floor
    retail = indices(
        sigungu_code="11680", property_type="retail", metric_type="rent_level", period="2025-Q1"
    )
    assert [(r["floor"], r["survey_class"]) for r in retail] == [(None, "중대형 상가")]
    assert all(r["floor"] is None for r in indices(sigungu_code="11680", period="2025-Q1"))


def test_an_unreachable_r_one_stops_after_a_few_calls_and_writes_nothing(db_url: str) -> None:
    url = closed_port_url("/r-one/openapi")
    env = {**os.environ, "SVC_RONE_BASE_URL": url, "SVC_DATABASE_URL": db_url, "SVC_RONE_KEY": KEY}
    done = subprocess.run(
        [str(SVC), "sync", "rone", "--backoff", "0.2"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert (
        done.stderr == f"svc: error: cannot reach {url}: check the network or SVC_RONE_BASE_URL\n"
    )
    assert f"sync rone: {CONNECT_FAILURE_LIMIT} calls; tables: 0 complete" in done.stdout
    for table in ("sync_tables", "index_observations", "ingest_log"):
        assert rows(db_url, f"SELECT * FROM {table}") == [], table


def test_a_sync_of_r_one_writes_a_progress_line_per_table(
    sqlite_url: str, standin: RoneStandIn
) -> None:
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    progress = [
        line
        for line in done.stdout.splitlines()
        if line.startswith("  ") and "/" in line.split()[0]
    ]
    read = len(rows(sqlite_url, "SELECT table_id FROM sync_tables"))
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
            value(linked, GANGNAM, "202501", "임대가격지수"),
        )
        every_series = api.ok("indices", {**query, "series": "all"})["data"]
        assert [(r["era"], r["survey_class"]) for r in every_series] == [
            ("linked", "오피스"),
            ("2024Q3~", "오피스"),
            (None, "오피스"),  # the older value, last
        ]
    finally:
        store.close()
