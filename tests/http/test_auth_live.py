"""Sign-in and keyed data calls against a real ``svc serve`` (gunicorn) process."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import jwt

from tests.conftest import LiveServer

HS256_SECRET = "live-idp-hs256-secret-0123456789abcdef"
ORIGIN = "https://app.example.com"


def call(
    server: LiveServer,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, Any]:
    data = json.dumps(body).encode() if body is not None else None
    all_headers = dict(headers or {})
    if data is not None:
        all_headers["Content-Type"] = "application/json"
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.loads(exc.read())


def test_sign_in_cookie_and_key_through_a_real_server(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    server = live_server_factory(
        sqlite_url, env={"SVC_JWT_HS256_SECRET": HS256_SECRET, "SVC_SITE_ORIGINS": ORIGIN}
    )
    now = int(time.time())
    token = jwt.encode(
        {"sub": "idp|ana", "email": "ana@example.com", "iat": now, "exp": now + 300},
        HS256_SECRET,
        algorithm="HS256",
    )
    forged = jwt.encode({"sub": "idp|ana", "exp": now + 300}, "x" * 40, algorithm="HS256")
    status, headers, body = call(server, "POST", "/api/auth/session", {"jwt": forged})
    assert (status, body["error"]["code"]) == (401, "JWT_INVALID")
    assert headers.get("Set-Cookie") is None

    status, headers, body = call(server, "POST", "/api/auth/session", {"jwt": token})
    assert status == 200, body
    set_cookie = headers["Set-Cookie"]
    assert set_cookie.startswith("svc_session=")
    assert "HttpOnly" in set_cookie and "Max-Age=900" in set_cookie
    cookie = set_cookie.split(";", 1)[0]
    key = body["data"]["api_key"]

    status, _, usage = call(server, "GET", "/api/auth/me/usage", headers={"Cookie": cookie})
    assert status == 200 and usage["data"]["plan"] == "starter"

    path = "/api/v1/real-estate/dimensions"
    status, headers, data = call(server, "GET", path, headers={"X-API-Key": key})
    assert status == 200
    assert data["_meta"]["auth_method"] == "api_key"
    assert headers["X-Quota-Used"] == "1" and headers["X-RateLimit-Limit"] == "60"

    status, _, refused = call(server, "GET", path)
    assert status == 401
    assert refused["_meta"] == {"service": "svc", "api_version": "v1"}
    assert refused["error"]["code"] == "UNAUTHORIZED"

    status, _, _ = call(
        server, "DELETE", "/api/auth/session", headers={"Cookie": cookie, "Origin": ORIGIN}
    )
    assert status == 200
    status, _, after = call(server, "GET", "/api/auth/me/usage", headers={"Cookie": cookie})
    assert (status, after["error"]["code"]) == (401, "NOT_SIGNED_IN")
