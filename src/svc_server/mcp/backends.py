"""Where the MCP tools send their one API call: the svc app in this process (``InProcess``:
``svc mcp`` on the local store, and ``/mcp`` of ``svc serve``) or a remote svc over HTTP
(``Remote``: ``svc mcp --url``).

Either way a tool call is one ``GET`` of the matching ``/api/v1`` endpoint with the
caller's key, answered by the same dispatcher, handlers and services as any client's
call: authentication, the tier gate, the rate limit, the quota, usage and the request
log apply to it as to that call, and nothing is counted twice.

``Remote`` fetches through the sync's bounded fetch (``delivery.fetch``): the whole call
within its timeout (a dripped answer ends there), at most ``MAX_ANSWER_BYTES`` read
after decompression (a gzip bomb stops at the cap), no redirect followed. An answer not
read, or not JSON svc can read (nested too deeply), is the tool's error answer, never a
traceback.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode

import attrs
from werkzeug.test import EnvironBuilder, run_wsgi_app

from svc_server.delivery.fetch import Fetcher, Unusable

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

KEY_HEADER = "X-API-Key"
PASSED_ON = ("REMOTE_ADDR", "HTTP_X_FORWARDED_FOR", "HTTP_HOST", "wsgi.url_scheme")
"""What an in-process call keeps of the ``/mcp`` request's environ: who is calling and
from where (address rules and trusted proxies apply as to a direct call), and the host
(links in answers name this server)."""


@attrs.frozen
class Reply:
    """An API answer: status, headers (lower-case names) and the JSON body."""

    status: int
    headers: Mapping[str, str]
    body: Any


class Backend(Protocol):
    def get(self, path: str, query: Mapping[str, str]) -> Reply:
        """``GET path?query`` with the caller's key."""
        ...


def _json(raw: bytes) -> Any:
    """The JSON document ``raw`` holds; None when it holds none svc reads (not UTF-8,
    not JSON, nested deeper than Python's recursion allows)."""
    try:
        return json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


@attrs.frozen
class InProcess:
    """Calls ``app`` (the svc WSGI app) in this thread, as the caller at ``base``."""

    app: WSGIApplication
    key: str
    base: Mapping[str, Any] = attrs.field(factory=dict)

    def get(self, path: str, query: Mapping[str, str]) -> Reply:
        environ = EnvironBuilder(
            path=path,
            query_string=urlencode(list(query.items())),
            method="GET",
            headers=[(KEY_HEADER, self.key), ("Accept", "application/json")],
        ).get_environ()
        environ.update({k: v for k, v in self.base.items() if k in PASSED_ON})
        body, status, headers = run_wsgi_app(self.app, environ, buffered=True)
        raw = b"".join(_chunks(body))
        code = int(status.split(" ", 1)[0])
        return Reply(code, {k.lower(): v for k, v in headers.items()}, _json(raw))


def _chunks(body: Iterable[bytes]) -> Iterable[bytes]:
    try:
        yield from body
    finally:
        close: Callable[[], None] | None = getattr(body, "close", None)
        if close is not None:
            close()


REMOTE_TIMEOUT = 30.0
"""Seconds a ``svc mcp --url`` tool call may take, all of it (``--timeout``)."""


@attrs.frozen
class Remote:
    """Calls the svc at ``url`` over HTTP (one bounded request per tool call, one at a
    time over one connection pool); close it when done. ``httpx.TransportError`` when
    the call fails or outlasts ``timeout``."""

    url: str
    key: str
    timeout: float = REMOTE_TIMEOUT
    _fetcher: Fetcher = attrs.field(init=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)

    @_fetcher.default
    def _fetch(self) -> Fetcher:
        return Fetcher(timeout=self.timeout)

    def get(self, path: str, query: Mapping[str, str]) -> Reply:
        headers = {KEY_HEADER: self.key, "Accept": "application/json"}
        try:
            with self._lock:
                reply = self._fetcher.get(self.url.rstrip("/") + path, query, headers)
        except Unusable as exc:
            refused = {"code": "BAD_GATEWAY", "message": f"svc did not read the answer: {exc}"}
            return Reply(502, {}, {"error": refused})
        return Reply(reply.status, reply.headers, _json(reply.body))

    def close(self) -> None:
        with self._lock:
            self._fetcher.close()
