"""``/mcp`` of the bundled server: MCP's streamable HTTP (stateless, JSON answers),
authenticated by the same ``X-API-Key`` as the API (or ``Authorization: Bearer KEY``).

The exchange itself is not an API call: it is neither counted nor logged. Each tool
call inside it is one in-process ``GET`` of the matching endpoint with the caller's key
(``backends.InProcess``), so quota, rate limit, tier gate, usage and the request log
treat it exactly as that call, and a refused key is refused there too. A request
without a key, or with one that does not work, is a 401 in SPEC's error shape.

Every ``/mcp`` request, exchange message or tool call, is one call of its key's account
for the server's bound on each account's calls in progress (``http.tenants``: the key
as ``X-API-Key`` or as Bearer, ``environ[ACCOUNT]`` below): that bound, not the
per-minute limit, is what holds a flood of exchange messages.

A request with an ``Origin`` header is answered only when that origin is one of the
site's (``SVC_SITE_ORIGINS``), else 403 ``CSRF_REJECTED`` before anything else, as the
MCP transport asks of servers (against DNS rebinding: a page of any site can make a
browser POST to a server on the reader's machine or network). MCP clients that are not
browsers send no ``Origin`` and are answered as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Request, Response

from svc_core import requestid
from svc_core.errors import (
    CsrfRejected,
    ExchangeTimedOut,
    McpUnavailable,
    MethodNotAllowed,
    PayloadTooLarge,
    ServerError,
    SvcError,
    Unauthorized,
)
from svc_server.http.context import ACCOUNT
from svc_server.http.cookies import site_origin
from svc_server.http.responses import error_response
from svc_server.mcp import server
from svc_server.mcp.backends import InProcess
from svc_server.services import callers
from svc_server.store import Store

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

error_log = logging.getLogger("svc.error")
PATH = "/mcp"
BEARER = "bearer "
NO_KEY_HINT = "Send your API key as X-API-Key (or Authorization: Bearer KEY)."
DROPPED = frozenset({"cookie", "authorization", "x-api-key", "content-length", "host"})
"""Request headers not handed to the SDK: credentials stay with svc."""


def presented_key(request: Request) -> str | None:
    """The key of ``X-API-Key``, else of ``Authorization: Bearer``; None without one.
    (``http.tenants.Tenants.credential`` reads a request's headers the same way.)"""
    key = request.headers.get("X-API-Key", "").strip()
    if key:
        return key
    auth = request.headers.get("Authorization", "")
    if auth[: len(BEARER)].lower() == BEARER and auth[len(BEARER) :].strip():
        return auth[len(BEARER) :].strip()
    return None


class McpEndpoint:
    """The WSGI answer at ``/mcp``; ``app`` is the svc app the tool calls go to."""

    def __init__(
        self,
        app: WSGIApplication,
        store: Store,
        clock: Callable[[], float],
        entropy: Callable[[int], bytes],
        max_body_bytes: int,
        site_origins: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.store = store
        self.clock = clock
        self.entropy = entropy
        self.max_body_bytes = max_body_bytes
        self.site_origins = site_origins

    def account_of(self, environ: WSGIEnvironment) -> str | None:
        """The account (consumer id) the key of a ``/mcp`` request acts for, as
        ``__call__`` finds it; None when it has no working key."""
        key = presented_key(Request(environ))
        if key is None or "," in key:
            return None
        owner = callers.key_owner(self.store, key, self.clock())
        return None if owner is None else owner[0]

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = Request(environ)
        request.max_content_length = self.max_body_bytes
        request_id = requestid.resolve(environ.get("HTTP_X_REQUEST_ID"), self.entropy(16))
        try:
            response = self._answer(request)
        except SvcError as err:
            response = error_response(err, request_id)
        except Exception:  # the SDK failed: answered like any unexpected error, logged
            error_log.exception("request %s: /mcp failed", request_id)
            response = error_response(ServerError("Internal error."), request_id)
        response.headers["X-Request-ID"] = request_id
        return response(environ, start_response)

    def _answer(self, request: Request) -> Response:
        origin = request.headers.get("Origin")
        if origin is not None and not site_origin(origin, self.site_origins):
            raise CsrfRejected(
                f"/mcp does not answer pages of {origin[:200]!r}.",
                hint="Call /mcp from an MCP client (which sends no Origin), or from a page "
                "of an origin an operator adds to SVC_SITE_ORIGINS.",
            )
        if request.method != "POST":  # stateless: no GET stream, no session to DELETE
            raise MethodNotAllowed(
                f"{request.method} is not allowed at /mcp.",
                headers={"Allow": "POST"},
                hint="MCP over streamable HTTP here is stateless: POST each JSON-RPC message.",
            )
        key = presented_key(request)
        if key is None:
            raise Unauthorized("An API key is required for /mcp.", hint=NO_KEY_HINT)
        owner = None if "," in key else callers.key_owner(self.store, key, self.clock())
        if owner is None:
            raise Unauthorized("This API key is not valid.", hint=NO_KEY_HINT)
        request.environ[ACCOUNT] = owner[0]  # the server bounds each account's calls by it
        if not server.available():
            raise McpUnavailable(hint="Install svc[mcp] on the server.")
        try:
            body = request.get_data(cache=False)
        except RequestEntityTooLarge:
            raise PayloadTooLarge() from None
        backend = InProcess(self.app, key, dict(request.environ))
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in DROPPED]
        try:
            status, out_headers, body = server.http_exchange(
                backend, headers=headers, body=body, client=(request.remote_addr or "", 0)
            )
        except TimeoutError:
            raise ExchangeTimedOut() from None
        return Response(body, status=status, headers=out_headers)
