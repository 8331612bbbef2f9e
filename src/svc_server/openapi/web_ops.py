"""API-reference text of the browser pages (``svc_server.web``): dashboard, sign-in, the
reference viewer and their static files, and the development sign-in."""

from __future__ import annotations

from svc_core.json_schema import enum, ref, string
from svc_server.http.routing import Operation
from svc_server.openapi.operations import Json, account_ok, error, json_body

HTML_PAGE: Json = {
    "description": "An HTML page.",
    "content": {"text/html": {"schema": {"type": "string"}}},
}
TO_SIGNIN: Json = {
    "description": "Not signed in: redirects to `/signin`, with the page asked for in "
    "`next` (sign-in then returns there). Under a mount prefix both carry the prefix.",
    "headers": {"Location": {"schema": {"type": "string", "pattern": "/signin\\?next="}}},
}
NOT_MODIFIED: Json = {"description": "Not modified since the ETag in If-None-Match."}

GET_HOME_PAGE = Operation(
    operation_id="getHomePage",
    tag="Pages",
    summary="Home page",
    description="What svc is, with links to sign in, the API reference, the plans and the "
    "data disclosure. Links start with the mount prefix (`SCRIPT_NAME`) of the app.",
    responses={"200": HTML_PAGE},
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
GET_SIGN_IN_PAGE = Operation(
    operation_id="getSignInPage",
    tag="Pages",
    summary="Sign-in page",
    description="With `SVC_DEV_SIGNIN=true`, a development sign-in form taking an email; "
    "otherwise a form that hands an identity-provider token to `POST /api/auth/session`.",
    responses={"200": HTML_PAGE},
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
GET_API_REFERENCE_PAGE = Operation(
    operation_id="getApiReferencePage",
    tag="Pages",
    summary="API reference viewer",
    description="This document in Swagger UI, whose files ship inside the package.",
    responses={"200": HTML_PAGE},
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
