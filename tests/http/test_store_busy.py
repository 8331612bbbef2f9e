"""A stalled or outside writer never hangs the server (issue 15, point 4).

A real ``svc serve`` with ``SVC_DB_BUSY_TIMEOUT_MS=1000`` and a real ``svc ingest``
stopped (SIGSTOP) while it holds its write transaction: reads answer 200 at once, and
so does a counted data call, whose admission must write (on SQLite the load holds only
the data file's write lock, issue 17). A database locked from outside svc answers 503
``STORE_BUSY`` with Retry-After within the bound, never hangs and never 500s.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import attrs
import pytest

from svc_server.store import Store, open_store
from svc_server.store.sqlite import sqlite_data_url, sqlite_path
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

try:
    import fcntl
except ImportError:  # pragma: no cover - POSIX only
    pytest.skip("needs flock and SIGSTOP", allow_module_level=True)

DATA = "/api/v1/real-estate/coverage"  # counted; 200 on an empty database
BOUND_MS = 1000
SERVER_ENV = {"SVC_DB_BUSY_TIMEOUT_MS": str(BOUND_MS), "SVC_THREADS": "4"}
ANSWER_WITHIN = 2 * BOUND_MS / 1000 + 2.0  # queue + busy handler, plus slack for CI
ROWS = 20_000  # a samples file whose write phase (3 to 6 s) lasts long enough to be caught


@attrs.frozen
class Setup:
    url: str
    store: Store
    server: LiveServer
    api_key: str


@pytest.fixture(scope="module")
def served(module_db_url: str) -> Iterator[tuple[Store, LiveServer]]:
    """One server with the 1 s bound per module and backend, and a store on its
    database; each test makes a consumer of its own."""
    store = open_store(module_db_url, pool_size=2)
    try:
        server = LiveServer(module_db_url, env=SERVER_ENV)
        try:
            yield store, server
        finally:
            server.stop()
    finally:
        store.close()


@pytest.fixture
def setup(module_db_url: str, served: tuple[Store, LiveServer]) -> Setup:
    store, server = served
    # limits too small to lease (svc_core.accounts.lease): every call writes its admission
    _, api_key = mh.consumer(
        store, f"busy-{uuid.uuid4().hex[:12]}@example.com", monthly_quota=2_000, rate_limit=2_000
    )
    return Setup(module_db_url, store, server, api_key)


def get(
    server: LiveServer, path: str, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes, float]:
    """(status, lower-cased headers, body, seconds taken); a hang fails at 30 s."""
    address = urlsplit(server.url)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    started = time.monotonic()
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    taken = time.monotonic() - started
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body, taken


def assert_store_busy(status: int, headers: dict[str, str], body: bytes, taken: float) -> None:
    assert status == 503, body[:300]
    assert json.loads(body)["error"]["code"] == "STORE_BUSY"
    assert int(headers["retry-after"]) >= 1
    assert taken < ANSWER_WITHIN


def big_samples(path: Path) -> Path:
    lines = [
        "source,sigungu_code,dong,property_type,transaction_type,contract_date,"
        "price_krw,monthly_rent_krw,area_m2"
    ]
    for i in range(ROWS):
        lines.append(
            f"public_assessment,11680,역삼동,office,sale,2025-0{1 + i % 6}-{1 + i % 28:02d},"
            f"{1_000_000_000 + i * 1000},,{100 + i % 500}.5"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def writing(setup: Setup, app_name: str) -> bool:
    """Whether the ingest holds its write transaction now."""
    if setup.url.startswith("sqlite"):
        data = sqlite_path(str(sqlite_data_url(setup.url)))  # where a load writes
        fd = os.open(f"{data}-writer", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing releases a lock we took
        return False
    with setup.store.db.transaction(write=False) as tx:
        row = tx.fetchone(
            "SELECT 1 AS yes FROM pg_stat_activity WHERE application_name = ? "
            "AND backend_xid IS NOT NULL",
            (app_name,),
        )
    return row is not None


@pytest.fixture
def stalled_ingest(setup: Setup, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``svc ingest`` stopped while it holds its write transaction."""
    app_name = "svc-ingest-" + uuid.uuid4().hex[:8]
    env = dict(os.environ, SVC_DATABASE_URL=setup.url, PGAPPNAME=app_name)
    source = big_samples(tmp_path / "big.csv")
    proc = subprocess.Popen(
        [sys.executable, "-m", "svc_server", "ingest", "samples", str(source)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        caught = False
        while time.monotonic() < deadline and proc.poll() is None:
            os.kill(proc.pid, signal.SIGSTOP)
            if writing(setup, app_name):
                caught = True
                break
            os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.01)
        assert caught, "the ingest finished before it was caught writing"
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait(timeout=30)


def test_a_stopped_ingest_never_hangs_a_request(
    setup: Setup, stalled_ingest: subprocess.Popen[bytes]
) -> None:
    # A read needs no write: it answers at once, whatever the writer holds.
    status, _, body, taken = get(setup.server, "/api/status", {})
    assert status == 200, body[:300]
    assert taken < 1.0
    for _ in range(3):
        # The admission's writes never wait for the load's: on PostgreSQL they lock
        # other rows; on SQLite they go to the accounts' file, not the data file the
        # load holds. Answers come from the data as it was before the load.
        status, _headers, body, taken = get(setup.server, DATA, {"X-API-Key": setup.api_key})
        assert status == 200, body[:300]
        assert taken < ANSWER_WITHIN
    assert stalled_ingest.poll() is None  # still stopped mid-write


def test_a_database_locked_from_outside_answers_503(setup: Setup) -> None:
    status, _, body, _ = get(setup.server, DATA, {"X-API-Key": setup.api_key})
    assert status == 200, body[:300]  # admitted once: the consumer's rows exist
    if setup.url.startswith("sqlite"):
        outside = sqlite3.connect(sqlite_path(setup.url), isolation_level=None)
        outside.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        try:
            status, headers, body, taken = get(setup.server, DATA, {"X-API-Key": setup.api_key})
        finally:
            outside.execute("ROLLBACK")
            outside.close()
    else:
        with setup.store.db.transaction() as tx:
            tx.execute("LOCK TABLE rate_counts IN ACCESS EXCLUSIVE MODE")
            status, headers, body, taken = get(setup.server, DATA, {"X-API-Key": setup.api_key})
    assert_store_busy(status, headers, body, taken)
    status, _, body, _ = get(setup.server, DATA, {"X-API-Key": setup.api_key})
    assert status == 200, body[:300]  # and serves again once the lock is gone


def waits_for_a_lock(url: str, seconds: float = 10.0) -> bool:
    """Whether a session of ``url``'s database waits for an advisory lock within
    ``seconds``."""
    import psycopg

    deadline = time.monotonic() + seconds
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
            ).fetchone()
            if row is not None:
                return True
            time.sleep(0.02)
    return False


