"""A request followed by a half-close (issue 29, item 9), over raw sockets to a real
``svc serve`` on both bundled servers.

A client that sends a whole request and then shuts down its write side (``nc -N``,
``printf ... | socat``, some health checkers) is answered where the server can (gunicorn
does). granian drops a half-closed connection without an answer; svc never counts such
a call: not run when the front knows the client has gone, not counted when it knows at
settling, uncounted when granian reports the drop after the answer was handed over
(each call here is the first on its connection, as with ``nc -N``). The count is read back from ``X-Quota-Used`` of a normal call after the half-closed ones.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

DATA = "/api/v1/real-estate/dimensions"
TRIES = 12


QUOTAS = {"own-unit": 1_000, "leased": 1_000_000}
"""A small quota holds a unit per call in the database; a large one leases units to the
worker, counted in memory (``services.leases``): a call is uncounted in both."""


@pytest.fixture(params=[(s, q) for s in ("granian", "gunicorn") for q in QUOTAS], ids=str)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, str]]:
    server_kind, quota = request.param
    url = f"sqlite:///{tmp_path_factory.mktemp('half') / 'svc.db'}"
    store = open_store(url)
    store.migrate()
    try:
        _, key = mh.consumer(
            store, "half@example.com", monthly_quota=QUOTAS[quota], rate_limit=1_000
        )
    finally:
        store.close()
    server = LiveServer(url, env={"SVC_SERVER": server_kind})
    yield server, key
    server.stop()


def call(server: LiveServer, key: str, *, half_close: bool) -> bytes:
    """Everything the server sends for one data call (b"" for no answer)."""
    request = f"GET {DATA} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n"
    if not half_close:
        request += "Connection: close\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall((request + "\r\n").encode())
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    return data


def quota_used(answer: bytes) -> int:
    head = answer.partition(b"\r\n\r\n")[0].decode("latin-1")
    assert head.startswith("HTTP/1.1 200"), head
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "x-quota-used":
            return int(value)
    raise AssertionError(f"no X-Quota-Used in {head}")


def test_a_half_closed_call_is_charged_only_when_answered(
    served: tuple[LiveServer, str], request: pytest.FixtureRequest
) -> None:
    server, key = served
    # a worker's first call takes granian's word of a half-close longest (front.WORD_WAIT)
    before = quota_used(call(server, key, half_close=False))
    answered = 0
    for _ in range(TRIES):
        answer = call(server, key, half_close=True)
        if answer:
            assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
            answered += 1
    time.sleep(1)  # an uncounting runs after granian's word (front.WORD_WAIT)
    used = quota_used(call(server, key, half_close=False))
    if "gunicorn" in request.node.name:
        assert answered == TRIES  # gunicorn answers a half-closed request
    # granian answers one only when its answer is out before it reads the half-close
    assert used == before + answered + 1  # each answered call once, this one, no other
