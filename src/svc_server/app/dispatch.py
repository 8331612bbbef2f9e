"""The dispatcher: one downward walk per request.

``plan`` (match the route, read the query through its declarations, ``identify`` the
caller; the warm lane plans the same way, from memory) → ``admit`` the caller under its
limits → the handler (or the refusal, then a bad query) → ``settle`` what admission
held. Every failure becomes SPEC's JSON error body here, in one place; nothing below
calls back up.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import attrs
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import MethodNotAllowed as WzMethodNotAllowed
from werkzeug.exceptions import NotFound as WzNotFound
from werkzeug.routing import Map
from werkzeug.wrappers import Request, Response

from svc_core import params
from svc_core.errors import (
    InvalidParams,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServerError,
    SvcError,
    UriTooLong,
)
from svc_server.app.admission import (
    Admission,
    admit,
    identify,
    renew_session,
    settle,
    take_back,
    unrouted_key,
)
from svc_server.http.context import ACCOUNT, CLIENT_GONE, TAKE_BACK, Ctx
from svc_server.http.query import parse_query
from svc_server.http.responses import error_response
from svc_server.http.routing import Route
from svc_server.runtime.deps import Deps

error_log = logging.getLogger("svc.error")


MATCH_KEYS = (
    "HTTP_HOST",
    "SERVER_NAME",
    "SERVER_PORT",
    "wsgi.url_scheme",
    "SCRIPT_NAME",
    "PATH_INFO",
    "REQUEST_METHOD",
)
"""Everything of the environ that werkzeug's matching reads (the query string only
matters to redirects, which are disabled)."""


class Matcher:
    """``match`` remembering the routes it found (at most ``size`` distinct requests'
    worth; refusals are raised again each time, never remembered): the same path, host
    and method always match the same route."""

    def __init__(self, url_map: Map, routes: Mapping[str, Route], size: int = 1024) -> None:
        self.url_map = url_map
        self.routes = routes
        self.size = size
        self._found: dict[tuple[Any, ...], tuple[Route, Mapping[str, Any]]] = {}

    def __call__(self, request: Request) -> tuple[Route, Mapping[str, Any]]:
        environ = request.environ
        key = tuple(environ.get(name) for name in MATCH_KEYS)
        found = self._found.get(key)
        if found is None:
            found = match(self.url_map, self.routes, request)
            if len(self._found) >= self.size:
                self._found.clear()  # a crawl of many distinct paths: start again
            self._found[key] = found
        return found[0], dict(found[1])


def match(
    url_map: Map, routes: Mapping[str, Route], request: Request
) -> tuple[Route, Mapping[str, Any]]:
    """The route and path values of ``request``; 404, 405 or 400 when there is none."""
    try:
        adapter = url_map.bind_to_environ(request.environ)
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
    return routes[str(endpoint)], values


def answered(err: Exception) -> SvcError:
    """The error a failure is answered as (its body's ``code`` is also the request
    log's): itself, 413 for werkzeug's body limit, else a 500."""
    if isinstance(err, HTTPException) and err.code == 413:
        return PayloadTooLarge()
    return err if isinstance(err, SvcError) else ServerError("Internal error.")


def _failure(err: Exception, request_id: str, meta: Mapping[str, object] | None = None) -> Response:
    answer = answered(err)
    if isinstance(answer, ServerError) and answer is not err:
        error_log.error("request %s failed with an unexpected error", request_id, exc_info=err)
        return error_response(answer, request_id)
    if answer.status >= 500:
        error_log.error("request %s failed", request_id, exc_info=err)
    return error_response(answer, request_id, meta)


@attrs.frozen(kw_only=True)
class Plan:
    """What the dispatcher and the warm lane decide of a request before any limit is
    applied: its route and path values, its strict-parsed query and who is calling."""

    route: Route
    values: Mapping[str, Any]
    query: dict[str, str]
    bad_query: Exception | None
    """Why the query is refused: answered after any refusal of ``admission``."""
    admission: Admission
    """Who is calling, as ``admission.identify`` found (no limit applied yet)."""


def plan(
    deps: Deps, matcher: Matcher, request: Request, now: float, *, memory_only: bool = False
) -> Plan | None:
    """The plan of ``request``; raises SvcError when no route takes it (414, 404, 405,
    400). ``memory_only`` (``app.warm``): None instead of a refusal or of any step that
    would read or write (``admission.identify``)."""
    max_url = deps.config.max_url_bytes
    try:
        if len(request.environ.get("PATH_INFO", "")) + len(request.query_string) > max_url:
            raise UriTooLong(f"The request URI is longer than {max_url} bytes.")
        route, values = matcher(request)
    except SvcError:
        if memory_only:
            return None
        raise
    query: dict[str, str] = {}
    bad_query = None
    try:
        query = params.strict_query(parse_query(request.query_string), route.accepted)
    except Exception as err:  # answered like a handler's failure, after any refusal
        if memory_only:
            return None
        bad_query = err
    admission = identify(deps, route, request, now, memory_only=memory_only)
    if admission is None:
        return None
    return Plan(route=route, values=values, query=query, bad_query=bad_query, admission=admission)


def admitted_ctx(
    request: Request,
    request_id: str,
    now: float,
    route: Route,
    query: dict[str, str],
    admission: Admission,
) -> Ctx:
    """What the handler of ``route`` is given for the call ``admission`` admitted."""
    caller = admission.caller
    return Ctx(  # built once, not evolved: evolve costs more than a cached call's answer
        request=request,
        request_id=request_id,
        now=now,
        params=query,
        caller=caller,
        user_id=admission.user_id,
        consumer_id=caller.consumer_id if caller else admission.consumer_id,
        session_id=admission.session.session_id if admission.session else None,
        operation=route.operation_id,
        csv_only=route.csv_only,
        key_id=caller.key_id if caller else admission.key_id,
        counted=admission.held is not None,
    )


def walk(deps: Deps, matcher: Matcher, ctx: Ctx) -> tuple[Response, Ctx]:
    """Answer one request; returns the response and the context as admitted (for the log)."""
    request = ctx.request
    try:
        planned = plan(deps, matcher, request, ctx.now)
    except SvcError as err:
        owner = unrouted_key(deps, request, ctx.now)
        if owner is not None:  # for the key's request log
            ctx = attrs.evolve(
                ctx, consumer_id=owner[0], key_id=owner[1], error_code=answered(err).code
            )
        return _failure(err, ctx.request_id), ctx
    assert planned is not None  # only memory_only plans decline
    route = planned.route
    admission = admit(deps, route, planned.admission, ctx.now)
    assert admission is not None  # only memory_only admissions decline
    failed: Exception | None = admission.refused  # the refusal first, then a bad query
    if failed is None:
        failed = planned.bad_query
    query = planned.query if admission.refused is None else {}
    ctx = admitted_ctx(request, ctx.request_id, ctx.now, route, query, admission)
    try:
        if failed is not None:
            raise failed
        response = route.handler(ctx, deps, **planned.values)
    except Exception as err:  # every failure is answered in SPEC's shape, never raised
        meta = admission.refusal_meta if err is admission.refused else None
        response = _failure(err, ctx.request_id, meta)
        if ctx.key_id is not None:  # for the key's request log
            ctx = attrs.evolve(ctx, error_code=answered(err).code)
    try:
        if ctx.consumer_id is not None:  # for the server's per-account bound
            request.environ[ACCOUNT] = ctx.consumer_id
        gone = request.environ.get(CLIENT_GONE)
        sent = admission.held is None or gone is None or not gone()  # asked when it counts
        headers = response.headers
        rated = "X-RateLimit-Limit" not in headers  # a 429 carries its own
        counted, added = settle(
            deps, admission, response.status_code, ctx.now, sent=sent, rated=rated
        )
        headers.extend(added)  # no handler sets X-Quota-*: nothing to replace
        renew_session(deps, admission, response, ctx.now)
        if counted and gone is not None:
            request.environ[TAKE_BACK] = functools.partial(take_back, deps, admission)
    except Exception:
        error_log.exception("request %s: settling the call failed", ctx.request_id)
    return response, ctx
