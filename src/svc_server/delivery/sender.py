"""Send one webhook request safely (SPEC "Delivery request" and "Delivery rules").

``send`` re-checks the URL and its addresses at send time (``svc_core.webhooks.netguard``), then
connects to an address it checked, never to the name, so DNS rebinding cannot redirect
the request. For https the TLS handshake still uses the name (SNI and certificate
verification) and the ``Host`` header carries it. One deadline (``timeout``, 5 s by
default) covers DNS, connect, TLS, sending and reading the status and headers; every
socket operation gets only what is left of it. Redirects are never followed (a 3xx is a
failure), at most ``max_body`` bytes of the reply are read, and network problems come
back as a failed ``SendResult`` instead of an exception.

``resolve_public`` is the same address check with the same bounded lookup, for the
moment a URL is registered.
"""

from __future__ import annotations

import http.client
import io
import math
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from typing import cast

import attrs

from svc_core.errors import InvalidParams
from svc_core.webhooks.netguard import (
    ParsedTarget,
    Resolver,
    check_webhook_url,
    literal_address,
    resolve_and_check,
)

USER_AGENT = "Svc-Webhooks/1.0"
DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_BODY = 4096
_OWN_HEADERS = frozenset({"host", "connection", "content-length", "transfer-encoding"})
"""Headers the sender sets itself; a caller's copies are dropped."""


@attrs.frozen(kw_only=True)
class SendResult:
    """What happened to one request; ``ok`` is a 2xx answer within the deadline."""

    ok: bool
    http_status: int | None
    duration_ms: int = attrs.field(validator=attrs.validators.ge(0))
    error: str | None
    """Why it failed (``"HTTP 500"``, ``"timeout after 5.0s"``, ``"refused: ..."``)."""
    response_excerpt: str | None
    """The first ``max_body`` bytes of the reply body, decoded leniently."""
    address: str | None
    """The IP address connected to (or last tried)."""


def build_headers(event_type: str, event_id: str, signature: str) -> dict[str, str]:
    """The delivery headers of SPEC "Delivery request" plus the JSON content type."""
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Svc-Event": event_type,
        "X-Svc-Event-Id": event_id,
        "X-Svc-Signature": signature,
    }


