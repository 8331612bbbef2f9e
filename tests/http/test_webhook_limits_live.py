"""One tenant's test sends to a dead address cannot take the API from others (issue 15,
item 2), through real ``svc serve`` processes, on loopback only.

The dead endpoint is a local TCP listener that accepts connections and never answers,
so every send to it runs to the full deadline.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.runtime.deps import new_id
from svc_server.services import sessions
from svc_server.store import Store, open_store
from tests.conftest import TEST_SECRET, LiveServer

ORIGIN = "https://app.example.com"
HOOKS = "/api/auth/me/webhooks"
BOUND_S = 1.0


class DeadListener:
    """A loopback TCP listener that accepts every connection and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.held: list[socket.socket] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)

    @property
    def accepted(self) -> int:
        return len(self.held)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(2)
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def dead() -> Iterator[DeadListener]:
    listener = DeadListener()
    yield listener
    listener.stop()


class Tenant:
    """A signed-in owner of a starter consumer talking to live servers over HTTP."""

    def __init__(self, store: Store, name: str) -> None:
        signed = sessions.sign_in(
            store,
            Config(secret_key=TEST_SECRET),
            Identity(sub=f"sub-{name}", email=f"{name}@example.com"),
            time.time(),
            os.urandom(16),
            ids=new_id,
        )
        self.consumer_id = str(signed["consumer"]["id"])
        self.api_key = str(signed["api_key"])
        self.headers = {
            "Cookie": f"svc_session={signed['_cookie']}",
            "Origin": ORIGIN,
            "Content-Type": "application/json",
        }

    def call(
        self, url: str, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url + path, data, self.headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                headers = {k.lower(): v for k, v in response.headers.items()}
                return response.status, headers, json.loads(response.read())
        except urllib.error.HTTPError as err:
            headers = {k.lower(): v for k, v in err.headers.items()}
            return err.code, headers, json.loads(err.read())


def data_call_seconds(url: str, api_key: str) -> float:
    """One data call with an API key; its seconds (any answer below 500 counts)."""
    started = time.monotonic()
    request = urllib.request.Request(
        url + "/api/v1/markets/dimensions", headers={"X-API-Key": api_key}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status = response.status
    except urllib.error.HTTPError as err:
        status = err.code
    assert status < 500, status
    return time.monotonic() - started


def start_servers(db_url: str, count: int) -> list[LiveServer]:
    env = {"SVC_WEBHOOK_ALLOW_PRIVATE": "true", "SVC_SITE_ORIGINS": ORIGIN, "SVC_THREADS": "4"}
    servers: list[LiveServer] = []
    try:
        for _ in range(count):
            servers.append(LiveServer(db_url, env=env))
    except Exception:
        for server in servers:
            server.stop()
        raise
    return servers


def test_sixteen_test_sends_to_a_dead_address_do_not_slow_other_tenants(
    db_url: str, dead: DeadListener
) -> None:
    """Item 2: 16 simultaneous test sends of one starter tenant, spread over two server
    processes and 16 endpoints, run one at a time at most; the rest answer 429 at once,
    and another tenant's data calls answer within a second meanwhile."""
    store = open_store(db_url)
    store.migrate()
    servers = start_servers(db_url, 2)
    try:
        attacker, other = Tenant(store, "attacker"), Tenant(store, "other")
        urls = [s.url for s in servers]
        endpoints = []
        for _ in range(16):
            status, _, body = attacker.call(urls[0], "POST", HOOKS, {"url": dead.url})
            assert status == 200, body
            endpoints.append(body["data"]["id"])
        baseline = data_call_seconds(urls[1], other.api_key)
        assert baseline < BOUND_S

        def fire(n: int) -> tuple[int, dict[str, str], dict[str, Any]]:
            return attacker.call(urls[n % 2], "POST", f"{HOOKS}/{endpoints[n]}/test")

        with ThreadPoolExecutor(16) as pool:
            sends = [pool.submit(fire, n) for n in range(16)]
            time.sleep(0.5)  # the sends are in (or refused)
            times = [data_call_seconds(urls[n % 2], other.api_key) for n in range(6)]
            answers = [f.result() for f in sends]
    finally:
        for server in servers:
            server.stop()
        store.close()
    slowest = max(times)
    assert slowest < BOUND_S, f"other tenant's calls took {[round(t, 2) for t in times]} s"
    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [200] + [429] * 15, statuses
    for status, headers, body in answers:
        if status == 429:
            assert body["error"]["code"] == "RATE_LIMITED"
            assert body["error"]["request_id"]
            assert int(headers["retry-after"]) >= 1
        else:
            assert body["data"]["delivery"]["status"] == "failed"
            assert "timeout" in body["data"]["delivery"]["error"]
    assert dead.accepted == 1
