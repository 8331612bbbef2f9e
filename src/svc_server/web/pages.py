"""Handlers of the browser pages: dashboard sections, sign-in, ``/docs`` and assets."""

from __future__ import annotations

import gzip
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from werkzeug.security import safe_join
from werkzeug.wrappers import Response

from svc_core.accounts.bodies import DEV_SESSION_FIELDS
from svc_core.errors import NotFound
from svc_core.fields import read_body
from svc_core.instants import iso
from svc_core.params import Param, read_all
from svc_server.http import cookies
from svc_server.http.body import read_json_object
from svc_server.http.context import Ctx
from svc_server.http.responses import json_response
from svc_server.identity import Identity
from svc_server.runtime.deps import Deps
from svc_server.services import membership, sessions
from svc_server.web.sections import BODIES, SECTIONS, nav
from svc_server.web.widgets import ONCE_PANEL

STATIC_DIR = Path(__file__).resolve().parent / "static"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "private, no-store",
}
ASSET_CACHE = "public, max-age=300"
ASSET_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
"""Content types by suffix; anything else shipped there (licences, notes) is plain text."""
DEV_SUBJECT_PREFIX = "dev|"
DEV_BANNER = (
    '<p class="dev-banner" role="note"><strong>Development sign-in</strong>: this server '
    "signs anyone in by email alone (SVC_DEV_SIGNIN=true). Never expose it.</p>\n"
)
PRIVATE_HOOKS_BANNER = (
    '<p class="dev-banner" role="note"><strong>Local webhooks</strong>: this server '
    "delivers webhooks to private and loopback addresses, over http too "
    "(SVC_WEBHOOK_ALLOW_PRIVATE=true), so a receiver on this machine can be tried. "
    "Never in production.</p>\n"
)
MESSAGES = (
    '<div id="messages" class="messages" role="alert"></div>\n'
    '<div id="notice" class="notice" role="status"></div>\n'
)


def base_of(ctx: Ctx) -> str:
    """The prefix svc is mounted under (``SCRIPT_NAME``, e.g. ``/data``; empty at the
    root), HTML-escaped: every link, asset and call of a page starts with it."""
    return escape(ctx.request.script_root.rstrip("/"))


UUID_PATTERN = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SECTION_PARAMS: tuple[Param, ...] = (
    Param(
        name="invite",
        description="An invitation to show (the link an inviter hands over): the team page "
        "points the signed-in invitee at it.",
        pattern=UUID_PATTERN,
        example="3f2c1a9e-8d7b-4c6a-9e5f-1b2c3d4e5f60",
    ),
)
SIGNIN_PARAMS: tuple[Param, ...] = (
    Param(
        name="next",
        description="The dashboard page to open after signing in (set by the redirect of a "
        "signed-out visit).",
        pattern=rf"/dashboard(/[a-z]{{1,20}})?(\?invite={UUID_PATTERN})?",
        example="/dashboard/keys",
    ),
)
"""The query parameters of the pages; anything else is refused like on every route."""


def _html(ctx: Ctx, title: str, body: str, *, page: str, styles: tuple[str, ...] = ()) -> Response:
    base = base_of(ctx)
    links = "".join(f'<link rel="stylesheet" href="{base}/static/{s}">\n' for s in styles)
    text = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        f'<link rel="icon" href="{base}/static/favicon.svg" type="image/svg+xml">\n'
        f'<link rel="stylesheet" href="{base}/static/dashboard.css">\n'
        f"{links}"
        f'<script src="{base}/static/dashboard.js" defer></script>\n'
        f'</head>\n<body data-page="{escape(page)}" data-base="{base}">\n{body}</body>\n'
        "</html>\n"
    )
    return Response(text.encode("utf-8"), mimetype="text/html", headers=PAGE_HEADERS)


def _signed_in(ctx: Ctx, deps: Deps) -> str | None:
    """The email of the visitor's live session (the ``page`` policy resumed and renews
    it), else None."""
    if ctx.user_id is None:
        return None
    user = deps.store.accounts.get_user(ctx.user_id)
    return user.email if user else ""


