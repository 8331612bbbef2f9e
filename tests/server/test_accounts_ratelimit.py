"""The per-minute limit through HTTP: a sliding log in the store, on an injected clock.

A request at ``t`` is admitted while fewer than ``limit`` admitted requests lie in
``(t - 60 s, t]``; refused requests are not logged.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from svc_core.accounts.keys import KeyCreate
from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.services import keys as key_service
from svc_server.store import Store
from tests.conftest import Accounts, FakeClock
from tests.server.accounts_support import DATA_PATH, run_processes


def call(client: Client, key: str) -> tuple[int, dict[str, str], dict[str, object]]:
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    return r.status_code, dict(r.headers), r.get_json()


def test_sliding_window_edges(accounts: Accounts, client: Client, clock: FakeClock) -> None:
    _, key = accounts.consumer("pro", rate_limit=5)
    start = clock()
    clock.now = start + 59
    remaining = []
    for _ in range(5):
        status, headers, _ = call(client, key)
        assert status == 200
        remaining.append(headers["X-RateLimit-Remaining"])
    assert remaining == ["4", "3", "2", "1", "0"]
    status, headers, body = call(client, key)
    assert status == 429
    assert body["error"]["code"] == "RATE_LIMITED"  # type: ignore[index]
    assert headers["Retry-After"] == "60"
    assert headers["X-RateLimit-Limit"] == "5"
    assert headers["X-RateLimit-Remaining"] == "0"
    clock.now = start + 61  # a fixed window would have reset at start + 60
    status, headers, _ = call(client, key)
    assert status == 429
    assert headers["Retry-After"] == "58"
    clock.now = start + 118.999
    status, headers, _ = call(client, key)
    assert status == 429
    assert headers["Retry-After"] == "1"  # an integer, at least 1
    clock.now = start + 119  # the five stamps at start + 59 leave the window
    for _ in range(5):
        assert call(client, key)[0] == 200
    assert call(client, key)[0] == 429


def test_spread_requests_free_one_slot_at_a_time(
    accounts: Accounts, client: Client, clock: FakeClock
) -> None:
    _, key = accounts.consumer("pro", rate_limit=3)
    start = clock()
    for offset in (0, 10, 20):
        clock.now = start + offset
        assert call(client, key)[0] == 200
    clock.now = start + 30
    status, headers, _ = call(client, key)
    assert (status, headers["Retry-After"]) == (429, "30")
    clock.now = start + 60  # the first stamp leaves; only one slot frees
    assert call(client, key)[0] == 200
    status, headers, _ = call(client, key)
    assert (status, headers["Retry-After"]) == (429, "10")


def test_429_does_not_count_against_the_quota(
    accounts: Accounts, client: Client, store: Store
) -> None:
    consumer_id, key = accounts.consumer("pro", rate_limit=2, monthly_quota=10)
    statuses = [call(client, key)[0] for _ in range(6)]
    assert statuses == [200, 200, 429, 429, 429, 429]
    assert store.accounts.usage(consumer_id, "2026-09") == 2


def test_meta_rate_limit_shows_limit_and_remaining(accounts: Accounts, client: Client) -> None:
    _, key = accounts.consumer("pro")
    status, headers, body = call(client, key)
    assert status == 200
    assert body["_meta"]["rate_limit"] == {"limit_per_min": 120, "remaining": 119}  # type: ignore[index]
    assert headers["X-RateLimit-Limit"] == "120"
    assert headers["X-RateLimit-Remaining"] == "119"


def test_keys_of_one_consumer_share_its_limit(
    accounts: Accounts, client: Client, store: Store, clock: FakeClock
) -> None:
    consumer_id, first = accounts.consumer("pro", rate_limit=2, email="ana@example.com")
    with store.db.transaction() as tx:
        second = key_service.new_key(
            store,
            tx,
            consumer_id,
            KeyCreate(label="second", mode="live", scope="read_only"),
            now=clock(),
            entropy=bytes(16),
            ids=new_id,
        ).key
    assert call(client, first)[0] == 200
    assert call(client, second)[0] == 200
    assert call(client, first)[0] == 429
    assert call(client, second)[0] == 429


def test_cookie_callers_get_60_per_minute_per_user(accounts: Accounts, clock: FakeClock) -> None:
    ana = accounts.browser("ana@example.com")
    for n in range(60):
        r = ana.get(DATA_PATH)
        assert r.status_code == 200, n
    assert r.get_json()["_meta"]["rate_limit"] == {"limit_per_min": 60, "remaining": 0}
    refused = ana.get(DATA_PATH)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["code"] == "RATE_LIMITED"
    assert int(refused.headers["Retry-After"]) >= 1
    assert accounts.browser("bo@example.com").get(DATA_PATH).status_code == 200  # per user
    clock.advance(60)
    assert ana.get(DATA_PATH).status_code == 200


def test_rate_limit_holds_across_processes(db_url: str, store: Store, clock: FakeClock) -> None:
    """4 processes x 15 requests against a limit of 20 in one window: exactly 20 admitted."""
    row = consumer_service.create_consumer(
        store, plan="pro", now=clock(), entropy=bytes(range(16)), rate_limit=20, ids=new_id
    )
    statuses = run_processes(db_url, str(row.api_key), processes=4, per_process=15, now=clock())
    assert statuses.count(200) == 20
    assert statuses.count(429) == 40


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    limit=st.integers(min_value=1, max_value=4),
    steps=st.lists(
        st.tuples(
            # small steps, steps to just either side of a window edge, and anything
            st.one_of(
                st.integers(0, 3),
                st.sampled_from([59_997, 59_998, 59_999, 60_000, 60_001]),
                st.integers(0, 70_000),
            ),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=25,
    ),
)
def test_out_of_order_arrival_stamps_never_overfill_a_window(
    store: Store, limit: int, steps: list[tuple[int, int]]
) -> None:
    """Calls are stamped on arrival but admitted in lock order, so a call can reach the
    store after a later-stamped one. Whatever the order, no 60-second interval of
    recorded admissions holds more than the limit, and a call is never recorded before
    it arrived."""
    bucket = "prop:" + uuid.uuid4().hex
    window = 60_000
    clock = 1_000_000
    recorded: list[int] = []
    for advance, lag in steps:
        clock += advance
        arrived = clock - lag  # stamped a little earlier than a call already admitted
        if store.accounts.admit(bucket, arrived, window, limit).admitted:
            recorded.append(max(_stamps(store, bucket)))  # the newest stamp is this call's
            assert recorded[-1] >= arrived
    recorded.sort()
    for i, first in enumerate(recorded):
        inside = [t for t in recorded[i:] if t < first + window]
        assert len(inside) <= limit, (recorded, limit)


def _stamps(store: Store, bucket: str) -> list[int]:
    with store.db.transaction(write=False) as tx:
        rows = tx.fetchall("SELECT at_ms FROM rate_events WHERE bucket = ?", (bucket,))
    return [int(r["at_ms"]) for r in rows]


def test_upgrading_to_the_rate_summary_keeps_the_window(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that logged calls before migration 0005 keeps enforcing them after it:
    the summary rows are filled from the log, so a full window stays full."""
    from svc_server.store import migrate, open_store

    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 5])
    old = open_store(db_url)
    old.migrate()
    now_ms = 1_790_000_000_000
    with old.db.transaction() as tx:
        for i in range(3):
            tx.execute(
                "INSERT INTO rate_events (bucket, at_ms) VALUES (?, ?)", ("b", now_ms - 10 - i)
            )
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version <= 5])
    store = open_store(db_url)
    try:
        assert store.migrate() == ["0005_rate_counts.sql"]
        monkeypatch.setattr(migrate, "available", lambda: every)
        store.migrate()  # the later ones, which today's admission needs (0013: units)
        refused = store.accounts.admit("b", now_ms, 60_000, 3)
        assert not refused.admitted and refused.in_window == 3
        assert store.accounts.admit("b", now_ms + 60_000, 60_000, 3).admitted
    finally:
        store.close()
