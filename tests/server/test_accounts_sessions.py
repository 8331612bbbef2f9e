"""Sign-in with identity-provider JWTs, the svc_session cookie, renewal and sign-out.

Tokens are minted with real keys (an RSA and an EC key published in a JWKS file, an
HS256 secret) and sent through HTTP to ``POST /api/auth/session``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from werkzeug.test import Client, TestResponse

from svc_server.app import SvcApp
from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock, IdentityProvider
from tests.server.accounts_support import DATA_PATH, counts, execute

SESSION = "/api/auth/session"
USAGE = "/api/auth/me/usage"


@pytest.fixture
def db_url(sqlite_url: str) -> str:
    """SQLite only: the account SQL runs on PostgreSQL in the key, quota and team tests."""
    return sqlite_url


@pytest.fixture
def web(jwt_app: SvcApp) -> Client:
    return Client(jwt_app)


def sign_in(client: Client, token: object) -> TestResponse:
    return client.post(SESSION, json={"jwt": token})


def set_cookies(response: TestResponse) -> list[str]:
    return [c for c in response.headers.getlist("Set-Cookie") if c.startswith("svc_session=")]


def cookie_attributes(header: str) -> dict[str, str]:
    parts = [p.strip() for p in header.split(";")]
    out = {}
    for part in parts[1:]:
        name, _, value = part.partition("=")
        out[name.lower()] = value
    return out


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def handmade(header: dict[str, Any], payload: dict[str, Any], mac_key: bytes | None) -> str:
    """A token built by hand, as an attacker would; PyJWT refuses to make these."""
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    signature = b""
    if mac_key is not None:
        signature = hmac.new(mac_key, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(signature)


# signing in ----------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["RS256", "ES256", "HS256"])
def test_first_sign_in_creates_starter_consumer_with_one_key(
    web: Client, idp: IdentityProvider, store: Store, clock: FakeClock, alg: str
) -> None:
    r = sign_in(web, idp.token(alg, "Ana@Example.com"))
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    data = body["data"]
    assert data["user"]["email"] == "ana@example.com"
    assert data["consumer"]["plan"] == "starter"
    assert re.fullmatch(r"svc_pk_live_[0-9a-f]{32}", data["api_key"])
    assert data["session_expires_at"] == _iso(clock() + 900)
    assert body["meta"]["request_id"] == r.headers["X-Request-ID"]
    assert r.headers["Cache-Control"] == "private, no-store"
    # the key it printed works, and the cookie reaches the account endpoints
    keyed = web.get(DATA_PATH, headers={"X-API-Key": data["api_key"]})
    assert keyed.status_code == 200
    assert web.get(USAGE).get_json()["data"]["plan"] == "starter"
    # the key is stored only as its SHA-256 digest
    with store.db.transaction(write=False) as tx:
        rows = tx.fetchall("SELECT key_hash, prefix FROM api_keys")
    assert rows == [
        {
            "key_hash": hashlib.sha256(data["api_key"].encode()).hexdigest(),
            "prefix": data["api_key"][:16],
        }
    ]


def test_second_sign_in_returns_no_key_and_creates_nothing_new(
    web: Client, idp: IdentityProvider, store: Store
) -> None:
    first = sign_in(web, idp.token("RS256", "ana@example.com")).get_json()["data"]
    before = counts(store)
    second = sign_in(web, idp.token("HS256", "ana@example.com"))
    assert second.status_code == 200
    data = second.get_json()["data"]
    assert "api_key" not in data
    assert data["user"] == first["user"]
    assert data["consumer"] == first["consumer"]
    after = counts(store)
    assert after["sessions"] == before["sessions"] + 1
    assert {k: v for k, v in after.items() if k != "sessions"} == {
        k: v for k, v in before.items() if k != "sessions"
    }


def test_sign_in_claims_a_consumer_made_for_the_email_by_an_operator(
    web: Client, idp: IdentityProvider, accounts: Accounts
) -> None:
    consumer_id, _ = accounts.consumer("pro", email="boss@example.com")
    r = sign_in(web, idp.token("ES256", "boss@example.com"))
    data = r.get_json()["data"]
    assert data["consumer"] == {"id": consumer_id, "plan": "pro"}
    assert "api_key" not in data


def test_cookie_attributes_default_development(web: Client, idp: IdentityProvider) -> None:
    r = sign_in(web, idp.token())
    [header] = set_cookies(r)
    attrs = cookie_attributes(header)
    assert "httponly" in attrs
    assert attrs["samesite"] == "Lax"
    assert attrs["path"] == "/"
    assert attrs["max-age"] == "900"
    assert "secure" not in attrs  # the test app runs with cookie_secure off
    assert "domain" not in attrs


def test_cookie_is_secure_and_scoped_to_the_parent_domain_when_configured(
    store: Store, make_app: Callable[..., SvcApp], idp: IdentityProvider
) -> None:
    app = make_app(store, cookie_secure=True, cookie_domain="example.com", **idp.settings())
    r = Client(app).post(SESSION, json={"jwt": idp.token()})
    [header] = set_cookies(r)
    attrs = cookie_attributes(header)
    assert "secure" in attrs and "httponly" in attrs
    assert attrs["domain"] in ("example.com", ".example.com")
    assert attrs["samesite"] == "Lax" and attrs["max-age"] == "900"


def test_session_slides_with_activity_and_ends_after_15_idle_minutes(
    web: Client, idp: IdentityProvider, clock: FakeClock
) -> None:
    sign_in(web, idp.token())
    clock.advance(10 * 60)
    r = web.get(USAGE)
    assert r.status_code == 200
    assert cookie_attributes(set_cookies(r)[0])["max-age"] == "900"  # re-sent, renewed
    clock.advance(10 * 60)  # 20 minutes after sign-in, 10 after the last activity
    assert web.get(USAGE).status_code == 200
    assert web.get(DATA_PATH).status_code == 200  # cookie callers of the data API renew too
    clock.advance(16 * 60)
    r = web.get(USAGE)
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "NOT_SIGNED_IN"
    data = web.get(DATA_PATH)
    assert data.status_code == 401
    assert data.get_json()["error"]["code"] == "UNAUTHORIZED"


def test_session_still_valid_just_before_15_minutes(
    web: Client, idp: IdentityProvider, clock: FakeClock
) -> None:
    sign_in(web, idp.token())
    clock.advance(899)
    assert web.get(USAGE).status_code == 200
    clock.advance(899)
    assert web.get(USAGE).status_code == 200
    clock.advance(900)
    assert web.get(USAGE).status_code == 401


def test_sign_out_revokes_the_session_server_side(
    web: Client, idp: IdentityProvider, store: Store
) -> None:
    sign_in(web, idp.token())
    cookie = web.get_cookie("svc_session")
    assert cookie is not None
    old = cookie.value
    r = web.delete(SESSION, headers=ORIGIN)
    assert r.status_code == 200
    assert r.get_json()["signed_out"] is True
    [cleared] = set_cookies(r)
    assert cookie_attributes(cleared).get("max-age") == "0" or "expires" in cleared.lower()
    # the browser dropped it; a replay of the old value is refused everywhere
    replay = Client(web.application)
    replay.set_cookie("svc_session", old)
    r = replay.get(USAGE)
    assert r.status_code == 401 and r.get_json()["error"]["code"] == "NOT_SIGNED_IN"
    r = replay.get(DATA_PATH)
    assert r.status_code == 401 and r.get_json()["error"]["code"] == "UNAUTHORIZED"
    with store.db.transaction(write=False) as tx:
        row = tx.fetchone("SELECT revoked_at FROM sessions")
    assert row is not None and row["revoked_at"] is not None


def test_sign_out_needs_the_site_origin(web: Client, idp: IdentityProvider) -> None:
    sign_in(web, idp.token())
    r = web.delete(SESSION)
    assert r.status_code == 403
    assert r.get_json()["error"]["code"] == "CSRF_REJECTED"
    assert web.get(USAGE).status_code == 200  # still signed in


def test_sign_out_without_a_session_is_401(web: Client) -> None:
    r = web.delete(SESSION, headers=ORIGIN)
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "NOT_SIGNED_IN"


def test_tampered_cookie_is_refused(web: Client, idp: IdentityProvider) -> None:
    sign_in(web, idp.token())
    cookie = web.get_cookie("svc_session")
    assert cookie is not None
    value = cookie.value
    for position in (0, 10, len(value) - 2):  # (the last char carries base64 pad bits)
        chars = list(value)
        chars[position] = "A" if value[position] != "A" else "B"
        forged = Client(web.application)
        forged.set_cookie("svc_session", "".join(chars))
        r = forged.get(USAGE)
        assert r.status_code == 401, position
        assert r.get_json()["error"]["code"] == "NOT_SIGNED_IN"
    assert web.get(USAGE).status_code == 200


def test_cookie_signed_with_another_secret_is_refused(
    store: Store, make_app: Callable[..., SvcApp], accounts: Accounts
) -> None:
    browser = accounts.browser("ana@example.com")
    cookie = browser.get_cookie("svc_session")
    assert cookie is not None
    other = Client(make_app(store, secret_key="another-secret-key-0123456789"))
    other.set_cookie("svc_session", cookie.value)
    assert other.get(USAGE).status_code == 401


# refused tokens: 401 JWT_INVALID, no cookie, nothing stored --------------------------------


def _bad_tokens(idp: IdentityProvider) -> dict[str, str]:
    claims = idp.claims()
    rsa_public_pem = idp.rsa_key.public_key().public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "alg none": handmade({"alg": "none", "typ": "JWT"}, claims, None),
        "alg None": handmade({"alg": "None"}, claims, None),
        "HS256 keyed with the RSA public key": handmade(
            {"alg": "HS256", "kid": "rsa-1"}, claims, rsa_public_pem
        ),
        "RS256 by another key": jwt.encode(
            claims,
            idp.other_rsa_key,  # type: ignore[arg-type]
            algorithm="RS256",
            headers={"kid": "rsa-1"},
        ),
        "HS256 with a wrong secret": jwt.encode(
            claims, "not-the-providers-secret-0123456789", algorithm="HS256"
        ),
        "unknown kid": jwt.encode(
            claims,
            idp.rsa_key,  # type: ignore[arg-type]
            algorithm="RS256",
            headers={"kid": "../../etc/passwd"},
        ),
        "RS384": jwt.encode(
            claims,
            idp.rsa_key,  # type: ignore[arg-type]
            algorithm="RS384",
            headers={"kid": "rsa-1"},
        ),
        "wrong audience": idp.token("RS256", aud="someone-else"),
        "wrong issuer": idp.token("ES256", iss="https://evil.example/"),
        "expired": idp.token("HS256", exp=int(idp.clock()) - 61),
        "no exp": idp.token("RS256", exp=None),
        "not yet valid": idp.token("RS256", nbf=int(idp.clock()) + 120),
        "no sub": idp.token("HS256", sub=None),
        "garbage": "not-a-token",
        "two segments": "abc.def",
        "four segments": idp.token() + ".x",
        "oversized": "a" * 9000,
    }


def test_bad_tokens_are_refused_and_change_nothing(
    web: Client, idp: IdentityProvider, store: Store
) -> None:
    before = counts(store)
    for name, token in _bad_tokens(idp).items():
        r = sign_in(web, token)
        assert r.status_code == 401, (name, r.get_json())
        body = r.get_json()
        assert body["error"]["code"] == "JWT_INVALID", name
        assert body["error"]["request_id"] == r.headers["X-Request-ID"], name
        assert set_cookies(r) == [], name
        assert counts(store) == before, name
    assert web.get_cookie("svc_session") is None
    assert sign_in(web, idp.token()).status_code == 200  # the provider's own token still works


def test_expiry_leeway_is_30_seconds(web: Client, idp: IdentityProvider) -> None:
    assert sign_in(web, idp.token(exp=int(idp.clock()) - 20)).status_code == 200
    assert sign_in(web, idp.token(exp=int(idp.clock()) - 31)).status_code == 401


def test_sign_in_body_errors(web: Client, store: Store) -> None:
    before = counts(store)
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({}, 401, "JWT_INVALID"),
        ({"jwt": ""}, 401, "JWT_INVALID"),
        ({"jwt": 42}, 401, "JWT_INVALID"),
        ({"jwt": None}, 401, "JWT_INVALID"),
        ({"jwt": ["a.b.c"]}, 401, "JWT_INVALID"),
        ({"jwt": "x", "admin": True}, 400, "INVALID_PARAMS"),
    ]
    for body, status, code in cases:
        r = web.post(SESSION, json=body)
        assert (r.status_code, r.get_json()["error"]["code"]) == (status, code), body
        assert set_cookies(r) == []
    assert counts(store) == before


def test_sign_in_refuses_non_json(web: Client, idp: IdentityProvider) -> None:
    r = web.post(SESSION, data=f"jwt={idp.token()}", content_type="text/plain")
    assert r.status_code == 415
    r = web.post(SESSION, data=b"{not json", content_type="application/json")
    assert r.status_code == 400


def test_sign_in_without_a_configured_provider_is_refused(
    client: Client, idp: IdentityProvider, store: Store
) -> None:
    before = counts(store)
    r = client.post(SESSION, json={"jwt": idp.token()})
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "JWT_INVALID"
    assert counts(store) == before


def test_unverified_email_does_not_claim_an_invited_account(
    web: Client, idp: IdentityProvider, accounts: Accounts
) -> None:
    accounts.consumer("pro", email="boss@example.com")
    r = sign_in(web, idp.token("RS256", "boss@example.com", email_verified=False))
    data = r.get_json()["data"]
    assert data["consumer"]["plan"] == "starter"  # a fresh account, not the boss's
    assert data["user"]["email"] != "boss@example.com"


def test_session_user_without_consumer_gets_401_on_data(accounts: Accounts, store: Store) -> None:
    browser = accounts.browser("ana@example.com")
    execute(store, "UPDATE memberships SET status = 'removed'")
    r = browser.get(DATA_PATH)
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "UNAUTHORIZED"


def _iso(ts: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_sign_in_from_a_foreign_site_is_refused(
    web: Client, idp: IdentityProvider, store: Store
) -> None:
    before = counts(store)
    r = web.post(SESSION, json={"jwt": idp.token()}, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403
    assert r.get_json()["error"]["code"] == "CSRF_REJECTED"
    assert set_cookies(r) == [] and counts(store) == before
    ok = web.post(SESSION, json={"jwt": idp.token()}, headers=ORIGIN)
    assert ok.status_code == 200