@pytest.mark.postgres
def test_one_tenants_waiting_write_does_not_hold_up_another_in_the_same_process(
    pg_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    """Tenant b's admission waits for its quota lock (held here, as another process's
    long write would hold it): tenant a's counted calls on the same one-worker server
    keep answering at once, and b's call answers once the lock is gone."""
    import psycopg

    store = open_store(pg_url, pool_size=2)
    store.migrate()
    try:
        # limits too small to lease: every call of both writes its own admission
        _, a_key = mh.consumer(store, "a@example.com", monthly_quota=2_000, rate_limit=2_000)
        b_id, b_key = mh.consumer(store, "b@example.com", monthly_quota=2_000, rate_limit=2_000)
    finally:
        store.close()
    server = live_server_factory(
        pg_url, env={"SVC_DB_BUSY_TIMEOUT_MS": "30000", "SVC_THREADS": "4"}
    )
    for key in (a_key, b_key):
        assert get(server, DATA, {"X-API-Key": key})[0] == 200
    answered: dict[str, tuple[int, dict[str, str], bytes, float]] = {}
    with psycopg.connect(pg_url) as conn:  # the lock lasts until this transaction ends
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"quota:{b_id}:live",))
        waiting = threading.Thread(
            target=lambda: answered.update(b=get(server, DATA, {"X-API-Key": b_key}))
        )
        waiting.start()
        assert waits_for_a_lock(pg_url), "b's admission never waited for its lock"
        assert waiting.is_alive()  # b's admission waits for its lock
        for _ in range(5):
            status, _, body, taken = get(server, DATA, {"X-API-Key": a_key})
            assert status == 200, body[:300]
            assert taken < 2.0  # not queued behind b's write
        assert waiting.is_alive()
    waiting.join(30)
    assert answered["b"][0] == 200
