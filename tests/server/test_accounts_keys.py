"""API keys through HTTP: create, list, patch, rotate, revoke, limits, IP allowlists, roles,
CSRF, and which credential wins where."""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from svc_server.app import SvcApp
from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock
from tests.server.accounts_support import DATA_PATH, counts, events_of

KEYS = "/api/auth/me/keys"
ROW_FIELDS = {
    "id",
    "label",
    "prefix",
    "mode",
    "scope",
    "ip_allowlist",
    "status",
    "created_at",
    "grace_until",
    "last_used_at",
}


def pro_owner(accounts: Accounts, email: str = "owner@example.com") -> tuple[str, str, Client]:
    """A pro consumer owned by ``email``: (consumer_id, its first key, signed-in browser)."""
    consumer_id, key = accounts.consumer("pro", email=email)
    return consumer_id, key, accounts.browser(email)


def create(browser: Client, **body: Any) -> Any:
    payload = {"label": "ci", "mode": "live", "scope": "read_only", **body}
    return browser.post(KEYS, json=payload, headers=ORIGIN)


def data_call(client: Client, key: str, **kwargs: Any) -> Any:
    return client.get(DATA_PATH, headers={"X-API-Key": key}, **kwargs)


def key_id_of(store: Store, plaintext: str) -> str:
    with store.db.transaction(write=False) as tx:
        row = tx.fetchone(
            "SELECT id FROM api_keys WHERE key_hash = ?",
            (hashlib.sha256(plaintext.encode()).hexdigest(),),
        )
    assert row is not None
    return str(row["id"])


# create and list ---------------------------------------------------------------------------


def test_create_returns_the_plaintext_once_and_list_never_shows_it(
    accounts: Accounts, client: Client, clock: FakeClock
) -> None:
    _, _, browser = pro_owner(accounts)
    r = create(
        browser,
        label="Reporting job",
        mode="test",
        scope="admin",
        ip_allowlist=["203.0.113.0/24", "2001:DB8::/32"],
    )
    assert r.status_code == 200, r.get_json()
    row = r.get_json()["data"]
    assert set(row) == ROW_FIELDS | {"key"}
    assert row["key"].startswith("svc_pk_test_") and len(row["key"]) == 44
    assert row["prefix"] == row["key"][:16]
    assert row["ip_allowlist"] == ["203.0.113.0/24", "2001:db8::/32"]
    assert (row["label"], row["mode"], row["scope"], row["status"]) == (
        "Reporting job",
        "test",
        "admin",
        "active",
    )
    assert row["grace_until"] is None and row["last_used_at"] is None
    assert r.get_json()["meta"]["request_id"] == r.headers["X-Request-ID"]
    listed = browser.get(KEYS)
    assert listed.status_code == 200
    rows = listed.get_json()["data"]
    assert len(rows) == 2
    for item in rows:
        assert set(item) == ROW_FIELDS
    assert row["key"] not in listed.get_data(as_text=True)
    assert hashlib.sha256(row["key"].encode()).hexdigest() not in listed.get_data(as_text=True)


def test_label_of_64_characters_is_accepted_65_refused(accounts: Accounts) -> None:
    _, _, browser = pro_owner(accounts)
    assert create(browser, label="x" * 64).status_code == 200
    r = create(browser, label="x" * 65)
    assert r.status_code == 400
    assert r.get_json()["error"]["code"] == "INVALID_PARAMS"


def test_key_limit_is_402_after_the_body_is_validated(accounts: Accounts, store: Store) -> None:
    _, _, browser = pro_owner(accounts)  # pro: 5 keys, 1 exists
    for n in range(4):
        assert create(browser, label=f"k{n}").status_code == 200
    before = counts(store)
    r = create(browser, label="sixth")
    assert r.status_code == 402
    assert r.get_json()["error"]["code"] == "KEY_LIMIT_REACHED"
    bad = create(browser, mode="staging")
    assert bad.status_code == 400  # validation first, then the limit
    assert counts(store) == before


