"""Authentication of requests: who is calling, and may they call now.

``authenticate_data`` guards ``/api/v1/*``: an ``X-API-Key`` header (which wins when a
cookie is also sent) or the ``svc_session`` cookie; then the per-minute limit and the
monthly quota. ``authenticate_account`` guards ``/api/auth/me/*``: the cookie only, plus
the CSRF origin check on writes. Each raises an ``SvcError`` or fills the context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import attrs
from werkzeug.wrappers import Response

from svc_core.errors import CsrfRejected, NotSignedIn, RateLimited, SvcError, Unauthorized
from svc_core.iprules import client_address
from svc_server.http.context import Ctx
from svc_server.services import access, sessions

if TYPE_CHECKING:
    from svc_server.routes import Route

COOKIE_NAME = "svc_session"
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


def client_ip(ctx: Ctx) -> str:
    """The socket peer, or the forwarded client when the peer is a trusted proxy."""
    return client_address(
        ctx.request.remote_addr or "0.0.0.0",  # noqa: S104 - an unknown peer, not a bind
        ", ".join(ctx.request.headers.getlist("X-Forwarded-For")) or None,
        ctx.app.config.trusted_proxies,
    )


DATA_ERROR_META = {"service": "svc", "api_version": "v1"}


def authenticate_data(ctx: Ctx, route: Route) -> None:
    """Resolve the caller, admit it under its limits, and arrange usage accounting.

    Every refusal here (401, 402, 403, 429) carries ``_meta: {service, api_version}``
    as SPEC's 401 body shows.
    """
    try:
        _authenticate_data(ctx, route)
    except SvcError as err:
        if err.meta is None:
            err.meta = dict(DATA_ERROR_META)
            if ctx.caller is not None:
                err.meta["rate_limit"] = {
                    "limit_per_min": ctx.caller.rate_limit_per_minute,
                    "remaining": ctx.caller.rate_remaining,
                }
        raise


def _authenticate_data(ctx: Ctx, route: Route) -> None:
    store, now = ctx.app.store, ctx.now
    headers = ctx.request.headers
    api_keys = headers.getlist("X-API-Key")
    if len(api_keys) > 1:
        raise Unauthorized("Send exactly one X-API-Key header.")
    if api_keys:
        caller = access.authenticate_key(store, api_keys[0], client_ip=client_ip(ctx), now=now)
    else:
        session = _session(ctx, required_error=Unauthorized)
        caller = access.session_caller(store, session.user_id)
    try:
        admitted = access.admit(store, caller, now, counted=route.counted)
    except RateLimited:
        ctx.caller = attrs.evolve(caller, rate_remaining=0)
        raise
    caller = admitted.caller
    ctx.caller = caller
    ctx.response_headers["X-RateLimit-Limit"] = str(caller.rate_limit_per_minute)
    ctx.response_headers["X-RateLimit-Remaining"] = str(caller.rate_remaining)
    held = admitted.reservation

    def settle(response: Response) -> None:
        # Runs on every response, errors included (the app guarantees it).
        used = None
        if held is not None:
            succeeded = 200 <= response.status_code < 300
            access.settle(store, held, succeeded, now)
            if held.mode == "live":
                used = held.count if succeeded else held.count - 1
        for name, value in access.quota_headers(store, caller, now, used).items():
            response.headers[name] = value

    ctx.after.append(settle)
    if admitted.exhausted:
        raise access.quota_exceeded(caller)  # 402 once the month's quota is used up


def authenticate_account(ctx: Ctx, route: Route) -> None:
    """Resolve the signed-in user of an account endpoint (cookie only)."""
    session = _session(ctx, required_error=NotSignedIn)
    if ctx.request.method in WRITE_METHODS:
        check_origin(ctx)
    ctx.user_id = session.user_id
    ctx.session_id = session.session_id


def check_origin(ctx: Ctx) -> None:
    """Cookie-authenticated writes must come from a configured site origin."""
    origin = ctx.request.headers.get("Origin")
    if not origin or origin == "null":
        referer = ctx.request.headers.get("Referer")
        if referer:
            try:
                parts = urlsplit(referer)
                origin = f"{parts.scheme}://{parts.netloc}"
            except ValueError:  # not a URL (e.g. an unclosed IPv6 bracket): no origin
                origin = None
    allowed = ctx.app.config.site_origins
    if not origin or origin.lower().rstrip("/") not in allowed:
        raise CsrfRejected(
            "Cookie-authenticated writes need an Origin header of this site.",
            hint="Call from the dashboard's origin, or configure SVC_SITE_ORIGINS.",
        )


def _session(ctx: Ctx, *, required_error: type[Unauthorized]) -> sessions.ActiveSession:
    cookie = ctx.request.cookies.get(COOKIE_NAME)
    if not cookie:
        raise required_error()
    session = sessions.resume(ctx.app.store, ctx.app.config, cookie, ctx.now)
    if session is None:
        raise required_error("Your session has expired or was signed out; sign in again.")
    ctx.after.append(lambda response: set_cookie(ctx, response, session.cookie))
    return session


def set_cookie(ctx: Ctx, response: Response, value: str) -> None:
    """(Re)send the session cookie: HttpOnly, Secure, SameSite=Lax, 15 minutes."""
    config = ctx.app.config
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=sessions.SESSION_SECONDS,
        path="/",
        domain=config.cookie_domain,
        secure=config.cookie_secure,
        httponly=True,
        samesite="Lax",
    )


def clear_cookie(ctx: Ctx, response: Response) -> None:
    config = ctx.app.config
    response.delete_cookie(
        COOKIE_NAME,
        path="/",
        domain=config.cookie_domain,
        secure=config.cookie_secure,
        httponly=True,
        samesite="Lax",
    )
