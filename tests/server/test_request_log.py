"""The request log and usage per key, in process, on both backends.

Every call of a known API key is logged for its account with the status and the
``X-Request-ID`` its response carried; calls without a known key are not; an account
sees only its own calls; lines are written in batches, never by the call itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from svc_core.accounts.requestlog import MAX_ROWS_PER_ACCOUNT, RETENTION_SECONDS, RawCall
from svc_server.app import SvcApp
from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock
from tests.server.accounts_support import DATA_PATH

LOG = "/api/auth/me/requests"
USAGE = "/api/auth/me/usage"


@pytest.fixture(autouse=True)
def no_background_writes(app: SvcApp) -> None:
    """The writer thread waits an hour: what the log shows was written by the reads."""
    app.deps.log_writer.interval = 3600


def logged_rows(store: Store) -> int:
    with store.db.transaction(write=False) as tx:
        row = tx.fetchone("SELECT COUNT(*) AS n FROM request_log")
    return int(row["n"]) if row else 0


def get(client: Client, path: str, key: str) -> tuple[int, str, dict[str, Any]]:
    r = client.get(path, headers={"X-API-Key": key})
    return r.status_code, r.headers["X-Request-ID"], r.get_json()


def log(browser: Client, query: str = "") -> list[dict[str, Any]]:
    r = browser.get(LOG + query)
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.headers["Cache-Control"] == "private, no-store"
    return list(r.get_json()["data"]["rows"])


def test_every_call_of_a_key_is_logged_with_its_status_and_request_id(
    accounts: Accounts, client: Client, store: Store
) -> None:
    _, key = accounts.consumer("pro", monthly_quota=2, rate_limit=6, email="ana@example.com")
    ana = accounts.browser("ana@example.com")
    created = ana.post(
        "/api/auth/me/keys",
        json={
            "label": "office",
            "mode": "live",
            "scope": "read_only",
            "ip_allowlist": ["10.0.0.0/8"],
        },
        headers=ORIGIN,
    ).get_json()["data"]
    seen: list[tuple[int, str]] = []
    for path in (DATA_PATH, f"{DATA_PATH}?nope=1", "/api/v1/nope", DATA_PATH, DATA_PATH):
        status, request_id, _ = get(client, path, key)
        seen.append((status, request_id))
    assert [s for s, _ in seen] == [200, 400, 404, 200, 402]
    status, request_id, body = get(client, DATA_PATH, created["key"])
    assert (status, body["error"]["code"]) == (403, "IP_NOT_ALLOWED")
    seen.append((status, request_id))
    while seen[-1][0] != 429:  # the rate limit of 6 a minute runs out
        status, request_id, _ = get(client, DATA_PATH, key)
        assert status in (402, 429)
        seen.append((status, request_id))
    assert len(seen) < 12
    # Unknown and malformed keys belong to no account: not logged.
    assert get(client, DATA_PATH, "svc_pk_live_" + "0" * 32)[0] == 401
    assert get(client, DATA_PATH, "nonsense")[0] == 401
    assert logged_rows(store) == 0  # nothing written by the calls themselves

    rows = log(ana)
    assert [(r["status"], r["request_id"]) for r in rows] == list(reversed(seen))
    assert {r["method"] for r in rows} == {"GET"}
    assert rows[-2]["path"] == f"{DATA_PATH}?nope=1"
    codes = {r["status"]: r["error_code"] for r in rows}
    assert codes == {
        200: None,
        400: "INVALID_PARAMS",
        404: "NOT_FOUND",
        402: "QUOTA_EXCEEDED",
        403: "IP_NOT_ALLOWED",
        429: "RATE_LIMITED",
    }
    assert all(r["duration_ms"] >= 0 for r in rows)
    ip_row = next(r for r in rows if r["status"] == 403)
    assert ip_row["key_id"] == created["id"]
    assert ip_row["key_prefix"] == created["prefix"]
    assert ip_row["key_label"] == "office"
    assert all(r["key_prefix"] == key[:16] for r in rows if r["status"] != 403)

    assert [r["request_id"] for r in log(ana, "?status=4xx")] == [
        i for s, i in reversed(seen) if 400 <= s < 500
    ]
    assert [r["request_id"] for r in log(ana, "?status=429")] == [
        i for s, i in reversed(seen) if s == 429
    ]
    assert [r["status"] for r in log(ana, "?status=2xx")] == [200, 200]
    assert [r["status"] for r in log(ana, f"?key={created['id']}")] == [403]
    assert [r["status"] for r in log(ana, f"?key={created['id']}&status=2xx")] == []
    assert len(log(ana, "?limit=2&offset=1")) == 2


def test_bad_filters_are_400(accounts: Accounts) -> None:
    ana = accounts.browser("ana@example.com")
    for query in ("?status=6xx", "?status=44", "?status=4XX", "?key=abc", "?limit=0", "?x=1"):
        r = ana.get(LOG + query)
        assert r.status_code == 400, query
        assert r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert ana.get(LOG + "?limit=1001").status_code == 400


def test_an_account_sees_only_its_own_calls(accounts: Accounts, client: Client) -> None:
    _, ana_key = accounts.consumer("pro", email="ana@example.com")
    _, bob_key = accounts.consumer("pro", email="bob@example.com")
    ana_ids = {get(client, DATA_PATH, ana_key)[1] for _ in range(3)}
    bob_ids = {get(client, f"{DATA_PATH}?bad=1", bob_key)[1] for _ in range(2)}
    ana, bob = accounts.browser("ana@example.com"), accounts.browser("bob@example.com")
    assert {r["request_id"] for r in log(ana)} == ana_ids
    assert {r["request_id"] for r in log(bob)} == bob_ids
    bob_key_id = bob.get("/api/auth/me/keys").get_json()["data"][0]["id"]
    assert log(ana, f"?key={bob_key_id}") == []  # another account's key: nothing
    # A member of bob's account reads bob's log, not their own starter account's.
    invite = bob.post("/api/auth/me/team", json={"email": "cy@example.com"}, headers=ORIGIN)
    cy = accounts.browser("cy@example.com")
    invite_id = invite.get_json()["data"]["id"]
    assert cy.post(f"/api/auth/me/invites/{invite_id}/accept", headers=ORIGIN).status_code == 200
    assert {r["request_id"] for r in log(cy)} == bob_ids


def test_session_calls_and_account_routes_are_not_logged(
    accounts: Accounts, client: Client, store: Store
) -> None:
    _, key = accounts.consumer("pro", email="ana@example.com")
    ana = accounts.browser("ana@example.com")
    assert ana.get(DATA_PATH).status_code == 200  # the cookie, no key
    assert client.get("/api/auth/me/keys", headers={"X-API-Key": key}).status_code == 401
    assert log(ana) == []
    assert logged_rows(store) == 0


def test_the_log_needs_a_session(client: Client, accounts: Accounts) -> None:
    _, key = accounts.consumer("pro", email="ana@example.com")
    assert client.get(LOG).status_code == 401
    assert client.get(LOG, headers={"X-API-Key": key}).status_code == 401


def test_retention_drops_calls_older_than_seven_days(
    accounts: Accounts, client: Client, clock: FakeClock, store: Store
) -> None:
    _, key = accounts.consumer("pro", email="ana@example.com")
    ana = accounts.browser("ana@example.com")
    old = get(client, DATA_PATH, key)[1]
    assert [r["request_id"] for r in log(ana)] == [old]
    clock.advance(RETENTION_SECONDS - 1)
    ana = accounts.browser("ana@example.com")
    assert [r["request_id"] for r in log(ana)] == [old]
    clock.advance(2)
    ana = accounts.browser("ana@example.com")
    assert log(ana) == []  # past its time: never shown
    assert logged_rows(store) == 1  # and deleted at the next write
    new = get(client, DATA_PATH, key)[1]
    assert [r["request_id"] for r in log(ana)] == [new]
    assert logged_rows(store) == 1


def call(consumer_id: str, key_id: str, at_ms: int, status: int = 200) -> RawCall:
    return (
        consumer_id,
        key_id,
        at_ms,
        "GET",
        DATA_PATH,
        "",
        status,
        f"req-{consumer_id[:4]}-{at_ms}",
        1.5,
        True,
        None,
    )


def test_each_account_keeps_its_newest_thousand(
    app: SvcApp, accounts: Accounts, clock: FakeClock, store: Store
) -> None:
    ana_id, _ = accounts.consumer("pro", email="ana@example.com")
    bob_id, _ = accounts.consumer("pro", email="bob@example.com")
    book = app.deps.request_log
    start = int(clock() * 1000) - 5000
    for i in range(MAX_ROWS_PER_ACCOUNT + 25):
        book.record(call(ana_id, "k-ana", start + i))
    for i in range(3):
        book.record(call(bob_id, "k-bob", start + i))
    assert book.flush() == MAX_ROWS_PER_ACCOUNT + 28
    with store.db.transaction(write=False) as tx:
        count = "SELECT COUNT(*) AS n FROM request_log WHERE consumer_id = ?"
        assert tx.fetchone(count, (ana_id,))["n"] == MAX_ROWS_PER_ACCOUNT
        assert tx.fetchone(count, (bob_id,))["n"] == 3
        oldest = tx.fetchone(
            "SELECT MIN(at_ms) AS m FROM request_log WHERE consumer_id = ?", (ana_id,)
        )
    assert oldest is not None and oldest["m"] == start + 25  # the 25 oldest went
    rows = log(accounts.browser("ana@example.com"), "?limit=1000")
    assert len(rows) == MAX_ROWS_PER_ACCOUNT
    assert rows[0]["request_id"] == f"req-{ana_id[:4]}-{start + MAX_ROWS_PER_ACCOUNT + 24}"


def test_close_writes_what_is_buffered(
    app: SvcApp, accounts: Accounts, client: Client, store: Store
) -> None:
    _, key = accounts.consumer("pro", email="ana@example.com")
    for _ in range(4):
        get(client, f"{DATA_PATH}?bad=1", key)
    assert logged_rows(store) == 0
    app.close()
    assert logged_rows(store) == 4
    get(client, DATA_PATH, key)  # a call finishing after close is written at once
    assert logged_rows(store) == 5


def test_usage_per_key_counts_successful_counted_calls(accounts: Accounts, client: Client) -> None:
    _, first = accounts.consumer("pro", email="ana@example.com")
    ana = accounts.browser("ana@example.com")
    second = ana.post(
        "/api/auth/me/keys",
        json={"label": "second", "mode": "live", "scope": "read_only"},
        headers=ORIGIN,
    ).get_json()["data"]
    for _ in range(3):
        assert get(client, DATA_PATH, first)[0] == 200
    for _ in range(2):
        assert get(client, DATA_PATH, second["key"])[0] == 200
    assert get(client, f"{DATA_PATH}?bad=1", second["key"])[0] == 400  # not counted
    data = ana.get(USAGE).get_json()["data"]
    by_prefix = {k["prefix"]: k for k in data["keys"]}
    assert by_prefix[first[:16]]["calls"] == 3
    assert by_prefix[second["prefix"]]["calls"] == 2
    assert by_prefix[second["prefix"]]["label"] == "second"
    assert by_prefix[second["prefix"]]["status"] == "active"
    assert data["current_period"]["requests_used"] == 5
    assert sum(k["calls"] for k in data["keys"] if k["mode"] == "live") == 5
    # Another account's calls never count here.
    _, bob = accounts.consumer("pro", email="bob@example.com")
    get(client, DATA_PATH, bob)
    assert ana.get(USAGE).get_json()["data"]["keys"] == data["keys"]


def test_the_log_lives_with_the_accounts_not_the_public_data(store: Store) -> None:
    """On SQLite the data file is written by loads for seconds at a time; the log's
    writes take the accounts file's lock instead (migration 0014's routing)."""
    assert {"request_log", "key_usage"} <= set(store.db.table_names())
    if store.data is not store.db:
        assert not {"request_log", "key_usage"} & set(store.data.table_names())


def test_a_failed_write_keeps_the_lines_for_the_next_turn(
    accounts: Accounts, client: Client, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, key = accounts.consumer("pro", email="ana@example.com")
    ana = accounts.browser("ana@example.com")
    made = [get(client, f"{DATA_PATH}?bad={i}", key)[1] for i in range(3)]

    def busy(*args: object) -> None:
        raise RuntimeError("the database is busy")

    monkeypatch.setattr(store.request_log, "insert_calls", busy)
    assert log(ana) == []  # the read still answers
    assert ana.get(USAGE).status_code == 200
    monkeypatch.undo()
    assert [r["request_id"] for r in log(ana)] == made[::-1]
    assert logged_rows(store) == 3
