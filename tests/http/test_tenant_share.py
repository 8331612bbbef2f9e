"""One tenant's unread big answers cannot starve another tenant (issue 29, item 2),
measured against a real ``svc serve`` (granian, one worker of four threads).

One account opens 24 connections, each asking for its largest CSV of ``/transactions``
(tens of MB: the demo's largest cohort multiplied), with a tiny receive buffer, and
reads nothing. Meanwhile another account's calls are each answered within one second,
and the worker's memory (RSS) grows by less than ``RSS_BOUND``: at most
``SVC_TENANT_CALLS`` (2) of the flood's calls run at once, each answer past 256 KiB
leaves from a file granian reads as the client reads (docs/security.md). The flood's
excess waits on the event loop and is refused with 429 ``RATE_LIMITED`` and
``Retry-After`` after ``SVC_TENANT_WAIT_MS`` (10 s by default, ``WAIT_S`` here so the
waits cost the suite little); those calls are neither charged nor counted.

The bound is the account's, whatever credential a call brings (issue 44): with two of
its calls in progress, a third by another key, a key or a session cookie never used
before, or a key sent as ``Authorization: Bearer`` to ``/mcp`` waits and is refused; and
a flood of MCP exchange messages (``tools/list``, not API calls) holds no more threads
than two calls do.

The tests share one server; each floods from an account of its own (``account``), so
calls of one test still in progress or waiting never hold another's turns or counts.
"""

from __future__ import annotations

import asyncio
import collections
import http.client
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from svc_server.ingest import demo
from svc_server.runtime.deps import new_id
from svc_server.services import callers, keys
from svc_server.store import open_store
from tests.conftest import RE_NOW, LiveServer
from tests.http import multihost_support as mh
from tests.server import test_demo_load as tdl

FLOOD = 24
RECORDS = 70_000  # the flood's selection, under the CSV cap of 100,000
RSS_BOUND = 64 * 2**20  # bytes a worker may grow by during the flood (docs/security.md)
BIG_MB = 10  # the flood's answer is at least this many MB (the test is about big ones)
DIMENSIONS = "/api/v1/real-estate/dimensions"
FLOODER = "flood@example.com"
TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
MCP_ACCEPT = "application/json, text/event-stream"
MCP_FLOOD = 256  # connections each sending tools/list after tools/list
WAIT_S = 3.0  # the server's SVC_TENANT_WAIT_MS, in seconds
TENANT_CALLS = 2  # SVC_TENANT_CALLS's default: an account's calls in progress at once


@pytest.fixture(scope="module")
def flood_setup(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, str, str, str]]:
    """The server, the CSV path of the largest selection, the flooder's and the other
    tenant's keys."""
    folder = tmp_path_factory.mktemp("share")
    url = f"sqlite:///{folder / 'svc.db'}"
    store = open_store(url)
    try:
        store.migrate()
        with pytest.MonkeyPatch.context() as patch:
            tdl.use_small_demo(patch)
            demo.load_demo(store, seed=1, now=RE_NOW)
        _, flooder = mh.consumer(store, FLOODER, monthly_quota=10**6, rate_limit=10**6)
        _, other = mh.consumer(store, "other@example.com", monthly_quota=10**6, rate_limit=10**6)
    finally:
        store.close()
    path = _largest(folder / "svc-data.db")
    server = LiveServer(
        url,
        env={
            "SVC_THREADS": "4",
            "SVC_LOG_LEVEL": "WARNING",
            "SVC_TENANT_WAIT_MS": str(int(WAIT_S * 1000)),
        },
    )
    yield server, path, flooder, other
    server.stop()


def account(server: LiveServer, email: str) -> str:
    """The key of a new account owned by ``email`` (no limit of its own in the way), made
    in the server's store: a test's own flooder."""
    store = open_store(server.env["SVC_DATABASE_URL"])
    try:
        return mh.consumer(store, email, monthly_quota=10**6, rate_limit=10**6)[1]
    finally:
        store.close()


