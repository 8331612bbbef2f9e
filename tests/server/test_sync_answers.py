"""What ``svc sync rtms`` does with each answer the MOLIT RTMS API really gives, against
the stand-in (``rtms_standin``): error codes in a normal ``response/header`` as well as in
the gateway's form, pages without ``pageNo``, and refusals of calls that lack a required
parameter. The stand-in itself is checked against the real samples and the JSON shape.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from svc_core.errors import GatewayError, SourceError, UpstreamKeyRefused
from svc_core.periods import Month
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.rtms import parse_pages, read_page
from svc_server.delivery.rtms import RtmsClient
from svc_server.services import sync as sync_service
from svc_server.store import Store
from tests.http.realestate_support import NRG_GANGNAM
from tests.server.rtms_standin import (
    CODES,
    HEADER_CODES,
    KEY,
    REQUIRED,
    SERVICES,
    StandIn,
)
from tests.server.test_sync import GANGNAM_KEPT, JUNE, NRG, rows, states, sync

OFFI = SERVICES["OFFICETEL"]


def count(url: str) -> int:
    return int(rows(url, "SELECT COUNT(*) AS n FROM transactions")[0]["n"])


# Key and limit errors: one call, no retry --------------------------------------------


@pytest.mark.parametrize("form", ["header", "gateway"])
@pytest.mark.parametrize("code", ["20", "30", "31", "32"])
def test_a_refused_key_stops_after_one_call_with_the_key_message(
    sqlite_url: str, standin: StandIn, form: str, code: str
) -> None:
    standin.fail.append(f"{form}:{code}")
    done = sync(sqlite_url, standin, *JUNE, "--retries", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("svc: error: the API refused the service key")
    assert f"({code} {CODES[code]})" in lines[0] and "SVC_DATA_GO_KR_KEY" in lines[0]
    assert len(standin.calls) == 1  # not retried, no other month or kind tried
    assert count(sqlite_url) == 0
    assert states(sqlite_url) == {}


def test_each_key_code_says_what_to_do(sqlite_url: str, standin: StandIn) -> None:
    advice = {
        "20": "request access (활용신청)",
        "30": "not registered",
        "31": "expired",
        "32": "IP address",
    }
    for code, words in advice.items():
        standin.fail.append(f"header:{code}")
        done = sync(sqlite_url, standin, *JUNE)
        assert words in done.stderr, (code, done.stderr)


@pytest.mark.parametrize("form", ["header", "gateway"])
def test_the_daily_limit_stops_resumably_after_one_call(
    sqlite_url: str, standin: StandIn, form: str
) -> None:
    standin.fail.append(f"{form}:22")
    done = sync(sqlite_url, standin, *JUNE, "--page-size", "10", "--retries", "3")
    assert done.returncode == 3, done.stdout + done.stderr
    assert len(standin.calls) == 1
    assert "daily call limit" in done.stderr and "after midnight KST" in done.stderr
    assert "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR" in done.stderr
    assert "months: 0 complete (0 unchanged), 0 partial, 1 failed, 2 not reached" in done.stdout
    # the month being read is recorded (no page read: failed), nothing is written
    [(key, state)] = states(sqlite_url).items()
    assert key == ("commercial", "2025-06")
    assert (state["status"], state["pages"]) == ("failed", 0)
    assert "daily call limit" in state["detail"]
    assert count(sqlite_url) == 0

    standin.calls.clear()
    resumed = sync(sqlite_url, standin, *JUNE, "--page-size", "10")
    assert resumed.returncode == 0, resumed.stderr
    assert (standin.calls[0]["path"], standin.calls[0]["pageNo"]) == ("/" + NRG, "1")
    assert {s["status"] for s in states(sqlite_url).values()} == {"complete"}
    assert len(states(sqlite_url)) == 3


def test_the_daily_limit_in_the_header_mid_month_keeps_what_was_finished(
    sqlite_url: str, standin: StandIn
) -> None:
    standin.limit_form = "header"
    standin.limit_after = 11  # commercial (9 pages) done, officetel sale stops on page 3
    done = sync(sqlite_url, standin, *JUNE, "--page-size", "10")
    assert done.returncode == 3, done.stderr
    assert len(standin.calls) == 12
    found = states(sqlite_url)
    assert found[("commercial", "2025-06")]["status"] == "complete"
    assert found[("officetel-trade", "2025-06")]["status"] == "partial"
    assert count(sqlite_url) == GANGNAM_KEPT


# Other codes -------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["header", "gateway"])
@pytest.mark.parametrize("code", ["99", "03"])
def test_an_unknown_code_fails_the_month_without_a_retry_and_the_run_goes_on(
    sqlite_url: str, standin: StandIn, form: str, code: str
) -> None:
    standin.fail.append(f"{form}:{code}")
    done = sync(sqlite_url, standin, *JUNE, "--kinds", "commercial,officetel-trade")
    assert done.returncode == 1, done.stdout + done.stderr
    assert [c["path"] for c in standin.calls] == ["/" + NRG, "/" + OFFI]  # one call each
    assert "failed: commercial 11680 2025-06:" in done.stderr
    assert f"error {code}: " in done.stderr and CODES[code] in done.stderr
    assert "not retried" in done.stderr
    found = states(sqlite_url)
    assert found[("commercial", "2025-06")]["status"] == "failed"
    assert found[("officetel-trade", "2025-06")]["status"] == "complete"
    # the next run reads the failed month again
    standin.calls.clear()
    again = sync(sqlite_url, standin, *JUNE, "--kinds", "commercial", "--refresh-months", "0")
    assert again.returncode == 0, again.stderr
    assert states(sqlite_url)[("commercial", "2025-06")]["status"] == "complete"


@pytest.mark.parametrize("spec", ["gateway:05", "header:01"])
def test_server_trouble_codes_are_retried(sqlite_url: str, standin: StandIn, spec: str) -> None:
    standin.fail.append(spec)
    done = sync(sqlite_url, standin, *JUNE, "--kinds", "officetel-trade", "--retries", "2")
    assert done.returncode == 0, done.stderr
    assert len(standin.calls) == 2
    assert states(sqlite_url)[("officetel-trade", "2025-06")]["status"] == "complete"


@pytest.mark.parametrize("code", ["10", "11"])
def test_a_request_the_api_calls_malformed_stops_the_run_at_once(
    sqlite_url: str, standin: StandIn, code: str
) -> None:
    standin.fail.append(f"gateway:{code}")
    done = sync(sqlite_url, standin, *JUNE, "--retries", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "refused the request as malformed" in line and CODES[code] in line
    assert "commercial 11680 2025-06 page 1" in line
    assert len(standin.calls) == 1
    assert count(sqlite_url) == 0


# Required parameters -----------------------------------------------------------------


def test_every_call_carries_the_required_parameters(sqlite_url: str, standin: StandIn) -> None:
    done = sync(sqlite_url, standin, *JUNE, "--page-size", "10")
    assert done.returncode == 0, done.stderr
    assert standin.refused == []
    for call in standin.calls:
        assert call["serviceKey"] == KEY
        assert (call["LAWD_CD"], call["DEAL_YMD"]) == ("11680", "202506")
        assert call["numOfRows"] == "10" and call["pageNo"].isdigit()


class _Dropping:
    """An httpx client that leaves one query parameter out (a svc that forgot it)."""

    def __init__(self, http: httpx.Client, omit: str) -> None:
        self.http, self.omit = http, omit

    def get(self, url: str, params: dict[str, str]) -> httpx.Response:
        return self.http.get(url, params={k: v for k, v in params.items() if k != self.omit})

    def close(self) -> None:
        self.http.close()


@pytest.mark.parametrize("omit", REQUIRED)
def test_a_call_without_a_required_parameter_is_refused_and_stops_the_run(
    store: Store, standin: StandIn, omit: str
) -> None:
    june = Month(year=2025, month=6)
    options = sync_service.SyncOptions(
        kinds=(RtmsDataset.COMMERCIAL,),
        districts=("11680",),
        first=june,
        last=june,
        current=june,
        refresh_months=3,
        budget=100,
        page_rows=10,
        backoff=0.0,
    )
    client = RtmsClient(KEY, base_url=standin.url, timeout=5)
    client._http = _Dropping(client._http, omit)  # type: ignore[assignment]
    expected = UpstreamKeyRefused if omit == "serviceKey" else SourceError
    try:
        with pytest.raises(expected) as info:
            sync_service.sync_rtms(
                store,
                client,
                sync_service.plan_sync(store, options),
                options,
                clock=time.time,
                sleep=lambda _: None,
            )
    finally:
        client.close()
    assert standin.refused == [f"{'30' if omit == 'serviceKey' else '11'}: {omit}"]
    assert len(standin.calls) == 1
    if omit != "serviceKey":
        assert "NO_MANDATORY_REQUEST_PARAMETERS_ERROR" in info.value.message
    with store.data.transaction(write=False) as tx:
        assert tx.fetchall("SELECT natural_key FROM transactions") == []
        assert tx.fetchall("SELECT kind FROM sync_months") == []


# Paging ------------------------------------------------------------------------------


@pytest.mark.parametrize("omit", [True, {2, 5}], ids=["never", "sometimes"])
def test_pages_without_page_no_still_arrive_complete(
    sqlite_url: str, standin: StandIn, omit: bool | set[int]
) -> None:
    standin.omit_page_no = omit
    done = sync(sqlite_url, standin, *JUNE, "--kinds", "commercial", "--page-size", "10")
    assert done.returncode == 0, done.stderr
    assert len(standin.calls) == 9
    state = states(sqlite_url)[("commercial", "2025-06")]
    assert (state["status"], state["pages"]) == ("complete", 9)
    assert count(sqlite_url) == GANGNAM_KEPT


# The stand-in answers as the service does --------------------------------------------


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """One client for the module's calls to the stand-ins (``httpx.get`` makes a client,
    and loads the CA certificates, per call)."""
    with httpx.Client(timeout=5) as client:
        yield client


def fetch(http: httpx.Client, standin: StandIn, operation: str, **params: str) -> bytes:
    query = {"serviceKey": KEY, "LAWD_CD": "11680", "DEAL_YMD": "202506", **params}
    return http.get(f"{standin.url}/{operation}", params=query).content


def test_the_stand_in_serves_live_envelopes_around_the_unmodified_sample_items(
    http: httpx.Client, standin: StandIn
) -> None:
    raw = NRG_GANGNAM.read_bytes()
    pages = [fetch(http, standin, NRG, numOfRows="30", pageNo=str(p)) for p in (1, 2, 3)]
    first = pages[0]
    assert first.startswith(b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>')
    assert b"<header><resultCode>000</resultCode><resultMsg>OK</resultMsg></header>" in first
    assert first.endswith(
        b"</items><numOfRows>30</numOfRows><pageNo>1</pageNo><totalCount>83</totalCount>"
        b"</body></response>"
    )
    assert b"NORMAL SERVICE" not in b"".join(pages)
    served = b"".join(p.split(b"<items>")[1].split(b"</items>")[0] for p in pages)
    assert served == raw.split(b"<items>")[1].split(b"</items>")[0]
    # the defaults of the optional paging parameters: page 1 of 10 rows
    plain = fetch(http, standin, NRG)
    assert plain.count(b"<item>") == 10 and b"<pageNo>1</pageNo>" in plain
    empty = fetch(http, standin, NRG, DEAL_YMD="202001")
    assert b"<items></items>" in empty and b"<totalCount>0</totalCount>" in empty


def test_the_stand_in_answers_json_in_the_json_shape(http: httpx.Client, standin: StandIn) -> None:
    xml_pages = [
        read_page(fetch(http, standin, NRG, numOfRows="40", pageNo=str(p))) for p in (1, 2, 3)
    ]
    json_pages = [
        read_page(fetch(http, standin, NRG, numOfRows="40", pageNo=str(p), _type="json"))
        for p in (1, 2, 3)
    ]
    as_xml = parse_pages(xml_pages, RtmsDataset.COMMERCIAL)
    as_json = parse_pages(json_pages, RtmsDataset.COMMERCIAL)
    assert as_json.transactions == as_xml.transactions and len(as_json.transactions) > 0
    assert as_json.retracted_keys == as_xml.retracted_keys

    doc: dict[str, Any] = json.loads(fetch(http, standin, NRG, numOfRows="40", _type="json"))
    body = doc["response"]["body"]
    assert doc["response"]["header"] == {"resultCode": "000", "resultMsg": "OK"}
    assert (body["numOfRows"], body["pageNo"], body["totalCount"]) == (40, 1, 83)
    item = body["items"]["item"][0]
    assert isinstance(item["dealYear"], int) and isinstance(item["dealAmount"], str)
    one = json.loads(fetch(http, standin, NRG, numOfRows="1", pageNo="83", _type="json"))
    assert isinstance(one["response"]["body"]["items"]["item"], dict)
    none = json.loads(fetch(http, standin, NRG, DEAL_YMD="202001", _type="json"))
    assert none["response"]["body"]["items"] == ""
    assert none["response"]["body"]["totalCount"] == 0


@pytest.mark.parametrize("code", HEADER_CODES)
def test_the_stand_in_serves_each_header_code_in_xml_and_json(
    http: httpx.Client, standin: StandIn, code: str
) -> None:
    for params in ({}, {"_type": "json"}):
        standin.fail.append(f"header:{code}")
        with pytest.raises(GatewayError) as info:
            read_page(fetch(http, standin, OFFI, **params))
        assert (info.value.reason_code, info.value.auth_message) == (code, CODES[code])
    standin.fail.append(f"gateway:{code}")
    answer = fetch(http, standin, OFFI, _type="json")
    assert answer.startswith(b"<OpenAPI_ServiceResponse><cmmMsgHeader>")  # always XML
    with pytest.raises(GatewayError) as gateway:
        read_page(answer)
    assert gateway.value.reason_code == code


@pytest.mark.parametrize(
    ("drop", "code"), [("serviceKey", "30"), ("LAWD_CD", "11"), ("DEAL_YMD", "11")]
)
def test_the_stand_in_refuses_a_call_without_a_required_parameter(
    http: httpx.Client, standin: StandIn, drop: str, code: str
) -> None:
    query = {"serviceKey": KEY, "LAWD_CD": "11680", "DEAL_YMD": "202506"}
    query.pop(drop)
    answer = http.get(f"{standin.url}/{NRG}", params=query).content
    with pytest.raises(GatewayError) as info:
        read_page(answer)
    assert (info.value.reason_code, info.value.auth_message) == (code, CODES[code])
    assert standin.refused == [f"{code}: {drop}"]
