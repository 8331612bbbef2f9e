"""A hostile upstream for the sync tests: a real local HTTP server in front of a stand-in
(``rtms_standin``, ``rone_standin``) that passes every call through, except the calls a
test marks (``when``), which it answers as an attacker's or a broken server would.

Tricks (``TRICKS``):

| trick | answer |
|---|---|
| ``redirect`` | 302 to ``redirect_to`` (default: the same call on the stand-in itself: an internal address answering a valid page) |
| ``redirect-loop`` | 302 to the very URL asked |
| ``drip-head`` | the stand-in's answer, status line and headers included, one byte every ``drip`` s (for ``drip_limit`` s at most, when set) |
| ``drip-body`` | the status and headers at once, then the body one byte every ``drip`` s (the same) |
| ``gzip-bomb``, ``deflate-bomb`` | ``Content-Encoding`` gzip or deflate: ``BOMB_BYTES`` (256 MiB) of zeros, about 256 KB on the wire |
| ``announce-huge`` | ``Content-Length`` 2 GB (``HUGE``), the real body, then silence until the client leaves |
| ``oversize`` | chunked, ``OVERSIZE`` (40 MiB) of XML items, as fast as the client reads |
| ``deep-json`` | JSON nested 200,000 deep |
| ``long-total`` | a JSON page whose ``totalCount`` has 6,000 digits |
| ``long-total-xml`` | the same in XML |
| ``big-total`` | an XML page whose ``totalCount`` is 999,999,999 |
| ``ignore-page`` | the call passed on as page 1 (``pageNo``/``pIndex`` 1): the answer says page 1 |
| ``ignore-page-silent`` | the same, the answer's ``pageNo`` removed |

``seen`` lists every call with the trick it got; ``held`` the seconds each dripped or
held connection stayed open until the client left (or the trick ended).
"""

from __future__ import annotations

import functools
import re
import select
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.server.rtms_standin import background_http

TRICKS = (
    "redirect",
    "redirect-loop",
    "drip-head",
    "drip-body",
    "gzip-bomb",
    "deflate-bomb",
    "announce-huge",
    "oversize",
    "deep-json",
    "long-total",
    "long-total-xml",
    "big-total",
    "ignore-page",
    "ignore-page-silent",
)
BOMB_BYTES = 256 * 1024 * 1024
HUGE = 2 * 1024 * 1024 * 1024
OVERSIZE = 40 * 1024 * 1024
DEPTH = 200_000
_PAGE_NO = re.compile(rb"<pageNo>[0-9]*</pageNo>")
_OK = b"<response><header><resultCode>000</resultCode><resultMsg>OK</resultMsg></header>"


@functools.cache
def bomb(encoding: str) -> bytes:
    """``BOMB_BYTES`` zeros compressed as ``encoding`` (gzip or deflate), made once.

    One MiB of zeros is compressed once, as a block that stands alone (a full flush
    forgets the history, so every such block is the same bytes), and that block repeated
    256 times between the format's header and trailer (its checksum of the 256 MiB and,
    for gzip, their size): a quarter of a second, where compressing all 256 MiB took
    two to five."""
    zeros = bytes(1024 * 1024)
    blocks = BOMB_BYTES // len(zeros)
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate
    block = z.compress(zeros) + z.flush(zlib.Z_FULL_FLUSH)
    raw = block * blocks + z.flush()
    if encoding == "gzip":
        crc = 0
        for _ in range(blocks):
            crc = zlib.crc32(zeros, crc)
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # deflate, no name, no time
        return header + raw + struct.pack("<II", crc, BOMB_BYTES % 2**32)
    adler = 1
    for _ in range(blocks):
        adler = zlib.adler32(zeros, adler)
    return b"\x78\xda" + raw + struct.pack(">I", adler)  # zlib: 32 KiB window, level 9


def long_total(as_json: bool, digits: str) -> bytes:
    """A success page without items whose ``totalCount`` is ``digits``."""
    if as_json:
        return (
            b'{"response":{"header":{"resultCode":"000","resultMsg":"OK"},"body":{"items":"",'
            b'"numOfRows":1000,"pageNo":1,"totalCount":' + digits.encode() + b"}}}"
        )
    return (
        _OK
        + b"<body><items></items><numOfRows>1000</numOfRows><pageNo>1</pageNo><totalCount>"
        + digits.encode()
        + b"</totalCount></body></response>"
    )


