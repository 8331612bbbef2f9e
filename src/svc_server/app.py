"""The WSGI application: ``create_app(config) -> SvcApp``.

``SvcApp.__call__`` delegates to ``wsgi_app`` so middleware can wrap it. Each request
gets a request id, is routed through the one table in ``routes``, authenticated by its
route's policy, handled, and always answered in JSON on error with SPEC's error body.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import MethodNotAllowed as WzMethodNotAllowed
from werkzeug.exceptions import NotFound as WzNotFound
from werkzeug.wrappers import Request, Response

from svc_core import params as core_params
from svc_core import requestid
from svc_core.errors import (
    InvalidParams,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServerError,
    SvcError,
    UriTooLong,
)
from svc_server import routes
from svc_server.config import Config
from svc_server.http import auth
from svc_server.http.context import Ctx
from svc_server.http.responses import error_response
from svc_server.identity import JwtVerifier
from svc_server.store import Store, open_store

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

access_log = logging.getLogger("svc.access")
error_log = logging.getLogger("svc.error")


def parse_query(raw: bytes) -> list[tuple[str, str]]:
    """Decode a query string strictly: invalid percent-escapes to UTF-8 are a 400."""
    try:
        text = raw.decode("ascii")
        return parse_qsl(
            text, keep_blank_values=True, strict_parsing=False, encoding="utf-8", errors="strict"
        )
    except UnicodeDecodeError:
        raise InvalidParams(
            "The query string is not valid UTF-8 after percent-decoding.",
            hint="Percent-encode parameters as UTF-8.",
        ) from None


class SvcApp:
    """The svc WSGI application; mount it anywhere a WSGI callable fits."""

    def __init__(
        self,
        config: Config,
        store: Store,
        *,
        clock: Callable[[], float] = time.time,
        entropy: Callable[[int], bytes] = os.urandom,
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.entropy = entropy
        self.url_map = routes.build_map()
        self._jwt_verifier: JwtVerifier | None = None

    def jwt_verifier(self) -> JwtVerifier:
        """The identity-token verifier, built from the configuration on first use."""
        if self._jwt_verifier is None:
            self._jwt_verifier = JwtVerifier.from_config(self.config)
        return self._jwt_verifier

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        return self.wsgi_app(environ, start_response)

    def wsgi_app(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        request = Request(environ)
        # One byte of headroom: a chunked body is cut at this limit by werkzeug, so the
        # body reader can only tell "exactly the maximum" from "more" if it may read one more.
        request.max_content_length = self.config.max_body_bytes + 1
        request_id = requestid.resolve(request.headers.get("X-Request-ID"), self.entropy(16))
        ctx = Ctx(app=self, request=request, request_id=request_id, now=self.clock())
        response = self.dispatch(ctx)
        response.headers["X-Request-ID"] = request_id
        for name, value in ctx.response_headers.items():
            response.headers.setdefault(name, value)
        self._log(ctx, response, started)
        return response(environ, start_response)

    def dispatch(self, ctx: Ctx) -> Response:
        """Route, authenticate, handle; map every failure to SPEC's error body.

        The ``ctx.after`` hooks (quota settlement, cookie renewal) run on every response,
        errors included, so a request that fails after its quota unit was reserved gets
        the unit back.
        """
        try:
            response = self._dispatch(ctx)
        except SvcError as err:
            if err.status >= 500:
                error_log.exception("request %s failed", ctx.request_id)
            response = error_response(err, ctx.request_id)
        except Exception:
            error_log.exception("request %s failed with an unexpected error", ctx.request_id)
            response = error_response(ServerError("Internal error."), ctx.request_id)
        for hook in ctx.after:
            try:
                hook(response)
            except Exception:
                error_log.exception("request %s: an after-response hook failed", ctx.request_id)
        return response

    def _dispatch(self, ctx: Ctx) -> Response:
        request = ctx.request
        raw_uri_len = len(request.environ.get("PATH_INFO", "")) + len(request.query_string)
        if raw_uri_len > self.config.max_url_bytes:
            raise UriTooLong(f"The request URI is longer than {self.config.max_url_bytes} bytes.")
        try:
            adapter = self.url_map.bind_to_environ(request.environ)
        except HTTPException:  # werkzeug's BadHost: a Host header it cannot IDNA-encode
            raise InvalidParams(
                "The Host header is not a valid host name.", hint="Send the server's host name."
            ) from None
        try:
            endpoint, values = adapter.match()
        except WzNotFound:
            raise NotFound(
                f"No such path: {request.path[:200]}", hint="See /api/v1/openapi.json."
            ) from None
        except WzMethodNotAllowed as exc:
            allowed = sorted(exc.valid_methods or [])
            raise MethodNotAllowed(
                f"{request.method} is not allowed here.",
                headers={"Allow": ", ".join(allowed)},
                hint=f"Allowed: {', '.join(allowed)}.",
            ) from None
        except HTTPException as exc:  # redirects for slashes are disabled; anything else
            raise InvalidParams(exc.description or "Bad request.") from None
        route = routes.BY_ENDPOINT[str(endpoint)]
        if route.auth == "data":
            auth.authenticate_data(ctx, route)
        elif route.auth == "account":
            auth.authenticate_account(ctx, route)
        names = set(route.params) | ({"format"} if route.csv else set())
        ctx.params = core_params.strict_query(parse_query(request.query_string), names)
        try:
            response = route.handler(ctx, **values)
        except HTTPException as exc:
            if exc.code == 413:
                raise PayloadTooLarge() from None
            raise
        return response

    def _log(self, ctx: Ctx, response: Response, started: float) -> None:
        if not access_log.isEnabledFor(logging.INFO):
            return
        record: dict[str, Any] = {
            "request_id": ctx.request_id,
            "method": ctx.request.method,
            "path": ctx.request.path[:512],
            "status": response.status_code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            "consumer_id": ctx.caller.consumer_id if ctx.caller else ctx.consumer_id,
        }
        record.update(ctx.log)
        access_log.info(json.dumps(record, ensure_ascii=False))


def create_app(
    config: Config | None = None,
    *,
    store: Store | None = None,
    clock: Callable[[], float] = time.time,
    entropy: Callable[[int], bytes] = os.urandom,
    migrate: bool = True,
) -> SvcApp:
    """Build the WSGI app; opens (and by default migrates) the configured store."""
    config = config or Config()
    if store is None:
        store = open_store(config.database_url, pool_size=config.db_pool_size)
        if migrate:
            store.migrate()
    app = SvcApp(config, store, clock=clock, entropy=entropy)
    if config.inline_worker:
        from svc_server.delivery.worker import start_inline

        start_inline(app)
    return app
