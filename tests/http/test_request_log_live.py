"""The request log through real ``svc serve`` processes, on SQLite and PostgreSQL.

Two workers answer the calls: each keeps its lines in memory and its writer thread
writes them within about a second, so the log read from either worker shows every call
of the account's keys, with the request ids the responses carried, and never another
account's. Retention and the per-account bound hold at each write.

The first two tests share one such server per backend, each with accounts of its own;
the clean-stop test stops its server, so it starts one for itself.
"""

from __future__ import annotations

import http.client
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from svc_core.accounts.requestlog import MAX_ROWS_PER_ACCOUNT, RETENTION_SECONDS, LoggedCall
from svc_server.services.request_log import FLUSH_SECONDS
from svc_server.store import Store, open_store
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

DATA = "/api/v1/real-estate/dimensions"
LOG = "/api/auth/me/requests"


@pytest.fixture(scope="module")
def shared_server(module_db_url: str) -> Iterator[LiveServer]:
    """Two workers, and no inline worker: the lines are written by each worker's own
    writer thread."""
    live = LiveServer(module_db_url, workers=2, env={"SVC_INLINE_WORKER": "false"})
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def shared_store(module_db_url: str) -> Iterator[Store]:
    """The shared server's store, to make accounts and read the table."""
    opened = open_store(module_db_url, pool_size=2)
    try:
        yield opened
    finally:
        opened.close()


def email(who: str) -> str:
    return f"log-{who}-{uuid.uuid4().hex[:8]}@example.com"


def key_call(server: LiveServer, path: str, key: str) -> tuple[int, str]:
    address = urlsplit(server.url)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    try:
        conn.request("GET", path, headers={"X-API-Key": key})
        response = conn.getresponse()
        response.read()
        return response.status, str(response.getheader("X-Request-ID"))
    finally:
        conn.close()


