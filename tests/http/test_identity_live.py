"""Identity and account races against a real ``svc serve`` (issue 15, items 5, 6, 7, 9).

Real HS256 tokens, the real ``svc consumer create`` command, SQLite and PostgreSQL.
One server per backend (two workers, eight threads each) serves every test but the
session-lifetime one, which needs a setting of its own; each test keeps to subjects and
emails of its own (``tag``), so none sees another's users, invites or events.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest

from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.svc_cli import run_svc

SECRET = "live-idp-hs256-secret-0123456789abcdef"
ORIGIN = "https://app.example.com"
SETTINGS = {"SVC_JWT_HS256_SECRET": SECRET, "SVC_SITE_ORIGINS": ORIGIN}


@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[LiveServer]:
    """``svc serve`` on the module's store: two workers of eight threads, so that the
    concurrent revokes and removals below race across processes and threads."""
    live = LiveServer(module_db_url, env={**SETTINGS, "SVC_THREADS": "8"}, workers=2)
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def tag() -> str:
    """A word that makes this test's subjects and emails its own on the shared server."""
    return uuid.uuid4().hex[:8]


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
    return factory(db_url, env={**SETTINGS, **env})


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
    module_db_url: str, server: LiveServer, tag: str
) -> None:
    kelly, ana_email, boss_email = (f"{who}-{tag}@example.com" for who in ("kelly", "ana", "boss"))
    kelvin = "\u212a" + kelly[1:]  # KELVIN SIGN: folds to "kelly-..." under NFKC
    reserved = svc(module_db_url, "consumer", "create", "--plan", "pro", "--email", kelly)
    team = svc(module_db_url, "consumer", "create", "--plan", "team", "--email", boss_email)

    status, _, boss = sign_in(server, token(f"idp|boss-{tag}", boss_email))
    assert status == 200
    status, invited = call(server, "POST", "/api/auth/me/team", {"email": ana_email}, cookie=boss)
    assert status == 200, invited
    invite_id = invited["data"]["id"]

    look_alikes = (kelvin, kelly + "\u00a0")
    tokens = [token(f"idp|mallory{n}-{tag}", email) for n, email in enumerate(look_alikes)]
    tokens += [token(f"idp|mallory-k-{tag}", kelvin, email_verified=True)]
    tokens += [token(f"idp|ana-look-{tag}", "\u0430" + ana_email[1:])]  # Cyrillic a
    tokens += [token(f"idp|unverified-{tag}", kelly, email_verified=False)]
    tokens += [token(f"idp|unverified-ana-{tag}", ana_email, email_verified=False)]
    for attempt in tokens:
        status, body, cookie = sign_in(server, attempt)
        if status != 200:  # refused outright: a 4xx that says why, never a 500
            assert status == 401 and body["error"]["code"] == "JWT_INVALID", body
            continue
        data = body["data"]
        assert data["consumer"]["id"] not in (reserved["consumer_id"], team["consumer_id"])
        assert data["consumer"]["plan"] == "starter"
        assert data["user"]["email"] not in (kelly, ana_email)
        status, invites = call(server, "GET", "/api/auth/me/invites", cookie=cookie)
        assert status == 200 and invites["invites"] == []
        status, _ = call(server, "POST", f"/api/auth/me/invites/{invite_id}/accept", cookie=cookie)
        assert status == 404

    # the real addressees still get what was reserved for them
    status, body, _ = sign_in(server, token(f"idp|kelly-{tag}", f"Kelly-{tag}@Example.COM"))
    assert status == 200 and body["data"]["consumer"]["id"] == reserved["consumer_id"]
    status, _, ana = sign_in(server, token(f"idp|ana-{tag}", ana_email))
    assert status == 200
    status, invites = call(server, "GET", "/api/auth/me/invites", cookie=ana)
    assert [row["id"] for row in invites["invites"]] == [invite_id]
    status, _ = call(server, "POST", f"/api/auth/me/invites/{invite_id}/accept", cookie=ana)
    assert status == 200


def test_unverified_email_never_binds_a_reservation_later_either(
    module_db_url: str, server: LiveServer, tag: str
) -> None:
    kelly = f"kelly-{tag}@example.com"
    reserved = svc(module_db_url, "consumer", "create", "--plan", "pro", "--email", kelly)
    status, body, _ = sign_in(server, token(f"idp|kelly-{tag}", kelly, email_verified=False))
    assert status == 200 and body["data"]["consumer"]["id"] != reserved["consumer_id"]
    # the reservation stays for a verified sign-in
    status, body, _ = sign_in(server, token(f"idp|kelly2-{tag}", kelly, email_verified=True))
    assert status == 200 and body["data"]["consumer"]["id"] == reserved["consumer_id"]


# 6: one subject's claim never blocks another's sign-in ---------------------------------


