"""``svc sync rtms`` and ``svc sync status`` through the real ``svc`` command, against a
local stand-in of the MOLIT RTMS API serving the real samples (``rtms_standin``).

Expected counts come from the sample files (regular expressions in
``tests.http.realestate_support``), not from svc's readers.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc_core.sources.datasets import RtmsDataset
from svc_core.sync.rtms import CONNECT_FAILURE_LIMIT
from svc_server import ingest
from svc_server.commands.sync import EXIT_UNREACHABLE
from svc_server.delivery.rtms import could_not_connect
from svc_server.services import versioned
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    NRG_GANGNAM,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    included,
    make_app,
    xml_items,
)
from tests.server.rtms_standin import (
    ENCODED_KEY,
    KEY,
    SERVICES,
    StandIn,
    closed_port_url,
)
from tests.svc_cli import run_svc

NRG = SERVICES["NRG"]
JUNE = ("--sigungu", "11680", "--from", "2025-06", "--to", "2025-06")
GANGNAM_TOTAL = len(xml_items(NRG_GANGNAM))  # 83 items
GANGNAM_KEPT = len(included(xml_items(NRG_GANGNAM)))  # after cancellations and shares


def svc(url: str, standin: StandIn, *args: str, key: str = KEY) -> subprocess.CompletedProcess[str]:
    """``svc`` pointed at the stand-in and the database (in process)."""
    env = {
        "SVC_RTMS_BASE_URL": standin.url,
        "SVC_DATABASE_URL": url,
        "SVC_DATA_GO_KR_KEY": key,
    }
    return run_svc(*args, env=env)


def sync(
    url: str, standin: StandIn, *args: str, key: str = KEY
) -> subprocess.CompletedProcess[str]:
    """``svc sync rtms`` without waits: no back-off, and ``--rate 1000`` (the most it
    takes) where a test gives no ``--rate`` of its own: at the default 10 a second every
    call would wait 0.1 s. ``test_sync_pace`` is about the pace and gives its own."""
    fast = ("--backoff", "0", "--timeout", "1", "--rate", "1000")
    return svc(url, standin, "sync", "rtms", *fast, *args, key=key)


def rows(url: str, sql: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            return tx.fetchall(sql)
    finally:
        store.close()


def states(url: str) -> dict[tuple[str, str], dict[str, Any]]:
    found = rows(url, "SELECT * FROM sync_months")
    return {(r["kind"], r["month"]): r for r in found}


def pulse(store: Store | Api, **params: str) -> list[dict[str, Any]]:
    """June's pulse in Gangnam; an ``Api`` is reused (an app builds its routes: 0.1 s)."""
    api = store if isinstance(store, Api) else Api(make_app(store))
    data: list[dict[str, Any]] = api.ok(
        "pulse", {"sigungu_code": "11680", "period": "2025-06", **params}
    )["data"]
    return data


