"""The public pages: ``/`` (what svc is, where to go) and ``/pricing`` (the plans).

Server-rendered, styled by the dashboard's stylesheet, no script. Every link starts
with the request's ``SCRIPT_NAME`` (``request.script_root``), so the pages work when
the app is mounted under a prefix (``examples/mount.py``) and at any depth. The plan
table comes from ``svc_core.accounts.plans``, the one source of the limits the API enforces.
"""

from __future__ import annotations

from html import escape

from werkzeug.wrappers import Response

from svc_core.accounts import plans, requestlog
from svc_server.config import Config
from svc_server.http.context import Ctx
from svc_server.runtime.deps import Deps
from svc_server.services.callers import TEST_KEY_RATE_LIMIT

PUBLIC_CACHE = "public, max-age=300"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)
EXAMPLE_QUERY = "sigungu_code=11680&property_type=office&transaction_type=sale"


SITE_LINKS = (
    ("pricing", "/pricing", "Plans"),
    ("docs", "/docs", "API reference"),
    ("disclosure", "/disclosure", "Data disclosure"),
    ("dashboard", "/dashboard", "Dashboard"),
)


def _links(root: str, page: str) -> str:
    items = []
    for name, href, label in SITE_LINKS:
        mark = ' aria-current="page"' if name == page else ""
        items.append(f'<li><a href="{root}{href}"{mark}>{escape(label)}</a></li>')
    return "".join(items)


def _page(ctx: Ctx, title: str, page: str, body: str) -> Response:
    root = escape(ctx.request.script_root)
    text = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        f'<link rel="icon" href="{root}/static/favicon.svg" type="image/svg+xml">\n'
        f'<link rel="stylesheet" href="{root}/static/dashboard.css">\n'
        f'</head>\n<body data-page="{escape(page)}">\n'
        '<a class="skip" href="#main">Skip to content</a>\n'
        f'<header class="top"><a class="brand" href="{root}/">svc</a>\n'
        '<nav aria-label="Site"><ul>'
        + _links(root, page)
        + f'</ul></nav>\n<p class="who"><a href="{root}/signin">Sign in</a></p>\n</header>\n'
        f'<main id="main">\n<h1>{escape(title)}</h1>\n{body}</main>\n'
        f'<footer><a href="{root}/api/v1/openapi.json">OpenAPI document</a> · '
        f'<a href="{root}/api/status">Service status</a></footer>\n'
        "</body>\n</html>\n"
    )
    return Response(
        text.encode("utf-8"),
        mimetype="text/html",
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin",
            "Cache-Control": PUBLIC_CACHE,
        },
    )


def development_note(config: Config) -> str:
    """What a development server (``python3 dev.py demo``: development sign-in on) does
    that a deployment does not, from its own settings; empty anywhere else."""
    if not config.dev_signin:
        return ""
    plan = escape(config.signup_plan)
    items = [
        "anyone signs in by email alone, without an identity provider "
        "(<code>SVC_DEV_SIGNIN=true</code>);",
        f"a first sign-in makes a <strong>{plan}</strong> account "
        f"(<code>SVC_SIGNUP_PLAN={plan}</code>), so every page of the dashboard can be "
        "tried;",
    ]
    if config.webhook_allow_private:
        sender = (
            "sent by the worker this server runs (<code>SVC_INLINE_WORKER=true</code>)"
            if config.inline_worker
            else "sent by <code>svc worker</code> when one runs"
        )
        items.append(
            "webhooks may go to a receiver on this machine (private and loopback "
            f"addresses, http too: <code>SVC_WEBHOOK_ALLOW_PRIVATE=true</code>), {sender}."
        )
    return (
        '<section class="dev-banner" role="note" aria-labelledby="dev-h">'
        '<h2 id="dev-h">A development server</h2>\n'
        "<p>This server runs for trying svc on one machine, as "
        "<code>python3 dev.py demo</code> starts it:</p>\n<ul>\n"
        + "".join(f"<li>{item}</li>\n" for item in items)
        + "</ul>\n<p>Never expose it.</p></section>\n"
    )