def test_starter_holds_exactly_one_key(accounts: Accounts) -> None:
    browser = accounts.browser("solo@example.com")  # sign-in made the starter key
    r = create(browser)
    assert r.status_code == 402
    assert r.get_json()["error"]["code"] == "KEY_LIMIT_REACHED"


# patch --------------------------------------------------------------------------------------


def test_patch_changes_label_and_allowlist_only(accounts: Accounts, store: Store) -> None:
    _, key, browser = pro_owner(accounts)
    key_id = key_id_of(store, key)
    r = browser.patch(
        f"{KEYS}/{key_id}",
        json={"label": "renamed", "ip_allowlist": ["10.0.0.0/8"]},
        headers=ORIGIN,
    )
    assert r.status_code == 200, r.get_json()
    row = r.get_json()["data"]
    assert (row["label"], row["ip_allowlist"], row["id"]) == ("renamed", ["10.0.0.0/8"], key_id)
    r = browser.patch(f"{KEYS}/{key_id}", json={"ip_allowlist": []}, headers=ORIGIN)
    assert r.get_json()["data"] == {**row, "ip_allowlist": []}
    for body in ({"mode": "test"}, {"scope": "admin"}, {"key_hash": "00"}, {"status": "active"}):
        r = browser.patch(f"{KEYS}/{key_id}", json=body, headers=ORIGIN)
        assert r.status_code == 400, body


def test_patch_unknown_or_foreign_key_is_404(accounts: Accounts, store: Store) -> None:
    _, _, browser = pro_owner(accounts)
    _, other_key = accounts.consumer("pro")
    foreign = key_id_of(store, other_key)
    for key_id in (str(uuid.uuid4()), foreign):
        r = browser.patch(f"{KEYS}/{key_id}", json={"label": "mine"}, headers=ORIGIN)
        assert r.status_code == 404
        assert r.get_json()["error"]["code"] == "NOT_FOUND"
    with store.db.transaction(write=False) as tx:
        row = tx.fetchone("SELECT label FROM api_keys WHERE id = ?", (foreign,))
    assert row == {"label": "default"}


# rotate -------------------------------------------------------------------------------------


def test_rotate_keeps_the_old_key_until_grace_until(
    accounts: Accounts, client: Client, store: Store, clock: FakeClock
) -> None:
    consumer_id, old, browser = pro_owner(accounts)
    old_id = key_id_of(store, old)
    r = browser.post(f"{KEYS}/{old_id}/rotate", json={"grace_period_seconds": 3600}, headers=ORIGIN)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    new = body["data"]["key"]
    assert body["previous"]["id"] == old_id
    assert body["previous"]["status"] == "grace"
    grace_until = body["previous"]["grace_until"]
    assert body["data"]["status"] == "active" and body["data"]["prefix"] == new[:16]
    assert data_call(client, new).status_code == 200
    assert data_call(client, old).status_code == 200
    clock.advance(3599)
    assert data_call(client, old).status_code == 200
    browser = accounts.browser("owner@example.com")  # the first session idled out
    statuses = {row["id"]: row["status"] for row in browser.get(KEYS).get_json()["data"]}
    assert statuses[old_id] == "grace"
    clock.advance(1)
    r = data_call(client, old)
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "UNAUTHORIZED"
    assert data_call(client, new).status_code == 200
    statuses = {row["id"]: row["status"] for row in browser.get(KEYS).get_json()["data"]}
    assert statuses[old_id] == "expired"
    [event] = [e for e in events_of(store, consumer_id) if e["type"] == "key.rotated"]
    data = event["payload"]["data"]
    assert data["key"]["id"] == old_id and data["actor"] == "self"
    assert data["new_key_id"] == body["data"]["id"]
    assert data["new_key_prefix"] == new[:16]
    assert data["grace_until"] == grace_until


