"""Identity and account races against a real ``svc serve`` (issue 15, items 5, 6, 7, 9).

Real HS256 tokens, the real ``svc consumer create`` command, SQLite and PostgreSQL.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import jwt
import pytest

from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.svc_cli import run_svc

SECRET = "live-idp-hs256-secret-0123456789abcdef"
ORIGIN = "https://app.example.com"
KELLY = "kelly@example.com"
LOOK_ALIKES = ("\u212aelly@example.com", "kelly@example.com\u00a0")


def call(
    server: LiveServer,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    cookie: str | None = None,
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Origin": ORIGIN}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if cookie:
        headers["Cookie"] = cookie
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def token(sub: str, email: str | None = None, **claims: Any) -> str:
    now = int(time.time())
    payload: dict[str, Any] = {"sub": sub, "iat": now, "exp": now + 300, **claims}
    if email is not None:
        payload["email"] = email
    return jwt.encode(payload, SECRET, algorithm="HS256")


def sign_in(server: LiveServer, jwt_token: str) -> tuple[int, Any, str | None]:
    """Status, body and the ``name=value`` cookie of a sign-in."""
    req = urllib.request.Request(
        server.url + "/api/auth/session",
        data=json.dumps({"jwt": jwt_token}).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            cookie = r.headers["Set-Cookie"].split(";", 1)[0]
            return r.status, json.loads(r.read()), cookie
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), None


def svc(db_url: str, *args: str) -> dict[str, Any]:
    done = run_svc(*args, "--json", "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def serve(factory: Callable[..., LiveServer], db_url: str, **env: str) -> LiveServer:
    return factory(
        db_url,
        env={"SVC_JWT_HS256_SECRET": SECRET, "SVC_SITE_ORIGINS": ORIGIN, **env},
    )


def at_once(server: LiveServer, count: int, method: str, path: str, cookie: str) -> list[int]:
    """Send one request from each of ``count`` threads, connected first and released
    together; the statuses, sorted."""
    barrier = threading.Barrier(count)
    statuses: list[int] = []

    def run() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.connect()
        barrier.wait()
        conn.request(method, path, headers={"Cookie": cookie, "Origin": ORIGIN})
        statuses.append(conn.getresponse().status)
        conn.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(statuses)


# 5: look-alike emails and email_verified ------------------------------------------------


def test_look_alike_and_unverified_emails_take_over_nothing(
    db_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    reserved = svc(db_url, "consumer", "create", "--plan", "pro", "--email", KELLY)
    team = svc(db_url, "consumer", "create", "--plan", "team", "--email", "boss@example.com")
    server = serve(live_server_factory, db_url)

    status, _, boss = sign_in(server, token("idp|boss", "boss@example.com"))
    assert status == 200
    status, invited = call(
        server, "POST", "/api/auth/me/team", {"email": "ana@example.com"}, cookie=boss
    )
    assert status == 200, invited
    invite_id = invited["data"]["id"]

    tokens = [token(f"idp|mallory{n}", email) for n, email in enumerate(LOOK_ALIKES)]
    tokens += [token("idp|mallory-k", "\u212aelly@example.com", email_verified=True)]
    tokens += [token("idp|ana-look", "\u0430na@example.com")]  # Cyrillic a
    tokens += [token("idp|unverified", KELLY, email_verified=False)]
    tokens += [token("idp|unverified-ana", "ana@example.com", email_verified=False)]
    for attempt in tokens:
        status, body, cookie = sign_in(server, attempt)
        if status != 200:  # refused outright: a 4xx that says why, never a 500
            assert status == 401 and body["error"]["code"] == "JWT_INVALID", body
            continue
        data = body["data"]
        assert data["consumer"]["id"] not in (reserved["consumer_id"], team["consumer_id"])
        assert data["consumer"]["plan"] == "starter"
        assert data["user"]["email"] not in (KELLY, "ana@example.com")
        status, invites = call(server, "GET", "/api/auth/me/invites", cookie=cookie)
        assert status == 200 and invites["invites"] == []
        status, _ = call(server, "POST", f"/api/auth/me/invites/{invite_id}/accept", cookie=cookie)
        assert status == 404

    # the real addressees still get what was reserved for them
    status, body, _ = sign_in(server, token("idp|kelly", "Kelly@Example.COM"))
    assert status == 200 and body["data"]["consumer"]["id"] == reserved["consumer_id"]
    status, _, ana = sign_in(server, token("idp|ana", "ana@example.com"))
    assert status == 200
    status, invites = call(server, "GET", "/api/auth/me/invites", cookie=ana)
    assert [row["id"] for row in invites["invites"]] == [invite_id]
    status, _ = call(server, "POST", f"/api/auth/me/invites/{invite_id}/accept", cookie=ana)
    assert status == 200


def test_unverified_email_never_binds_a_reservation_later_either(
    db_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    reserved = svc(db_url, "consumer", "create", "--plan", "pro", "--email", KELLY)
    server = serve(live_server_factory, db_url)
    status, body, _ = sign_in(server, token("idp|kelly", KELLY, email_verified=False))
    assert status == 200 and body["data"]["consumer"]["id"] != reserved["consumer_id"]
    # the reservation stays for a verified sign-in
    status, body, _ = sign_in(server, token("idp|kelly2", KELLY, email_verified=True))
    assert status == 200 and body["data"]["consumer"]["id"] == reserved["consumer_id"]


# 6: one subject's claim never blocks another's sign-in ---------------------------------


def test_a_claimed_email_never_locks_another_subject_out(
    db_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    server = serve(live_server_factory, db_url)
    # mallory claims the placeholder addresses victims without a usable email get, and a
    # real address another subject signs in with later
    squats = [
        sign_in(server, token("idp|mallory", squat))
        for squat in ("idp|victim@users.invalid", "idp|victim2@USERS.invalid")
    ]
    status, _, _ = sign_in(server, token("idp|mallory2", "shared@example.com"))
    assert status == 200
    for attempt in (
        token("idp|victim"),
        token("idp|victim2", "shared@example.com"),
        token("idp|victim2", "shared@example.com"),  # again: the same account
        token("idp|victim3", "shared@example.com", email_verified=False),
    ):
        status, body, cookie = sign_in(server, attempt)
        assert status == 200, body
        assert body["data"]["user"]["email"] != "shared@example.com"
        status, usage = call(server, "GET", "/api/auth/me/usage", cookie=cookie)
        assert status == 200, usage
    for status, body, _ in squats:  # the claim itself is refused, and says why
        assert status == 401 and body["error"]["code"] == "JWT_INVALID", body
    first = sign_in(server, token("idp|victim2", "shared@example.com"))[1]["data"]
    again = sign_in(server, token("idp|victim2", "shared@example.com"))[1]["data"]
    assert first["user"]["id"] == again["user"]["id"]
    assert first["consumer"]["id"] == again["consumer"]["id"]


# 7: sessions have an absolute lifetime ---------------------------------------------------


def test_a_session_ends_at_its_absolute_lifetime_however_busy(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    server = serve(live_server_factory, sqlite_url, SVC_SESSION_MAX_AGE="4")
    started = time.time()
    status, body, cookie = sign_in(server, token("idp|ana", "ana@example.com"))
    assert status == 200
    ends = body["data"]["session_expires_at"]
    assert ends == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(started) + 4)) or (
        ends == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(started) + 5))
    )
    seen = []
    while time.time() < started + 7:
        seen.append(call(server, "GET", "/api/auth/me/usage", cookie=cookie)[0])
        time.sleep(0.5)
    assert seen[0] == 200 and seen[-1] == 401
    assert seen == sorted(seen)  # never back to 200 once ended
    status, body = call(server, "GET", "/api/auth/me/usage", cookie=cookie)
    assert (status, body["error"]["code"]) == (401, "NOT_SIGNED_IN")


# 9: concurrent revokes and removals: one winner, one event ------------------------------


@pytest.mark.parametrize("round_", range(4))
def test_six_revokes_of_one_key_have_one_winner_and_one_event(
    db_url: str, live_server_factory: Callable[..., LiveServer], round_: int
) -> None:
    server = serve(live_server_factory, db_url, SVC_THREADS="8", SVC_WORKERS="2")
    status, _, cookie = sign_in(server, token("idp|ana", "ana@example.com"))
    assert status == 200
    status, keys = call(server, "GET", "/api/auth/me/keys", cookie=cookie)
    key_id = keys["data"][0]["id"]

    method, suffix = ("POST", "/revoke") if round_ % 2 == 0 else ("DELETE", "")
    statuses = at_once(server, 6, method, f"/api/auth/me/keys/{key_id}{suffix}", cookie)
    assert statuses == [200, 404, 404, 404, 404, 404]
    store = open_store(db_url)
    try:
        with store.db.transaction(write=False) as tx:
            rows = tx.fetchall("SELECT id FROM events WHERE type = 'key.revoked'")
    finally:
        store.close()
    assert len(rows) == 1


@pytest.mark.parametrize("round_", range(4))
def test_six_removals_of_one_member_have_one_winner(
    db_url: str, live_server_factory: Callable[..., LiveServer], round_: int
) -> None:
    svc(db_url, "consumer", "create", "--plan", "team", "--email", "boss@example.com")
    server = serve(live_server_factory, db_url, SVC_THREADS="8", SVC_WORKERS="2")
    boss = sign_in(server, token("idp|boss", "boss@example.com"))[2]
    status, invited = call(
        server, "POST", "/api/auth/me/team", {"email": "ana@example.com"}, cookie=boss
    )
    assert status == 200
    member_id = invited["data"]["id"]
    if round_:
        ana = sign_in(server, token("idp|ana", "ana@example.com"))[2]
        assert (
            call(server, "POST", f"/api/auth/me/invites/{member_id}/accept", cookie=ana)[0] == 200
        )

    statuses = at_once(server, 6, "DELETE", f"/api/auth/me/team/{member_id}", boss)
    assert statuses == [200, 404, 404, 404, 404, 404]
