"""The example ``data.updated`` receiver recomputes the figures a change moved: real
change records of real loads, delivered signed, answered from the real API."""

from __future__ import annotations

import io
import subprocess
import sys
import urllib.error
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from examples.data_updated_receiver import Recomputer
from examples.webhook_receiver import Receiver
from svc_core.webhooks import events, signing
from svc_server import ingest
from svc_server.store import Store
from tests.conftest import RE_NOW
from tests.http.realestate_support import NRG_GANGNAM, NRG_JONGNO_PAGE, Api, make_app

SECRET = signing.generate_secret(bytes(range(32)))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data_updated_receiver.py"


def load(store: Store, path: Path, now: float, data: bytes | None = None) -> None:
    raw = path.read_bytes() if data is None else data
    ingest.ingest(store, "rtms-commercial", raw, path=path.name, now=now)


def deliver(receiver: Client, api: Api, change: dict[str, Any]) -> Any:
    event = events.data_updated(change=change, consumer_id=api.consumer_id, now=RE_NOW)
    body = events.serialize(event)
    signature = signing.sign(body, SECRET, int(RE_NOW))
    headers = {"Content-Type": "application/json", "X-Svc-Signature": signature}
    return receiver.post("/", data=body, headers=headers)


def test_a_change_it_follows_is_recomputed_from_its_pulse_url(store: Store) -> None:
    api = Api(make_app(store))

    def fetch(url: str, api_key: str) -> dict[str, Any]:
        parts = urlsplit(url)
        response = api.client.get(f"{parts.path}?{parts.query}", headers={"X-API-Key": api_key})
        assert response.status_code == 200, response.get_data(as_text=True)
        answer: dict[str, Any] = response.get_json()
        return answer

    recompute = Recomputer(api.key, districts=["11680"], fetch=fetch)
    receiver = Client(Receiver(SECRET, handle=recompute, clock=lambda: RE_NOW + 5))
    load(store, NRG_GANGNAM, RE_NOW)
    load(store, NRG_JONGNO_PAGE, RE_NOW + 60)
    gangnam, jongno = api.ok("changes")["data"]
    assert deliver(receiver, api, gangnam).get_json() == {"received": True, "duplicate": False}
    assert deliver(receiver, api, jongno).status_code == 200  # not followed
    assert list(recompute.figures) == [gangnam["pulse_url"]]
    figure = recompute.figures[gangnam["pulse_url"]]
    assert figure["data_version"] == gangnam["id"] and figure["change_id"] == gangnam["id"]
    rows = figure["rows"]
    assert rows and {r["sigungu_code"] for r in rows} == {"11680"}
    before = sum(r["sample_count"] for r in rows)

    text = NRG_GANGNAM.read_text(encoding="utf-8")
    cancelled = text.replace("<cdealType> </cdealType>", "<cdealType>O</cdealType>", 1)
    load(store, NRG_GANGNAM, RE_NOW + 120, cancelled.encode())
    retraction = api.ok("changes", {"since": api.ok("changes")["_meta"]["latest_cursor"]})
    assert retraction["data"] == []  # nothing after the latest cursor of that answer...
    [retraction] = api.ok("changes", {"sigungu_code": "11680"})["data"][1:]
    assert retraction["retracted"] == 1
    deliver(receiver, api, retraction)
    moved = recompute.figures[retraction["pulse_url"]]
    assert moved["data_version"] == retraction["id"]
    if retraction["pulse_url"] == gangnam["pulse_url"]:
        assert sum(r["sample_count"] for r in moved["rows"]) == before - 1
    # an older change delivered late never takes a figure back
    recompute({"type": "data.updated", "data": {"change": gangnam}})
    assert recompute.figures[gangnam["pulse_url"]]["data_version"] >= gangnam["id"]
    assert deliver(receiver, api, gangnam).get_json()["duplicate"] is True


def test_other_events_are_left_alone() -> None:
    def fetch(url: str, api_key: str) -> dict[str, Any]:
        raise AssertionError("nothing to fetch")

    recompute = Recomputer("svc_key", fetch=fetch)
    recompute(events.webhook_test(event_id="evt_webhook_test_1", now=RE_NOW, docs_url="x"))
    assert recompute.figures == {}


def test_the_script_refuses_to_start_without_a_secret_and_a_key() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert "SVC_WEBHOOK_SECRET" in done.stderr and "SVC_API_KEY" in done.stderr


def test_a_fetch_that_fails_is_logged_with_the_change_and_the_link(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    api = Api(make_app(store))
    load(store, NRG_GANGNAM, RE_NOW)
    [change] = api.ok("changes")["data"]
    # the link's server does not answer (a port nothing listens on), as when an event
    # linked to a default address the server is not at
    change = {**change, "pulse_url": "http://127.0.0.1:9/api/v1/real-estate/pulse?x=1"}
    recompute = Recomputer(api.key, districts=["11680"])
    receiver = Client(Receiver(SECRET, handle=recompute, clock=lambda: RE_NOW + 5))
    assert deliver(receiver, api, change).status_code == 200
    assert recompute.figures == {}
    logged = capsys.readouterr().err
    assert f"data.updated change {change['id']}" in logged
    assert "http://127.0.0.1:9/api/v1/real-estate/pulse?x=1 failed" in logged
    assert "SVC_PUBLIC_URL" in logged

    def refused(url: str, api_key: str) -> dict[str, Any]:
        raise urllib.error.HTTPError(
            url,
            401,
            "Unauthorized",
            Message(),
            io.BytesIO(
                b'{"error": {"code": "UNAUTHORIZED", "message": "The API key is not valid."}}'
            ),
        )

    recompute.fetch = refused
    Recomputer.__call__(recompute, events.data_updated(change=change, consumer_id="c", now=1))
    assert "HTTP 401 UNAUTHORIZED: The API key is not valid." in capsys.readouterr().err