def test_a_multi_page_month_arrives_complete_and_serves_what_ingest_serves(
    db_url: str, standin: StandIn, tmp_path: Path
) -> None:
    done = sync(db_url, standin, *JUNE, "--page-size", "10")
    assert done.returncode == 0, done.stderr
    commercial = [c for c in standin.calls if c["path"] == "/" + NRG]
    assert [c["pageNo"] for c in commercial] == [str(p) for p in range(1, 10)]  # 83 by 10
    assert {c["numOfRows"] for c in standin.calls} == {"10"}
    state = states(db_url)[("commercial", "2025-06")]
    assert (state["status"], state["total_count"], state["pages"]) == (
        "complete",
        GANGNAM_TOTAL,
        9,
    )
    assert {s["status"] for s in states(db_url).values()} == {"complete"}
    officetel = len(xml_items(OFFI_TRADE)), len(xml_items(OFFI_RENT))
    assert len(standin.calls) == len(commercial) + sum(-(-n // 10) for n in officetel)
    logged = rows(db_url, "SELECT kind, loaded FROM ingest_log ORDER BY kind")
    assert [r["kind"] for r in logged] == [
        "rtms-commercial",
        "rtms-officetel-rent",
        "rtms-officetel-trade",
    ]
    assert logged[0]["loaded"] == GANGNAM_KEPT
    if db_url.startswith("postgresql"):  # the first month's 73 deals were a big change
        [analyzed] = rows(
            db_url,
            "SELECT last_analyze FROM pg_stat_user_tables WHERE relid = 'transactions'::regclass",
        )
        assert analyzed["last_analyze"] is not None

    other = f"sqlite:///{tmp_path / 'ingested.db'}"
    loaded = svc(other, standin, "ingest", str(NRG_GANGNAM), str(OFFI_TRADE), str(OFFI_RENT))
    assert loaded.returncode == 0, loaded.stderr
    synced, ingested = open_store(db_url), open_store(other)
    try:
        apis = [Api(make_app(s)) for s in (synced, ingested)]
        for params in ({}, {"property_type": "office"}, {"property_type": "officetel"}):
            assert pulse(apis[0], **params) == pulse(apis[1], **params)
        assert sum(r["sample_count"] for r in pulse(apis[0])) > 0
        coverage = [api.ok("coverage", {"sigungu_code": "11680"})["data"] for api in apis]
        assert coverage[0] == coverage[1] and coverage[0]
        # the run rebuilt the precomputed coverage it had left stale month by month
        for s in (synced, ingested):
            with s.data.transaction(write=False) as tx:
                assert s.realestate.stale_coverage_districts(tx) == set()
        everywhere = [api.ok("coverage", {})["data"] for api in apis]
        assert everywhere[0] == everywhere[1] == coverage[0]
    finally:
        synced.close()
        ingested.close()


def test_a_second_sync_in_the_refresh_window_changes_nothing_and_says_so(
    sqlite_url: str, standin: StandIn
) -> None:
    first = sync(sqlite_url, standin, *JUNE, "--kinds", "commercial", "--refresh-months", "240")
    assert first.returncode == 0, first.stderr
    assert f"rows: {GANGNAM_KEPT} added, 0 retracted" in first.stdout
    before = rows(sqlite_url, "SELECT natural_key FROM transactions ORDER BY 1")
    again = sync(sqlite_url, standin, *JUNE, "--kinds", "commercial", "--refresh-months", "240")
    assert again.returncode == 0, again.stderr
    assert "1 complete (1 unchanged)" in again.stdout
    assert "rows: 0 added, 0 retracted (0 changes)" in again.stdout
    assert rows(sqlite_url, "SELECT natural_key FROM transactions ORDER BY 1") == before
    # outside the refresh window a complete month is not read again
    calls = len(standin.calls)
    skipped = sync(sqlite_url, standin, *JUNE, "--kinds", "commercial", "--refresh-months", "1")
    assert skipped.returncode == 0, skipped.stderr
    assert len(standin.calls) == calls and "0 calls" in skipped.stdout


def test_a_re_read_adds_new_deals_and_retracts_cancelled_ones_from_pulse(
    db_url: str, standin: StandIn
) -> None:
    args = (*JUNE, "--kinds", "commercial", "--refresh-months", "240")
    assert sync(db_url, standin, *args).returncode == 0
    store = open_store(db_url)
    try:
        before = pulse(store, property_type="commercial_complex")
    finally:
        store.close()
    count = sum(r["sample_count"] for r in before)
    units = [
        i
        for i, item in enumerate(xml_items(NRG_GANGNAM))
        if included([item])
        and item["buildingType"] == "집합"
        and item["buildingUse"] in ("제1종근린생활", "제2종근린생활")
    ]  # commercial_complex deals
    standin.cancel(NRG, "11680", "202506", units[0])
    standin.add_copy(NRG, "11680", "202506", units[1])
    done = sync(db_url, standin, *args)
    assert done.returncode == 0, done.stderr
    assert "rows: 1 added, 1 retracted" in done.stdout
    store = open_store(db_url)
    try:
        after = pulse(store, property_type="commercial_complex")
    finally:
        store.close()
    assert sum(r["sample_count"] for r in after) == count - 1 + 1
    stored = rows(db_url, "SELECT COUNT(*) AS n FROM transactions")[0]["n"]
    assert stored == GANGNAM_KEPT - 1 + 1
    # the newly cancelled deal is kept apart with its reason, by the sync's load
    raw = xml_items(NRG_GANGNAM)
    cancelled = sum(i["cdealType"].strip() == "O" for i in raw) + 1
    shares = sum(i["cdealType"].strip() != "O" and i["shareDealingType"] == "지분" for i in raw)
    excluded = rows(db_url, "SELECT reason, load_id FROM excluded_transactions")
    reasons: dict[str, int] = {}
    for r in excluded:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    assert reasons == {"cancelled": cancelled, "partial_share": shares}
    logged = {r["id"] for r in rows(db_url, "SELECT id FROM ingest_log")}
    assert {r["load_id"] for r in excluded} <= logged
    # a deal gone from the source is retracted too
    standin.months[(NRG, "11680", "202506")].pop()
    gone = sync(db_url, standin, *args)
    assert "rows: 0 added, 1 retracted" in gone.stdout, gone.stdout + gone.stderr
    assert rows(db_url, "SELECT COUNT(*) AS n FROM transactions")[0]["n"] == GANGNAM_KEPT - 1


def test_the_daily_limit_stops_cleanly_and_the_rest_resumes(
    sqlite_url: str, standin: StandIn
) -> None:
    standin.limit_after = 11  # commercial (9 pages) done, officetel sale stops on page 3
    done = sync(sqlite_url, standin, *JUNE, "--page-size", "10")
    assert done.returncode == 3, done.stderr
    assert "daily call limit" in done.stderr and "after midnight KST" in done.stderr
    found = states(sqlite_url)
    assert found[("commercial", "2025-06")]["status"] == "complete"
    assert found[("officetel-trade", "2025-06")]["status"] == "partial"
    assert ("officetel-rent", "2025-06") not in found
    kept = rows(sqlite_url, "SELECT COUNT(*) AS n FROM transactions")[0]["n"]
    assert kept == GANGNAM_KEPT  # nothing of the partial month was written

    standin.limit_after = None
    standin.calls.clear()
    resumed = sync(sqlite_url, standin, *JUNE, "--page-size", "10")
    assert resumed.returncode == 0, resumed.stderr
    assert all(c["path"] != "/" + NRG for c in standin.calls)  # complete and old: skipped
    assert {s["status"] for s in states(sqlite_url).values()} == {"complete"}


def test_an_unregistered_key_stops_at_once_and_writes_nothing(
    sqlite_url: str, standin: StandIn
) -> None:
    done = sync(sqlite_url, standin, *JUNE, key="not-a-registered-key")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("svc: error: the API refused the service key")
    assert "SERVICE_KEY_IS_NOT_REGISTERED_ERROR" in lines[0]
    assert len(standin.calls) == 1
    assert rows(sqlite_url, "SELECT COUNT(*) AS n FROM transactions")[0]["n"] == 0
    assert states(sqlite_url) == {}


def test_the_encoded_form_of_the_key_is_accepted(sqlite_url: str, standin: StandIn) -> None:
    done = sync(sqlite_url, standin, *JUNE, "--kinds", "officetel-trade", key=ENCODED_KEY)
    assert done.returncode == 0, done.stderr
    assert {c["serviceKey"] for c in standin.calls} == {KEY}


@pytest.mark.parametrize("budget", [1, 5, 12])
def test_the_budget_is_never_exceeded(sqlite_url: str, standin: StandIn, budget: int) -> None:
    done = sync(sqlite_url, standin, *JUNE, "--page-size", "10", "--budget", str(budget))
    assert done.returncode == 4, done.stdout + done.stderr
    assert len(standin.calls) <= budget
    assert f"the budget of {budget} calls" in done.stderr
    assert "run the same command again" in done.stderr
    assert f"sync rtms: {len(standin.calls)} calls" in done.stdout


def test_passing_failures_are_retried_and_a_month_that_keeps_failing_is_recorded(
    sqlite_url: str, standin: StandIn
) -> None:
    standin.fail.extend(["500", "timeout", "truncated"])
    done = sync(sqlite_url, standin, *JUNE, "--kinds", "officetel-trade", "--retries", "3")
    assert done.returncode == 0, done.stderr
    assert len(standin.calls) == 4
    assert states(sqlite_url)[("officetel-trade", "2025-06")]["status"] == "complete"

    standin.calls.clear()
    standin.fail.extend(["500"] * 3)
    failing = sync(
        sqlite_url, standin, *JUNE, "--kinds", "commercial,officetel-rent", "--retries", "2"
    )
    assert failing.returncode == 1, failing.stderr
    assert "failed: commercial 11680 2025-06: HTTP 500" in failing.stderr
    found = states(sqlite_url)
    assert found[("commercial", "2025-06")]["status"] == "failed"
    assert found[("officetel-rent", "2025-06")]["status"] == "complete"  # the sync went on


def test_a_failed_re_read_never_replaces_a_complete_month(
    sqlite_url: str, standin: StandIn
) -> None:
    args = (*JUNE, "--kinds", "commercial", "--refresh-months", "240", "--page-size", "10")
    assert sync(sqlite_url, standin, *args).returncode == 0
    before = rows(sqlite_url, "SELECT natural_key FROM transactions ORDER BY 1")
    standin.fail.extend(["", "", "500", "500"])  # page 3 keeps failing
    done = sync(sqlite_url, standin, *args, "--retries", "1")
    assert done.returncode == 1
    state = states(sqlite_url)[("commercial", "2025-06")]
    assert (state["status"], state["attempt"]) == ("complete", "partial")
    assert rows(sqlite_url, "SELECT natural_key FROM transactions ORDER BY 1") == before


def test_dry_run_prints_the_plan_and_calls_nothing(sqlite_url: str, standin: StandIn) -> None:
    done = sync(
        sqlite_url,
        standin,
        "--sigungu",
        "11680,11110",
        "--from",
        "2025-05",
        "--to",
        "2025-06",
        "--dry-run",
    )
    assert done.returncode == 0, done.stderr
    assert "plan: 12 month reads (2 months x 2 districts x 3 kinds" in done.stdout
    assert "at least 12 calls of a budget of 9000" in done.stdout
    assert "  commercial 11110 2025-05 (new, 1 call)" in done.stdout
    assert standin.calls == []


def test_dry_run_plans_no_call_for_a_month_loaded_whole_from_api_files(
    sqlite_url: str, standin: StandIn
) -> None:
    """A month ``svc ingest`` loaded whole from the API's own files (their paging says
    every item is there) is not read again, and the plan costs nothing for it."""
    loaded = svc(sqlite_url, standin, "ingest", "rtms-commercial", str(NRG_GANGNAM))
    assert loaded.returncode == 0, loaded.stderr
    status = svc(sqlite_url, standin, "sync", "status", "--sigungu", "11680")
    assert "2025-06 from" in status.stdout and ", whole)" in status.stdout, status.stdout
    args = ("--sigungu", "11680", "--kinds", "commercial", "--dry-run")
    done = sync(sqlite_url, standin, *args, "--from", "2025-06", "--to", "2025-07")
    assert done.returncode == 0, done.stderr
    assert "plan: 1 month reads" in done.stdout, done.stdout
    assert "commercial 11680 2025-07 (new, 1 call)" in done.stdout
    assert "2025-06 (" not in done.stdout
    assert standin.calls == []


def test_sync_status_reports_the_months_exactly(sqlite_url: str, standin: StandIn) -> None:
    assert (
        sync(
            sqlite_url,
            standin,
            "--sigungu",
            "11680",
            "--from",
            "2025-04",
            "--to",
            "2025-06",
            "--kinds",
            "commercial",
        ).returncode
        == 0
    )
    standin.fail.extend(["500"] * 2)
    sync(
        sqlite_url,
        standin,
        "--sigungu",
        "11110",
        "--from",
        "2025-05",
        "--to",
        "2025-05",
        "--kinds",
        "commercial",
        "--retries",
        "1",
    )
    done = svc(sqlite_url, standin, "sync", "status", "--json", "--from", "2025-03")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    by_code = {d["sigungu_code"]: d for d in doc["districts"]}
    assert by_code["11680"]["complete"] == ["2025-04", "2025-05", "2025-06"]
    assert by_code["11680"]["missing"] == ["2025-03"]
    assert by_code["11110"]["failed"] == ["2025-05"]
    assert by_code["11110"]["missing"] == ["2025-03", "2025-04"]
    assert by_code["11110"]["complete"] == [] and by_code["11110"]["partial"] == []
    assert by_code["11680"]["sigungu"] == "강남구"
    assert by_code["11680"]["last_synced_at"].endswith("Z")
    text = svc(sqlite_url, standin, "sync", "status")
    assert "commercial 11110 종로구: complete 0, partial 0, failed 1 (2025-05)" in text.stdout


def test_a_sync_writes_a_progress_line_per_month_when_stdout_is_not_a_terminal(
    sqlite_url: str, standin: StandIn
) -> None:
    done = sync(
        sqlite_url, standin, "--sigungu", "11680", "--from", "2025-05", "--to", "2025-07",
        "--kinds", "commercial",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "  1/3 commercial 11680 2025-05: complete, 0 added, 0 retracted",
        f"  2/3 commercial 11680 2025-06: complete, {GANGNAM_KEPT} added, 0 retracted",
        "  3/3 commercial 11680 2025-07: complete, 0 added, 0 retracted",
    ]
    assert lines[3].startswith("sync rtms: 3 calls") and len(lines) == 4
    assert "\r" not in done.stdout + done.stderr  # no bar drawn into a pipe


def test_an_unreachable_api_stops_the_run_after_a_few_calls_and_writes_nothing(
    db_url: str,
) -> None:
    url = closed_port_url()
    env = {"SVC_RTMS_BASE_URL": url, "SVC_DATABASE_URL": db_url}
    started = time.monotonic()
    done = run_svc(
        "sync", "rtms", "--sigungu", "11680", "--from", "2025-01", "--to", "2025-12",
        "--service-key", KEY, "--backoff", "0.1", env=env,
    )  # fmt: skip
    took = time.monotonic() - started
    # the default retries and a back-off of 0.1 s (0.1 s, 0.2 s): three refused calls,
    # about 0.3 s, where every one of the 36 months used to spend its four tries and
    # 0.7 s of back-off (25 s; 14 s a month, 8 minutes, at the default back-off of 2 s)
    assert done.returncode == EXIT_UNREACHABLE == 5, done.stderr
    assert took < 10
    assert (
        done.stderr == f"svc: error: cannot reach {url}: check the network or SVC_RTMS_BASE_URL\n"
    )
    assert f"sync rtms: {CONNECT_FAILURE_LIMIT} calls, 0 pages" in done.stdout
    assert "36 not reached" in done.stdout
    for table in ("sync_months", "source_months", "transactions", "ingest_log"):
        assert rows(db_url, f"SELECT * FROM {table}") == [], table
    listed = run_svc(
        "sync", "status", "--json", "--sigungu", "11680", "--kinds", "commercial",
        "--from", "2025-01", "--to", "2025-12", env=env,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    [district] = json.loads(listed.stdout)["districts"]
    assert len(district["missing"]) == 12 and district["failed"] == []


@pytest.mark.parametrize(
    ("error", "unreachable"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), True),
        (httpx.ConnectError("[Errno -2] Name or service not known"), True),  # DNS
        (httpx.ConnectTimeout("timed out"), True),
        (httpx.UnsupportedProtocol("Request URL is missing an 'http://' protocol"), True),
        (httpx.ReadTimeout("timed out"), False),  # connected: the API is slow, not gone
        (httpx.RemoteProtocolError("peer closed connection"), False),
        (httpx.WriteError("broken pipe"), False),
    ],
)
def test_only_failures_to_connect_count_towards_unreachable(
    error: httpx.TransportError, unreachable: bool
) -> None:
    assert could_not_connect(error) is unreachable


def test_http_errors_are_answers_and_never_stop_the_run_as_unreachable(
    sqlite_url: str, standin: StandIn
) -> None:
    # every call answers 500: six months fail one by one (exit 1), none is skipped
    standin.fail.extend(["500"] * 6)
    done = sync(
        sqlite_url, standin, "--sigungu", "11680", "--from", "2025-01", "--to", "2025-06",
        "--kinds", "commercial", "--retries", "0",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert len(standin.calls) == 6
    assert "cannot reach" not in done.stderr
    assert (
        sorted(r["status"] for r in rows(sqlite_url, "SELECT status FROM sync_months"))
        == ["failed"] * 6
    )


OFFICE_CSV = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\r\n"
    "public_assessment,11680,역삼동,office,sale,2025-06-03,3000000000,,100\r\n"
    "public_assessment,11680,역삼동,office,sale,2025-06-04,3100000000,,100\r\n"
).encode()


def served_office(url: str) -> tuple[list[bool], list[str]]:
    """``complete`` of the office rows and ``_meta.incomplete_periods``, read by a fresh
    store (the sync ran in another process)."""
    store = open_store(url)
    try:
        body = Api(make_app(store)).ok(
            "pulse", {"sigungu_code": "11680", "period": "2025-06", "property_type": "office"}
        )
    finally:
        store.close()
    return [r["complete"] for r in body["data"]], body["_meta"]["incomplete_periods"]


def test_a_partial_sync_marks_the_month_incomplete_until_a_complete_one(
    db_url: str, standin: StandIn
) -> None:
    store = open_store(db_url)
    store.migrate()
    ingest.ingest(store, "samples", OFFICE_CSV, path="office.csv", now=RE_NOW)
    store.close()
    # the samples CSV loads June whole (it states no paging: nothing says otherwise)
    assert served_office(db_url) == ([True], [])
    args = (*JUNE, "--kinds", "commercial", "--page-size", "10")
    standin.fail.extend(["", "", "500", "500"])  # page 3 keeps failing
    assert sync(db_url, standin, *args, "--retries", "1").returncode == 1
    assert states(db_url)[("commercial", "2025-06")]["status"] == "partial"
    assert served_office(db_url) == ([False], ["2025-06"])
    assert sync(db_url, standin, *args).returncode == 0
    assert states(db_url)[("commercial", "2025-06")]["status"] == "complete"
    assert served_office(db_url) == ([True], [])


def test_a_month_the_api_says_is_empty_is_loaded(
    db_url: str, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in answers totalCount 0 for April and May: read whole, they are loaded
    months without deals, so Q2 is whole and May is too few deals, not nothing loaded."""
    store = open_store(db_url)
    store.migrate()
    try:
        api = Api(make_app(store))
        before = api.get("pulse", {"sigungu_code": "11680", "period": "2025-Q2"})
        assert before.status_code == 404 and before.get_json()["error"]["reason"] == "not_loaded"
        done = sync(db_url, standin, "--sigungu", "11680", "--from", "2025-04", "--to", "2025-06")
        assert done.returncode == 0, done.stderr
        found = states(db_url)
        kinds = [d.sync_name for d in RtmsDataset if d.synced_by_default]
        empty = {kind: found[(kind, "2025-05")]["total_count"] for kind in kinds}
        assert empty == dict.fromkeys(kinds, 0)
        # the sync committed in another process: seen once VERSION_TTL has passed
        monkeypatch.setattr(versioned, "VERSION_TTL", 0.0)
        rows = api.ok("pulse", {"sigungu_code": "11680", "period": "2025-Q2"})["data"]
        loaded = {(r["complete"], r["months_loaded"], r["months_expected"]) for r in rows}
        assert rows and loaded == {(True, 3, 3)}
        may = api.get("pulse", {"sigungu_code": "11680", "period": "2025-05"})
        assert may.status_code == 404
        assert may.get_json()["error"]["reason"] == "too_few_transactions"
    finally:
        store.close()
