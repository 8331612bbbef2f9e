"""The WSGI application: ``create_app(config) -> SvcApp``.

``SvcApp.__call__`` delegates to ``wsgi_app`` so middleware can wrap it. Each request
gets a request id and a clock reading and is handed to the dispatcher
(``app.dispatch``) with the route table and the handlers' dependencies (``Deps``);
the app itself is never passed down. Background work (the inline webhook worker) is
started by ``svc serve``, not here, so building an app starts no threads.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from werkzeug.wrappers import Request

from svc_server.app.admission import account_of
from svc_server.app.call_log import log_call
from svc_server.app.dispatch import Matcher, walk
from svc_server.app.routes import ROUTES
from svc_server.app.warm import WarmLane
from svc_server.config import Config
from svc_server.http.context import Ctx
from svc_server.http.responses import dumps
from svc_server.http.routing import Route, build_map
from svc_server.mcp import endpoint as mcp_endpoint
from svc_server.openapi import build_document
from svc_server.runtime.deps import Deps, lazy_verifier, new_id, request_ids
from svc_server.runtime.lease_writer import LeaseWriter
from svc_server.runtime.log_writer import LogWriter
from svc_server.services.leases import LeaseBook
from svc_server.services.request_log import RequestLogBook
from svc_server.store import Store, open_store

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


def document_source(config: Config, table: Sequence[Route]) -> Callable[[], tuple[bytes, str]]:
    """The OpenAPI document of ``table`` for this server's address, rendered on first use,
    with its ETag."""

    @functools.cache
    def render() -> tuple[bytes, str]:
        body = dumps(
            build_document(
                table,
                server_url=config.public_url,
                max_body_bytes=config.max_body_bytes,
                max_url_bytes=config.max_url_bytes,
            )
        )
        return body, hashlib.sha256(body).hexdigest()[:32]

    return render


class SvcApp:
    """The svc WSGI application; mount it anywhere a WSGI callable fits."""

    def __init__(
        self,
        config: Config,
        store: Store,
        *,
        clock: Callable[[], float] = time.time,
        entropy: Callable[[int], bytes] = os.urandom,
        ids: Callable[[], str] = new_id,
        table: Sequence[Route] = ROUTES,
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.entropy = entropy
        leases = LeaseBook(store, clock)
        request_log = RequestLogBook(store, clock, ids)
        self.deps = Deps(
            store=store,
            config=config,
            clock=clock,
            entropy=entropy,
            ids=ids,
            request_id=request_ids(entropy),
            verifier=lazy_verifier(config),
            document=document_source(config, table),
            leases=leases,
            lease_writer=LeaseWriter(leases),
            request_log=request_log,
            log_writer=LogWriter(request_log),
        )
        self.url_map = build_map(table)
        self.routes = {r.endpoint: r for r in table}
        self.matcher = Matcher(self.url_map, self.routes)
        self.warm = WarmLane(self.deps, self.matcher)
        """The calls a server may answer on its event loop (``http.warm``)."""
        # MCP's streamable HTTP; its tool calls come back through this app as API calls
        self.mcp = mcp_endpoint.McpEndpoint(
            self, store, clock, entropy, config.max_body_bytes, config.site_origins
        )

    def account_of(self, environ: WSGIEnvironment) -> str | None:
        """The account (consumer id) a request's credential acts for, as this app will
        find it when it runs the request; None when it names none. ``http.front`` asks
        it before the first call of each credential (``http.tenants``)."""
        if environ.get("PATH_INFO") == mcp_endpoint.PATH:
            return self.mcp.account_of(environ)
        return account_of(self.deps, Request(environ), self.clock())

    def close(self) -> None:
        """Give this app's leases back, writing what their calls did, and write its
        request log (call it when the process stops serving; ``svc serve`` does).
        Idempotent."""
        self.deps.leases.close()
        self.deps.log_writer.stop()
        self.deps.request_log.close()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        return self.wsgi_app(environ, start_response)

    def wsgi_app(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == mcp_endpoint.PATH:
            return self.mcp(environ, start_response)
        started = time.perf_counter()
        request = Request(environ)
        # One byte of headroom: a chunked body is cut at this limit by werkzeug, so the
        # body reader can only tell "exactly the maximum" from "more" if it may read one more.
        request.max_content_length = self.config.max_body_bytes + 1
        request_id = self.deps.request_id(environ.get("HTTP_X_REQUEST_ID"))
        ctx = Ctx(request=request, request_id=request_id, now=self.clock())
        response, ctx = walk(self.deps, self.matcher, ctx)
        response.headers["X-Request-ID"] = request_id
        log_call(self.deps, ctx, response.status_code, started)
        return response(environ, start_response)


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
        store = open_store(
            config.database_url,
            pool_size=config.db_pool_size,
            busy_timeout_ms=config.db_busy_timeout_ms,
        )
        if migrate:
            store.migrate()
    return SvcApp(config, store, clock=clock, entropy=entropy)