def system_resolver(host: str, port: int) -> list[str]:
    """The host's TCP addresses from ``getaddrinfo``, in its order, without repeats."""
    out: list[str] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = str(sockaddr[0])
        if address not in out:
            out.append(address)
    return out


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.started = time.monotonic()
        self.at = self.started + seconds

    def remaining(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline passed")
        return left

    def elapsed_ms(self) -> int:
        return max(0, int((time.monotonic() - self.started) * 1000))


class _DeadlineReader(io.RawIOBase):
    """Reads from a socket, giving each read only the time left before the deadline."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        self._sock.settimeout(self._deadline.remaining())
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """The socket ``http.client`` sees: sends and reads bounded by one deadline.

    ``close`` does nothing; ``send`` closes the real socket when it is done.
    """

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            self._sock.settimeout(self._deadline.remaining())
            sent = self._sock.send(view)
            view = view[sent:]

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def close(self) -> None:
        return None


def _resolve_within(resolver: Resolver, host: str, port: int, seconds: float) -> Resolver | None:
    """Run the resolver in a helper thread; None when it outlives ``seconds``.

    ``getaddrinfo`` has no timeout of its own. A lookup still running then is abandoned
    in its daemon thread. The returned resolver replays the answer (or its error) for
    ``resolve_and_check``.
    """
    outcome: list[list[str] | Exception] = []

    def run() -> None:
        try:
            outcome.append(list(resolver(host, port)))
        except Exception as exc:  # handed back to resolve_and_check
            outcome.append(exc)

    worker = threading.Thread(target=run, name="svc-webhook-resolve", daemon=True)
    worker.start()
    worker.join(max(0.0, seconds))
    if not outcome:
        return None
    result = outcome[0]

    def answer(_host: str, _port: int) -> list[str]:
        if isinstance(result, Exception):
            raise result
        return result

    return answer


def resolve_public(
    target: ParsedTarget,
    *,
    allow_private: bool,
    resolver: Resolver | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[str]:
    """The target's addresses, refusing non-public ones (``InvalidParams``): the check a
    URL passes when it is registered, with ``timeout`` seconds for the lookup."""
    lookup = resolver or system_resolver
    if literal_address(target.host) is None:  # a literal is judged without a lookup
        answered = _resolve_within(lookup, target.host, target.port, timeout)
        if answered is None:
            raise InvalidParams(
                f"The webhook url's host {target.host!r} did not resolve within {timeout:g} s."
            )
        lookup = answered
    return resolve_and_check(target.host, target.port, lookup, allow_private)


def _connect(
    target: ParsedTarget,
    address: str,
    deadline: _Deadline,
    ssl_context: ssl.SSLContext | None,
) -> socket.socket:
    """A connected (and for https, TLS-verified) socket to ``address``."""
    family, kind, proto, _, sockaddr = socket.getaddrinfo(
        address, target.port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.settimeout(deadline.remaining())
        sock.connect(sockaddr)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if target.scheme == "https":
            context = ssl_context or ssl.create_default_context()
            sock.settimeout(deadline.remaining())
            return context.wrap_socket(sock, server_hostname=target.host)
    except BaseException:
        sock.close()
        raise
    return sock


def _connect_any(
    target: ParsedTarget,
    addresses: list[str],
    deadline: _Deadline,
    ssl_context: ssl.SSLContext | None,
    tried: list[str],
) -> socket.socket:
    """Connect to the first checked address that answers; ``tried`` records each attempt.

    A refused or unreachable address moves on to the next; a timeout (the deadline is
    spent) or a TLS failure (the name's certificate is wrong) ends the attempt.
    """
    for address in addresses:
        tried.append(address)
        try:
            return _connect(target, address, deadline, ssl_context)
        except (TimeoutError, ssl.SSLError):
            raise
        except OSError:
            if address == addresses[-1]:
                raise
    raise OSError("no address to connect to")


def _describe(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"timeout after {float(timeout)}s"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate verification failed: {exc.verify_message}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by peer"
    if isinstance(exc, http.client.HTTPException):
        return f"invalid HTTP response ({type(exc).__name__})"
    if isinstance(exc, OSError):
        return f"connection failed: {exc.strerror or exc}"
    return f"request failed: {exc}"


def _read_excerpt(response: http.client.HTTPResponse, limit: int) -> str:
    """Up to ``limit`` bytes of the body; whatever arrived if the deadline cuts it short."""
    chunks: list[bytes] = []
    size = 0
    try:
        while size < limit:
            chunk = response.read1(limit - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (OSError, http.client.HTTPException):
        pass
    return b"".join(chunks).decode("utf-8", "replace")


def send(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    allow_private: bool = False,
    allow_http: bool = False,
    resolver: Resolver | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    ssl_context: ssl.SSLContext | None = None,
) -> SendResult:
    """POST ``body`` with ``headers`` to ``url`` and report what happened; never raises
    for anything the network or the receiver does.

    The answer counts once its status line and headers arrive within ``timeout``; the
    body excerpt is read with what is left of the deadline.
    """
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
        raise ValueError("timeout must be a positive number of seconds")
    if type(max_body) is not int or max_body < 0:
        raise ValueError("max_body must be an int >= 0")
    deadline = _Deadline(timeout)
    resolve = resolver or system_resolver

    def outcome(
        error: str | None,
        address: str | None = None,
        status: int | None = None,
        excerpt: str | None = None,
    ) -> SendResult:
        """What happened, ``ok`` when nothing went wrong (the receiver answered 2xx)."""
        return SendResult(
            ok=error is None,
            http_status=status,
            duration_ms=deadline.elapsed_ms(),
            error=error,
            response_excerpt=excerpt,
            address=address,
        )

    try:
        target = check_webhook_url(url, allow_private=allow_private, allow_http=allow_http)
        if literal_address(target.host) is None:
            answered = _resolve_within(
                resolve, target.host, target.port, deadline.at - time.monotonic()
            )
            if answered is None:
                return outcome(f"timeout after {float(timeout)}s (resolving {target.host})")
            resolve = answered
        addresses = resolve_and_check(target.host, target.port, resolve, allow_private)
    except InvalidParams as exc:
        return outcome(f"refused: {exc.message}")

    sock: socket.socket | None = None
    response: http.client.HTTPResponse | None = None
    tried: list[str] = []
    try:
        sock = _connect_any(target, addresses, deadline, ssl_context, tried)
        conn = http.client.HTTPConnection(target.host, target.port)
        conn.sock = cast(socket.socket, _DeadlineSocket(sock, deadline))
        request_headers = {k: v for k, v in headers.items() if k.lower() not in _OWN_HEADERS}
        request_headers.update({"Host": target.host_header, "Connection": "close"})
        conn.request("POST", target.path_with_query, body=body, headers=request_headers)
        response = conn.getresponse()
        status = response.status
        excerpt = _read_excerpt(response, max_body)
    except Exception as exc:
        return outcome(_describe(exc, timeout), tried[-1] if tried else None)
    finally:
        if response is not None:
            response.close()
        if sock is not None:
            sock.close()

    error = None
    if 300 <= status <= 399:
        error = f"HTTP {status}: redirects are not followed"
    elif not 200 <= status <= 299:
        error = f"HTTP {status}"
    return outcome(error, tried[-1], status, excerpt)
