"""Header names a client chooses cannot pose as headers svc trusts (issue 29, items 1
and 13), over raw sockets to a real ``svc serve`` (granian and svc's front).

Behind a trusted proxy (here the test itself, on 127.0.0.1, is the proxy) a key limited
to 10.0.0.0/8 is refused when the proxy forwards a client at 203.0.113.7, whatever
headers with ``_`` in their names the client adds (``X_Forwarded_For: 10.1.2.3``):
those are dropped, never read as ``X-Forwarded-For``. The same holds for every header
the app reads (the key, the request id, the cookie). A request with two ``Host``
headers, or an HTTP/1.1 request without one, is 400 (RFC 9112 3.2).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator

import pytest

from svc_server.runtime.deps import new_id
from svc_server.services import keys
from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

DATA = "/api/v1/real-estate/dimensions"
PROXY_SAYS = "203.0.113.7"  # the client address the trusted proxy forwards
WANTED = "10.1.2.3"  # the address the client would like to be taken for


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str, str]]:
    """A server trusting 127.0.0.1 as its proxy; a key allowed from 10.0.0.0/8 only and
    an unrestricted key of the same account."""
    url = f"sqlite:///{tmp_path_factory.mktemp('names') / 'svc.db'}"
    store = open_store(url)
    store.migrate()
    try:
        consumer_id, free_key = mh.consumer(
            store, "names@example.com", monthly_quota=1_000, rate_limit=1_000
        )
        made = keys.create_key_for_consumer(
            store,
            consumer_id,
            {
                "label": "office",
                "mode": "live",
                "scope": "read_only",
                "ip_allowlist": ["10.0.0.0/8"],
            },
            now=time.time(),
            entropy=os.urandom(16),
            ids=new_id,
        )
    finally:
        store.close()
    server = LiveServer(url, env={"SVC_TRUSTED_PROXIES": "127.0.0.1/32"})
    yield server, made.key, free_key
    server.stop()


def exchange(server: LiveServer, head: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send a request head (``Connection: close``) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head_bytes, _, body = data.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def data_call(server: LiveServer, *headers: str) -> tuple[int, dict[str, str], bytes]:
    lines = [f"GET {DATA} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    return exchange(server, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def test_the_proxy_forwarded_address_is_what_the_key_is_checked_against(
    served: tuple[LiveServer, str, str],
) -> None:
    server, office_key, _ = served
    status, _, body = data_call(server, f"X-API-Key: {office_key}", f"X-Forwarded-For: {WANTED}")
    assert status != 403, body  # the test can pass the restriction: the allowed address
    status, _, body = data_call(
        server, f"X-API-Key: {office_key}", f"X-Forwarded-For: {PROXY_SAYS}"
    )
    assert status == 403 and json.loads(body)["error"]["code"] == "IP_NOT_ALLOWED"


@pytest.mark.parametrize(
    "smuggled",
    ["X_Forwarded_For", "x_forwarded_for", "X-Forwarded_For", "X_Forwarded-For", "X-FORWARDED_FOR"],
)
@pytest.mark.parametrize("where", ["after", "before"])
def test_an_underscore_alias_never_picks_the_client_address(
    served: tuple[LiveServer, str, str], smuggled: str, where: str
) -> None:
    server, office_key, _ = served
    forwarded = [f"X-Forwarded-For: {PROXY_SAYS}", f"{smuggled}: {WANTED}"]
    if where == "before":
        forwarded.reverse()
    status, _, body = data_call(server, f"X-API-Key: {office_key}", *forwarded)
    assert status == 403, body
    error = json.loads(body)["error"]
    assert error["code"] == "IP_NOT_ALLOWED"
    assert PROXY_SAYS in error["message"] and WANTED not in error["message"]


def test_an_underscore_alias_alone_is_not_a_forwarded_address(
    served: tuple[LiveServer, str, str],
) -> None:
    server, office_key, _ = served
    status, _, body = data_call(server, f"X-API-Key: {office_key}", f"X_Forwarded_For: {WANTED}")
    assert status == 403, body
    assert "127.0.0.1" in json.loads(body)["error"]["message"]  # the socket peer


def test_no_trusted_header_can_be_sent_under_an_underscore_name(
    served: tuple[LiveServer, str, str],
) -> None:
    server, _, free_key = served
    # the key: an underscore alias is no key at all
    status, _, body = data_call(server, f"X_API_Key: {free_key}")
    assert status == 401, body
    # nor a second key beside the real one (two keys are refused; the alias is not one)
    status, _, body = data_call(server, f"X-API-Key: {free_key}", "X_Api_Key: svc_pk_live_x")
    assert status == 200, body
    # the request id
    status, headers, _ = data_call(server, f"X-API-Key: {free_key}", "X_Request_ID: chosen-id")
    assert headers["x-request-id"] != "chosen-id"
    status, headers, _ = data_call(server, f"X-API-Key: {free_key}", "X-Request-ID: chosen-id")
    assert headers["x-request-id"] == "chosen-id"  # the real header is honoured
    # the content length: an alias does not frame a body
    status, _, body = exchange(
        server,
        b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content_Length: 5\r\n\r\n",
    )
    assert status == 200, body


@pytest.mark.parametrize(
    "head",
    [
        b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n",
        b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: 127.0.0.1\r\n",
        b"GET /api/status HTTP/1.1\r\n",
    ],
    ids=["two hosts", "the same host twice", "no host"],
)
def test_host_must_be_sent_exactly_once(served: tuple[LiveServer, str, str], head: bytes) -> None:
    server, _, _ = served
    status, headers, body = exchange(server, head + b"Connection: close\r\n\r\n")
    assert status == 400, body
    error = json.loads(body)["error"]
    assert error["code"] == "INVALID_PARAMS" and "Host" in error["message"]
    assert error["request_id"] == headers["x-request-id"]


def test_http_1_0_needs_no_host(served: tuple[LiveServer, str, str]) -> None:
    server, _, _ = served
    status, _, body = exchange(server, b"GET /api/status HTTP/1.0\r\n\r\n")
    assert status == 200, body