def test_a_claimed_email_never_locks_another_subject_out(server: LiveServer, tag: str) -> None:
    shared = f"shared-{tag}@example.com"
    victim, victim2, victim3 = (f"idp|{who}-{tag}" for who in ("victim", "victim2", "victim3"))
    # mallory claims the placeholder addresses victims without a usable email get, and a
    # real address another subject signs in with later
    squats = [
        sign_in(server, token(f"idp|mallory-{tag}", squat))
        for squat in (f"{victim}@users.invalid", f"{victim2}@USERS.invalid")
    ]
    status, _, _ = sign_in(server, token(f"idp|mallory2-{tag}", shared))
    assert status == 200
    for attempt in (
        token(victim),
        token(victim2, shared),
        token(victim2, shared),  # again: the same account
        token(victim3, shared, email_verified=False),
    ):
        status, body, cookie = sign_in(server, attempt)
        assert status == 200, body
        assert body["data"]["user"]["email"] != shared
        status, usage = call(server, "GET", "/api/auth/me/usage", cookie=cookie)
        assert status == 200, usage
    for status, body, _ in squats:  # the claim itself is refused, and says why
        assert status == 401 and body["error"]["code"] == "JWT_INVALID", body
    first = sign_in(server, token(victim2, shared))[1]["data"]
    again = sign_in(server, token(victim2, shared))[1]["data"]
    assert first["user"]["id"] == again["user"]["id"]
    assert first["consumer"]["id"] == again["consumer"]["id"]


# 7: sessions have an absolute lifetime ---------------------------------------------------


def test_a_session_ends_at_its_absolute_lifetime_however_busy(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    """A server of its own: the lifetime is a setting (4 s here, 12 h by default)."""
    server = serve(live_server_factory, sqlite_url, SVC_SESSION_MAX_AGE="4")
    started = time.time()
    status, body, cookie = sign_in(server, token("idp|ana", "ana@example.com"))
    assert status == 200
    ends = body["data"]["session_expires_at"]
    assert ends == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(started) + 4)) or (
        ends == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(started) + 5))
    )
    # Busy: a call every 0.05 s (each one would slide an idle timeout) until the session
    # has answered 401 five times in a row, or 7 s after the sign-in at the latest.
    seen: list[int] = []
    while seen[-5:] != [401] * 5 and time.time() < started + 7:
        seen.append(call(server, "GET", "/api/auth/me/usage", cookie=cookie)[0])
        time.sleep(0.05)
    assert seen[0] == 200 and seen[-1] == 401
    assert seen == sorted(seen)  # never back to 200 once ended
    status, body = call(server, "GET", "/api/auth/me/usage", cookie=cookie)
    assert (status, body["error"]["code"]) == (401, "NOT_SIGNED_IN")


# 9: concurrent revokes and removals: one winner, one event ------------------------------


@pytest.mark.parametrize("round_", range(4))
def test_six_revokes_of_one_key_have_one_winner_and_one_event(
    module_db_url: str, server: LiveServer, tag: str, round_: int
) -> None:
    status, body, cookie = sign_in(server, token(f"idp|ana-{tag}", f"ana-{tag}@example.com"))
    assert status == 200
    consumer_id = body["data"]["consumer"]["id"]
    status, keys = call(server, "GET", "/api/auth/me/keys", cookie=cookie)
    key_id = keys["data"][0]["id"]

    method, suffix = ("POST", "/revoke") if round_ % 2 == 0 else ("DELETE", "")
    statuses = at_once(server, 6, method, f"/api/auth/me/keys/{key_id}{suffix}", cookie)
    assert statuses == [200, 404, 404, 404, 404, 404]
    store = open_store(module_db_url)
    try:
        with store.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT id FROM events WHERE type = 'key.revoked' AND consumer_id = ?",
                (consumer_id,),
            )
    finally:
        store.close()
    assert len(rows) == 1


@pytest.mark.parametrize("round_", range(4))
def test_six_removals_of_one_member_have_one_winner(
    module_db_url: str, server: LiveServer, tag: str, round_: int
) -> None:
    boss_email, ana_email = f"boss-{tag}@example.com", f"ana-{tag}@example.com"
    svc(module_db_url, "consumer", "create", "--plan", "team", "--email", boss_email)
    boss = sign_in(server, token(f"idp|boss-{tag}", boss_email))[2]
    status, invited = call(server, "POST", "/api/auth/me/team", {"email": ana_email}, cookie=boss)
    assert status == 200
    member_id = invited["data"]["id"]
    if round_:
        ana = sign_in(server, token(f"idp|ana-{tag}", ana_email))[2]
        assert (
            call(server, "POST", f"/api/auth/me/invites/{member_id}/accept", cookie=ana)[0] == 200
        )

    statuses = at_once(server, 6, "DELETE", f"/api/auth/me/team/{member_id}", boss)
    assert statuses == [200, 404, 404, 404, 404, 404]