class Hostile:
    """The server's state: what to pass on, and what to answer to which call."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.prefix = parts.path
        self.url = ""
        self.base = ""
        self.rules: list[tuple[dict[str, str], str, list[int]]] = []
        self.seen: list[tuple[str, dict[str, str], str]] = []
        self.held: list[float] = []
        self.redirect_to: str | None = None
        self.drip = 0.5
        self.drip_limit: float | None = None
        """Seconds after which a drip stops and the connection is closed (None: it goes
        on to the last byte, hours for a page): a client that does not keep its
        deadline then fails in bounded time, with another reason."""
        self.lock = threading.Lock()

    def when(self, trick: str, *, times: int | None = None, **match: str) -> None:
        """Answer calls whose query holds every ``match`` (``path``: the path ends with
        it) with ``trick``, ``times`` times (always when None)."""
        assert trick in TRICKS, trick
        if trick.endswith("-bomb"):
            bomb(trick.split("-")[0])  # made now (seconds), not while the client waits
        self.rules.append((match, trick, [-1 if times is None else times]))

    def held_calls(self, count: int, within: float = 5.0) -> list[float]:
        """``held`` once it lists ``count`` calls (or after ``within`` seconds): a dripping
        handler only learns the client left at its next write, up to a drip later."""
        end = time.monotonic() + within
        while len(self.held) < count and time.monotonic() < end:
            time.sleep(0.05)
        return list(self.held)

    def trick_for(self, path: str, query: dict[str, str]) -> str:
        with self.lock:
            for match, trick, left in self.rules:
                if left[0] == 0:
                    continue
                if all(
                    path.endswith(v) if k == "path" else query.get(k) == v for k, v in match.items()
                ):
                    left[0] -= 1 if left[0] > 0 else 0
                    self.seen.append((path, query, trick))
                    return trick
            self.seen.append((path, query, ""))
        return ""

    def forward(self, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        """The stand-in's answer to the same call: (status, body, content type)."""
        url = f"{self.origin}{path}?{urlencode(query)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return answer.status, answer.read(), answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "")


def _wait_for_close(sock: socket.socket, limit: float) -> None:
    """Hold the connection until the client closes it (or ``limit`` seconds)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        ready, _, _ = select.select([sock], [], [], 0.05)
        if ready:
            try:
                if not sock.recv(65536):
                    return
            except OSError:
                return


@contextmanager
def serve(target: str) -> Iterator[Hostile]:
    """Run a hostile upstream in front of ``target`` (a stand-in's base URL) on
    127.0.0.1; its ``url`` replaces the stand-in's in the sync's base URL."""
    state = Hostile(target)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            trick = state.trick_for(parts.path, query)
            started = time.monotonic()
            try:
                self.answer(parts.path, query, trick)
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                if trick in ("drip-head", "drip-body", "announce-huge", "oversize"):
                    state.held.append(time.monotonic() - started)
            self.close_connection = True

        def raw(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
            head = f"HTTP/1.1 {status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            self.wfile.write(head.encode("latin-1") + b"Connection: close\r\n\r\n" + body)

        def drip(self, data: bytes) -> None:
            end = None if state.drip_limit is None else time.monotonic() + state.drip_limit
            for i in range(len(data)):
                if end is not None and time.monotonic() > end:
                    return
                self.wfile.write(data[i : i + 1])
                time.sleep(state.drip)

        def answer(self, path: str, query: dict[str, str], trick: str) -> None:
            here = f"{state.base}{path}?{urlencode(query)}"
            if trick == "redirect":
                where = state.redirect_to or f"{state.origin}{path}?{urlencode(query)}"
                return self.raw(302, {"Location": where, "Content-Length": "0"})
            if trick == "redirect-loop":
                return self.raw(302, {"Location": here, "Content-Length": "0"})
            if trick in ("ignore-page", "ignore-page-silent"):
                for name in ("pageNo", "pIndex"):
                    if name in query:
                        query = {**query, name: "1"}
            status, body, kind = state.forward(path, query)
            if trick == "ignore-page-silent":
                body = _PAGE_NO.sub(b"", body)
            plain = {"Content-Type": kind or "application/xml"}
            if trick == "drip-head":
                head = f"HTTP/1.1 {status} OK\r\nContent-Type: {plain['Content-Type']}\r\n"
                head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                return self.drip(head.encode() + body)
            if trick == "drip-body":
                self.raw(status, {**plain, "Content-Length": str(len(body))})
                return self.drip(body)
            if trick in ("gzip-bomb", "deflate-bomb"):
                encoding = trick.split("-")[0]
                data = bomb(encoding)
                headers = {**plain, "Content-Encoding": encoding}
                return self.raw(200, {**headers, "Content-Length": str(len(data))}, data)
            if trick == "announce-huge":
                self.raw(200, {**plain, "Content-Length": str(HUGE)}, body)
                return _wait_for_close(self.connection, 30)
            if trick == "oversize":
                self.raw(200, {**plain, "Transfer-Encoding": "chunked"})
                item = b"<item><dealAmount>1</dealAmount></item>" * 1600
                for _ in range(OVERSIZE // len(item)):
                    self.wfile.write(f"{len(item):x}\r\n".encode() + item + b"\r\n")
                return self.wfile.write(b"0\r\n\r\n")  # type: ignore[no-any-return]
            special: dict[str, Any] = {
                "deep-json": lambda: b'{"response": ' + b"[" * DEPTH + b"]" * DEPTH + b"}",
                "long-total": lambda: long_total(True, "9" * 6000),
                "long-total-xml": lambda: long_total(False, "9" * 6000),
                "big-total": lambda: long_total(False, "999999999"),
            }
            if trick in special:
                body = special[trick]()
                kind = "application/json" if body.startswith(b"{") else "application/xml"
                plain = {"Content-Type": kind}
            return self.raw(status, {**plain, "Content-Length": str(len(body))}, body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with background_http(Handler) as state.base:
        state.url = state.base + state.prefix
        yield state
