"""``GET /api/auth/me/usage`` exactly as SPEC's "Usage summary" describes it."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock
from tests.server.accounts_support import DATA_PATH, execute

USAGE = "/api/auth/me/usage"
DAY = 86_400


@pytest.fixture
def db_url(sqlite_url: str) -> str:
    """SQLite only: the account SQL runs on PostgreSQL in the key, quota and team tests."""
    return sqlite_url


def test_fresh_starter_usage_is_exactly_the_spec_shape(accounts: Accounts) -> None:
    browser = accounts.browser("ana@example.com")
    r = browser.get(USAGE)
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "private, no-store"
    body = r.get_json()
    assert set(body) == {"data", "meta"}
    assert body["meta"] == {
        "request_id": r.headers["X-Request-ID"],
        "timestamp": body["meta"]["timestamp"],
    }
    assert body["meta"]["timestamp"] == "2026-09-21T14:13:20Z"
    data = body["data"]
    # The additions to SPEC come last: the caller's role and the month's days so far.
    assert data.pop("role") == "owner"
    (key,) = data.pop("keys")  # the first key, made at sign-in, has no calls yet
    assert (key["mode"], key["status"], key["calls"]) == ("live", "active", 0)
    days = data.pop("daily")
    assert [d["date"] for d in days] == [f"2026-09-{n:02d}" for n in range(1, 22)]
    assert all(d["calls"] == d["test_calls"] == 0 for d in days)
    assert data == {
        "plan": "starter",
        "limits": {"monthly_request_quota": 1000, "rate_limit_per_minute": 60},
        "current_period": {
            "month": "2026-09",
            "starts_at": "2026-09-01T00:00:00Z",
            "resets_at": "2026-10-01T00:00:00Z",
            "requests_used": 0,
            "requests_remaining": 1000,
            "percent_used": 0.0,
        },
        "trial": None,
        "subscription": {"status": None},
    }


def test_counters_and_percent_with_two_decimals(accounts: Accounts, client: Client) -> None:
    _, key = accounts.consumer("pro", monthly_quota=7, rate_limit=500, email="ana@example.com")
    browser = accounts.browser("ana@example.com")
    for _ in range(3):
        assert client.get(DATA_PATH, headers={"X-API-Key": key}).status_code == 200
    client.get(f"{DATA_PATH}?nope=1", headers={"X-API-Key": key})  # a 400: not counted
    data = browser.get(USAGE).get_json()["data"]
    assert data["plan"] == "pro"
    assert data["limits"] == {"monthly_request_quota": 7, "rate_limit_per_minute": 500}
    current = data["current_period"]
    assert (current["requests_used"], current["requests_remaining"]) == (3, 4)
    assert current["percent_used"] == 42.86


def test_usage_reports_the_highest_plan_consumer(accounts: Accounts, client: Client) -> None:
    _, team_key = accounts.consumer("team", email="boss@example.com")
    boss = accounts.browser("boss@example.com")
    invite = boss.post("/api/auth/me/team", json={"email": "ana@example.com"}, headers=ORIGIN)
    ana = accounts.browser("ana@example.com")  # owns a starter consumer of her own
    assert ana.get(USAGE).get_json()["data"]["plan"] == "starter"
    assert ana.get(USAGE).get_json()["data"]["role"] == "owner"  # of her own consumer
    invite_id = invite.get_json()["data"]["id"]
    assert ana.post(f"/api/auth/me/invites/{invite_id}/accept", headers=ORIGIN).status_code == 200
    client.get(DATA_PATH, headers={"X-API-Key": team_key})
    data = ana.get(USAGE).get_json()["data"]
    assert data["plan"] == "team"
    assert data["current_period"]["requests_used"] == 1
    assert data["limits"]["monthly_request_quota"] == 300_000
    assert data["role"] == "member"  # invited with the default role
    assert boss.get(USAGE).get_json()["data"]["role"] == "owner"


def test_trial_state_and_subscription_status(
    accounts: Accounts, store: Store, clock: FakeClock
) -> None:
    consumer_id, _ = accounts.consumer("pro", email="ana@example.com")
    execute(
        store,
        "UPDATE consumers SET trial_ends_at = ?, founding_member = 1, "
        "subscription_status = 'trialing' WHERE id = ?",
        (int(clock() + 2.5 * DAY), consumer_id),
    )
    browser = accounts.browser("ana@example.com")
    data = browser.get(USAGE).get_json()["data"]
    assert data["trial"] == {
        "is_active": True,
        "trial_ends_at": "2026-09-24T02:13:20Z",
        "days_remaining": 3,
        "founding_member": True,
    }
    assert data["subscription"] == {"status": "trialing"}
    clock.advance(3 * DAY)
    execute(
        store, "UPDATE consumers SET subscription_status = 'past_due' WHERE id = ?", (consumer_id,)
    )
    data = accounts.browser("ana@example.com").get(USAGE).get_json()["data"]
    assert data["trial"]["is_active"] is False
    assert data["trial"]["days_remaining"] == 0
    assert data["trial"]["founding_member"] is True
    assert data["subscription"] == {"status": "past_due"}
    text = accounts.browser("ana@example.com").get(USAGE).get_data(as_text=True)
    for internal in ("price", "customer", "subscription_id"):
        assert internal not in text


def test_no_consumer_is_404(accounts: Accounts, store: Store) -> None:
    browser = accounts.browser("ana@example.com")
    execute(store, "UPDATE memberships SET status = 'removed'")
    r = browser.get(USAGE)
    assert r.status_code == 404
    assert r.get_json()["error"]["code"] == "NO_CONSUMER"
    assert r.get_json()["error"]["request_id"] == r.headers["X-Request-ID"]


def test_a_broken_record_is_500_usage_failed(accounts: Accounts, store: Store) -> None:
    browser = accounts.browser("ana@example.com")
    execute(store, "UPDATE consumers SET subscription_status = 'mystery'")
    r = browser.get(USAGE)
    assert r.status_code == 500
    assert r.get_json()["error"]["code"] == "USAGE_FAILED"


def test_usage_needs_the_cookie(client: Client) -> None:
    r = client.get(USAGE)
    assert r.status_code == 401
    assert r.get_json()["error"]["code"] == "NOT_SIGNED_IN"
