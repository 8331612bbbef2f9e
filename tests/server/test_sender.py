"""The webhook sender against real local HTTP(S) servers."""

from __future__ import annotations

import contextlib
import datetime
import http.server
import inspect
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from svc_core.webhooks import events, signing
from svc_core.webhooks.netguard import check_webhook_url, resolve_and_check
from svc_server.delivery.sender import (
    DEFAULT_TIMEOUT,
    USER_AGENT,
    SendResult,
    build_headers,
    send,
)

SECRET = signing.generate_secret(bytes(range(32)))
PUBLIC = "93.184.216.34"


class Recorded:
    def __init__(self, path: str, headers: dict[str, str], body: bytes) -> None:
        self.path = path
        self.headers = headers
        self.body = body


class Server:
    """A threaded HTTP server on 127.0.0.1 whose handler is a plain function.

    ``behave(handler)`` writes the reply; every request is recorded first. ``release``
    wakes handlers that wait, so teardown never waits for a sleeping reply.
    """

    def __init__(
        self,
        behave: Callable[[http.server.BaseHTTPRequestHandler, Server], None],
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.requests: list[Recorded] = []
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                server.requests.append(Recorded(self.path, dict(self.headers.items()), body))
                with contextlib.suppress(OSError):
                    behave(self, server)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        class Quiet(http.server.ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                return None

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook", host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(
        behave: Callable[[http.server.BaseHTTPRequestHandler, Server], None],
        tls: ssl.SSLContext | None = None,
    ) -> Server:
        server = Server(behave, tls)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def reply(
    status: int, body: bytes = b"", headers: dict[str, str] | None = None
) -> Callable[[http.server.BaseHTTPRequestHandler, Server], None]:
    def behave(handler: http.server.BaseHTTPRequestHandler, server: Server) -> None:
        handler.send_response(status)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return behave


def local(**kwargs: Any) -> dict[str, Any]:
    """Sender options for local test servers: the development setting."""
    return {"allow_private": True, "allow_http": True, **kwargs}


def signed_test_event(now: int = 1_790_000_000) -> tuple[bytes, dict[str, str]]:
    event = events.webhook_test(
        event_id="evt_webhook_test_0001", now=now, docs_url="https://svc.example.com/docs"
    )
    body = events.serialize(event)
    headers = build_headers(event["type"], event["id"], signing.sign(body, SECRET, now))
    return body, headers


def assert_no_connection(listener: socket.socket) -> None:
    listener.settimeout(0.3)
    with pytest.raises(TimeoutError):
        conn, _ = listener.accept()
        conn.close()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A bare listening socket: any connection attempt would show up in accept()."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock
    sock.close()


# success and failure ---------------------------------------------------------------------


def test_a_2xx_is_delivered_with_the_svc_headers(serve: Callable[..., Server]) -> None:
    server = serve(reply(200, b"thanks"))
    body, headers = signed_test_event()
    result = send(server.url("/hook?x=1"), body, headers, **local())
    assert result == SendResult(
        ok=True,
        http_status=200,
        duration_ms=result.duration_ms,
        error=None,
        response_excerpt="thanks",
        address="127.0.0.1",
    )
    assert 0 <= result.duration_ms < 2000
    [seen] = server.requests
    assert seen.path == "/hook?x=1"
    assert seen.body == body
    assert seen.headers["Host"] == f"127.0.0.1:{server.port}"
    assert seen.headers["User-Agent"] == USER_AGENT == "Svc-Webhooks/1.0"
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["X-Svc-Event"] == "webhook.test"
    assert seen.headers["X-Svc-Event-Id"] == "evt_webhook_test_0001"
    event = signing.verify(seen.body, seen.headers["X-Svc-Signature"], SECRET, now=1_790_000_000)
    assert event["data"]["test"] is True


@pytest.mark.parametrize("status", [201, 202, 204, 299])
def test_every_2xx_is_ok(serve: Callable[..., Server], status: int) -> None:
    server = serve(reply(status))
    result = send(server.url(), b"{}", {}, **local())
    assert (result.ok, result.http_status, result.error) == (True, status, None)


@pytest.mark.parametrize("status", [400, 404, 410, 429, 500, 503])
def test_a_non_2xx_fails_with_its_status_and_excerpt(
    serve: Callable[..., Server], status: int
) -> None:
    server = serve(reply(status, b"boom"))
    result = send(server.url(), b"{}", {}, **local())
    assert not result.ok
    assert result.http_status == status
    assert result.error == f"HTTP {status}"
    assert result.response_excerpt == "boom"


def test_a_redirect_is_a_failure_and_is_not_followed(serve: Callable[..., Server]) -> None:
    target = serve(reply(200))
    redirecting = serve(reply(302, headers={"Location": target.url("/elsewhere")}))
    result = send(redirecting.url(), b"{}", {}, **local())
    assert not result.ok
    assert result.http_status == 302
    assert result.error == "HTTP 302: redirects are not followed"
    assert len(redirecting.requests) == 1
    assert target.requests == []


def test_connection_refused(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    listener.close()
    result = send(f"http://127.0.0.1:{port}/", b"{}", {}, **local())
    assert (result.ok, result.http_status, result.error) == (False, None, "connection refused")
    assert result.address == "127.0.0.1"


def test_garbage_instead_of_http_is_a_failure(listener: socket.socket) -> None:
    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    worker = threading.Thread(target=answer)
    worker.start()
    port = listener.getsockname()[1]
    result = send(f"http://127.0.0.1:{port}/", b"{}", {}, **local())
    worker.join(5)
    assert not result.ok
    assert result.error is not None and result.error.startswith("invalid HTTP response")


# deadline -------------------------------------------------------------------------------


def test_a_slow_endpoint_fails_at_the_deadline(serve: Callable[..., Server]) -> None:
    """The deadline is 5 s unless the caller gives another (SPEC); 0.5 s here, so the
    test does not wait 5 s for the endpoint that answers after 6."""
    assert inspect.signature(send).parameters["timeout"].default == DEFAULT_TIMEOUT == 5.0

    def sleepy(handler: http.server.BaseHTTPRequestHandler, server: Server) -> None:
        server.release.wait(6)
        reply(200)(handler, server)

    server = serve(sleepy)
    started = time.monotonic()
    result = send(server.url(), b"{}", {}, **local(timeout=0.5))
    elapsed = time.monotonic() - started
    assert not result.ok
    assert result.http_status is None
    assert result.error == "timeout after 0.5s"
    assert 0.45 <= result.duration_ms / 1000 <= 1.5
    assert 0.45 <= elapsed <= 1.5
    assert len(server.requests) == 1


def test_the_deadline_is_total_not_per_read(serve: Callable[..., Server]) -> None:
    # Every byte arrives well within any per-read timeout; only a total deadline stops it.
    def trickle(handler: http.server.BaseHTTPRequestHandler, server: Server) -> None:
        for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            if server.release.wait(0.1):
                return

    server = serve(trickle)
    result = send(server.url(), b"{}", {}, **local(timeout=1.0))
    assert result.error == "timeout after 1.0s"
    assert 900 <= result.duration_ms <= 1600


def test_a_slow_resolver_counts_against_the_deadline() -> None:
    stuck = threading.Event()

    def slow(host: str, port: int) -> list[str]:
        stuck.wait(3)
        return ["127.0.0.1"]

    try:
        result = send("http://hooks.test/", b"{}", {}, **local(timeout=0.5, resolver=slow))
    finally:
        stuck.set()
    assert result.error == "timeout after 0.5s (resolving hooks.test)"
    assert result.duration_ms < 1500


# body cap -----------------------------------------------------------------------------


@pytest.mark.parametrize(("max_body", "status"), [(4096, 200), (10, 500), (0, 200)])
def test_at_most_max_body_bytes_of_the_reply_are_read(
    serve: Callable[..., Server], max_body: int, status: int
) -> None:
    server = serve(reply(status, "가".encode() * 100_000))
    result = send(server.url(), b"{}", {}, **local(max_body=max_body))
    assert result.http_status == status
    assert result.response_excerpt is not None
    assert len(result.response_excerpt.encode("utf-8", "replace")) <= max_body + 2
    assert result.response_excerpt.startswith("가" * (max_body // 3))


def test_the_default_cap_is_4096_bytes(serve: Callable[..., Server]) -> None:
    server = serve(reply(200, b"x" * 100_000))
    result = send(server.url(), b"{}", {}, **local())
    assert result.response_excerpt == "x" * 4096


def test_a_chunked_reply_is_capped_too(serve: Callable[..., Server]) -> None:
    def chunked(handler: http.server.BaseHTTPRequestHandler, server: Server) -> None:
        handler.send_response(500)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for _ in range(50):
            handler.wfile.write(b"400\r\n" + b"y" * 1024 + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")

    server = serve(chunked)
    result = send(server.url(), b"{}", {}, **local(max_body=3000))
    assert (result.http_status, result.response_excerpt) == (500, "y" * 3000)


# SSRF -------------------------------------------------------------------------------------


def test_loopback_is_refused_without_any_connection(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    for url in (f"http://127.0.0.1:{port}/", f"http://2130706433:{port}/", f"http://[::1]:{port}/"):
        result = send(url, b"{}", {}, allow_http=True)
        assert not result.ok
        assert result.error is not None and result.error.startswith("refused: ")
        assert "non-public address" in result.error
        assert (result.http_status, result.address) == (None, None)
    assert_no_connection(listener)


def test_a_rebinding_name_is_refused_at_send_time(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    answers = iter([[PUBLIC], ["127.0.0.1"]])

    def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    url = f"http://rebind.example.com:{port}/"
    target = check_webhook_url(url, allow_http=True)
    assert resolve_and_check(target.host, target.port, rebinding) == [PUBLIC]  # registration
    result = send(url, b"{}", {}, allow_http=True, resolver=rebinding)
    assert not result.ok
    assert result.error == (
        "refused: The webhook url resolves to a non-public address (127.0.0.1, loopback)."
    )
    assert_no_connection(listener)


def test_one_private_answer_among_public_ones_is_refused(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    result = send(
        f"http://dual.example.com:{port}/",
        b"{}",
        {},
        allow_http=True,
        resolver=lambda host, port: [PUBLIC, "127.0.0.1"],
    )
    assert result.error is not None and "127.0.0.1, loopback" in result.error
    assert_no_connection(listener)


def test_the_sender_connects_to_the_checked_address_and_sends_the_name(
    serve: Callable[..., Server],
) -> None:
    server = serve(reply(204))
    lookups: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    result = send(server.url(host="hooks.test"), b"{}", {}, **local(resolver=resolver))
    assert result.ok and result.address == "127.0.0.1"
    assert lookups == ["hooks.test"]
    assert server.requests[0].headers["Host"] == f"hooks.test:{server.port}"


def test_the_next_address_is_tried_when_one_refuses(serve: Callable[..., Server]) -> None:
    server = serve(reply(200))
    result = send(
        server.url(host="hooks.test"),
        b"{}",
        {},
        **local(resolver=lambda host, port: ["127.0.0.2", "127.0.0.1"]),
    )
    assert result.ok and result.address == "127.0.0.1"


@pytest.mark.parametrize(
    "url",
    ["https://nx.example.com/", "ftp://example.com/", "https://user:pw@example.com/", ""],
)
def test_bad_urls_come_back_as_refusals(url: str) -> None:
    def nxdomain(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    result = send(url, b"{}", {}, resolver=nxdomain)
    assert not result.ok
    assert result.error is not None and result.error.startswith("refused: ")


def test_http_needs_the_development_setting(serve: Callable[..., Server]) -> None:
    server = serve(reply(200))
    result = send(server.url(), b"{}", {}, allow_private=True)
    assert result.error == "refused: The webhook url must use https."
    assert server.requests == []


def test_bad_arguments_are_programming_errors() -> None:
    for kwargs in ({"timeout": 0}, {"timeout": float("nan")}, {"max_body": -1}):
        with pytest.raises(ValueError):
            send("https://example.com/", b"{}", {}, **kwargs)


def test_build_headers() -> None:
    assert build_headers("key.revoked", "evt_key_revoked_k_1", "t=1,v1=ab") == {
        "Content-Type": "application/json",
        "User-Agent": "Svc-Webhooks/1.0",
        "X-Svc-Event": "key.revoked",
        "X-Svc-Event-Id": "evt_key_revoked_k_1",
        "X-Svc-Signature": "t=1,v1=ab",
    }


# TLS -----------------------------------------------------------------------------------


def make_cert(tmp_path: Path, name: str) -> tuple[Path, Path, bytes]:
    """A self-signed certificate for ``name``: (cert file, key file, cert PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(name), x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_file, key_file = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    cert_file.write_bytes(pem)
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file, pem


@pytest.fixture
def tls_server(tmp_path: Path, serve: Callable[..., Server]) -> tuple[Server, ssl.SSLContext]:
    cert_file, key_file, pem = make_cert(tmp_path, "hooks.test")
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_file, key_file)
    client_context = ssl.create_default_context(cadata=pem.decode("ascii"))
    return serve(reply(200, b"tls ok"), tls=server_context), client_context


def test_https_verifies_the_certificate_against_the_name(
    tls_server: tuple[Server, ssl.SSLContext],
) -> None:
    server, context = tls_server
    result = send(
        server.url(host="hooks.test", scheme="https"),
        b"{}",
        {},
        allow_private=True,
        resolver=lambda host, port: ["127.0.0.1"],
        ssl_context=context,
    )
    assert (result.ok, result.response_excerpt, result.address) == (True, "tls ok", "127.0.0.1")
    assert server.requests[0].headers["Host"] == f"hooks.test:{server.port}"


def test_https_refuses_a_certificate_for_another_name(
    tls_server: tuple[Server, ssl.SSLContext],
) -> None:
    server, context = tls_server
    result = send(
        server.url(host="other.test", scheme="https"),
        b"{}",
        {},
        allow_private=True,
        resolver=lambda host, port: ["127.0.0.1"],
        ssl_context=context,
    )
    assert not result.ok
    assert result.error is not None
    assert result.error.startswith("TLS certificate verification failed")
    assert server.requests == []


def test_https_refuses_an_untrusted_certificate(
    tls_server: tuple[Server, ssl.SSLContext],
) -> None:
    server, _ = tls_server
    result = send(
        server.url(host="hooks.test", scheme="https"),
        b"{}",
        {},
        allow_private=True,
        resolver=lambda host, port: ["127.0.0.1"],
    )
    assert result.error is not None
    assert result.error.startswith("TLS certificate verification failed")


def test_the_caller_cannot_override_host_or_framing_headers(
    serve: Callable[..., Server],
) -> None:
    server = serve(reply(200))
    headers = {"host": "evil.example", "Content-Length": "1", "X-Extra": "kept"}
    result = send(
        server.url(host="hooks.test"),
        b"{}",
        headers,
        **local(resolver=lambda host, port: ["127.0.0.1"]),
    )
    assert result.ok
    [seen] = server.requests
    assert seen.headers["Host"] == f"hooks.test:{server.port}"
    assert seen.headers["X-Extra"] == "kept"
    assert seen.body == b"{}"
