"""200 slow clients do not delay anyone else (issue 15, item 1).

Through a real ``svc serve`` (one worker of four threads, the smallest default-like
setup): 200 loopback connections each send part of a request and then nothing, half
stopping inside the headers and half inside a declared body. While they hold their
connections, other clients' calls must each be answered within a second.

Under gunicorn's gthread worker (``SVC_SERVER=gunicorn pytest
tests/http/test_slow_clients.py``) the first four slow connections take every thread and
this test fails: the calls time out.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer

SLOW = 200
CALLS = 20
BOUND_S = 1.0
HEAD_PART = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
BODY_PART = (
    b"POST /api/auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jwt": "'
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(f"sqlite:///{tmp_path}/svc.db", env={"SVC_THREADS": "4"})
    yield server
    server.stop()


def call_status(port: int) -> float:
    """One GET /api/status on a fresh connection; its seconds (inf when not answered)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3 * BOUND_S) as sock:
            sock.sendall(
                b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            )
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
    except OSError:
        return float("inf")
    if not data.startswith(b"HTTP/1.1 200"):
        return float("inf")
    return time.monotonic() - started


def test_200_slow_clients_do_not_delay_other_calls(server: LiveServer) -> None:
    baseline = [call_status(server.port) for _ in range(3)]
    assert max(baseline) < BOUND_S, baseline
    held: list[socket.socket] = []
    try:
        for n in range(SLOW):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(HEAD_PART if n % 2 else BODY_PART)
            held.append(sock)
        time.sleep(0.5)  # every partial request has reached the server
        times = [call_status(server.port) for _ in range(CALLS)]
    finally:
        for sock in held:
            sock.close()
    slowest = max(times)
    assert slowest < BOUND_S, (
        f"with {SLOW} slow clients, calls took up to {slowest:.2f} s: "
        f"{[round(t, 3) for t in times]}"
    )


def test_a_body_that_stops_arriving_gets_408_after_the_read_timeout(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path}/svc.db", env={"SVC_READ_TIMEOUT": "1"})
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(BODY_PART)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
            waited = time.monotonic() - started
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(HEAD_PART)
            head_closed = sock.recv(65536)
            head_waited = time.monotonic() - started - waited
    finally:
        server.stop()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), data[:300]
    assert b"connection: close" in head.lower()
    assert json.loads(body)["error"]["code"] == "REQUEST_TIMEOUT"
    assert 0.9 < waited < 5
    # granian closes a connection whose head does not arrive in time, without an answer
    assert head_closed == b""
    assert 0.9 < head_waited < 5