@pytest.fixture(scope="module")
def credentials(flood_setup: tuple[LiveServer, str, str, str]) -> dict[str, str]:
    """An account's first key (``key``), its further keys (``used``, ``fresh``,
    ``bearer``) and a session cookie of its owner (``cookie``), none used yet."""
    server = flood_setup[0]
    owner_email = "third@example.com"
    made = {"key": account(server, owner_email)}
    store = open_store(server.env["SVC_DATABASE_URL"])
    try:
        owner = callers.key_owner(store, made["key"], time.time())
        assert owner is not None
        made |= {
            name: keys.create_key_for_consumer(
                store,
                owner[0],
                {"label": name, "mode": "live", "scope": "read_only"},
                now=time.time(),
                entropy=os.urandom(16),
                ids=new_id,
            ).key
            for name in ("used", "fresh", "bearer")
        }
        made["cookie"] = mh.session_cookie(store, owner_email)
    finally:
        store.close()
    return made


def _largest(data_file: Path) -> str:
    """Copy the records of the demo's largest cohort until its last 36 months (the
    longest range) hold about ``RECORDS``; the CSV path of that range."""
    with sqlite3.connect(data_file) as conn:
        code, ptype, ttype, last = conn.execute(
            "SELECT sigungu_code, property_type, transaction_type, MAX(month) "
            "FROM transactions GROUP BY 1, 2, 3 ORDER BY COUNT(*) DESC LIMIT 1"
        ).fetchone()
        first = _minus_months(last, 35)
        cohort = (
            "sigungu_code = ? AND property_type = ? AND transaction_type = ? "
            "AND month BETWEEN ? AND ?"
        )
        (base,) = conn.execute(
            f"SELECT COUNT(*) FROM transactions WHERE {cohort}", (code, ptype, ttype, first, last)
        ).fetchone()
        columns = [row[1] for row in conn.execute("PRAGMA table_info(transactions)")]
        picked = ", ".join("natural_key || '#' || n" if c == "natural_key" else c for c in columns)
        conn.execute(
            f"INSERT INTO transactions ({', '.join(columns)}) "
            f"WITH RECURSIVE copies(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM copies "
            f"WHERE n < ?) SELECT {picked} FROM transactions, copies WHERE {cohort}",
            (RECORDS // base, code, ptype, ttype, first, last),
        )
    conn.close()
    return (
        f"/api/v1/real-estate/transactions.csv?sigungu_code={code}&property_type={ptype}"
        f"&transaction_type={ttype}&from={first}&to={last}"
    )


def _minus_months(month: str, n: int) -> str:
    year, mon = map(int, month.split("-"))
    total = year * 12 + mon - 1 - n
    return f"{total // 12:04d}-{total % 12 + 1:02d}"


def worker_rss(server: LiveServer) -> int:
    """The resident memory of the server's worker processes (granian's children), bytes."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("PPid", "0").strip()) == server.proc.pid:
            total += int(fields["VmRSS"].split()[0]) * 1024
    assert total, "no worker process found"
    return total


def get(server: LiveServer, path: str, key: str) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("GET", path, headers={"X-API-Key": key})
        response = conn.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def unread(server: LiveServer, path: str, key: str) -> socket.socket:
    """A connection asking for ``path`` that will read nothing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n\r\n".encode())
    return sock


def request(
    server: LiveServer,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None = None,
    timeout: float = 30,
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def free_calls_answered(server: LiveServer, key: str, calls: int, within: float) -> bool:
    """Whether ``calls`` calls of ``/api/status`` with ``key`` at once are all answered
    within ``within`` seconds. A call with a key counts under its account's turns like
    any other (the front bounds it before the app sees it), but is never charged: one
    not answered in time waits for a turn."""

    def one(_: int) -> bool:
        try:
            request(server, "GET", "/api/status", {"X-API-Key": key}, timeout=within)
        except TimeoutError:
            return False
        return True

    with ThreadPoolExecutor(calls) as pool:
        return all(pool.map(one, range(calls)))


def at_the_bound(server: LiveServer, key: str) -> None:
    """Wait until all the turns of ``key``'s account are taken (its calls sent before
    are in progress): a free call of it has to wait."""
    deadline = time.monotonic() + 30
    while free_calls_answered(server, key, 1, within=0.5):
        assert time.monotonic() < deadline, "the account's calls never took its turns"


def idle(server: LiveServer, key: str) -> None:
    """Wait until no call of ``key``'s account is in progress (one a test left running
    would hold a thread of the server the next test shares)."""
    deadline = time.monotonic() + 30
    while not free_calls_answered(server, key, TENANT_CALLS, within=1.0):
        assert time.monotonic() < deadline, "the account's calls never ended"


def test_unread_big_answers_of_one_tenant_do_not_starve_another(
    flood_setup: tuple[LiveServer, str, str, str],
) -> None:
    server, path, flooder, other = flood_setup
    status, body, _ = get(server, path, flooder)  # the answer is big, and whole
    assert status == 200, body[:300]
    assert len(body) > BIG_MB * 2**20
    assert body.count(b"\n") > 1000
    for _ in range(3):  # warm: the other tenant's call and the worker's caches
        assert get(server, "/api/v1/real-estate/dimensions", other)[0] == 200
    before = worker_rss(server)
    sockets = [unread(server, path, flooder) for _ in range(FLOOD)]
    try:
        peak = before
        slowest = 0.0
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            started = time.monotonic()
            status, _, _ = get(server, "/api/v1/real-estate/dimensions", other)
            slowest = max(slowest, time.monotonic() - started)
            assert status == 200
            peak = max(peak, worker_rss(server))
            time.sleep(0.3)
        grown = peak - before
        print(f"tenant share: slowest other call {slowest:.3f} s, worker grew {grown >> 20} MiB")
        assert slowest < 1.0, f"another tenant waited {slowest:.2f} s"
        assert grown < RSS_BOUND, f"the worker grew by {grown / 2**20:.0f} MiB"
    finally:
        for sock in sockets:
            sock.close()
    idle(server, flooder)


def test_the_excess_of_one_tenant_is_refused_with_429_and_not_charged(
    flood_setup: tuple[LiveServer, str, str, str],
) -> None:
    server, path, _, _ = flood_setup
    flooder = account(server, "excess@example.com")
    _, _, headers = get(server, "/api/v1/real-estate/dimensions", flooder)
    used_before = int(headers["x-quota-used"])
    sockets = [unread(server, path, flooder) for _ in range(4)]
    try:
        at_the_bound(server, flooder)  # two run (and are charged), two wait for a turn
        status, body, headers = get(server, "/api/v1/real-estate/dimensions", flooder)
        assert status == 429, body[:300]
        assert headers["retry-after"] == "1"
        error = json.loads(body)["error"]
        assert error["code"] == "RATE_LIMITED" and "in progress" in error["message"]
    finally:
        for sock in sockets:
            sock.close()
    idle(server, flooder)  # granian noticed the closed connections; their turns ended
    status, _, headers = get(server, "/api/v1/real-estate/dimensions", flooder)
    assert status == 200
    # charged: the first call, at most the two big answers that ran, and this one
    assert used_before + 1 <= int(headers["x-quota-used"]) <= used_before + 3


def tools_list(server: LiveServer, key: str, timeout: float = 30) -> tuple[int, bytes]:
    """``tools/list`` at ``/mcp`` with ``key`` as ``Authorization: Bearer``."""
    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": MCP_ACCEPT,
        "Content-Type": "application/json",
    }
    return request(server, "POST", "/mcp", headers, TOOLS_LIST, timeout)


def test_a_third_call_of_an_account_waits_whatever_credential_it_brings(
    flood_setup: tuple[LiveServer, str, str, str], credentials: dict[str, str]
) -> None:
    server, path, _, other = flood_setup
    flooder = credentials["key"]
    assert get(server, DIMENSIONS, credentials["used"])[0] == 200  # a key answered before
    assert tools_list(server, flooder)[0] == 200  # Bearer is a way in
    probes = {
        "another key": lambda: request(
            server, "GET", DIMENSIONS, {"X-API-Key": credentials["used"]}
        ),
        "a key never used": lambda: request(
            server, "GET", DIMENSIONS, {"X-API-Key": credentials["fresh"]}
        ),
        "a session cookie never used": lambda: request(
            server, "GET", DIMENSIONS, {"Cookie": credentials["cookie"]}
        ),
        # a cookie Python's own parser gives up on; the app (werkzeug) reads on
        "the session after an unreadable cookie": lambda: request(
            server, "GET", DIMENSIONS, {"Cookie": 'x="; ' + credentials["cookie"]}
        ),
        "the key as Bearer": lambda: tools_list(server, flooder),
        "a key never used, as Bearer": lambda: tools_list(server, credentials["bearer"]),
    }
    sockets = [unread(server, path, flooder) for _ in range(TENANT_CALLS)]
    try:
        at_the_bound(server, flooder)  # both are in progress
        with ThreadPoolExecutor(len(probes)) as pool:
            started = time.monotonic()
            running = {name: pool.submit(probe) for name, probe in probes.items()}
            # meanwhile another account is answered at once
            for _ in range(3):
                began = time.monotonic()
                assert get(server, DIMENSIONS, other)[0] == 200
                assert time.monotonic() - began < 1.0
            outcomes = {name: future.result() for name, future in running.items()}
            waited = time.monotonic() - started
    finally:
        for sock in sockets:
            sock.close()
    idle(server, flooder)
    ran = {name: status for name, (status, _) in outcomes.items() if status != 429}
    assert not ran, f"ran beside the account's two calls in progress: {ran}"
    for _, body in outcomes.values():
        assert json.loads(body)["error"]["code"] == "RATE_LIMITED"
    # each waited the server's SVC_TENANT_WAIT_MS for a turn before the 429: all of it,
    # and not the default 10 s
    assert WAIT_S - 0.2 < waited < 9.0


def test_a_bearer_flood_of_exchange_messages_leaves_other_tenants_answered(
    flood_setup: tuple[LiveServer, str, str, str],
) -> None:
    """``tools/list`` is no API call (neither counted nor rate-limited), so only the
    account's bound holds a flood of it: two in progress, the rest wait."""
    server, _, _, other = flood_setup
    flooder = account(server, "bearer@example.com")
    stop = threading.Event()
    answered = collections.Counter[int]()
    flooding = threading.Thread(
        target=asyncio.run, args=(mcp_flood(server, flooder, stop, answered),)
    )
    flooding.start()
    try:
        deadline = time.monotonic() + 10
        while not answered[200] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert answered[200], f"the flood was never answered: {answered}"
        slowest = 0.0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            began = time.monotonic()
            status, _, _ = get(server, DIMENSIONS, other)
            slowest = max(slowest, time.monotonic() - began)
            assert status == 200
            time.sleep(0.1)
    finally:
        stop.set()
        flooding.join()
    print(f"bearer flood: {dict(answered)}, slowest other call {slowest:.3f} s")
    assert slowest < 1.0, f"another tenant waited {slowest:.2f} s"


async def mcp_flood(
    server: LiveServer, key: str, stop: threading.Event, answered: collections.Counter[int]
) -> None:
    """``MCP_FLOOD`` connections each sending ``tools/list`` with ``key`` as Bearer, one
    after the other, until ``stop`` (one thread: the test's own calls are not held up)."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        f"Accept: {MCP_ACCEPT}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(TOOLS_LIST)}\r\n\r\n"
    ).encode()

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            while not stop.is_set():
                writer.write(head + TOOLS_LIST)
                status_line = await reader.readline()
                if not status_line:  # closed (a refusal says Connection: close): again
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                    continue
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                answered[int(status_line.split()[1])] += 1
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(MCP_FLOOD)))
