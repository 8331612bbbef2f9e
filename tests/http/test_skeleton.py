"""The HTTP skeleton: request ids, JSON errors, strict parsing, the status probe."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from werkzeug.test import Client

from svc_core.requestid import GENERATED
from svc_server.app import SvcApp
from svc_server.services import status
from svc_server.store import Store
from tests.conftest import LiveServer


def test_caller_request_id_is_echoed(client: Client) -> None:
    r = client.get("/api/status", headers={"X-Request-ID": "trace_0123456789"})
    assert r.headers["X-Request-ID"] == "trace_0123456789"


@pytest.mark.parametrize(
    "supplied", ["short", "has space 12345", "x" * 129, "<script>alert</script>", "ид12345678"]
)
def test_bad_request_ids_are_replaced(client: Client, supplied: str) -> None:
    r = client.get("/api/status", headers={"X-Request-ID": supplied})
    assert GENERATED.fullmatch(r.headers["X-Request-ID"])
    assert supplied not in r.get_data(as_text=True)


def test_request_id_bounds_8_and_128_are_kept(client: Client) -> None:
    for value in ("a" * 8, "b" * 128):
        assert (
            client.get("/api/status", headers={"X-Request-ID": value}).headers["X-Request-ID"]
            == value
        )


def test_generated_ids_differ(client: Client) -> None:
    ids = {client.get("/api/status").headers["X-Request-ID"] for _ in range(5)}
    assert len(ids) == 5


def test_unknown_path_is_json_404_with_request_id(client: Client) -> None:
    r = client.get("/nope")
    assert r.status_code == 404
    assert r.mimetype == "application/json"
    body = r.get_json()
    assert body["error"]["code"] == "NOT_FOUND"
    assert body["error"]["request_id"] == r.headers["X-Request-ID"]


def test_wrong_method_is_json_405_with_allow(client: Client) -> None:
    r = client.delete("/api/status")
    assert r.status_code == 405
    assert "GET" in r.headers["Allow"]
    body = r.get_json()
    assert body["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert body["error"]["request_id"] == r.headers["X-Request-ID"]


def test_unknown_query_parameter_is_400_with_hint(client: Client) -> None:
    r = client.get("/api/status?verbose=1")
    assert r.status_code == 400
    err = r.get_json()["error"]
    assert err["code"] == "INVALID_PARAMS"
    assert "verbose" in err["message"]
    assert "hint" in err


def test_invalid_utf8_in_query_is_400(client: Client) -> None:
    r = client.get("/api/status?x=%ff%fe")
    assert r.status_code == 400
    assert r.get_json()["error"]["code"] == "INVALID_PARAMS"


def test_overlong_uri_is_414(client: Client) -> None:
    r = client.get("/api/status?x=" + "a" * 10_000)
    assert r.status_code == 414
    assert r.get_json()["error"]["request_id"] == r.headers["X-Request-ID"]


def test_status_reports_probes_and_cache_policy(client: Client) -> None:
    r = client.get("/api/status")
    assert r.status_code == 200
    body = r.get_json()
    assert body["status"] == "ok"
    assert {c["name"] for c in body["checks"]} == {"real_estate_pulse", "markets_pulse"}
    assert all(c["ok"] and c["latency_ms"] >= 0 for c in body["checks"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["checked_at"])
    assert r.headers["Cache-Control"] == "public, s-maxage=10, stale-while-revalidate=30"


def test_status_is_503_when_a_probe_fails(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(store: Store) -> None:
        raise RuntimeError("database gone")

    monkeypatch.setitem(status.PROBES, "markets_pulse", broken)
    r = client.get("/api/status")
    assert r.status_code == 503
    body = r.get_json()
    assert body["status"] == "degraded"
    assert [c["ok"] for c in body["checks"] if c["name"] == "markets_pulse"] == [False]


def test_unexpected_exception_is_500_internal_logged_with_request_id(
    app: SvcApp, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(store: Store, now: float) -> None:
        raise ZeroDivisionError("secret detail")

    monkeypatch.setattr(status, "check", boom)
    r = Client(app).get("/api/status", headers={"X-Request-ID": "trace_boom_0001"})
    assert r.status_code == 500
    body = r.get_json()
    assert body["error"] == {
        "code": "INTERNAL",
        "message": "Internal error.",
        "request_id": "trace_boom_0001",
    }
    assert "secret detail" not in r.get_data(as_text=True)
    assert any("trace_boom_0001" in rec.getMessage() for rec in caplog.records)


def test_access_log_line_has_the_fields(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="svc.access")
    client.get("/api/status", headers={"X-Request-ID": "trace_log_00001"})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "svc.access"]
    assert lines[-1]["request_id"] == "trace_log_00001"
    assert lines[-1]["method"] == "GET" and lines[-1]["path"] == "/api/status"
    assert lines[-1]["status"] == 200 and lines[-1]["duration_ms"] >= 0


def test_real_server_answers_status_with_request_id(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    server = live_server_factory(sqlite_url)
    req = urllib.request.Request(
        server.url + "/api/status", headers={"X-Request-ID": "trace_0123456789"}
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.headers["X-Request-ID"] == "trace_0123456789"
        assert json.loads(r.read())["status"] == "ok"
    req = urllib.request.Request(server.url + "/api/status", method="DELETE")
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=5)
    assert exc.value.code == 405
    assert json.loads(exc.value.read())["error"]["request_id"] == exc.value.headers["X-Request-ID"]