def test_rotate_defaults_to_one_day_and_grace_zero_cuts_off_at_once(
    accounts: Accounts, client: Client, store: Store, clock: FakeClock
) -> None:
    _, old, browser = pro_owner(accounts)
    old_id = key_id_of(store, old)
    r = browser.post(f"{KEYS}/{old_id}/rotate", headers=ORIGIN)  # no body: the default
    assert r.status_code == 200
    body = r.get_json()
    from datetime import UTC, datetime

    expected = datetime.fromtimestamp(int(clock()) + 86400, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert body["previous"]["grace_until"] == expected
    second = body["data"]["key"]
    second_id = body["data"]["id"]
    r = browser.post(f"{KEYS}/{second_id}/rotate", json={"grace_period_seconds": 0}, headers=ORIGIN)
    assert r.status_code == 200
    assert data_call(client, second).status_code == 401
    assert data_call(client, r.get_json()["data"]["key"]).status_code == 200


def test_rotation_is_allowed_at_the_key_limit(accounts: Accounts, store: Store) -> None:
    browser = accounts.browser("solo@example.com")  # starter: 1 key, the limit
    [row] = browser.get(KEYS).get_json()["data"]
    r = browser.post(f"{KEYS}/{row['id']}/rotate", json={}, headers=ORIGIN)
    assert r.status_code == 200


def test_second_rotation_of_the_same_key_is_409(accounts: Accounts, store: Store) -> None:
    _, old, browser = pro_owner(accounts)
    old_id = key_id_of(store, old)
    assert browser.post(f"{KEYS}/{old_id}/rotate", headers=ORIGIN).status_code == 200
    before = counts(store)
    r = browser.post(f"{KEYS}/{old_id}/rotate", headers=ORIGIN)
    assert r.status_code == 409
    assert r.get_json()["error"]["code"] == "KEY_NOT_ACTIVE"
    assert counts(store) == before


def test_concurrent_rotations_one_wins(accounts: Accounts, app: SvcApp, store: Store) -> None:
    _, old, browser = pro_owner(accounts)
    old_id = key_id_of(store, old)
    cookie = browser.get_cookie("svc_session")
    assert cookie is not None
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def rotate() -> None:
        c = Client(app)
        c.set_cookie("svc_session", cookie.value)
        barrier.wait()
        statuses.append(c.post(f"{KEYS}/{old_id}/rotate", headers=ORIGIN).status_code)

    threads = [threading.Thread(target=rotate) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 409, 409, 409]
    with store.db.transaction(write=False) as tx:
        assert tx.fetchone("SELECT COUNT(*) AS n FROM api_keys") == {"n": 2}


# revoke -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["post", "delete"])
def test_revoke_rejects_the_key_at_once_and_records_the_event(
    accounts: Accounts, client: Client, store: Store, how: str
) -> None:
    consumer_id, key, browser = pro_owner(accounts)
    key_id = key_id_of(store, key)
    assert data_call(client, key).status_code == 200
    if how == "post":
        r = browser.post(f"{KEYS}/{key_id}/revoke", headers=ORIGIN)
    else:
        r = browser.delete(f"{KEYS}/{key_id}", headers=ORIGIN)
    assert r.status_code == 200
    body = r.get_json()
    assert body["revoked"] is True and set(body["meta"]) == {"request_id", "timestamp"}
    refused = data_call(client, key)
    assert refused.status_code == 401
    assert refused.get_json()["error"]["code"] == "UNAUTHORIZED"
    [event] = [e for e in events_of(store, consumer_id) if e["type"] == "key.revoked"]
    assert event["payload"]["data"]["key"] == {"id": key_id, "prefix": key[:16]}
    assert event["payload"]["data"]["actor"] == "self"
    assert event["id"].startswith(f"evt_key_revoked_{key_id}_")
    again = browser.post(f"{KEYS}/{key_id}/revoke", headers=ORIGIN)
    assert again.status_code == 404
    assert [row["status"] for row in browser.get(KEYS).get_json()["data"]] == ["revoked"]
    # a revoked key frees its slot under the plan's limit
    assert create(browser).status_code == 200


def test_last_used_at_is_recorded(accounts: Accounts, client: Client, clock: FakeClock) -> None:
    _, key, browser = pro_owner(accounts)
    [row] = browser.get(KEYS).get_json()["data"]
    assert row["last_used_at"] is None
    clock.advance(5)
    data_call(client, key)
    [row] = browser.get(KEYS).get_json()["data"]
    from datetime import UTC, datetime

    assert row["last_used_at"] == datetime.fromtimestamp(int(clock()), UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


# IP allowlist ---------------------------------------------------------------------------------


def test_ip_allowlist_is_enforced_for_ipv4_and_ipv6(accounts: Accounts, client: Client) -> None:
    _, _, browser = pro_owner(accounts)
    key = create(browser, ip_allowlist=["203.0.113.0/24", "2001:db8::/32"]).get_json()["data"][
        "key"
    ]
    allowed = ["203.0.113.9", "2001:db8::5", "::ffff:203.0.113.9"]
    refused = ["198.51.100.1", "2001:db9::1", "127.0.0.1", "::1"]
    for addr in allowed:
        assert data_call(client, key, environ_base={"REMOTE_ADDR": addr}).status_code == 200, addr
    for addr in refused:
        r = data_call(client, key, environ_base={"REMOTE_ADDR": addr})
        assert r.status_code == 403, addr
        assert r.get_json()["error"]["code"] == "IP_NOT_ALLOWED"


def test_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy(
    accounts: Accounts, store: Store, make_app: Callable[..., SvcApp]
) -> None:
    import ipaddress

    _, _, browser = pro_owner(accounts)
    key = create(browser, ip_allowlist=["203.0.113.0/24"]).get_json()["data"]["key"]
    via_proxy = {"REMOTE_ADDR": "10.1.2.3"}
    spoof = {"X-API-Key": key, "X-Forwarded-For": "203.0.113.9"}
    plain = Client(make_app(store))
    assert plain.get(DATA_PATH, headers=spoof, environ_base=via_proxy).status_code == 403
    behind_proxy = Client(make_app(store, trusted_proxies=(ipaddress.ip_network("10.0.0.0/8"),)))
    assert behind_proxy.get(DATA_PATH, headers=spoof, environ_base=via_proxy).status_code == 200
    # a client cannot prepend its own hop: the proxy-appended address decides
    chained = {"X-API-Key": key, "X-Forwarded-For": "203.0.113.9, 198.51.100.7"}
    assert behind_proxy.get(DATA_PATH, headers=chained, environ_base=via_proxy).status_code == 403
    # a spoofed header from an untrusted peer does not help either
    direct = {"REMOTE_ADDR": "198.51.100.7"}
    assert behind_proxy.get(DATA_PATH, headers=spoof, environ_base=direct).status_code == 403


# roles, CSRF and which credential counts -------------------------------------------------------


def test_members_read_but_cannot_write(accounts: Accounts, store: Store) -> None:
    _, key, owner = pro_owner(accounts)
    invite = owner.post("/api/auth/me/team", json={"email": "mia@example.com"}, headers=ORIGIN)
    member = accounts.browser("mia@example.com")
    invite_id = invite.get_json()["data"]["id"]
    assert (
        member.post(f"/api/auth/me/invites/{invite_id}/accept", headers=ORIGIN).status_code == 200
    )
    assert member.get(KEYS).status_code == 200
    assert len(member.get(KEYS).get_json()["data"]) == 1  # the pro account's key
    key_id = key_id_of(store, key)
    before = counts(store)
    attempts = [
        member.post(KEYS, json={"label": "x", "mode": "live", "scope": "admin"}, headers=ORIGIN),
        member.patch(f"{KEYS}/{key_id}", json={"label": "x"}, headers=ORIGIN),
        member.post(f"{KEYS}/{key_id}/rotate", headers=ORIGIN),
        member.post(f"{KEYS}/{key_id}/revoke", headers=ORIGIN),
        member.delete(f"{KEYS}/{key_id}", headers=ORIGIN),
    ]
    for r in attempts:
        assert r.status_code == 403
        assert r.get_json()["error"]["code"] == "FORBIDDEN"
    assert counts(store) == before


def test_cookie_writes_need_the_site_origin(accounts: Accounts, store: Store) -> None:
    _, _, browser = pro_owner(accounts)
    body = {"label": "x", "mode": "live", "scope": "read_only"}
    before = counts(store)
    for headers in ({}, {"Origin": "https://evil.example"}, {"Origin": "null"}):
        r = browser.post(KEYS, json=body, headers=headers)
        assert r.status_code == 403, headers
        assert r.get_json()["error"]["code"] == "CSRF_REJECTED"
    r = browser.post(KEYS, json=body, headers={"Referer": "https://evil.example/app.example.com"})
    assert r.status_code == 403
    assert counts(store) == before
    r = browser.post(KEYS, json=body, headers={"Referer": "https://app.example.com/dashboard"})
    assert r.status_code == 200


def test_api_key_is_not_accepted_on_account_endpoints(accounts: Accounts, client: Client) -> None:
    _, key = accounts.consumer("pro")
    r = client.get("/api/auth/me/usage", headers={"X-API-Key": key})
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "NOT_SIGNED_IN"
    r = client.get(KEYS, headers={"X-API-Key": key})
    assert r.status_code == 401


def test_key_wins_over_cookie_on_the_data_api(accounts: Accounts) -> None:
    _, key = accounts.consumer("team")
    browser = accounts.browser("ana@example.com")  # a starter user
    r = browser.get(DATA_PATH)
    assert r.get_json()["_meta"]["auth_method"] == "session"
    assert r.get_json()["_meta"]["tier"] == "starter"
    r = browser.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.get_json()["_meta"]["auth_method"] == "api_key"
    assert r.get_json()["_meta"]["tier"] == "team"
    bad = browser.get(DATA_PATH, headers={"X-API-Key": "svc_pk_live_" + "0" * 32})
    assert bad.status_code == 401  # a bad key is not rescued by the cookie


def test_test_mode_keys_read_the_same_data_with_60_per_minute(
    accounts: Accounts, client: Client
) -> None:
    _, _, browser = pro_owner(accounts)
    key = create(browser, mode="test").get_json()["data"]["key"]
    r = data_call(client, key)
    assert r.status_code == 200
    assert r.headers["X-RateLimit-Limit"] == "60"
    assert "X-Quota-Limit" not in r.headers


def test_tier_gate_follows_the_key_or_the_users_highest_plan(
    accounts: Accounts, client: Client
) -> None:
    dong = f"{DATA_PATH}?geo_precision=dong"
    _, starter_key = accounts.consumer("starter")
    r = client.get(dong, headers={"X-API-Key": starter_key})
    assert r.status_code == 403
    error = r.get_json()["error"]
    assert error["code"] == "TIER_RESTRICTED"
    assert (error["current_tier"], error["required_tier"]) == ("starter", "pro")
    assert error["upgrade_url"].startswith("http")
    _, _, boss = pro_owner(accounts, "boss@example.com")
    assert boss.get(dong).status_code == 200  # cookie: the user's highest plan (pro)
    invite = boss.post("/api/auth/me/team", json={"email": "mia@example.com"}, headers=ORIGIN)
    mia = accounts.browser("mia@example.com")
    assert mia.get(dong).status_code == 403  # her own starter account
    mia.post(f"/api/auth/me/invites/{invite.get_json()['data']['id']}/accept", headers=ORIGIN)
    assert mia.get(dong).status_code == 200  # now a member of a pro account


def test_plaintext_keys_and_tokens_never_reach_the_logs(
    accounts: Accounts, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    _, key, browser = pro_owner(accounts)
    made = create(browser).get_json()["data"]["key"]
    client.get(DATA_PATH, headers={"X-API-Key": key})
    client.get(DATA_PATH, headers={"X-API-Key": made[:-1] + "z"})  # malformed: not echoed
    cookie = browser.get_cookie("svc_session")
    assert cookie is not None
    text = caplog.text
    assert caplog.records  # the access log did record these requests
    for secret in (key, made, made[:-1] + "z", cookie.value):
        assert secret not in text
