"""``data.updated`` end to end (issue 31, acceptance): the real ``svc sync rtms`` (against
the RTMS stand-in) and ``svc ingest`` commands write change records, and a real ``svc
serve`` with its inline worker delivers one signed event per change to each subscribed
endpoint whose filters keep it, none to the others; loading the same again writes and
sends nothing; a re-read that retracts a cancelled deal sends ``retracted: 1``. The
loading commands run without ``SVC_PUBLIC_URL`` and the events still carry the links
``/changes`` serves (the address the server recorded). SQLite and PostgreSQL: one
``svc serve`` per backend, shared by the tests, which keep apart by owner and district.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_core.envelope import DEMO_LIMITATION as SYNTHETIC_LIMITATION
from svc_core.webhooks import signing
from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.ingest import demo
from svc_server.runtime.deps import new_id
from svc_server.services import sessions
from svc_server.store import open_store
from tests.conftest import (
    RE_NOW,
    TEST_SECRET,
    LiveServer,
    Receiver,
    copy_sqlite_store,
)
from tests.http.realestate_support import (
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    Api,
    included,
    make_app,
    xml_items,
)
from tests.http.test_realestate_land import INDU, LAND
from tests.server.rtms_standin import KEY, SERVICES, StandIn
from tests.server.test_demo_load import use_small_demo
from tests.svc_cli import run_svc

ORIGIN = "https://app.example.com"
PUBLIC = "https://api.example.com"
HOOKS = "/api/auth/me/webhooks"
JUNE = ("--sigungu", "11680", "--from", "2025-06", "--to", "2025-06")
RE_READ = (*JUNE, "--kinds", "commercial", "--refresh-months", "240")
NRG = SERVICES["NRG"]


@pytest.fixture
def receivers() -> Iterator[dict[str, Receiver]]:
    made = {name: Receiver() for name in ("gangnam", "jongno", "offices", "everything")}
    yield made
    for receiver in made.values():
        receiver.stop()


class Owner:
    """A signed-in owner talking to the live server over HTTP."""

    def __init__(self, db_url: str, server: LiveServer, email: str) -> None:
        store = open_store(db_url)
        try:
            signed = sessions.sign_in(
                store,
                Config(secret_key=TEST_SECRET),
                Identity(sub=f"sub-{email}", email=email),
                time.time(),
                os.urandom(16),
                ids=new_id,
            )
        finally:
            store.close()
        self.url = server.url
        self.api_key = str(signed["api_key"])
        self.headers = {
            "Cookie": f"svc_session={signed['_cookie']}",
            "Origin": ORIGIN,
            "Content-Type": "application/json",
        }

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data, self.headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def changes(self, **params: str) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode({**params, "limit": "1000"})
        request = urllib.request.Request(
            f"{self.url}/api/v1/real-estate/changes?{query}", headers={"X-API-Key": self.api_key}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return list(json.loads(response.read())["data"])

    def endpoint(self, receiver: Receiver, events: list[str], filters: Any = None) -> str:
        body: dict[str, Any] = {"url": receiver.url, "events": events}
        if filters is not None:
            body["filters"] = filters
        status, made = self.call("POST", HOOKS, body)
        assert status == 200, made
        return str(made["data"]["secret_plaintext"])


def svc(db_url: str, standin: StandIn, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SVC_RTMS_BASE_URL": standin.url,
        "SVC_DATABASE_URL": db_url,
        "SVC_DATA_GO_KR_KEY": KEY,
    }
    # as a cron line runs them: no SVC_PUBLIC_URL, yet the events link where the server
    # serves /changes (the address svc serve recorded in the store)
    env.pop("SVC_PUBLIC_URL", None)
    done = run_svc(*args, env=env)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr, done.stderr
    return done


def sync(db_url: str, standin: StandIn) -> None:
    svc(db_url, standin, "sync", "rtms", "--backoff", "0", "--timeout", "2", *RE_READ)


def data_events(receiver: Receiver) -> list[dict[str, Any]]:
    return [e for e in receiver.events() if e["type"] == "data.updated"]


def settled(db_url: str) -> bool:
    """Whether every change record is published as events and no delivery is queued or
    in flight: then every request the loads caused has reached its receiver (a receiver
    records a request before it answers, and a delivery is settled after the answer)."""
    store = open_store(db_url, pool_size=1)
    try:
        with store.db.transaction(write=False) as tx:
            published = store.webhooks.published_change(tx, "data.updated")
            busy = tx.fetchone(
                "SELECT id FROM deliveries WHERE status IN ('pending', 'claimed', 'sending') "
                "LIMIT 1"
            )
        return busy is None and not store.realestate.records_after(published, 1)
    finally:
        store.close()


def wait_for(db_url: str, receiver: Receiver, count: int) -> list[dict[str, Any]]:
    """The data events ``receiver`` holds once it holds ``count`` and the server's
    inline worker (which polls every second) has sent everything the loads queued, so
    an extra event would be among them; within 20 seconds."""
    deadline = time.monotonic() + 20
    while not (len(data_events(receiver)) >= count and settled(db_url)):
        assert time.monotonic() < deadline, (count, data_events(receiver))
        time.sleep(0.05)
    return data_events(receiver)


@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[LiveServer]:
    """``svc serve`` with its inline worker on the module's database, delivering
    webhooks to loopback receivers; shared by the tests of a backend, which keep apart
    by owner and district."""
    env = {
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        "SVC_SITE_ORIGINS": ORIGIN,
        "SVC_INLINE_WORKER": "true",
        "SVC_PUBLIC_URL": PUBLIC,
    }
    started = LiveServer(module_db_url, env=env)
    try:
        yield started
    finally:
        started.stop()


def office_sales(path: Path, code: str, name: str, dong: str) -> Path:
    """An RTMS JSON answer in ``path``: three office sales of June 2025 in ``code``."""
    items = [
        {
            "sggCd": code,
            "sggNm": name,
            "umdNm": dong,
            "buildingUse": "업무",
            "dealYear": 2025,
            "dealMonth": 6,
            "dealDay": day,
            "dealAmount": f"{100_000 + day:,}",
            "buildingAr": "500.5",
        }
        for day in (3, 4, 5)
    ]
    body = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": items}}}}
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def test_loads_send_one_signed_event_per_change_to_the_endpoints_that_want_it(
    module_db_url: str, server: LiveServer, standin: StandIn, receivers: dict[str, Receiver]
) -> None:
    """Gangnam (11680) and Jongno (11110), which the other test here leaves alone."""
    db_url = module_db_url
    owner = Owner(db_url, server, "owner@example.com")
    secrets = {
        "gangnam": owner.endpoint(
            receivers["gangnam"], ["data.updated"], {"sigungu_codes": ["11680"]}
        ),
        "jongno": owner.endpoint(
            receivers["jongno"], ["data.updated"], {"sigungu_codes": ["11110"]}
        ),
        "offices": owner.endpoint(
            receivers["offices"],
            ["key.revoked", "data.updated"],
            {"property_types": ["officetel"], "transaction_types": ["sale"]},
        ),
        "everything": owner.endpoint(receivers["everything"], ["*"]),
    }
    # filters are checked: a 400, never a half-registered endpoint
    for bad in ({"sigungu_codes": ["gangnam"]}, {"districts": ["11680"]}, []):
        status, body = owner.call("POST", HOOKS, {"url": receivers["gangnam"].url, "filters": bad})
        assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), bad
    assert len(owner.call("GET", HOOKS)[1]["data"]) == 4

    # a sync that adds deals to a month: one change, one event where the filter keeps it
    sync(db_url, standin)
    [added] = owner.changes(sigungu_code="11680")
    kept = len(included(xml_items(NRG_GANGNAM)))
    assert (added["sigungu_code"], added["month"], added["added"]) == ("11680", "2025-06", kept)
    [event] = wait_for(db_url, receivers["gangnam"], 1)
    assert event["data"]["change"] == added
    assert event["id"].startswith(f"evt_data_updated_{added['id']}_")
    request = next(r for r in receivers["gangnam"].requests if b"data.updated" in r.body)
    verified = signing.verify(
        request.body, request.headers["X-Svc-Signature"], secrets["gangnam"], now=time.time()
    )
    assert verified == event and request.headers["X-Svc-Event"] == "data.updated"
    for other in ("jongno", "offices", "everything"):
        assert data_events(receivers[other]) == [], other  # filtered out, or not named

    # the same re-read again: nothing changed, nothing written, nothing sent
    sync(db_url, standin)
    assert owner.changes(sigungu_code="11680") == [added]
    assert len(wait_for(db_url, receivers["gangnam"], 1)) == 1  # all sent: no second

    # a re-read that finds a deal cancelled retracts it: retracted 1
    units = [i for i, item in enumerate(xml_items(NRG_GANGNAM)) if included([item])]
    standin.cancel(NRG, "11680", "202506", units[0])
    sync(db_url, standin)
    latest = owner.changes(sigungu_code="11680")
    assert len(latest) == 2
    retraction = latest[-1]
    assert (retraction["added"], retraction["retracted"]) == (0, 1)
    assert retraction["digest_before"] == added["digest_after"]
    events = wait_for(db_url, receivers["gangnam"], 2)
    assert [e["data"]["change"]["id"] for e in events] == [added["id"], retraction["id"]]
    assert events[1]["data"]["change"]["retracted"] == 1

    # svc ingest goes through the same commit: Jongno's month to Jongno's endpoint
    ingested = svc(db_url, standin, "ingest", "rtms-commercial", str(NRG_JONGNO_PAGE))
    assert "loaded" in ingested.stdout
    jongno = owner.changes(sigungu_code="11110")
    assert len(jongno) == 1
    [event] = wait_for(db_url, receivers["jongno"], 1)
    assert event["data"]["change"] == jongno[0]
    svc(db_url, standin, "ingest", "rtms-commercial", str(NRG_JONGNO_PAGE))  # again
    assert owner.changes(sigungu_code="11110") == jongno
    assert len(owner.changes(sigungu_code="11680")) == 2
    assert len(wait_for(db_url, receivers["jongno"], 1)) == 1  # all sent: no second
    assert len(data_events(receivers["gangnam"])) == 2
    for other in ("offices", "everything"):
        assert data_events(receivers[other]) == [], other


def test_an_endpoint_changes_what_it_receives(
    module_db_url: str,
    server: LiveServer,
    standin: StandIn,
    receivers: dict[str, Receiver],
    tmp_path: Path,
) -> None:
    """Seocho (11650) and Mapo (11440), which the other test here leaves alone."""
    db_url = module_db_url
    owner = Owner(db_url, server, "patcher@example.com")
    owner.endpoint(receivers["everything"], ["*"])
    endpoint_id = owner.call("GET", HOOKS)[1]["data"][0]["id"]
    path = f"{HOOKS}/{endpoint_id}"
    for bad in (
        {},
        {"url": "https://example.com/other"},
        {"filters": {"property_types": ["castle"]}},
        {"events": []},
    ):
        status, body = owner.call("PATCH", path, bad)
        assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), bad
    status, body = owner.call(
        "PATCH",
        path,
        {"events": ["data.updated"], "filters": {"sigungu_codes": ["11440"]}},
    )
    assert status == 200, body
    assert body["data"]["events"] == ["data.updated"]
    assert body["data"]["filters"] == {"sigungu_codes": ["11440"]}
    seocho = office_sales(tmp_path / "seocho.json", "11650", "서초구", "서초동")
    mapo = office_sales(tmp_path / "mapo.json", "11440", "마포구", "공덕동")
    svc(db_url, standin, "ingest", "rtms-commercial", str(seocho))  # not Mapo
    assert len(owner.changes(sigungu_code="11650")) == 1  # a change, filtered out
    svc(db_url, standin, "ingest", "rtms-commercial", str(mapo))
    [event] = wait_for(db_url, receivers["everything"], 1)
    assert event["data"]["change"]["sigungu_code"] == "11440"
    status, body = owner.call("PATCH", path, {"filters": None})
    assert (status, body["data"]["filters"]) == (200, {})
    assert owner.call("DELETE", path)[0] == 200
    status, body = owner.call("PATCH", path, {"description": "gone"})
    assert status == 404, body


def test_property_type_filters_keep_land_and_factory_changes_apart(
    module_db_url: str, server: LiveServer, standin: StandIn, receivers: dict[str, Receiver]
) -> None:
    """Issue 45: an endpoint filtered to land gets the land month's event, one filtered
    to industrial the factory/warehouse month's, one filtered to offices neither.
    Yangpyeong (41830), which the other tests here leave alone."""
    db_url = module_db_url
    owner = Owner(db_url, server, "land@example.com")
    for name, ptype in (("gangnam", "land"), ("jongno", "industrial"), ("offices", "office")):
        filters = {"sigungu_codes": ["41830"], "property_types": [ptype]}
        owner.endpoint(receivers[name], ["data.updated"], filters)
    svc(db_url, standin, "ingest", "rtms-land", str(LAND["2024-08"]))
    svc(db_url, standin, "ingest", "rtms-industrial", str(INDU))
    land, industrial = owner.changes(sigungu_code="41830")
    [event] = wait_for(db_url, receivers["gangnam"], 1)
    assert event["data"]["change"] == land and land["property_types"] == ["land"]
    [event] = wait_for(db_url, receivers["jongno"], 1)
    assert event["data"]["change"] == industrial
    assert industrial["property_types"] == ["industrial"]
    assert data_events(receivers["offices"]) == []
    for ptype in ("land", "industrial"):
        assert owner.changes(property_type=ptype) == [land if ptype == "land" else industrial]
    for endpoint in owner.call("GET", HOOKS)[1]["data"]:
        assert owner.call("DELETE", f"{HOOKS}/{endpoint['id']}")[0] == 200


def test_the_demo_set_is_loaded_through_the_same_commit(
    demo_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo set writes change records like every load, once. The session's demo
    store was loaded by ``load_demo``, what ``svc demo-data`` runs (the command itself
    commits through the writer in test_write_path); a copy of it is loaded again, with
    the first records of each part of the set (all of them already there)."""
    sqlite_url = copy_sqlite_store(demo_db_url, tmp_path)
    use_small_demo(monkeypatch)
    again = open_store(sqlite_url)
    try:  # the second load holds nothing new: no record
        with again.data.transaction(write=False) as tx:
            row = tx.fetchone("SELECT MAX(id) AS last FROM change_records")
        assert row is not None and row["last"]
        reloaded = demo.load_demo(again, seed=1, now=RE_NOW)
        assert again.realestate.records_after(int(row["last"]), 1) == []
    finally:
        again.close()
    assert reloaded == {
        "transactions": 0,
        "duplicate_transactions": 3000,
        "index_observations": 0,
        "market_listings": 0,
        "market_activity": 0,
    }
    store = open_store(sqlite_url)
    try:
        api = Api(make_app(store))
        body = api.ok("changes", {"limit": "1000"})
        records = body["data"]
        assert records and {r["load"]["kind"] for r in records} == {"demo"}
        assert body["_meta"]["known_limitations"][0] == SYNTHETIC_LIMITATION
        assert len({r["load"]["id"] for r in records}) == 1  # one load, however many months
        keys = {(r["source"], r["sigungu_code"], r["month"]) for r in records}
        assert len(keys) == len(records)  # one record per source kind, district and month
        assert all(
            r["added"] > 0 and r["digest_before"] == records[0]["digest_before"] for r in records
        )
    finally:
        store.close()
