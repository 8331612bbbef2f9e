"""``svc sync rtms`` against data.go.kr's per-second limit and a temporarily disabled key
(official-apis.md §2.3, §2.4), through the real command and the stand-in: a per-second
refusal in any of its three forms pauses and asks again (never the daily limit's stop),
calls are paced, and code 21 stops the run after a bounded number of calls.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import httpx
import pytest

from svc_core.errors import GatewayError
from svc_core.sources.rtms import read_page
from svc_core.sync.rtms import classify_gateway
from tests.server.rtms_standin import (
    CODES,
    KEY,
    PER_SECOND,
    PER_SECOND_FORMS,
    SERVICES,
    StandIn,
)
from tests.server.test_sync import GANGNAM_KEPT, JUNE, rows, states, sync

OFFI = SERVICES["OFFICETEL"]


def test_per_second_refusals_in_every_form_pause_and_every_month_completes(
    sqlite_url: str, standin: StandIn
) -> None:
    standin.fail.extend(f"persecond:{form}" for form in PER_SECOND_FORMS)
    args = ("--page-size", "1000", "--retries", "0", "--pause", "0.2")
    done = sync(sqlite_url, standin, *JUNE, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    # each refusal paused the run --pause seconds (default 1) before it asked again; the
    # halved pace alone would have waited 0.05 s, then 0.1 s
    gaps = [later - earlier for earlier, later in itertools.pairwise(standin.times)]
    assert min(gaps[:3]) >= 0.2, gaps
    assert "daily" not in done.stdout + done.stderr
    # three refused calls asked again, then one call a kind; no retry was spent on them
    assert len(standin.calls) == 3 + 3
    assert {s["status"] for s in states(sqlite_url).values()} == {"complete"}
    assert len(states(sqlite_url)) == 3
    kept = rows(
        sqlite_url, "SELECT COUNT(*) AS n FROM transactions WHERE property_type <> 'officetel'"
    )
    assert int(kept[0]["n"]) == GANGNAM_KEPT


@pytest.mark.parametrize("pause", ["-1", "61", "nan", "inf"])
def test_a_pause_that_is_not_0_to_60_seconds_is_refused(
    sqlite_url: str, standin: StandIn, pause: str
) -> None:
    done = sync(sqlite_url, standin, *JUNE, "--pause", pause)
    assert (done.returncode, done.stderr) == (
        2,
        "svc: error: --pause must be a number of seconds, from 0 to 60\n",
    )
    assert standin.calls == []


def test_calls_are_paced_below_a_per_second_limit(sqlite_url: str, standin: StandIn) -> None:
    standin.per_second_limit = 5
    args = ("--sigungu", "11680", "--from", "2025-04", "--to", "2025-06", "--rate", "4")
    done = sync(sqlite_url, standin, *args, "--refresh-months", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(standin.calls) == 9 and standin.crowded == 0


def test_a_run_faster_than_the_limit_slows_down_and_completes(
    sqlite_url: str, standin: StandIn
) -> None:
    standin.per_second_limit = 3
    args = ("--sigungu", "11680", "--from", "2025-04", "--to", "2025-06", "--rate", "1000")
    done = sync(sqlite_url, standin, *args, "--refresh-months", "0", "--retries", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert standin.crowded >= 1  # it met the limit
    assert len(states(sqlite_url)) == 9
    assert {s["status"] for s in states(sqlite_url).values()} == {"complete"}


def test_a_disabled_key_stops_the_run_after_a_bounded_number_of_calls(
    sqlite_url: str, standin: StandIn
) -> None:
    standin.key_disabled = True
    args = ("--sigungu", "11680", "--from", "2025-01", "--to", "2025-06", "--retries", "2")
    done = sync(sqlite_url, standin, *args)
    assert done.returncode == 6, done.stdout + done.stderr
    assert len(standin.calls) == 3  # the first month's call and its 2 retries, no other month
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("svc: stopped: the API has temporarily disabled the service key")
    assert "21 TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR" in line and "again later" in line
    assert "17 not reached" in done.stdout
    [state] = states(sqlite_url).values()
    assert state["status"] == "failed"


# The stand-in answers as the gateway does ----------------------------------------------


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """One client for the module's calls to the stand-ins (``httpx.get`` makes a client,
    and loads the CA certificates, per call)."""
    with httpx.Client(timeout=5) as client:
        yield client


def fetch(http: httpx.Client, standin: StandIn, **params: str) -> httpx.Response:
    query = {"serviceKey": KEY, "LAWD_CD": "11680", "DEAL_YMD": "202506", **params}
    return http.get(f"{standin.url}/{OFFI}", params=query)


def test_the_stand_in_serves_code_23_as_gateway_xml(http: httpx.Client, standin: StandIn) -> None:
    standin.fail.append("persecond:23")
    answer = fetch(http, standin)
    assert answer.status_code == 200
    assert answer.content.startswith(b"<OpenAPI_ServiceResponse><cmmMsgHeader>")
    with pytest.raises(GatewayError) as info:
        read_page(answer.content)
    assert (info.value.reason_code, info.value.auth_message) == ("23", PER_SECOND)


def test_the_stand_in_serves_code_22_per_second_as_json_with_http_429(
    http: httpx.Client, standin: StandIn
) -> None:
    standin.fail.append("persecond:22")
    answer = fetch(http, standin)
    assert answer.status_code == 429
    header = json.loads(answer.content)["OpenAPI_ServiceResponse"]["cmmMsgHeader"]
    assert header == {
        "errMsg": "SERVICE ERROR",
        "returnAuthMsg": PER_SECOND,
        "returnReasonCode": "22",
    }
    # the daily limit's code: only the message tells them apart
    assert classify_gateway("22", CODES["22"]) == "limit"
    assert classify_gateway("22", PER_SECOND, "SERVICE ERROR") == "pace"


@pytest.mark.parametrize("as_json", [False, True])
def test_the_stand_in_serves_code_99_with_the_marker_in_err_msg(
    http: httpx.Client, standin: StandIn, as_json: bool
) -> None:
    standin.fail.append("persecond:99")
    answer = fetch(http, standin, **({"_type": "json"} if as_json else {}))
    assert answer.status_code == 200
    assert answer.content.lstrip()[:1] == (b"{" if as_json else b"<")
    with pytest.raises(GatewayError) as info:
        read_page(answer.content)
    err = info.value
    assert (err.reason_code, err.error_message) == ("99", PER_SECOND)
    assert err.auth_message == "초당 서비스 요청제한 횟수 초과"
    assert classify_gateway(err.reason_code, err.auth_message, err.error_message) == "pace"
    assert classify_gateway("99", err.auth_message) == "pace"  # the Korean word alone too


def test_the_stand_in_serves_a_disabled_key_as_code_21(
    http: httpx.Client, standin: StandIn
) -> None:
    standin.key_disabled = True
    with pytest.raises(GatewayError) as info:
        read_page(fetch(http, standin).content)
    assert (info.value.reason_code, info.value.auth_message) == ("21", CODES["21"])
