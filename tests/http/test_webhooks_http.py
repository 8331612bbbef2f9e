"""The webhook endpoints API over HTTP: register, list, revoke, re-enable, test sends, the
delivery log, roles and ownership, and the URL rules with the development setting off."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from svc_core.webhooks import signing
from svc_server.config import Config
from svc_server.delivery import sender
from svc_server.identity import Identity
from svc_server.runtime.deps import new_id
from svc_server.services import sessions
from svc_server.store import Store, open_store
from tests.conftest import ORIGIN, TEST_SECRET, Accounts, FakeClock, LiveServer, Receiver

HOOKS = "/api/auth/me/webhooks"
LIST_FIELDS = {
    "id",
    "url",
    "description",
    "events",
    "filters",
    "status",
    "created_at",
    "consecutive_failures",
    "disabled_at",
}
CREATED_FIELDS = {
    "id",
    "url",
    "secret_plaintext",
    "description",
    "events",
    "filters",
    "status",
    "created_at",
}
DELIVERY_FIELDS = {
    "id",
    "event_type",
    "event_id",
    "status",
    "http_status",
    "duration_ms",
    "error_message",
    "attempt_count",
    "created_at",
}
ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def pro_owner(accounts: Accounts, email: str | None = None) -> Client:
    """A browser signed in as the owner of a pro consumer."""
    email = email or f"{uuid.uuid4().hex[:8]}@example.com"
    accounts.consumer("pro", email=email)
    return accounts.browser(email)


def register(browser: Client, url: str, **fields: Any) -> dict[str, Any]:
    r = browser.post(HOOKS, json={"url": url, **fields}, headers=ORIGIN)
    assert r.status_code == 200, r.get_json()
    return dict(r.get_json()["data"])


def count_rows(store: Store) -> tuple[int, int]:
    with store.db.transaction(write=False) as tx:
        endpoints = tx.fetchone("SELECT COUNT(*) AS n FROM webhook_endpoints")
        deliveries = tx.fetchone("SELECT COUNT(*) AS n FROM deliveries")
    assert endpoints is not None and deliveries is not None
    return int(endpoints["n"]), int(deliveries["n"])


@pytest.fixture
def sqlite_accounts(
    sqlite_store: Store, make_app: Callable[..., Any], clock: FakeClock
) -> Accounts:
    """``accounts`` on SQLite only, for tables of inputs that no backend can change."""
    return Accounts(sqlite_store, make_app(sqlite_store), clock)


def test_register_list_and_revoke(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], clock: FakeClock
) -> None:
    hook = receiver()
    browser = pro_owner(hook_accounts)
    r = browser.post(
        HOOKS,
        json={"url": hook.url, "description": "ops", "events": ["key.revoked", "key.revoked"]},
        headers=ORIGIN,
    )
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "private, no-store"
    body = r.get_json()
    assert set(body) == {"data", "meta"}
    assert body["meta"]["request_id"] == r.headers["X-Request-ID"]
    created = body["data"]
    assert set(created) == CREATED_FIELDS
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", created["secret_plaintext"])
    assert created["url"] == hook.url
    assert created["events"] == ["key.revoked"]
    assert (created["status"], created["description"]) == ("active", "ops")
    assert ISO.fullmatch(created["created_at"])

    listed = browser.get(HOOKS)
    assert listed.status_code == 200
    [row] = listed.get_json()["data"]
    assert set(row) == LIST_FIELDS
    assert row["id"] == created["id"]
    assert (row["consecutive_failures"], row["disabled_at"]) == (0, None)
    assert created["secret_plaintext"] not in listed.get_data(as_text=True)

    gone = browser.delete(f"{HOOKS}/{created['id']}", headers=ORIGIN)
    assert gone.status_code == 200
    assert gone.get_json()["revoked"] is True
    [row] = browser.get(HOOKS).get_json()["data"]
    assert row["status"] == "revoked"  # soft revoke: the record stays
    again = browser.delete(f"{HOOKS}/{created['id']}", headers=ORIGIN)
    assert (again.status_code, again.get_json()["error"]["code"]) == (404, "NOT_FOUND")
    assert browser.delete(f"{HOOKS}/{uuid.uuid4()}", headers=ORIGIN).status_code == 404
    assert browser.delete(f"{HOOKS}/not-a-uuid", headers=ORIGIN).status_code == 400


def test_events_default_to_everything(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    browser = pro_owner(hook_accounts)
    assert register(browser, receiver().url)["events"] == ["*"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"url": 5},
        {"url": ""},
        {"url": "https://hooks.example.com/x", "secret": "whsec_mine"},
        {"url": "https://hooks.example.com/x", "events": "key.revoked"},
        {"url": "https://hooks.example.com/x", "events": []},
        {"url": "https://hooks.example.com/x", "events": ["key.deleted"]},
        {"url": "https://hooks.example.com/x", "events": [7]},
        {"url": "https://hooks.example.com/x", "description": 5},
        {"url": "https://hooks.example.com/x", "description": "x" * 501},
        {"url": "https://hooks.example.com/x", "description": "a\x00b"},
        {"url": "https://hooks.example.com/x", "description": "line\nbreak"},
        {"url": "https://hooks.example.com/" + "x" * 2048},
        {"url": "https://ex ample.com/x"},
        {"url": "ftp://hooks.example.com/x"},
    ],
)
def test_invalid_registration_is_400_and_stores_nothing(
    sqlite_accounts: Accounts,
    sqlite_store: Store,
    body: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sender, "system_resolver", lambda host, port: ["93.184.216.34"])
    browser = pro_owner(sqlite_accounts)
    r = browser.post(HOOKS, json=body, headers=ORIGIN)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert count_rows(sqlite_store) == (0, 0)


def test_malformed_bodies_are_4xx(accounts: Accounts) -> None:
    browser = pro_owner(accounts)
    assert (
        browser.post(HOOKS, data="{", headers=ORIGIN, content_type="application/json").status_code
        == 400
    )
    assert (
        browser.post(HOOKS, data="[]", headers=ORIGIN, content_type="application/json").status_code
        == 400
    )
    assert (
        browser.post(HOOKS, data="url=x", headers=ORIGIN, content_type="text/plain").status_code
        == 415
    )


FAKE_DNS = {
    "hooks.example.com": ["93.184.216.34"],
    "v6.example.com": ["2606:4700:4700::1111"],
    "loopback.example.com": ["127.0.0.1"],
    "private.example.com": ["10.0.0.7"],
    "metadata.example.com": ["169.254.169.254"],
    "v6loop.example.com": ["::1"],
    "ula.example.com": ["fd12:3456::1"],
    "mapped.example.com": ["::ffff:192.168.1.1"],
    "mixed.example.com": ["93.184.216.34", "192.168.1.1"],
}


def fake_dns(host: str, port: int) -> list[str]:
    if host not in FAKE_DNS:
        raise OSError("Name or service not known")
    return FAKE_DNS[host]


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://127.0.0.1/x",
        "https://localhost/x",
        "https://hooks.localhost/x",
        "https://10.1.2.3/x",
        "https://172.20.0.1/x",
        "https://192.168.0.10/x",
        "https://100.64.0.1/x",
        "https://169.254.169.254/latest/meta-data/",
        "https://169.254.1.1/x",
        "https://0.0.0.0/x",
        "https://[::1]/x",
        "https://[fd00::1]/x",
        "https://[fe80::1]/x",
        "https://[::ffff:127.0.0.1]/x",
        "https://[64:ff9b::a00:1]/x",
        "https://2130706433/x",
        "https://0x7f000001/x",
        "https://0177.0.0.1/x",
        "https://127.1/x",
        "https://user:pw@hooks.example.com/x",
        "https://loopback.example.com/x",
        "https://private.example.com/x",
        "https://metadata.example.com/x",
        "https://v6loop.example.com/x",
        "https://ula.example.com/x",
        "https://mapped.example.com/x",
        "https://mixed.example.com/x",
        "https://nxdomain.example.com/x",
        "https://intranet/x",
    ],
)
def test_non_public_targets_are_refused_with_the_setting_off(
    sqlite_accounts: Accounts, sqlite_store: Store, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sender, "system_resolver", fake_dns)
    browser = pro_owner(sqlite_accounts)
    r = browser.post(HOOKS, json={"url": url}, headers=ORIGIN)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert count_rows(sqlite_store) == (0, 0)


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("https://hooks.example.com/svc?x=1#frag", "https://hooks.example.com/svc?x=1"),
        ("https://HOOKS.Example.COM:8443/a", "https://hooks.example.com:8443/a"),
        ("https://v6.example.com/", "https://v6.example.com/"),
        ("https://[2606:4700:4700::1111]/h", "https://[2606:4700:4700::1111]/h"),
        ("https://93.184.216.34/h", "https://93.184.216.34/h"),
    ],
)
def test_public_https_targets_are_accepted_and_normalised(
    sqlite_accounts: Accounts, url: str, stored: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sender, "system_resolver", fake_dns)
    browser = pro_owner(sqlite_accounts)
    assert register(browser, url)["url"] == stored


def test_development_setting_allows_http_loopback(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    browser = pro_owner(hook_accounts)
    url = receiver().url
    assert url.startswith("http://127.0.0.1:")
    assert register(browser, url)["url"] == url


def test_at_most_16_live_endpoints(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], store: Store
) -> None:
    browser = pro_owner(hook_accounts)
    url = receiver().url
    made = [register(browser, url) for _ in range(16)]
    r = browser.post(HOOKS, json={"url": url}, headers=ORIGIN)
    assert r.status_code == 402
    assert r.get_json()["error"]["code"] == "ENDPOINT_LIMIT_REACHED"
    assert count_rows(store) == (16, 0)
    browser.delete(f"{HOOKS}/{made[0]['id']}", headers=ORIGIN)  # a revoked one does not count
    register(browser, url)


def test_members_read_but_cannot_manage(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], store: Store
) -> None:
    owner = pro_owner(hook_accounts, "boss@example.com")
    made = register(owner, receiver().url)
    invite = owner.post("/api/auth/me/team", json={"email": "mia@example.com"}, headers=ORIGIN)
    member = hook_accounts.browser("mia@example.com")
    accepted = member.post(
        f"/api/auth/me/invites/{invite.get_json()['data']['id']}/accept", headers=ORIGIN
    )
    assert accepted.status_code == 200
    assert [r["id"] for r in member.get(HOOKS).get_json()["data"]] == [made["id"]]
    assert member.get(f"{HOOKS}/{made['id']}/deliveries").status_code == 200
    before = count_rows(store)
    for r in (
        member.post(HOOKS, json={"url": receiver().url}, headers=ORIGIN),
        member.delete(f"{HOOKS}/{made['id']}", headers=ORIGIN),
        member.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN),
        member.post(f"{HOOKS}/{made['id']}/enable", headers=ORIGIN),
    ):
        assert r.status_code == 403
        assert r.get_json()["error"]["code"] == "FORBIDDEN"
    assert count_rows(store) == before


def test_cookie_and_origin_are_required(accounts: Accounts, client: Client) -> None:
    r = client.get(HOOKS)
    assert (r.status_code, r.get_json()["error"]["code"]) == (401, "NOT_SIGNED_IN")
    r = client.get(HOOKS, headers={"X-API-Key": accounts.consumer("pro")[1]})
    assert r.status_code == 401  # API keys are not used on /api/auth/me/*
    browser = pro_owner(accounts)
    r = browser.post(HOOKS, json={"url": "https://hooks.example.com/x"})
    assert (r.status_code, r.get_json()["error"]["code"]) == (403, "CSRF_REJECTED")
    evil = {"Origin": "https://evil.example"}
    assert (
        browser.post(HOOKS, json={"url": "https://x.example.com/"}, headers=evil).status_code == 403
    )


# test sends ----------------------------------------------------------------------------------


def test_test_send_signs_like_a_real_event_and_ignores_the_filter(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], clock: FakeClock
) -> None:
    hook = receiver()
    browser = pro_owner(hook_accounts)
    made = register(browser, hook.url, events=["quota.exceeded"])
    r = browser.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN)
    assert r.status_code == 200, r.get_json()
    data = r.get_json()["data"]
    assert data["test"] is True
    assert data["event_type"] == "webhook.test"
    assert re.fullmatch(r"evt_webhook_test_[0-9a-f]{32}", data["event_id"])
    delivery = data["delivery"]
    assert (delivery["status"], delivery["http_status"], delivery["error"]) == (
        "delivered",
        200,
        None,
    )
    assert isinstance(delivery["duration_ms"], int)
    [request] = hook.requests
    event = signing.verify(
        request.body, request.headers["X-Svc-Signature"], made["secret_plaintext"], now=clock()
    )
    assert request.headers["X-Svc-Event"] == "webhook.test"
    assert request.headers["X-Svc-Event-Id"] == data["event_id"] == event["id"]
    assert event["type"] == "webhook.test"
    assert event["created"] == int(clock())
    assert event["data"]["test"] is True
    assert event["data"]["message"]
    assert event["data"]["sent_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock()))
    # docs_url opens the API reference (Swagger UI) at the Webhooks tag: both exist
    page, _, tag = event["data"]["docs_url"].partition("#/")
    assert browser.get(urlsplit(page).path).status_code == 200
    assert tag in {t["name"] for t in browser.get("/api/v1/openapi.json").get_json()["tags"]}
    log = browser.get(f"{HOOKS}/{made['id']}/deliveries").get_json()["data"]
    assert [(row["event_id"], row["status"]) for row in log["rows"]] == [
        (data["event_id"], "delivered")
    ]


def test_test_send_not_found_and_bad_ids(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    mine = pro_owner(hook_accounts)
    theirs = pro_owner(hook_accounts)
    other = register(theirs, receiver().url)
    assert mine.post(f"{HOOKS}/{other['id']}/test", headers=ORIGIN).status_code == 404
    assert mine.post(f"{HOOKS}/{uuid.uuid4()}/test", headers=ORIGIN).status_code == 404
    assert mine.post(f"{HOOKS}/1/test", headers=ORIGIN).status_code == 400
    assert mine.post(f"{HOOKS}/{other['id']}/enable", headers=ORIGIN).status_code == 404


def test_eleven_failed_test_sends_disable_then_409_until_re_enabled(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], clock: FakeClock
) -> None:
    hook = receiver(status=500, reply=b"nope")
    browser = pro_owner(hook_accounts)
    made = register(browser, hook.url)
    test = f"{HOOKS}/{made['id']}/test"
    for n in range(1, 11):
        clock.advance(12)  # five test sends a minute
        r = browser.post(test, headers=ORIGIN)
        assert r.status_code == 200
        assert r.get_json()["data"]["delivery"] == {
            "status": "failed",
            "http_status": 500,
            "duration_ms": r.get_json()["data"]["delivery"]["duration_ms"],
            "error": "HTTP 500: nope",
        }
        [row] = browser.get(HOOKS).get_json()["data"]
        assert (row["status"], row["consecutive_failures"]) == ("active", n)
    clock.advance(12)
    assert browser.post(test, headers=ORIGIN).status_code == 200  # the 11th failure
    [row] = browser.get(HOOKS).get_json()["data"]
    assert (row["status"], row["consecutive_failures"]) == ("disabled_after_failure", 11)
    assert ISO.fullmatch(row["disabled_at"])

    r = browser.post(test, headers=ORIGIN)
    assert (r.status_code, r.get_json()["error"]["code"]) == (409, "ENDPOINT_NOT_ACTIVE")
    assert len(hook.requests) == 11

    enabled = browser.post(f"{HOOKS}/{made['id']}/enable", headers=ORIGIN)
    assert enabled.status_code == 200
    row = enabled.get_json()["data"]
    assert set(row) == LIST_FIELDS
    assert (row["status"], row["consecutive_failures"], row["disabled_at"]) == ("active", 0, None)
    again = browser.post(f"{HOOKS}/{made['id']}/enable", headers=ORIGIN)
    assert (again.status_code, again.get_json()["error"]["code"]) == (409, "ENDPOINT_NOT_DISABLED")
    hook.status = 200
    clock.advance(12)
    assert (
        browser.post(test, headers=ORIGIN).get_json()["data"]["delivery"]["status"] == "delivered"
    )


def test_test_sends_are_limited_per_account_across_endpoints_and_re_enables(
    store: Store,
    make_app: Callable[..., Any],
    receiver: Callable[..., Receiver],
    clock: FakeClock,
) -> None:
    """The rate counts per consumer: over all its endpoints, through revoking one and
    registering another, and through a disable/re-enable cycle; others are unaffected."""
    accounts = Accounts(store, make_app(store, webhook_allow_private=True), clock)
    hook = receiver(status=500, reply=b"nope")
    browser = pro_owner(accounts)
    first, second = register(browser, hook.url), register(browser, hook.url)
    start = clock()
    for n in range(5):
        target = (first, second)[n % 2]
        r = browser.post(f"{HOOKS}/{target['id']}/test", headers=ORIGIN)
        assert r.status_code == 200, r.get_json()
        clock.advance(1)
    refused = browser.post(f"{HOOKS}/{second['id']}/test", headers=ORIGIN)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["code"] == "RATE_LIMITED"
    assert "5 test sends per minute" in refused.get_json()["error"]["message"]
    assert refused.headers["Retry-After"] == str(int(start) + 60 - int(clock()))

    # disabled after failures, then re-enabled: still limited
    with store.db.transaction() as tx:
        tx.execute(
            "UPDATE webhook_endpoints SET status = 'disabled_after_failure', disabled_at = ? "
            "WHERE id = ?",
            (int(clock()), first["id"]),
        )
    assert browser.post(f"{HOOKS}/{first['id']}/enable", headers=ORIGIN).status_code == 200
    assert browser.post(f"{HOOKS}/{first['id']}/test", headers=ORIGIN).status_code == 429
    # a revoked endpoint's sends still count; a fresh endpoint is limited too
    assert browser.delete(f"{HOOKS}/{first['id']}", headers=ORIGIN).status_code == 200
    third = register(browser, hook.url)
    assert browser.post(f"{HOOKS}/{third['id']}/test", headers=ORIGIN).status_code == 429

    other = pro_owner(accounts)
    theirs = register(other, hook.url)
    assert other.post(f"{HOOKS}/{theirs['id']}/test", headers=ORIGIN).status_code == 200
    assert len(hook.requests) == 6

    clock.advance(int(start) + 60 - int(clock()))  # the first send leaves the window
    assert browser.post(f"{HOOKS}/{third['id']}/test", headers=ORIGIN).status_code == 200
    assert browser.post(f"{HOOKS}/{third['id']}/test", headers=ORIGIN).status_code == 429


def test_test_send_rate_is_a_setting(
    store: Store,
    make_app: Callable[..., Any],
    receiver: Callable[..., Receiver],
    clock: FakeClock,
) -> None:
    app = make_app(store, webhook_allow_private=True, webhook_test_sends_per_minute=2)
    browser = pro_owner(Accounts(store, app, clock))
    made = register(browser, receiver().url)
    codes = [browser.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN).status_code for _ in "abc"]
    assert codes == [200, 200, 429]


def test_a_test_send_left_sending_by_a_stopped_server_holds_the_slot_for_a_minute(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], clock: FakeClock
) -> None:
    """One test send at a time: a ``sending`` test row (here: a server that stopped
    mid-send) refuses the next with a short Retry-After until it is a minute old."""
    browser = pro_owner(hook_accounts)
    made = register(browser, receiver().url)
    assert browser.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN).status_code == 200
    with hook_accounts.store.db.transaction() as tx:
        tx.execute(
            "UPDATE deliveries SET status = 'sending', claimed_at = ? WHERE endpoint_id = ?",
            (int(clock()), made["id"]),
        )
    clock.advance(2)
    busy = browser.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN)
    assert busy.status_code == 429
    assert "one runs at a time" in busy.get_json()["error"]["message"]
    assert busy.headers["Retry-After"] == "4"
    clock.advance(58)
    assert browser.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN).status_code == 200


def test_revoked_endpoint_cannot_be_tested_or_re_enabled(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    browser = pro_owner(hook_accounts)
    made = register(browser, receiver().url)
    browser.delete(f"{HOOKS}/{made['id']}", headers=ORIGIN)
    r = browser.post(f"{HOOKS}/{made['id']}/test", headers=ORIGIN)
    assert (r.status_code, r.get_json()["error"]["code"]) == (409, "ENDPOINT_NOT_ACTIVE")
    r = browser.post(f"{HOOKS}/{made['id']}/enable", headers=ORIGIN)
    assert r.status_code == 409


# the delivery log -------------------------------------------------------------------------------


def test_delivery_log_rows_pagination_and_24h_summary(
    hook_accounts: Accounts, receiver: Callable[..., Receiver], clock: FakeClock
) -> None:
    hook = receiver()
    browser = pro_owner(hook_accounts, "log@example.com")
    made = register(browser, hook.url)
    test = f"{HOOKS}/{made['id']}/test"
    sent = []
    for status in (200, 200, 200, 500, 502):
        hook.status = status
        sent.append(browser.post(test, headers=ORIGIN).get_json()["data"]["event_id"])
        clock.advance(1)
    log = f"{HOOKS}/{made['id']}/deliveries"

    first = browser.get(f"{log}?limit=2").get_json()["data"]
    assert first["pagination"] == {"limit": 2, "offset": 0, "returned": 2}
    assert first["summary"] == {"total_count": 5, "delivered_24h": 3, "failed_24h": 2}
    assert [row["event_id"] for row in first["rows"]] == sent[::-1][:2]  # newest first
    row = first["rows"][0]
    assert set(row) == DELIVERY_FIELDS
    assert (row["event_type"], row["status"], row["http_status"]) == ("webhook.test", "failed", 502)
    assert (row["attempt_count"], row["error_message"]) == (1, "HTTP 502: ok")
    assert ISO.fullmatch(row["created_at"])

    rest = browser.get(f"{log}?limit=2&offset=4").get_json()["data"]
    assert rest["pagination"] == {"limit": 2, "offset": 4, "returned": 1}
    assert [r["event_id"] for r in rest["rows"]] == [sent[0]]
    default = browser.get(log).get_json()["data"]
    assert default["pagination"] == {"limit": 50, "offset": 0, "returned": 5}

    clock.advance(24 * 3600)
    browser = hook_accounts.browser("log@example.com")  # the old session has expired
    later = browser.get(log).get_json()["data"]
    assert later["summary"] == {"total_count": 5, "delivered_24h": 0, "failed_24h": 0}


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=201",
        "limit=-1",
        "limit=1.5",
        "limit=1e3",
        "limit=abc",
        "limit=",
        "limit=%2B5",
        "limit=99999999999999999999999",
        "offset=-1",
        "offset=0.5",
        "offset=x",
        "limit=5&limit=6",
        "page=2",
    ],
)
def test_delivery_log_rejects_bad_paging(
    sqlite_accounts: Accounts, receiver: Callable[..., Receiver], query: str
) -> None:
    browser = pro_owner(sqlite_accounts)
    made = register(browser, "https://93.184.216.34/hook")
    r = browser.get(f"{HOOKS}/{made['id']}/deliveries?{query}")
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["code"] == "INVALID_PARAMS"


def test_delivery_log_bounds_are_accepted(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    browser = pro_owner(hook_accounts)
    made = register(browser, receiver().url)
    for query in ("limit=1", "limit=200", "offset=0", "offset=2147483647"):
        assert browser.get(f"{HOOKS}/{made['id']}/deliveries?{query}").status_code == 200


def test_delivery_log_of_someone_elses_endpoint_is_empty(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    theirs = pro_owner(hook_accounts)
    other = register(theirs, receiver().url)
    theirs.post(f"{HOOKS}/{other['id']}/test", headers=ORIGIN)
    mine = pro_owner(hook_accounts)
    empty = {
        "rows": [],
        "pagination": {"limit": 50, "offset": 0, "returned": 0},
        "summary": {"total_count": 0, "delivered_24h": 0, "failed_24h": 0},
    }
    for endpoint_id in (other["id"], str(uuid.uuid4())):
        r = mine.get(f"{HOOKS}/{endpoint_id}/deliveries")
        assert r.status_code == 200
        assert r.get_json()["data"] == empty
    assert (
        theirs.get(f"{HOOKS}/{other['id']}/deliveries").get_json()["data"]["summary"]["total_count"]
        == 1
    )
    assert mine.get(f"{HOOKS}/nope/deliveries").status_code == 400


# a real server with the in-process worker ------------------------------------------------------


def test_live_server_with_inline_worker_delivers_a_key_event(
    sqlite_url: str,
    live_server_factory: Callable[..., LiveServer],
    receiver: Callable[..., Receiver],
) -> None:
    hook = receiver()
    server = live_server_factory(
        sqlite_url,
        env={
            "SVC_INLINE_WORKER": "true",
            "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
            "SVC_SITE_ORIGINS": ORIGIN["Origin"],
        },
    )
    store = open_store(sqlite_url)
    try:
        signed = sessions.sign_in(
            store,
            Config(secret_key=TEST_SECRET),
            Identity(sub="live-owner", email="live@example.com"),
            time.time(),
            os.urandom(16),
            ids=new_id,
        )
    finally:
        store.close()
    headers = {
        "Cookie": f"svc_session={signed['_cookie']}",
        "Origin": ORIGIN["Origin"],
        "Content-Type": "application/json",
    }

    def call(method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(server.url + path, data, headers, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return dict(json.loads(response.read()))

    made = call("POST", HOOKS, {"url": hook.url, "events": ["key.revoked"]})["data"]
    [key] = call("GET", "/api/auth/me/keys")["data"]
    call("POST", f"/api/auth/me/keys/{key['id']}/revoke")
    deadline = time.monotonic() + 15
    while not hook.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    [request] = hook.requests
    event = signing.verify(
        request.body,
        request.headers["X-Svc-Signature"],
        made["secret_plaintext"],
        now=time.time(),
    )
    assert event["type"] == "key.revoked"
    assert event["data"]["key"]["id"] == key["id"]
    log = call("GET", f"{HOOKS}/{made['id']}/deliveries")["data"]
    assert [(r["event_id"], r["status"]) for r in log["rows"]] == [(event["id"], "delivered")]
