"""Bounded GETs for the official data APIs (MOLIT RTMS, R-ONE) and for ``svc mcp --url``:
the one fetch both sync clients and the remote MCP backend use, so a hostile or broken
upstream costs a run one failed month (or table), or a tool call one error answer, never
its memory, its night or a traceback.

- **One deadline.** ``timeout`` covers the whole call: connecting, TLS, sending, the
  status line, the headers and the last byte of the body. Every socket operation gets
  only what is left of it (as the webhook sender's), so an answer dripped a byte at a
  time ends at the deadline, not when the drip does.
- **No redirects.** A 3xx is refused naming its ``Location``; nothing is fetched there.
- **Bounded bodies.** At most ``max_bytes`` (``MAX_ANSWER_BYTES``, 16 MiB: a page of
  1,000 real rows is under 1 MB) are read, counted after decompression and on the wire:
  a ``Content-Length`` announcing more is refused before the body is read, gzip and
  deflate (the only encodings asked for) are inflated in steps that never produce more
  than what is left of the cap, so a decompression bomb stops there, and any other
  ``Content-Encoding`` is refused.
- ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``NO_PROXY`` are honoured.
- **No key shown.** A ``Location`` or a network error quoted in a reason passes through
  ``svc_core.redact.redact_url``: a redirect to the request's own URL shows
  ``serviceKey=***``, never the key.

Failures to reach or read the network raise ``httpx.TransportError`` (the classes the
retry loop and ``delivery.rtms.could_not_connect`` know, mapped from httpcore's by
name); an answer that arrived but is not read raises ``Unusable``.
"""

from __future__ import annotations

import contextlib
import ssl
import time
import urllib.request
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs
import httpcore
import httpx

from svc_core.redact import redact_url

MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""The largest answer read, after decompression: about 20 times a real page of 1,000 rows."""
USER_AGENT = "svc-sync"
_SHOWN = 200
"""Characters of a ``Location`` shown in a reason."""


class Unusable(Exception):
    """An answer that arrived and is not read: a redirect, too large, an encoding svc did
    not ask for, a corrupt compressed body (``retry`` True: asking again may help)."""

    def __init__(self, message: str, *, retry: bool = False) -> None:
        self.message = message
        self.retry = retry
        super().__init__(message)


@attrs.frozen
class Reply:
    """One answer read whole: status, the decoded body, its declared ``Content-Type``
    and its headers (lower-case names; the last of a repeated one)."""

    status: int
    body: bytes
    content_type: str = ""
    headers: Mapping[str, str] = attrs.field(factory=dict)


class _Deadline:
    """The end of the call under way (``at``, monotonic seconds; None between calls)."""

    at: float | None = None

    def left(self, timeout: float | None, error: type[Exception]) -> float | None:
        """What is left for one socket operation offered ``timeout``; ``error`` once
        nothing is."""
        if self.at is None:
            return timeout
        left = self.at - time.monotonic()
        if left <= 0:
            raise error("the call's deadline passed")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose reads, writes and TLS handshake get what is left of the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = self._deadline.left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, left), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own sockets, bounded by the deadline of the call under way."""

    def __init__(self, deadline: _Deadline) -> None:
        self._inner = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = self._deadline.left(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, left, local_address, socket_options)
        return _Stream(stream, self._deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.UnsupportedProtocol("svc sync does not use unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@contextlib.contextmanager
def _as_httpx(timeout: float) -> Iterator[None]:
    """httpcore's exceptions as the httpx ones of the same name; a timeout says it
    bounds the whole call."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        kind = getattr(httpx, type(exc).__name__, httpx.TimeoutException)
        raise kind(
            f"no complete answer within --timeout {timeout:g} s: {redact_url(str(exc))}"
        ) from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "httpcore":
            raise
        kind = getattr(httpx, type(exc).__name__, None)
        if not (isinstance(kind, type) and issubclass(kind, httpx.TransportError)):
            kind = httpx.TransportError
        raise kind(redact_url(str(exc)) or type(exc).__name__) from None


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return None


class _Inflater:
    """Inflates gzip or deflate (zlib-wrapped, or raw as some servers send it) without
    ever producing more than it is allowed."""

    def __init__(self, encoding: str) -> None:
        self._raw_fallback = encoding == "deflate"
        wbits = zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS
        self._z = zlib.decompressobj(wbits)
        self._started = False

    def feed(self, data: bytes, room: int) -> bytes:
        """The bytes ``data`` inflates to, at most ``room + 1`` of them (one more than
        ``room`` means the cap is passed)."""
        try:
            out = self._z.decompress(data, room + 1)
        except zlib.error:
            if not (self._raw_fallback and not self._started):
                raise
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._z.decompress(data, room + 1)
        self._started = True
        return out

    def finish(self) -> None:
        if not self._z.eof:
            raise zlib.error("the compressed body ends before its end")


def _proxy(url: httpx.URL) -> str | None:
    """The proxy the environment names for ``url`` (``HTTP_PROXY``, ``HTTPS_PROXY``),
    or None (none, or ``NO_PROXY`` covers the host)."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme)
    if not proxy or urllib.request.proxy_bypass(url.host):
        return None
    return proxy


class Fetcher:
    """Bounded GETs over one connection pool; used by one thread at a time; close it."""

    def __init__(self, *, timeout: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        if not timeout > 0:
            raise ValueError("timeout must be positive")
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._deadline = _Deadline()
        self._pools: dict[str | None, httpcore.ConnectionPool | httpcore.HTTPProxy] = {}
        self._ssl = httpx.create_ssl_context()

    def _pool(self, url: httpx.URL) -> httpcore.ConnectionPool | httpcore.HTTPProxy:
        proxy = _proxy(url)
        if proxy not in self._pools:
            backend = _Backend(self._deadline)
            self._pools[proxy] = (
                httpcore.ConnectionPool(ssl_context=self._ssl, network_backend=backend)
                if proxy is None
                else httpcore.HTTPProxy(
                    proxy_url=proxy, ssl_context=self._ssl, network_backend=backend
                )
            )
        return self._pools[proxy]

    def get(
        self, url: str, params: Mapping[str, str], headers: Mapping[str, str] | None = None
    ) -> Reply:
        """GET ``url`` with ``params`` (and ``headers`` besides svc's own): the whole
        answer within ``timeout`` seconds, or ``httpx.TransportError`` / ``Unusable``."""
        target = httpx.URL(url, params=dict(params))
        timeouts = dict.fromkeys(("connect", "read", "write", "pool"), self.timeout)
        sent = [("Accept-Encoding", "gzip, deflate"), ("User-Agent", USER_AGENT)]
        sent += list((headers or {}).items())
        self._deadline.at = time.monotonic() + self.timeout
        try:
            with (
                _as_httpx(self.timeout),
                self._pool(target).stream(
                    "GET", str(target), headers=sent, extensions={"timeout": timeouts}
                ) as response,
            ):
                return self._read(response)
        finally:
            self._deadline.at = None

    def _read(self, response: httpcore.Response) -> Reply:
        status, headers = response.status, response.headers
        if 300 <= status <= 399:
            location = _header(headers, b"location")
            shown = redact_url(location)[:_SHOWN] if location is not None else None
            where = repr(shown) if shown is not None else "no Location"
            raise Unusable(f"HTTP {status}: a redirect to {where}; svc follows no redirects")
        announced = _header(headers, b"content-length")
        if announced is not None and (len(announced) > 15 or int(announced) > self.max_bytes):
            shown = f"{int(announced):,}" if len(announced) <= 15 else f"a {len(announced)}-digit"
            raise Unusable(
                f"the answer announces {shown} bytes, more than the {self.max_bytes:,} svc reads"
            )
        encoding = (_header(headers, b"content-encoding") or "identity").lower()
        if encoding not in ("identity", "gzip", "deflate"):
            raise Unusable(f"the answer is encoded as {encoding[:40]!r}, which svc did not ask for")
        inflater = _Inflater(encoding) if encoding != "identity" else None
        chunks: list[bytes] = []
        size = wire = 0
        try:
            for chunk in response.iter_stream():
                wire += len(chunk)
                room = self.max_bytes - size
                data = inflater.feed(chunk, room) if inflater is not None else chunk
                size += len(data)
                if size > self.max_bytes or wire > self.max_bytes:
                    raise Unusable(
                        f"the answer is larger than the {self.max_bytes:,} bytes svc reads"
                        + (f" (once {encoding}-decompressed)" if inflater is not None else "")
                    )
                chunks.append(data)
            if inflater is not None:
                inflater.finish()
        except zlib.error as exc:
            raise Unusable(f"the {encoding} body is corrupt: {exc}", retry=True) from None
        named = {k.decode("latin-1").lower(): v.decode("latin-1").strip() for k, v in headers}
        return Reply(status, b"".join(chunks), _header(headers, b"content-type") or "", named)

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
