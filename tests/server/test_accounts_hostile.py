"""Hostile input to the account endpoints: every bad body, id or cookie gets a 4xx with
SPEC's error body, never a 500, and leaves every stored row exactly as it was."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from werkzeug.test import Client

from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts
from tests.server.accounts_support import DATA_PATH, snapshot

ME = "/api/auth/me"
JSON = "application/json"

BAD_BODIES: list[tuple[bytes, str, int]] = [
    (b"", JSON, 400),
    (b"{", JSON, 400),
    (b"[]", JSON, 400),
    (b"null", JSON, 400),
    (b'"label"', JSON, 400),
    (b"42", JSON, 400),
    (b"{} junk", JSON, 400),
    (b"\xef\xbb\xbf{}", JSON, 400),
    (b"\xff\xfe{}", JSON, 400),
    (b'{"label": "a", "label": "b"}', JSON, 400),
    (b'{"label": NaN}', JSON, 400),
    (b'{"label": Infinity}', JSON, 400),
    (b'{"label": "\\ud800"}', JSON, 400),
    (b"[" * 10_000 + b"]" * 10_000, JSON, 400),
    (b'{"label": "x"}', "text/plain", 415),
    (b'{"label": "x"}', "application/x-www-form-urlencoded", 415),
    (b"label=x", "", 415),
]


def key_bodies() -> list[Any]:
    ok = {"label": "ci", "mode": "live", "scope": "read_only"}
    return [
        {**ok, "scope": "read_only", "extra": 1},
        {**ok, "label": ""},
        {**ok, "label": "   "},
        {**ok, "label": " padded"},
        {**ok, "label": "x" * 65},
        {**ok, "label": "evil\u202etxt"},
        {**ok, "label": "bell\u0007"},
        {**ok, "label": True},
        {**ok, "label": None},
        {**ok, "label": ["a"]},
        {**ok, "mode": "LIVE"},
        {**ok, "mode": None},
        {**ok, "scope": "superuser"},
        {"label": "ci", "mode": "live"},
        {**ok, "ip_allowlist": "10.0.0.0/8"},
        {**ok, "ip_allowlist": None},
        {**ok, "ip_allowlist": [""]},
        {**ok, "ip_allowlist": ["10.0.0.0/33"]},
        {**ok, "ip_allowlist": ["10.0.0.1/8"]},
        {**ok, "ip_allowlist": [" 10.0.0.0/8"]},
        {**ok, "ip_allowlist": ["fe80::1%eth0"]},
        {**ok, "ip_allowlist": ["::ffff:10.0.0.0/104"]},
        {**ok, "ip_allowlist": ["10.0.0.0/255.0.0.0"]},
        {**ok, "ip_allowlist": [10]},
        {**ok, "ip_allowlist": ["10.0.0.0/8"] * 33},
        {**ok, "ip_allowlist": [f"10.0.{n // 256}.{n % 256}" for n in range(10_000)]},
        {**ok, "id": str(uuid.uuid4())},
        {**ok, "key_hash": "0" * 64},
        {**ok, "status": "active"},
    ]


ROTATE_BODIES: list[Any] = [
    {"grace_period_seconds": -1},
    {"grace_period_seconds": 604_801},
    {"grace_period_seconds": 2**64},
    {"grace_period_seconds": 1.5},
    {"grace_period_seconds": "60"},
    {"grace_period_seconds": True},
    {"grace_period_seconds": None},
    {"grace_until": "2026-02-30T00:00:00Z"},
]

BAD_IDS = [
    "not-a-uuid",
    "1",
    "' OR 1=1--",
    "%00",
    "..%2f..%2fetc",
    "x" * 300,
    "%E2%80%AE",
    "12345678-1234-5678-1234-56781234567g",
]


@pytest.fixture
def db_url(sqlite_url: str) -> str:
    """Input validation does not depend on the backend: these run on SQLite only."""
    return sqlite_url


def assert_refused(r: Any, status: int | None = None) -> None:
    assert r.status_code < 500, r.get_data(as_text=True)[:300]
    assert r.status_code >= 400
    if status is not None:
        assert r.status_code == status, r.get_json()
    body = r.get_json()
    assert body["error"]["request_id"] == r.headers["X-Request-ID"]
    assert body["error"]["code"] and body["error"]["message"]


def test_bad_bodies_on_every_write(accounts: Accounts, store: Store) -> None:
    accounts.consumer("pro", email="boss@example.com")
    boss = accounts.browser("boss@example.com")
    key_id = boss.get(f"{ME}/keys").get_json()["data"][0]["id"]
    targets = [
        ("POST", f"{ME}/keys"),
        ("PATCH", f"{ME}/keys/{key_id}"),
        ("POST", f"{ME}/team"),
        ("POST", "/api/auth/session"),
    ]
    before = snapshot(store)
    for method, path in targets:
        for raw, content_type, status in BAD_BODIES:
            headers = {**ORIGIN, "Content-Type": content_type} if content_type else ORIGIN
            r = boss.open(path, method=method, data=raw, headers=headers)
            if raw == b"" and method == "PATCH":
                status = 400
            assert_refused(r, status)
    # rotate takes an optional body: empty is the default, the rest is refused alike
    for raw, content_type, status in BAD_BODIES[1:]:
        headers = {**ORIGIN, "Content-Type": content_type} if content_type else ORIGIN
        r = boss.post(f"{ME}/keys/{key_id}/rotate", data=raw, headers=headers)
        assert_refused(r, status)
    assert snapshot(store) == before


def test_bad_key_rotate_and_invite_fields(accounts: Accounts, store: Store) -> None:
    accounts.consumer("pro", email="boss@example.com")
    boss = accounts.browser("boss@example.com")
    key_id = boss.get(f"{ME}/keys").get_json()["data"][0]["id"]
    before = snapshot(store)
    for body in key_bodies():
        assert_refused(boss.post(f"{ME}/keys", json=body, headers=ORIGIN), 400)
        patch = {k: v for k, v in body.items() if k not in ("mode", "scope")} or {"mode": "x"}
        if patch != {"label": "ci"}:
            assert_refused(boss.patch(f"{ME}/keys/{key_id}", json=patch, headers=ORIGIN), 400)
    for body in ROTATE_BODIES:
        assert_refused(boss.post(f"{ME}/keys/{key_id}/rotate", json=body, headers=ORIGIN), 400)
    too_big = json.dumps({"label": "x" * 2_000_000}).encode()
    r = boss.post(f"{ME}/keys", data=too_big, headers={**ORIGIN, "Content-Type": JSON})
    assert_refused(r, 413)
    assert snapshot(store) == before


def test_bad_ids_are_400_never_a_lookup(accounts: Accounts, store: Store) -> None:
    accounts.consumer("pro", email="boss@example.com")
    boss = accounts.browser("boss@example.com")
    before = snapshot(store)
    for bad in BAD_IDS:
        requests = [
            ("PATCH", f"{ME}/keys/{bad}", {"label": "x"}),
            ("POST", f"{ME}/keys/{bad}/rotate", None),
            ("POST", f"{ME}/keys/{bad}/revoke", None),
            ("DELETE", f"{ME}/keys/{bad}", None),
            ("DELETE", f"{ME}/team/{bad}", None),
            ("POST", f"{ME}/invites/{bad}/accept", None),
        ]
        for method, path, body in requests:
            r = boss.open(path, method=method, json=body, headers=ORIGIN)
            assert_refused(r)
            assert r.status_code in (400, 404), (path, r.status_code)
            if r.status_code == 404:  # only when the text never reached our router
                assert r.get_json()["error"]["code"] == "NOT_FOUND"
    for path in (f"{ME}/keys/not-a-uuid", f"{ME}/team/1", f"{ME}/invites/x/accept"):
        method = "PATCH" if "keys" in path else "DELETE" if "team" in path else "POST"
        r = boss.open(path, method=method, json={"label": "x"}, headers=ORIGIN)
        assert r.status_code == 400 and r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert snapshot(store) == before


def test_unknown_uuid_ids_are_404(accounts: Accounts, store: Store) -> None:
    accounts.consumer("pro", email="boss@example.com")
    boss = accounts.browser("boss@example.com")
    before = snapshot(store)
    missing = str(uuid.uuid4())
    for method, path in [
        ("PATCH", f"{ME}/keys/{missing}"),
        ("POST", f"{ME}/keys/{missing}/rotate"),
        ("POST", f"{ME}/keys/{missing}/revoke"),
        ("DELETE", f"{ME}/keys/{missing}"),
        ("DELETE", f"{ME}/team/{missing}"),
        ("POST", f"{ME}/invites/{missing}/accept"),
    ]:
        body = {"label": "x"} if method == "PATCH" else None
        r = boss.open(path, method=method, json=body, headers=ORIGIN)
        assert_refused(r, 404)
    assert snapshot(store) == before


def test_bad_cookies_are_401_everywhere(accounts: Accounts, store: Store, client: Client) -> None:
    accounts.browser("ana@example.com")
    cookies = [
        "svc_session=",
        "svc_session=x",
        "svc_session=" + "A" * 5000,
        'svc_session="quoted.value"',
        "svc_session=a.b.c.d",
        "svc_session=%00%ff",
        "svc_session=IjEi.AAAA",
        "svc_session=eyJhbGciOiJub25lIn0.e30.",
    ]
    before = snapshot(store)
    for cookie in cookies:
        for method, path in [("GET", f"{ME}/usage"), ("GET", f"{ME}/keys"), ("GET", DATA_PATH)]:
            r = client.open(path, method=method, headers={"Cookie": cookie})
            assert_refused(r, 401)
        r = client.post(f"{ME}/keys", json={}, headers={**ORIGIN, "Cookie": cookie})
        assert_refused(r, 401)
    assert snapshot(store) == before


def test_wrong_methods_are_405_with_allow(accounts: Accounts) -> None:
    browser = accounts.browser("ana@example.com")
    r = browser.put(f"{ME}/keys", json={}, headers=ORIGIN)
    assert r.status_code == 405
    assert "GET" in r.headers["Allow"] and "POST" in r.headers["Allow"]
    r = browser.get("/api/auth/session")
    assert r.status_code == 405
