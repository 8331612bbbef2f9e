"""Where the MCP tools send their one API call: the svc app in this process (``InProcess``:
``svc mcp`` on the local store, and ``/mcp`` of ``svc serve``) or a remote svc over HTTP
(``Remote``: ``svc mcp --url``).

Either way a tool call is one ``GET`` of the matching ``/api/v1`` endpoint with the
caller's key, answered by the same dispatcher, handlers and services as any client's
call: authentication, the tier gate, the rate limit, the quota, usage and the request
log apply to it as to that call, and nothing is counted twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode

import attrs
import httpx
from werkzeug.test import EnvironBuilder, run_wsgi_app

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
    try:
        return json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
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


@attrs.frozen
class Remote:
    """Calls the svc at ``url`` over HTTP (one request per tool call)."""

    url: str
    key: str
    timeout: float = 60.0

    def get(self, path: str, query: Mapping[str, str]) -> Reply:
        response = httpx.get(
            self.url.rstrip("/") + path,
            params=dict(query),
            headers={KEY_HEADER: self.key, "Accept": "application/json"},
            timeout=self.timeout,
        )
        headers = {k.lower(): v for k, v in response.headers.items()}
        return Reply(response.status_code, headers, _json(response.content))
