"""Helpers for ``test_multihost``: servers started together, a client pool that starts
all at once, and the database rows the assertions read (usage counters, rate log, quota
events, outbox)."""

from __future__ import annotations

import http.client
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import attrs

from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.runtime.deps import new_id
from svc_server.services import consumers, sessions
from svc_server.store import Store
from svc_server.store.base import fetchall
from tests.conftest import TEST_SECRET, LiveServer

ORIGIN = "https://app.example.com"
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


def start_together(*starts: Callable[[], LiveServer]) -> list[LiveServer]:
    """Start servers at the same time (each ``start`` returns once its server answers),
    so a module's servers cost one start-up, not one each. When one fails to start,
    those that did are stopped and its error is raised."""
    with ThreadPoolExecutor(len(starts)) as pool:
        futures = [pool.submit(start) for start in starts]
    started = [f.result() for f in futures if f.exception() is None]
    for future in futures:
        error = future.exception()
        if error is not None:
            stop_all(started)
            raise error
    return started


def stop_all(servers: Sequence[LiveServer]) -> None:
    """Stop servers at the same time: each is asked to stop before any is waited for."""
    for server in servers:
        if server.proc.poll() is None:
            server.proc.terminate()
    for server in servers:
        server.stop()


@attrs.frozen
class Job:
    """One GET to send: to ``server`` (its index), as ``label`` (for grouping results)."""

    server: int
    path: str
    headers: dict[str, str]
    label: str = ""


@attrs.frozen
class Result:
    job: Job
    status: int | None  # None: no answer (connection error)
    headers: dict[str, str]  # names lower-cased
    body: bytes
    error: str | None = None
    retried: bool = False

    @property
    def code(self) -> str | None:
        """The error code of a JSON error body, if any."""
        if self.status is None or self.status < 400:
            return None
        try:
            return str(json.loads(self.body)["error"]["code"])
        except (ValueError, KeyError, TypeError):
            return None


@attrs.frozen
class Outcome:
    results: list[Result]
    elapsed: float  # from the common start to the last answer

    def of(self, label: str) -> Outcome:
        return Outcome([r for r in self.results if r.job.label == label], self.elapsed)

    def with_status(self, status: int) -> list[Result]:
        return [r for r in self.results if r.status == status]

    @property
    def ok(self) -> list[Result]:
        return [r for r in self.results if r.status is not None and 200 <= r.status < 300]

    @property
    def server_errors(self) -> list[Result]:
        return [r for r in self.results if r.status is not None and r.status >= 500]

    @property
    def connection_errors(self) -> list[Result]:
        return [r for r in self.results if r.status is None]

    def statuses(self) -> Counter[int | None]:
        return Counter(r.status for r in self.results)

    def summary(self, name: str) -> str:
        """One line for the CI log."""
        c = self.statuses()
        return (
            f"multihost[{name}]: {len(self.results)} requests, 2xx={len(self.ok)}, "
            f"402={c[402]}, 429={c[429]}, 5xx={len(self.server_errors)}, "
            f"conn_errors={len(self.connection_errors)}, "
            f"stale_retries={sum(r.retried for r in self.results)}, {self.elapsed:.2f}s"
        )

    def report(self, name: str) -> None:
        print(self.summary(name), file=sys.stderr, flush=True)

    def describe_failures(self) -> str:
        """The first few 5xx bodies and connection errors, for assertion messages."""
        bad = self.server_errors + self.connection_errors
        return "; ".join(f"{r.status} {r.error or r.body[:300]!r}" for r in bad[:5])


class _Connections:
    """One keep-alive connection per server, owned by one thread."""

    def __init__(self, servers: Sequence[LiveServer]) -> None:
        self.addresses = [urlsplit(s.url) for s in servers]
        self.open: dict[int, http.client.HTTPConnection] = {}

    def get(self, server: int) -> tuple[http.client.HTTPConnection, bool]:
        conn = self.open.get(server)
        if conn is not None:
            return conn, True
        address = self.addresses[server]
        conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
        self.open[server] = conn
        return conn, False

    def drop(self, server: int) -> None:
        conn = self.open.pop(server, None)
        if conn is not None:
            conn.close()

    def send(self, job: Job) -> Result:
        """Send ``job``; a keep-alive connection the server closed while idle is retried
        once on a fresh one (nothing was answered on it). Any other failure is a result."""
        retried = False
        while True:
            conn, reused = self.get(job.server)
            try:
                conn.request("GET", job.path, headers=job.headers)
                response = conn.getresponse()
                body = response.read()
            except STALE as exc:
                self.drop(job.server)
                if reused and not retried:
                    retried = True
                    continue
                return Result(job, None, {}, b"", error=repr(exc), retried=retried)
            except OSError as exc:
                self.drop(job.server)
                return Result(job, None, {}, b"", error=repr(exc), retried=retried)
            if response.will_close:
                self.drop(job.server)
            headers = {name.lower(): value for name, value in response.getheaders()}
            return Result(job, response.status, headers, body, retried=retried)

    def close(self) -> None:
        for server in list(self.open):
            self.drop(server)


