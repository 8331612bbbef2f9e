"""``daily`` of ``GET /api/auth/me/usage``: successful counted calls per UTC day, on both
backends. A day is counted in the transaction that settles the call's quota unit, so the
days of a month add up to its ``requests_used``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from werkzeug.test import Client

from svc_core.caller import Caller
from svc_server.services import access
from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock
from tests.server.accounts_support import DATA_PATH

USAGE = "/api/auth/me/usage"
FAILING = f"{DATA_PATH}?bogus=1"  # a 400: its unit is held, then given back


def usage(accounts: Accounts) -> dict[str, Any]:
    """The usage answer for Ana, signed in afresh (the test clock jumps past sessions)."""
    r = accounts.browser("ana@example.com").get(USAGE)
    assert r.status_code == 200
    data: dict[str, Any] = r.get_json()["data"]
    return data


def days_with_calls(data: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {
        d["date"]: (d["calls"], d["test_calls"])
        for d in data["daily"]
        if d["calls"] or d["test_calls"]
    }


def day_rows(store: Store, consumer_id: str) -> dict[tuple[str, str], int]:
    with store.db.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT day, mode, count FROM usage_days WHERE consumer_id = ?", (consumer_id,)
        )
    return {(r["day"], r["mode"]): int(r["count"]) for r in rows}


def test_days_follow_successes_and_refunds(
    accounts: Accounts, client: Client, store: Store, clock: FakeClock
) -> None:
    clock.now = datetime(2026, 9, 21, 23, 59, 0, tzinfo=UTC).timestamp()
    consumer_id, live = accounts.consumer("pro", monthly_quota=5, email="ana@example.com")
    browser = accounts.browser("ana@example.com")
    sandbox = browser.post(
        "/api/auth/me/keys",
        json={"label": "sandbox", "mode": "test", "scope": "read_only"},
        headers=ORIGIN,
    ).get_json()["data"]["key"]

    for path, key, status in (
        (DATA_PATH, live, 200),
        (FAILING, live, 400),
        (DATA_PATH, live, 200),
        (DATA_PATH, sandbox, 200),
        (FAILING, sandbox, 400),
    ):
        assert client.get(path, headers={"X-API-Key": key}).status_code == status
    assert days_with_calls(usage(accounts)) == {"2026-09-21": (2, 1)}

    clock.now = datetime(2026, 9, 22, 0, 0, 1, tzinfo=UTC).timestamp()
    for _ in range(2):
        assert client.get(FAILING, headers={"X-API-Key": live}).status_code == 400
    assert day_rows(store, consumer_id) == {  # a refunded day leaves no row behind
        ("2026-09-21", "live"): 2,
        ("2026-09-21", "test"): 1,
    }
    for _ in range(3):
        client.get(DATA_PATH, headers={"X-API-Key": live})  # 2 fit the quota of 5, 1 is 402
    data = usage(accounts)
    assert days_with_calls(data) == {"2026-09-21": (2, 1), "2026-09-22": (3, 0)}
    assert data["daily"][-1]["date"] == "2026-09-22"
    assert sum(d["calls"] for d in data["daily"]) == data["current_period"]["requests_used"] == 5

    # A new month starts with its own days; September's stay stored but are not shown.
    clock.now = datetime(2026, 10, 1, 8, 0, tzinfo=UTC).timestamp()
    assert client.get(DATA_PATH, headers={"X-API-Key": live}).status_code == 200
    data = usage(accounts)
    assert data["daily"] == [{"date": "2026-10-01", "calls": 1, "test_calls": 0}]
    assert data["current_period"]["requests_used"] == 1
    assert day_rows(store, consumer_id)[("2026-09-22", "live")] == 3


def test_a_call_settled_after_midnight_counts_on_the_day_it_arrived(
    accounts: Accounts, store: Store
) -> None:
    """The day travels with the hold: a call admitted at 23:59:59 and succeeding after
    midnight is counted on the day it arrived; one failing then counts nowhere."""
    consumer_id, _ = accounts.consumer("pro", monthly_quota=10)
    caller = Caller(
        consumer_id=consumer_id,
        plan="pro",
        auth_method="api_key",
        rate_limit_per_minute=100,
        monthly_quota=10,
        key_id="k",
        key_mode="live",
    )
    before = datetime(2026, 9, 21, 23, 59, 59, tzinfo=UTC).timestamp()
    kept = access.admit(store, caller, before, counted=True, ids=lambda: "h1").reservation
    failed = access.admit(store, caller, before, counted=True, ids=lambda: "h2").reservation
    assert kept is not None and failed is not None and failed.day == "2026-09-21"
    assert day_rows(store, consumer_id) == {}  # held, not yet counted
    assert access.settle(store, kept, True, before + 2) == 1  # 2026-09-22 00:00:01
    assert access.settle(store, failed, False, before + 2) == 1
    assert day_rows(store, consumer_id) == {("2026-09-21", "live"): 1}
    assert store.accounts.usage(consumer_id, "2026-09") == 1