def _account_header(accounts: list[membership.AccountChoice]) -> str:
    """The current account's name and the person's role in it; with more than one
    account, a form to switch (the script posts it, a CSRF-checked write)."""
    current = next((a for a in accounts if a.current), None)
    if current is None:
        return ""
    text = (
        f'<span class="account">Account <strong id="account-name">{escape(current.name)}'
        f'</strong> <span id="account-role">({escape(current.role)})</span></span>\n'
    )
    if len(accounts) < 2:
        return text
    options = "".join(
        f'<option value="{escape(a.id)}"{" selected" if a.current else ""}>'
        f"{escape(a.name)} ({escape(a.role)}, {escape(a.plan)})</option>"
        for a in accounts
    )
    return (
        text + '<form id="account-form" class="inline">'
        '<label for="account-switch">Switch account</label> '
        f'<select id="account-switch">{options}</select> '
        '<button type="submit" class="secondary">Switch</button></form>\n'
    )


def _to_signin(ctx: Ctx) -> Response:
    """303 to the sign-in page, which returns to the page asked for (``next``)."""
    wanted = ctx.request.path
    if ctx.request.query_string:
        wanted += "?" + ctx.request.query_string.decode("latin-1")
    location = f"{ctx.request.script_root.rstrip('/')}/signin?next={quote(wanted, safe='/')}"
    return Response(
        b"", status=303, headers={"Location": location, "Cache-Control": "private, no-store"}
    )


def _dashboard(ctx: Ctx, deps: Deps, section: str) -> Response:
    email = _signed_in(ctx, deps)
    if email is None or ctx.user_id is None:
        return _to_signin(ctx)
    base = base_of(ctx)
    title = SECTIONS[section]
    body = (
        '<a class="skip" href="#main">Skip to content</a>\n'
        '<header class="top"><span class="brand">svc dashboard</span>\n'
        + nav(section, base)
        + '<div class="who">'
        + _account_header(membership.accounts_of(deps.store, ctx.user_id))
        + f'<span>Signed in as <span id="whoami">{escape(email)}</span></span> '
        '<button type="button" id="sign-out">Sign out</button></div>\n</header>\n'
        + (DEV_BANNER if deps.config.dev_signin else "")
        + (PRIVATE_HOOKS_BANNER if deps.config.webhook_allow_private else "")
        + f'<main id="main">\n<h1>{escape(title)}</h1>\n'
        + MESSAGES
        + BODIES[section]()
        + "</main>\n"
        f'<footer><a href="{base}/docs">API reference</a> · <a href="{base}/pricing">Plans</a> · '
        f'<a href="{base}/disclosure">Data disclosure</a></footer>\n'
    )
    return _html(ctx, f"{title} · svc dashboard", body, page=section)


def dashboard(ctx: Ctx, deps: Deps) -> Response:
    """GET /dashboard: the overview; signed-out visitors are sent to /signin."""
    return _dashboard(ctx, deps, "overview")


def dashboard_section(ctx: Ctx, deps: Deps, section: str) -> Response:
    """GET /dashboard/<section>: keys, requests, webhooks, team or explorer."""
    read_all(SECTION_PARAMS, ctx.params)  # a malformed invite id is 400, like any parameter
    if section not in SECTIONS or section == "overview":
        raise NotFound(
            f"No dashboard page {section[:40]!r}.",
            hint="Pages: /dashboard, /dashboard/keys, /dashboard/requests, /dashboard/webhooks, "
            "/dashboard/team, /dashboard/explorer.",
        )
    return _dashboard(ctx, deps, section)


def signin(ctx: Ctx, deps: Deps) -> Response:
    """GET /signin: an email form (development sign-in) or an identity-token form."""
    read_all(SIGNIN_PARAMS, ctx.params)  # ``next`` may only name a dashboard page
    if deps.config.dev_signin:
        form = (
            DEV_BANNER + '<form id="dev-signin-form" class="stack">\n'
            '<p><label for="signin-email">Email</label>\n'
            '<input id="signin-email" name="email" type="email" size="40" required '
            'autocomplete="email"></p>\n'
            '<p><button type="submit">Sign in</button></p>\n</form>\n'
        )
    else:
        form = (
            "<p>Sign in with your identity provider, then hand its token (a JWT) to svc. "
            "A site in front of svc does this for you; here you can paste one.</p>\n"
            '<form id="token-signin-form" class="stack">\n'
            '<p><label for="signin-token">Identity token (JWT)</label>\n'
            '<textarea id="signin-token" name="jwt" rows="4" cols="60" required '
            'spellcheck="false"></textarea></p>\n'
            '<p><button type="submit">Sign in</button></p>\n</form>\n'
        )
    email = _signed_in(ctx, deps)
    base = base_of(ctx)
    already = (
        f'<p class="notice" id="signed-in">You are signed in as {escape(email)}: '
        f'<a href="{base}/dashboard">go to the dashboard</a>, or sign in as someone else.</p>\n'
        if email is not None
        else ""
    )
    body = (
        '<main id="main" class="narrow">\n<h1>Sign in to svc</h1>\n'
        + MESSAGES
        + already
        + form
        + ONCE_PANEL
        + f'<p id="continue" hidden><a href="{base}/dashboard">Continue to the dashboard</a>'
        "</p>\n"
        f'<p><a href="{base}/docs">API reference</a> · <a href="{base}/pricing">Plans</a></p>\n'
        "</main>\n"
    )
    return _html(ctx, "Sign in · svc", body, page="signin")


