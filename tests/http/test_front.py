"""Request bodies at the HTTP edge of a real ``svc serve`` (issue 15, items 10 and 11).

Over a raw socket, on both bundled servers: a malformed or truncated body answers 400
with SPEC's error body (never 500), and a 413 closes the connection (``Connection:
close``) so the client is never promised keep-alive and then dropped. A well-formed
chunked body still reaches the app.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from tests.conftest import LiveServer

SESSION = (
    b"POST /api/auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
)
SMALL_LIMIT = 2048  # SVC_MAX_BODY_BYTES (its minimum is 1024)


@pytest.fixture(scope="module", params=["granian", "gunicorn"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("front") / "svc.db"
    env = {"SVC_SERVER": request.param, "SVC_MAX_BODY_BYTES": str(SMALL_LIMIT)}
    server = LiveServer(f"sqlite:///{db}", env=env)
    yield server
    server.stop()


class Answer:
    """One response read off a socket, and whether the server then closed it."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes, closed: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.closed = closed

    @property
    def error(self) -> dict[str, str]:
        return dict(json.loads(self.body)["error"])


def read_answer(sock: socket.socket) -> Answer:
    """Read one response (Content-Length framed), then see whether the server closes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed before a response: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed inside the response body")
        body += chunk
    return Answer(int(lines[0].split()[1]), headers, body[:length], closed=False)


def closes(sock: socket.socket) -> bool:
    """Whether the server closes the connection (within 3 s) after its answer."""
    sock.settimeout(3)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def exchange(server: LiveServer, request: bytes, *, half_close: bool = False) -> Answer:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        if half_close:  # the client stops sending: the body ends early
            sock.shutdown(socket.SHUT_WR)
        answer = read_answer(sock)
        if not half_close:
            answer.closed = closes(sock)
        return answer


def chunked(*parts: bytes) -> bytes:
    return SESSION + b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(parts)


def assert_bad_body(answer: Answer) -> None:
    assert answer.status == 400, answer.body[:300]
    assert answer.error["code"] == "INVALID_PARAMS"
    assert answer.error["request_id"] == answer.headers["x-request-id"]
    assert answer.headers["connection"].lower() == "close"


def test_a_well_formed_chunked_body_reaches_the_app(server: LiveServer) -> None:
    body = b'{"nope": 1}'
    answer = exchange(server, chunked(b"%x\r\n" % len(body), body, b"\r\n0\r\n\r\n"))
    assert answer.status == 400
    assert "nope" in answer.error["message"]  # the app parsed the body and named the field


def test_a_bad_chunk_size_is_400(server: LiveServer) -> None:
    assert_bad_body(exchange(server, chunked(b"zz\r\n{}\r\n0\r\n\r\n")))


def test_garbage_after_a_chunk_is_400(server: LiveServer) -> None:
    assert_bad_body(exchange(server, chunked(b"2\r\n{}\r\nnot-a-size\r\n\r\n")))


def test_a_truncated_chunked_body_is_400(server: LiveServer) -> None:
    assert_bad_body(exchange(server, chunked(b'10\r\n{"a"'), half_close=True))


def test_a_truncated_content_length_body_is_400(server: LiveServer) -> None:
    request = SESSION + b'Content-Length: 100\r\n\r\n{"jwt":'
    assert_bad_body(exchange(server, request, half_close=True))


def test_413_by_content_length_closes_the_connection(server: LiveServer) -> None:
    # The body is announced but not sent: the server must not wait for it, and must not
    # keep a connection whose unread body would be taken for the next request.
    request = SESSION + f"Content-Length: {SMALL_LIMIT + 1}\r\n\r\n".encode()
    answer = exchange(server, request)
    assert answer.status == 413
    assert answer.error["code"] == "PAYLOAD_TOO_LARGE"
    assert answer.headers["connection"].lower() == "close"
    assert answer.closed


def test_413_by_chunks_closes_the_connection(server: LiveServer) -> None:
    big = b"a" * (SMALL_LIMIT + 10)
    answer = exchange(server, chunked(b"%x\r\n" % len(big), big, b"\r\n0\r\n\r\n"))
    assert answer.status == 413
    assert answer.error["code"] == "PAYLOAD_TOO_LARGE"
    assert answer.headers["connection"].lower() == "close"
    assert answer.closed


def test_a_body_at_the_limit_is_read_and_the_connection_kept(server: LiveServer) -> None:
    body = b'{"nope": "' + b"a" * (SMALL_LIMIT - 12) + b'"}'
    assert len(body) == SMALL_LIMIT
    request = SESSION + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        first = read_answer(sock)
        sock.sendall(request)  # an answer by the app keeps the connection for the next
        second = read_answer(sock)
    for answer in (first, second):
        assert answer.status == 400
        assert "nope" in answer.error["message"]
