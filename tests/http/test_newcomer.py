"""What a newcomer trips on, checked through a real ``svc serve``: each refusal names its
real cause, and content negotiation follows RFC 9110."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from tests.conftest import LiveServer

HS256_SECRET = "newcomer-idp-hs256-secret-0123456789abcd"
ORIGIN = "https://app.example.com"


def send(
    server: LiveServer, method: str, path: str, data: bytes | None, headers: dict[str, str]
) -> tuple[int, Any, bytes]:
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


@pytest.fixture(scope="module")
def signed_in(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, str, str]]:
    """A real server, a signed-in session cookie and that user's API key."""
    db = tmp_path_factory.mktemp("newcomer") / "svc.db"
    server = LiveServer(
        f"sqlite:///{db}",
        env={"SVC_JWT_HS256_SECRET": HS256_SECRET, "SVC_SITE_ORIGINS": ORIGIN},
    )
    try:
        now = int(time.time())
        token = jwt.encode(
            {"sub": "idp|new", "email": "new@example.com", "iat": now, "exp": now + 300},
            HS256_SECRET,
            algorithm="HS256",
        )
        status, headers, raw = send(
            server,
            "POST",
            "/api/auth/session",
            json.dumps({"jwt": token}).encode(),
            {"Content-Type": "application/json"},
        )
        assert status == 200, raw
        cookie = headers["Set-Cookie"].split(";", 1)[0]
        yield server, cookie, json.loads(raw)["data"]["api_key"]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        (b'{"label": "a", "label": "b", "mode": "live", "scope": "read_only"}', "Duplicate key"),
        (b'{"label": NaN, "mode": "live", "scope": "read_only"}', "NaN is not a valid JSON"),
        (b'{"label": Infinity}', "Infinity is not a valid JSON"),
        (b'{"label": -Infinity}', "-Infinity is not a valid JSON"),
        (b'{"n": 1' + b"0" * 5000 + b"}", "number too long"),
    ],
)
def test_each_invalid_json_body_is_refused_for_its_real_cause(
    signed_in: tuple[LiveServer, str, str], body: bytes, cause: str
) -> None:
    server, cookie, _ = signed_in
    headers = {"Content-Type": "application/json", "Cookie": cookie, "Origin": ORIGIN}
    status, _, raw = send(server, "POST", "/api/auth/me/keys", body, headers)
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (400, "INVALID_PARAMS")
    assert cause in error["message"]


def _pulse_accept(server: LiveServer, key: str, accept: str) -> tuple[int, str]:
    status, headers, _ = send(
        server,
        "GET",
        "/api/v1/real-estate/coverage",
        None,
        {"X-API-Key": key, "Accept": accept},
    )
    return status, headers.get("Content-Type", "")


@pytest.mark.parametrize(
    ("accept", "kind"),
    [
        ("text/csv", "text/csv"),
        ("text/*", "text/csv"),
        ("text/*, application/json;q=0.5", "text/csv"),
        ("*/*;q=0.1, text/csv", "text/csv"),
        ("application/json, text/csv;q=0.9", "application/json"),
        ("*/*", "application/json"),
        ("application/*", "application/json"),
        ("text/csv;q=0.5, application/json;q=0.9", "application/json"),
    ],
)
def test_accept_negotiates_as_rfc_9110_says(
    signed_in: tuple[LiveServer, str, str], accept: str, kind: str
) -> None:
    server, _, key = signed_in
    status, content_type = _pulse_accept(server, key, accept)
    assert status == 200
    assert content_type.startswith(kind)