def dev_session(ctx: Ctx, deps: Deps) -> Response:
    """POST /api/auth/dev-session: sign in by email alone (only with SVC_DEV_SIGNIN=true).

    The session is made by the same ``sessions.sign_in`` an identity provider's token
    reaches, for the identity ``dev|<email>``; the answer is the one of
    ``POST /api/auth/session``.
    """
    if not deps.config.dev_signin:
        raise NotFound(
            "Development sign-in is off on this server.",
            hint="Sign in with POST /api/auth/session, or set SVC_DEV_SIGNIN=true locally.",
        )
    cookies.check_origin(ctx.request, deps.config, signing_in=True)
    body = read_json_object(ctx.request, max_bytes=deps.config.max_body_bytes)
    email = read_body(DEV_SESSION_FIELDS, body)["email"]
    identity = Identity(sub=DEV_SUBJECT_PREFIX + email, email=email)
    data = sessions.sign_in(
        deps.store, deps.config, identity, ctx.now, deps.entropy(16), ids=deps.ids
    )
    cookie, lifetime = data.pop("_cookie"), data.pop("_cookie_seconds")
    out: dict[str, Any] = {
        "data": data,
        "meta": {"request_id": ctx.request_id, "timestamp": iso(ctx.now)},
    }
    response = json_response(out, headers={"Cache-Control": "private, no-store"})
    cookies.set_cookie(deps.config, response, cookie, lifetime)
    return response


def docs(ctx: Ctx, deps: Deps) -> Response:
    """GET /docs: the OpenAPI document in Swagger UI (shipped in the package)."""
    base = base_of(ctx)
    body = (
        '<header class="top"><span class="brand">svc API reference</span> '
        f'<a href="{base}/dashboard">Dashboard</a> · '
        f'<a href="{base}/api/v1/openapi.json">openapi.json</a></header>\n'
        '<main id="main"><div id="swagger-ui"></div></main>\n'
        f'<script src="{base}/static/swagger-ui/swagger-ui-bundle.js" defer></script>\n'
        f'<script src="{base}/static/docs.js" defer></script>\n'
    )
    return _html(
        ctx, "API reference · svc", body, page="docs", styles=("swagger-ui/swagger-ui.css",)
    )


def _shipped(name: str) -> tuple[Path, bool] | None:
    """The file behind ``/static/<name>`` and whether it is stored gzip-compressed (large
    vendored bundles ship as ``<name>.gz``), or None."""
    if len(name) > 200 or "\x00" in name:
        return None
    for candidate, packed in ((name, False), (name + ".gz", True)):
        path = safe_join(str(STATIC_DIR), candidate)
        try:
            if path is not None and Path(path).is_file():
                return Path(path), packed
        except (OSError, ValueError):  # a name the file system cannot even look up
            return None
    return None


def asset(ctx: Ctx, deps: Deps, name: str) -> Response:
    """GET /static/<name>: a file shipped in ``svc_server/web/static``; one stored
    compressed is sent as is to clients that accept gzip, else decompressed."""
    found = _shipped(name)
    if found is None or name.endswith(".gz"):
        raise NotFound(f"No such file: /static/{name[:200]}")
    path, packed = found
    kind = ASSET_TYPES.get(Path(name).suffix, "text/plain") + "; charset=utf-8"
    body = path.read_bytes()
    headers = {
        "Content-Type": kind,
        "Cache-Control": ASSET_CACHE,
        "X-Content-Type-Options": "nosniff",
    }
    if packed:
        headers["Vary"] = "Accept-Encoding"
        if ctx.request.accept_encodings["gzip"] > 0:
            headers["Content-Encoding"] = "gzip"
        else:
            body = gzip.decompress(body)
    response = Response(body, headers=headers)
    response.add_etag()
    return response.make_conditional(ctx.request)


def favicon(ctx: Ctx, deps: Deps) -> Response:
    """GET /favicon.ico: the icon the pages link, where browsers look for one."""
    return asset(ctx, deps, "favicon.svg")
