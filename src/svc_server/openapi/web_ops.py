"""API-reference text of the browser pages: home, disclosure and pricing, and those of
``svc_server.web`` (dashboard, sign-in, the reference viewer and their static files, and
the development sign-in)."""

from __future__ import annotations

from svc_core.json_schema import enum, ref, string
from svc_server.http.routing import Operation
from svc_server.openapi.operations import (
    HTML_PAGE,
    NOT_MODIFIED,
    Json,
    account_ok,
    error,
    json_body,
)

TO_SIGNIN: Json = {
    "description": "Not signed in: redirects to `/signin`, with the page asked for in "
    "`next` (sign-in then returns there). Under a mount prefix both carry the prefix.",
    "headers": {"Location": {"schema": {"type": "string", "pattern": "/signin\\?next="}}},
}


def page(operation_id: str, summary: str, description: str) -> Operation:
    """A browser page that anyone may read: an HTML answer and nothing else to say."""
    return Operation(
        operation_id=operation_id,
        tag="Pages",
        summary=summary,
        description=description,
        responses={"200": HTML_PAGE},
    )


GET_HOME_PAGE = page(
    "getHomePage",
    "Home page",
    "What svc is, with links to sign in, the API reference, the plans and the "
    "data disclosure. Links start with the mount prefix (`SCRIPT_NAME`) of the app.",
)

GET_DISCLOSURE_PAGE = page(
    "getDisclosurePage",
    "Trust-disclosure page",
    "What the real-estate data covers, where it comes from and what it leaves "
    "out; `_meta.disclosure_url` links here.",
)

GET_PRICING_PAGE = page(
    "getPricingPage",
    "Plans and pricing page",
    "The plans and their limits (from the plan table the API enforces); "
    "`upgrade_url` of 403 TIER_RESTRICTED links here.",
)

GET_DASHBOARD_PAGE = Operation(
    operation_id="getDashboardPage",
    tag="Pages",
    summary="Dashboard: overview",
    description="The signed-in user's plan, quota and trial, in the browser. The page "
    "reads the account endpoints with the session cookie; without a session it "
    "redirects to `/signin`.",
    responses={"200": HTML_PAGE, "303": TO_SIGNIN},
)
GET_DASHBOARD_SECTION = Operation(
    operation_id="getDashboardSection",
    tag="Pages",
    summary="Dashboard: keys, requests, webhooks, team or explorer",
    description="One section of the dashboard; without a session it redirects to `/signin`.",
    path_params={"section": "The section."},
    path_schemas={"section": enum(("keys", "requests", "webhooks", "team", "explorer"))},
    responses={
        "200": HTML_PAGE,
        "303": TO_SIGNIN,
        "404": error("NotFound", "NOT_FOUND: no such section."),
    },
)
GET_SIGN_IN_PAGE = page(
    "getSignInPage",
    "Sign-in page",
    "With `SVC_DEV_SIGNIN=true`, a development sign-in form taking an email; "
    "otherwise a form that hands an identity-provider token to `POST /api/auth/session`.",
)
CREATE_DEV_SESSION = Operation(
    operation_id="createDevSession",
    tag="Session",
    summary="Development sign-in by email",
    description="Only when the server runs with `SVC_DEV_SIGNIN=true` (local development; "
    "it refuses to start with secure cookies or an identity provider): signs the "
    "person with this email in exactly as `POST /api/auth/session` does for a verified "
    "token, first sign-in included. The `Origin` must be a configured site origin.",
    body=json_body("DevSessionCreate", example={"email": "ana@example.com"}),
    responses={
        "200": account_ok({"data": ref("Session")}, "Signed in; sets the session cookie."),
        "403": error("AccountForbidden", "CSRF_REJECTED: not from a configured site origin."),
        "404": error("NotFound", "NOT_FOUND: development sign-in is off on this server."),
    },
)
GET_API_REFERENCE_PAGE = page(
    "getApiReferencePage",
    "API reference viewer",
    "This document in Swagger UI, whose files ship inside the package.",
)
GET_STATIC_FILE = Operation(
    operation_id="getStaticFile",
    tag="Pages",
    summary="Static file of the pages",
    description="Scripts, style sheets and images of the pages, shipped in the package.",
    path_params={"name": "The file's path under static/."},
    path_schemas={"name": string(maxLength=200)},
    responses={
        "200": {
            "description": "The file.",
            "content": {
                kind: {"schema": {"type": "string"}}
                for kind in ("text/javascript", "text/css", "image/svg+xml", "text/plain")
            },
        },
        "304": NOT_MODIFIED,
        "404": error("NotFound", "NOT_FOUND: no such file."),
    },
)
GET_FAVICON = Operation(
    operation_id="getFavicon",
    tag="Pages",
    summary="The site's icon",
    description=(
        "The icon the pages link (static/favicon.svg), where a browser or a bookmark "
        "looks for one without reading a page."
    ),
    responses={
        "200": {
            "description": "The icon.",
            "content": {"image/svg+xml": {"schema": {"type": "string"}}},
        },
        "304": NOT_MODIFIED,
    },
)