def wait_log(
    server: LiveServer, cookie: str, query: str, done: Callable[[list[dict[str, Any]]], bool]
) -> list[dict[str, Any]]:
    """The log as read through ``server`` once ``done`` holds (lines of the other worker
    arrive with its writer's next turn)."""
    deadline = time.monotonic() + 15
    while True:
        status, body = mh.call(server, "GET", LOG + query, cookie)
        assert status == 200, body
        rows = list(body["data"]["rows"])
        if done(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


def rows_in_table(store: Store, consumer_id: str) -> list[dict[str, Any]]:
    with store.db.transaction(write=False) as tx:
        return tx.fetchall(
            "SELECT at_ms, request_id FROM request_log WHERE consumer_id = ? ORDER BY at_ms",
            (consumer_id,),
        )


def test_every_key_call_shows_in_its_accounts_log_only(
    shared_store: Store, shared_server: LiveServer
) -> None:
    store, server = shared_store, shared_server
    ana_email, bob_email = email("ana"), email("bob")
    _, ana_key = mh.consumer(store, ana_email, monthly_quota=2, rate_limit=1000)
    _, bob_key = mh.consumer(store, bob_email, monthly_quota=100, rate_limit=1000)
    ana = mh.session_cookie(store, ana_email)
    bob = mh.session_cookie(store, bob_email)
    made = [
        key_call(server, path, ana_key)
        for path in (
            DATA,
            f"{DATA}?nope=1",
            "/api/v1/nope",
            f"{DATA}?x=%00",
            "/api/v1/a%00%ff",  # kept as text any database stores
            DATA,
            DATA,
        )
    ]
    assert [s for s, _ in made] == [200, 400, 404, 400, 404, 200, 402]
    bob_made = [key_call(server, f"{DATA}?bad=1", bob_key) for _ in range(3)]
    assert key_call(server, DATA, "svc_pk_live_" + "0" * 32)[0] == 401
    expected = {i: s for s, i in made}
    rows = wait_log(server, ana, "", lambda rows: len(rows) >= len(made))
    assert {r["request_id"]: r["status"] for r in rows} == expected
    assert all(r["key_prefix"] == ana_key[:16] for r in rows)
    assert {r["path"] for r in rows} >= {f"{DATA}?nope=1", "/api/v1/nope"}
    failed = wait_log(server, ana, "?status=4xx", lambda rows: len(rows) == 5)
    assert sorted(r["status"] for r in failed) == [400, 400, 402, 404, 404]
    assert "/api/v1/a\ufffd\ufffd" in {r["path"] for r in failed}
    exact = wait_log(server, ana, "?status=402", lambda rows: len(rows) == 1)
    assert [r["error_code"] for r in exact] == ["QUOTA_EXCEEDED"]
    bob_rows = wait_log(server, bob, "", lambda rows: len(rows) >= 3)
    assert {r["request_id"] for r in bob_rows} == {i for _, i in bob_made}
    bob_key_id = bob_rows[0]["key_id"]
    # Bob's lines are written (his log showed them): one read of Ana's log filtered
    # by his key must already be empty.
    assert wait_log(server, ana, f"?key={bob_key_id}", lambda rows: True) == []
    status, body = mh.call(server, "GET", "/api/auth/me/usage", ana)
    assert status == 200
    assert [k["calls"] for k in body["data"]["keys"]] == [2]


def test_retention_and_the_bound_hold_at_each_write(
    shared_store: Store, shared_server: LiveServer
) -> None:
    store, server = shared_store, shared_server
    full = email("full")
    consumer_id, key = mh.consumer(store, full, monthly_quota=100, rate_limit=1000)
    cookie = mh.session_cookie(store, full)
    now_ms = int(time.time() * 1000)
    stale = now_ms - RETENTION_SECONDS * 1000 - 60_000
    old = [
        LoggedCall(
            consumer_id=consumer_id,
            key_id="k",
            at_ms=(stale if i < 10 else now_ms - 50_000 + i),
            method="GET",
            path=DATA,
            status=200,
            request_id=f"seeded-{i}",
            duration_ms=1.0,
        )
        for i in range(MAX_ROWS_PER_ACCOUNT + 10)
    ]
    with store.db.transaction() as tx:
        row_ids = iter(f"{consumer_id}-{n}" for n in range(10**6))
        store.request_log.insert_calls(tx, old, row_ids.__next__)
    made = [key_call(server, f"{DATA}?n={i}", key)[1] for i in range(5)]
    # the calls may go to either worker: wait for the writes of both
    rows = wait_log(
        server, cookie, "?limit=5", lambda rows: {r["request_id"] for r in rows} == set(made)
    )
    assert {r["request_id"] for r in rows} == set(made)
    kept = rows_in_table(store, consumer_id)
    assert len(kept) == MAX_ROWS_PER_ACCOUNT
    assert all(r["at_ms"] > stale for r in kept)  # the week-old ones went first
    ids = [r["request_id"] for r in kept]
    assert "seeded-10" not in ids and "seeded-14" not in ids  # then the oldest recent
    assert "seeded-15" in ids and set(made) <= set(ids)


@pytest.mark.parametrize("server", ["granian", "gunicorn"])
def test_a_clean_stop_writes_every_line(
    db_url: str, store: Store, server: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    """A server of its own: stopping it is what the test is about."""
    consumer_id, key = mh.consumer(
        store, "log-stop@example.com", monthly_quota=100, rate_limit=1000
    )
    live = live_server_factory(db_url, env={"SVC_SERVER": server, "SVC_INLINE_WORKER": "false"})
    started = time.monotonic()
    made = [key_call(live, f"{DATA}?bad={i}", key)[1] for i in range(10)]
    if time.monotonic() - started >= FLUSH_SECONDS or rows_in_table(store, consumer_id):
        pytest.skip("the writer thread wrote first (a slow machine): nothing to show")
    live.proc.terminate()  # SIGTERM, as systemd stops a service
    assert live.proc.wait(timeout=30) == 0
    assert {r["request_id"] for r in rows_in_table(store, consumer_id)} == set(made)
