"""What a real ``svc serve`` answers to requests its HTTP server refuses before the app.

Both bundled servers are checked: granian (the default, through ``http.front``) and
gunicorn (``--server gunicorn``, through ``http.wire``). Each answers the refusals it
makes with the same JSON error body as every other error, never an HTML page; the one
exception, documented in docs/security.md, is granian's empty 400 for bytes that do not
parse as an HTTP request at all.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import LiveServer


@pytest.fixture(scope="module", params=["granian", "gunicorn"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("wire") / "svc.db"
    server = LiveServer(f"sqlite:///{db}", env={"SVC_SERVER": request.param})  # default limits
    yield server
    server.stop()


def server_name(server: LiveServer) -> str:
    return server.env["SVC_SERVER"]


def raw(server: LiveServer, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = [
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ]
            if length and len(body) >= length[0]:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def get(path: str, extra: bytes = b"") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + extra + b"\r\n"


Case = tuple[str, Callable[[], bytes], int, str]
CASES: list[Case] = [
    (
        "query over SVC_MAX_URL_BYTES (8000)",
        lambda: get("/api/status?x=" + "a" * 8100),
        414,
        "URI_TOO_LONG",
    ),
    (
        "request line over the server's 8190 bytes",
        lambda: get("/api/status?x=" + "a" * 9000),
        414,
        "URI_TOO_LONG",
    ),
    (
        "one header over 8190 bytes",
        lambda: get("/api/status", b"X-Big: " + b"a" * 9000 + b"\r\n"),
        431,
        "HEADERS_TOO_LARGE",
    ),
]
UNPARSEABLE: list[tuple[str, bytes]] = [
    ("not an HTTP request line", b"HELLO THERE\r\n\r\n"),
    ("a header name with a space", get("/api/status", b"Bad Name: x\r\n")),
]


@pytest.mark.parametrize(("name", "build", "status", "code"), CASES, ids=[c[0] for c in CASES])
def test_refusals_are_json_errors(
    server: LiveServer, name: str, build: Callable[[], bytes], status: int, code: str
) -> None:
    got, headers, body = raw(server, build())
    assert got == status, body[:200]
    assert headers["content-type"].startswith("application/json")
    error = json.loads(body)["error"]
    assert error["code"] == code
    assert error["message"]
    assert error["request_id"] == headers["x-request-id"]


def test_the_front_keeps_the_callers_request_id(server: LiveServer) -> None:
    if server_name(server) != "granian":
        pytest.skip("gunicorn's refusals are written before headers are read")
    request = get("/api/status", b"X-Request-ID: wire-test-1\r\nX-Big: " + b"a" * 9000 + b"\r\n")
    status, headers, body = raw(server, request)
    assert status == 431
    assert headers["x-request-id"] == "wire-test-1"
    assert json.loads(body)["error"]["request_id"] == "wire-test-1"


@pytest.mark.parametrize(("name", "request_bytes"), UNPARSEABLE, ids=[c[0] for c in UNPARSEABLE])
def test_unparseable_requests_get_400_and_a_closed_connection(
    server: LiveServer, name: str, request_bytes: bytes
) -> None:
    status, headers, body = raw(server, request_bytes)
    assert status == 400
    assert headers["connection"].lower() == "close"
    if server_name(server) == "gunicorn":
        assert json.loads(body)["error"]["code"] == "INVALID_PARAMS"
    else:  # granian's own answer, which it does not let an app replace (docs/security.md)
        assert body == b""
        assert headers["content-length"] == "0"


def test_more_than_100_headers_get_431_and_a_closed_connection(server: LiveServer) -> None:
    request = get("/api/status", b"".join(b"X-H%d: 1\r\n" % n for n in range(101)))
    status, headers, body = raw(server, request)
    assert status == 431
    assert headers["connection"].lower() == "close"
    if server_name(server) == "gunicorn":
        assert json.loads(body)["error"]["code"] == "HEADERS_TOO_LARGE"
    else:  # granian's own limit and answer (docs/security.md)
        assert body == b""


def test_a_query_just_under_the_limit_reaches_the_app(server: LiveServer) -> None:
    status, headers, body = raw(server, get("/api/status?x=" + "a" * 7900))
    assert status in (200, 400), body[:200]  # the app's own answer, not a refusal
    assert headers["content-type"].startswith("application/json")