def hammer(servers: Sequence[LiveServer], jobs: Sequence[Job], threads: int = 16) -> Outcome:
    """Send ``jobs`` from ``threads`` client threads that start together.

    Each thread first opens a keep-alive connection to every server (an uncounted
    ``GET /api/status``), then all wait on one barrier and take jobs in order from a
    shared cursor until none are left.
    """
    results: list[Result | None] = [None] * len(jobs)
    cursor = iter(range(len(jobs)))
    cursor_lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)
    failures: list[BaseException] = []

    def work() -> None:
        conns = _Connections(servers)
        try:
            for server in range(len(servers)):
                warm = conns.send(Job(server, "/api/status", {}))
                if warm.status is None:
                    raise RuntimeError(f"warm-up to server {server} failed: {warm.error}")
            barrier.wait(timeout=60)
            while True:
                with cursor_lock:
                    index = next(cursor, None)
                if index is None:
                    return
                results[index] = conns.send(jobs[index])
        except BaseException as exc:  # reported by the caller
            failures.append(exc)
            barrier.abort()
        finally:
            conns.close()

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait(timeout=60)
    started = time.monotonic()
    for worker in workers:
        worker.join(timeout=120)
    elapsed = time.monotonic() - started
    if failures:
        raise failures[0]
    if any(worker.is_alive() for worker in workers):
        raise RuntimeError("client threads did not finish within 120 s")
    assert all(r is not None for r in results)
    return Outcome([r for r in results if r is not None], elapsed)


def alternate(count: int, path: str, headers: dict[str, str], label: str = "") -> list[Job]:
    """``count`` jobs spread alternately over servers 0 and 1."""
    return [Job(i % 2, path, headers, label) for i in range(count)]


def interleave(*groups: Sequence[Job]) -> list[Job]:
    """Round-robin the groups so their requests are in flight at the same time."""
    out: list[Job] = []
    longest = max(len(g) for g in groups)
    for i in range(longest):
        out.extend(g[i] for g in groups if i < len(g))
    return out


# accounts and webhook endpoints ------------------------------------------------------------


def consumer(store: Store, email: str, *, monthly_quota: int, rate_limit: int) -> tuple[str, str]:
    """A pro consumer owned by ``email`` with one live key and its own limits:
    (consumer_id, api_key). The operator's path, as ``svc consumer create
    --monthly-quota N --rate-limit N`` takes it."""
    out = consumers.create_consumer(
        store,
        plan="pro",
        now=time.time(),
        entropy=os.urandom(16),
        email=email,
        monthly_quota=monthly_quota,
        rate_limit=rate_limit,
        ids=new_id,
    )
    return str(out.consumer_id), str(out.api_key)


def session_cookie(store: Store, email: str) -> str:
    """A ``Cookie`` header value signed in as ``email`` (what POST /api/auth/session sets)."""
    signed = sessions.sign_in(
        store,
        Config(secret_key=TEST_SECRET),
        Identity(sub="idp|" + email, email=email),
        time.time(),
        os.urandom(16),
        ids=new_id,
    )
    return f"svc_session={signed['_cookie']}"


def call(
    server: LiveServer, method: str, path: str, cookie: str, body: Any = None
) -> tuple[int, Any]:
    """One cookie-authenticated account call; (status, parsed JSON)."""
    address = urlsplit(server.url)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    headers = {"Cookie": cookie, "Origin": ORIGIN}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


# database reads ----------------------------------------------------------------------------


def usage_rows(store: Store, consumer_id: str) -> dict[tuple[str, str], int]:
    """Every usage counter of the consumer: (month, mode) -> count."""
    rows = fetchall(
        store.db,
        "SELECT month, mode, count FROM usage_counters WHERE consumer_id = ?",
        (consumer_id,),
    )
    return {(r["month"], r["mode"]): int(r["count"]) for r in rows}


def day_rows(store: Store, consumer_id: str) -> dict[tuple[str, str], int]:
    """Every day count of the consumer: (UTC day, mode) -> count."""
    rows = fetchall(
        store.db,
        "SELECT day, mode, count FROM usage_days WHERE consumer_id = ?",
        (consumer_id,),
    )
    return {(r["day"], r["mode"]): int(r["count"]) for r in rows}


def rate_log_size(store: Store, consumer_id: str) -> int:
    """Admitted calls in the consumer's live-key sliding log."""
    rows = fetchall(
        store.db,
        "SELECT COUNT(*) AS n FROM rate_events WHERE bucket = ?",
        (f"consumer:{consumer_id}:live",),
    )
    return int(rows[0]["n"])


def events_of(store: Store, consumer_id: str) -> list[dict[str, Any]]:
    """The consumer's published events: id, type and the decoded payload."""
    rows = fetchall(
        store.db,
        "SELECT id, type, payload FROM events WHERE consumer_id = ? ORDER BY id",
        (consumer_id,),
    )
    return [{"id": r["id"], "type": r["type"], "payload": json.loads(r["payload"])} for r in rows]


def outbox_of(store: Store, endpoint_id: str) -> list[str]:
    """Event ids queued for one endpoint, one entry per outbox row."""
    rows = fetchall(
        store.db,
        "SELECT event_id FROM deliveries WHERE endpoint_id = ? ORDER BY event_id",
        (endpoint_id,),
    )
    return [str(r["event_id"]) for r in rows]


def held_units(store: Store, consumer_id: str) -> int:
    """Quota units the consumer's calls in flight and the servers' leases hold."""
    rows = fetchall(
        store.db,
        "SELECT COALESCE(SUM(units), 0) AS n FROM usage_holds WHERE consumer_id = ?",
        (consumer_id,),
    )
    return int(rows[0]["n"])


def quota_markers(store: Store, consumer_id: str) -> list[tuple[str, str]]:
    rows = fetchall(
        store.db,
        "SELECT month, threshold FROM quota_events WHERE consumer_id = ? ORDER BY threshold",
        (consumer_id,),
    )
    return [(str(r["month"]), str(r["threshold"])) for r in rows]