def home(ctx: Ctx, deps: Deps) -> Response:
    """GET /: what svc is, and the way in."""
    root = escape(ctx.request.script_root)
    base = escape(deps.config.public_url)
    plan = escape(deps.config.signup_plan)
    body = (
        development_note(deps.config)
        + '<p class="lead">An API of Korean commercial real-estate statistics: prices per '
        "district, property type and period, computed from the official transaction "
        "reports (MOLIT RTMS) and the Korea Real Estate Board survey (R-ONE), with the "
        "confidence and the sources of every number.</p>\n"
        '<section aria-labelledby="get-h"><h2 id="get-h">Get started</h2>\n<ol>\n'
        f'<li><a href="{root}/signin">Sign in</a>: your first sign-in makes a {plan} '
        "account and shows its API key once.</li>\n"
        f"<li>Call the API with the key in <code>X-API-Key</code>:<br>"
        f'<code>curl -H "X-API-Key: $KEY" "{base}/api/v1/real-estate/pulse?'
        f'{escape(EXAMPLE_QUERY)}"</code></li>\n'
        f'<li>Watch your calls, quota, keys, webhooks and team on the <a href="{root}'
        '/dashboard">dashboard</a>; its request log shows every call of your keys, with '
        "the status and request id of each, so a failed call can be explained.</li>\n"
        "</ol></section>\n"
        '<section aria-labelledby="more-h"><h2 id="more-h">Read more</h2>\n<ul>\n'
        f'<li><a href="{root}/docs">API reference</a>: every endpoint, parameter and '
        "error, and a console to try them.</li>\n"
        f'<li><a href="{root}/pricing">Plans</a>: quotas, rate limits, keys and seats of '
        "each plan.</li>\n"
        f'<li><a href="{root}/disclosure">Data disclosure</a>: what the numbers are made '
        "of, what they leave out and how each is computed.</li>\n"
        "</ul></section>\n"
    )
    return _page(ctx, "svc: Korean real-estate data API", "home", body)


def plan_rows() -> list[tuple[str, ...]]:
    """One row per plan for sale, in tier order, as the pricing table shows it."""
    return [
        (
            plan.name,
            f"{plan.monthly_quota:,}",
            f"{plan.rate_limit_per_minute:,}",
            f"{plan.max_keys:,}",
            f"{plan.seats:,}",
            "yes" if plans.meets_tier(plan.name, "pro") else "no",
        )
        for plan in sorted(
            (p for p in plans.DEFAULT_PLANS.values() if p.name in plans.TIER_ORDER),
            key=lambda p: plans.TIER_ORDER[p.name],
        )  # the operators' own plan is not for sale
    ]


def pricing(ctx: Ctx, deps: Deps) -> Response:
    """GET /pricing: the plans, where a 403's ``upgrade_url`` points."""
    rows = plan_rows()
    head = (
        "Plan",
        "Calls per month",
        "Calls per minute",
        "API keys",
        "Seats",
        "Dong-level answers (geo_precision=dong)",
    )
    table = (
        '<table id="plans-table"><caption>Plans and their limits</caption>\n<thead><tr>'
        + "".join(f'<th scope="col">{escape(h)}</th>' for h in head)
        + "</tr></thead>\n<tbody>\n"
        + "".join(
            f'<tr><th scope="row">{escape(r[0])}</th>'
            + "".join(f'<td class="num">{escape(c)}</td>' for c in r[1:-1])
            + f"<td>{escape(r[-1])}</td></tr>\n"
            for r in rows
        )
        + "</tbody></table>\n"
    )
    root = escape(ctx.request.script_root)
    body = (
        table + '<section aria-labelledby="count-h"><h2 id="count-h">What counts</h2>\n<ul>\n'
        "<li>The monthly quota counts successful (2xx) data calls of live keys only; a "
        "pulse/series call counts once however many periods it returns. Refused calls "
        "(400, 402, 403, 404, 429 …) are not counted.</li>\n"
        "<li>The month is the UTC calendar month; the count starts again on the 1st.</li>\n"
        f"<li>Test keys never count against the quota and are limited to "
        f"{TEST_KEY_RATE_LIMIT} calls a minute on every plan.</li>\n"
        f"<li>Every plan's dashboard keeps a request log of its keys' calls: the last "
        f"{requestlog.RETENTION_SECONDS // 86400} days, at most "
        f"{requestlog.MAX_ROWS_PER_ACCOUNT:,} calls per account.</li>\n"
        "</ul></section>\n"
        f'<p><a href="{root}/signin">Sign in</a> to start on {escape(deps.config.signup_plan)}; the '
        f'<a href="{root}/docs">API reference</a> documents every endpoint.</p>\n'
    )
    return _page(ctx, "svc plans", "pricing", body)
