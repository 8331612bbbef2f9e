"""What the routing table cannot say about each operation: the per-operation spec table.

``OPERATIONS`` is keyed ``"METHOD /path"`` in OpenAPI path syntax (``{key_id}``). Each
entry carries the summary, description, tag, the query parameters' schemas (by name; the
*names* an operation accepts come from ``Route.params``), the request body and the
operation's own responses. The builder (``svc_server.openapi``) adds what follows from the
route's auth policy, CSV flag and body: security, 400/401/402/403/413/414/415/429/500,
the ``format`` parameter, the CSV media type and the rate-limit headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from svc_core.keys import MAX_GRACE_SECONDS
from svc_core.markets import CATEGORIES, MAX_REGION_LENGTH, PRODUCT_TYPES
from svc_core.models import METRIC_TYPES, PROPERTY_TYPES, TRANSACTION_TYPES
from svc_server.openapi.schemas import (
    GEO_PRECISIONS,
    GRANULARITIES,
    MONTH,
    MONTH_LIST,
    QUARTER,
    QUARTER_LIST,
    YEAR,
    Schema,
    array,
    enum,
    integer,
    obj,
    ref,
    string,
)

Json = dict[str, Any]

# tags ------------------------------------------------------------------------------------------

TAGS: tuple[Json, ...] = (
    {
        "name": "Real estate",
        "description": "Transaction-based quartile aggregates, series, coverage, R-ONE indices "
        "and filter dimensions for Korean commercial real estate. Every answer, 404s of "
        "pulse, series and indices included, carries the layer envelope `_meta`.",
    },
    {
        "name": "Marketplace",
        "description": "Workspace rental and meeting-room price and demand aggregates. Every "
        "published cohort has at least 3 listings (k-anonymity).",
    },
    {
        "name": "Session",
        "description": "Sign in with an identity-provider token to get the `svc_session` "
        "cookie, and sign out.",
    },
    {
        "name": "Usage",
        "description": "The signed-in user's plan, limits and this month's usage. Cookie only; "
        "not counted against the quota.",
    },
    {
        "name": "API keys",
        "description": "Create, list, rename, restrict, rotate and revoke API keys. Cookie only; "
        "owners and admins write, members read.",
    },
    {
        "name": "Webhooks",
        "description": "Register HTTPS endpoints for outbound events, test them and read the "
        "delivery log. Cookie only; owners and admins write, members read.",
    },
    {
        "name": "Team",
        "description": "Members, invitations and seats. Cookie only; owners and admins write.",
    },
    {"name": "System", "description": "The public health probe and this document."},
    {
        "name": "Pages",
        "description": "Human-readable pages: disclosure and pricing (which the API links "
        "to), the dashboard, sign-in, this reference in a viewer, and their static files.",
    },
    {
        "name": "Webhook events",
        "description": "Outbound events svc POSTs to registered endpoints (the `webhooks` "
        "section of this document).",
    },
)

# parameters --------------------------------------------------------------------------------------


def query(
    name: str,
    schema: Schema,
    description: str,
    *,
    required: bool = False,
    allow_empty: bool = False,
    example: Any = None,
) -> Json:
    """A query parameter object.

    ``allow_empty`` marks parameters whose empty value (``?period=``) means "absent";
    everywhere else an empty value is a 400 like any other malformed value.
    """
    out: Json = {"name": name, "in": "query", "required": required, "schema": schema}
    out["description"] = description
    if allow_empty:
        out["allowEmptyValue"] = True
    if example is not None:
        out["example"] = example
    return out


def _sigungu(required: bool) -> Json:
    return query(
        "sigungu_code",
        string(pattern="^[0-9]{5}$"),
        "5-digit district code; list them with GET /api/v1/real-estate/dimensions.",
        required=required,
        allow_empty=not required,
        example="11680",
    )


PROPERTY_TYPE = query(
    "property_type",
    enum(PROPERTY_TYPES),
    "Property type; all types when absent.",
    allow_empty=True,
)
TRANSACTION_TYPE = query(
    "transaction_type",
    enum(TRANSACTION_TYPES),
    "Transaction type; all types when absent.",
    allow_empty=True,
)
GEO_PRECISION = query(
    "geo_precision",
    {**enum(GEO_PRECISIONS), "default": "sigungu"},
    "`dong` splits rows by legal dong and needs the pro plan or higher (else 403 TIER_RESTRICTED).",
    allow_empty=True,
)
DONG = query(
    "dong",
    string(maxLength=40, pattern="^\\S(.*\\S)?$"),
    "One legal dong such as 역삼동; used only with geo_precision=dong.",
    allow_empty=True,
)
SERIES_PERIOD = string(pattern=f"^({MONTH}|{QUARTER})$")

# responses ---------------------------------------------------------------------------------------


def ok(schema: Schema, description: str, example: Any = None) -> Json:
    """A 200 JSON response."""
    media: Json = {"schema": schema}
    if example is not None:
        media["example"] = example
    return {"description": description, "content": {"application/json": media}}


def error(name: str, description: str | None = None) -> Json:
    """A shared error response, or one with an operation-specific description."""
    if description is None:
        return {"$ref": f"#/components/responses/{name}"}
    return {
        "description": description,
        "content": {"application/json": {"schema": ref("Error")}},
    }


def envelope_404(description: str) -> Json:
    return {
        "description": description,
        "content": {"application/json": {"schema": ref("EnvelopeError")}},
    }


def data_ok(row: str, description: str) -> Json:
    """``{data: [row], _meta: envelope}``."""
    return ok(
        obj({"data": array(ref(row)), "_meta": ref("LayerEnvelope")}),
        description,
    )


def account_ok(
    body: Mapping[str, Schema],
    description: str,
    example: Any = None,
    links: Mapping[str, tuple[str, str]] | None = None,
) -> Json:
    """An account body as SPEC shows it, plus ``meta: {request_id, timestamp}``.

    ``links`` names follow-up operations: ``{link: (operationId, path parameter)}``, the
    parameter taken from the new resource's ``data.id``.
    """
    out = ok(obj({**body, "meta": ref("AccountMeta")}), description, example)
    if links:
        out["links"] = {
            name: {"operationId": op_id, "parameters": {param: "$response.body#/data/id"}}
            for name, (op_id, param) in links.items()
        }
    return out


def json_body(schema_name: str, *, required: bool = True, example: Any = None) -> Json:
    media: Json = {"schema": ref(schema_name)}
    if example is not None:
        media["example"] = example
    return {"required": required, "content": {"application/json": media}}


# the table -------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Operation:
    """One operation's documentation beyond the routing table."""

    operation_id: str
    tag: str
    summary: str
    description: str
    responses: Mapping[str, Json]
    params: tuple[Json, ...] = ()
    body: Json | None = None
    path_params: Mapping[str, str] = attrs.field(factory=dict)
    path_schemas: Mapping[str, Json] = attrs.field(factory=dict)  # default: a UUID
    extensions: Mapping[str, Any] = attrs.field(factory=dict)

    def param(self, name: str) -> Json | None:
        """This operation's definition of query parameter ``name``, if it has one."""
        return next((p for p in self.params if p["name"] == name), None)


RE = "/api/v1/real-estate"
ME = "/api/auth/me"
HTML_PAGE: Json = {
    "description": "An HTML page.",
    "content": {"text/html": {"schema": {"type": "string"}}},
}
TO_SIGNIN: Json = {
    "description": "Not signed in: redirects to `/signin`.",
    "headers": {"Location": {"schema": {"type": "string", "const": "/signin"}}},
}
PULSE_FILTERS = (PROPERTY_TYPE, TRANSACTION_TYPE, GEO_PRECISION, DONG)
QUOTA_NOTE = "Costs one call of the monthly quota when it succeeds (2xx)."
NOT_FOUND_RE = (
    "No cohort with at least 2 transactions matches; `hint` points at the dimensions and "
    "coverage endpoints. `_meta` is the same envelope a 200 carries."
)
PULSE_EXAMPLE_ROW: Json = {
    "sigungu_code": "11680",
    "sigungu": "강남구",
    "gu": None,
    "dong": None,
    "property_type": "office",
    "transaction_type": "sale",
    "period": "last_6m",
    "sample_count": 81,
    "avg_price": 4_507_259_136,
    "p25_price": 1_779_900_000,
    "median_price": 3_266_330_000,
    "p75_price": 5_438_250_000,
    "avg_monthly_rent": None,
    "p25_monthly_rent": None,
    "median_monthly_rent": None,
    "p75_monthly_rent": None,
    "avg_area_m2": "184.39",
    "confidence": "medium",
    "source_mix": {"public_assessment": 15, "rone_index_derived": 5, "rtms_official": 61},
    "source_means": {
        "public_assessment": 4_568_016_667,
        "rone_index_derived": 2_496_542_000,
        "rtms_official": 4_657_131_639,
    },
    "confidence_factors": {
        "distinct_sources": 3,
        "relative_spread": 0.4794,
        "sample_count": 81,
        "ladder_reason": "3 sources disagree beyond 20% spread (47.9%), 81 samples >= 5",
    },
}
ENVELOPE_EXAMPLE: Json = {
    "service": "svc",
    "api_version": "v1",
    "vertical": "real_estate",
    "tier": "pro",
    "auth_method": "api_key",
    "data_sources": ["public_assessment", "rone_index_derived", "rtms_official"],
    "coverage_estimate": None,
    "coverage_estimate_method": "not_estimated_rtms_reporting_share_unknown",
    "coverage_note": "Covers deals reported to MOLIT RTMS (a sale must be reported within 30 "
    "days of the contract; the share of deals actually reported is not known, so no "
    "coverage estimate is given) plus the other sources listed in data_sources. Cancelled "
    "deals and partial-share deals are always excluded.",
    "lease_data_status": "absent",
    "lease_data_note": "This query covers sales only; no lease data is included.",
    "known_limitations": [
        "MOLIT RTMS records are contracts reported within 30 days of signing; the latest "
        "month is incomplete until reports arrive."
    ],
    "disclosure_url": "https://api.example.com/disclosure",
    "confidence": "medium",
    "source_mix": {"public_assessment": 15, "rone_index_derived": 5, "rtms_official": 61},
    "generated_at": "2026-10-21T09:00:00Z",
    "count": 1,
    "query": {
        "sigungu_code": "11680",
        "property_type": "office",
        "transaction_type": "sale",
        "geo_precision": "sigungu",
        "dong": None,
        "period": "last_6m",
        "window_from": "2026-04",
        "window_to": "2026-09",
    },
    "rate_limit": {"limit_per_min": 120, "remaining": 119},
    "request_id": "req_GoJtE09Oo289lKte7g6VSg",
}
KEY_EXAMPLE: Json = {
    "id": "6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f",
    "label": "ci",
    "prefix": "svc_pk_live_3f9a",
    "mode": "live",
    "scope": "read_only",
    "ip_allowlist": ["203.0.113.0/24"],
    "status": "active",
    "created_at": "2026-01-31T09:00:00Z",
    "grace_until": None,
    "last_used_at": None,
}
META_EXAMPLE: Json = {
    "request_id": "req_5xq0B1m9ZrC2yN8kT4wH7a",
    "timestamp": "2026-01-31T09:00:00Z",
}

_OPERATIONS: dict[str, Operation] = {
    # system ------------------------------------------------------------------------------
    "GET /api/status": Operation(
        operation_id="getStatus",
        tag="System",
        summary="Health probe",
        description="Runs one timed probe per vertical (real-estate pulse, marketplace pulse) "
        "against the store. Public; edge-cacheable for 10 s (stale-while-revalidate 30 s).",
        responses={
            "200": ok(ref("Status"), "Every probe answered (`status: ok`)."),
            "503": {
                "description": "One or more probes failed (`status: degraded`).",
                "content": {"application/json": {"schema": ref("Status")}},
            },
        },
    ),
    "GET /api/v1/openapi.json": Operation(
        operation_id="getOpenApiDocument",
        tag="System",
        summary="This OpenAPI document",
        description="The OpenAPI 3.1 description of the API, generated from the server's "
        "routing table. Public and cacheable; send If-None-Match with the ETag to get a 304.",
        responses={
            "200": ok({"type": "object"}, "The document."),
            "304": {"description": "Not modified since the ETag in If-None-Match."},
        },
    ),
    "GET /disclosure": Operation(
        operation_id="getDisclosurePage",
        tag="Pages",
        summary="Trust-disclosure page",
        description="What the real-estate data covers, where it comes from and what it leaves "
        "out; `_meta.disclosure_url` links here.",
        responses={
            "200": {
                "description": "An HTML page.",
                "content": {"text/html": {"schema": {"type": "string"}}},
            }
        },
    ),
    "GET /pricing": Operation(
        operation_id="getPricingPage",
        tag="Pages",
        summary="Plans and pricing page",
        description="The plans and their limits; `upgrade_url` of 403 TIER_RESTRICTED links here.",
        responses={
            "200": {
                "description": "An HTML page.",
                "content": {"text/html": {"schema": {"type": "string"}}},
            }
        },
    ),
    "GET /dashboard": Operation(
        operation_id="getDashboardPage",
        tag="Pages",
        summary="Dashboard: overview",
        description="The signed-in user's plan, quota and trial, in the browser. The page "
        "reads the account endpoints with the session cookie; without a session it "
        "redirects to `/signin`.",
        responses={"200": HTML_PAGE, "303": TO_SIGNIN},
    ),
    "GET /dashboard/{section}": Operation(
        operation_id="getDashboardSection",
        tag="Pages",
        summary="Dashboard: keys, webhooks, team or explorer",
        description="One section of the dashboard; without a session it redirects to `/signin`.",
        path_params={"section": "The section."},
        path_schemas={"section": enum(("keys", "webhooks", "team", "explorer"))},
        responses={
            "200": HTML_PAGE,
            "303": TO_SIGNIN,
            "404": error("NotFound", "NOT_FOUND: no such section."),
        },
    ),
    "GET /signin": Operation(
        operation_id="getSignInPage",
        tag="Pages",
        summary="Sign-in page",
        description="With `SVC_DEV_SIGNIN=true`, a development sign-in form taking an email; "
        "otherwise a form that hands an identity-provider token to `POST /api/auth/session`.",
        responses={"200": HTML_PAGE},
    ),
    "POST /api/auth/dev-session": Operation(
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
    ),
    "GET /docs": Operation(
        operation_id="getApiReferencePage",
        tag="Pages",
        summary="API reference viewer",
        description="This document in Swagger UI, whose files ship inside the package.",
        responses={"200": HTML_PAGE},
    ),
    "GET /static/{name}": Operation(
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
            "304": {"description": "Not modified since the ETag in If-None-Match."},
            "404": error("NotFound", "NOT_FOUND: no such file."),
        },
    ),
    # real estate --------------------------------------------------------------------------
    f"GET {RE}/pulse": Operation(
        operation_id="getRealEstatePulse",
        tag="Real estate",
        summary="Quartile aggregates for one district",
        description="Sale prices or lease deposits (and monthly rents) per property type and "
        "transaction type for one district and period. Cohorts with fewer than 2 "
        f"transactions are left out. {QUOTA_NOTE}",
        params=(
            _sigungu(True),
            *PULSE_FILTERS[:2],
            query(
                "period",
                {
                    **string(pattern=f"^(last_3m|last_6m|last_12m|{MONTH}|{QUARTER})$"),
                    "default": "last_6m",
                },
                "A rolling window (ending at the latest month with data), a month YYYY-MM "
                "or a quarter YYYY-Qn.",
                allow_empty=True,
                example="last_6m",
            ),
            *PULSE_FILTERS[2:],
        ),
        responses={
            "200": ok(
                obj({"data": array(ref("PulseRow")), "_meta": ref("LayerEnvelope")}),
                "Rows ordered by period, property type, transaction type and dong.",
                {"data": [PULSE_EXAMPLE_ROW], "_meta": ENVELOPE_EXAMPLE},
            ),
            "404": envelope_404(NOT_FOUND_RE),
        },
    ),
    f"GET {RE}/pulse/series": Operation(
        operation_id="getRealEstatePulseSeries",
        tag="Real estate",
        summary="Pulse rows for several periods",
        description="The pulse row shape for up to 12 calendar periods (all months or all "
        "quarters), given as a list or as an inclusive range. `_meta` adds "
        "`periods_requested`, `periods_returned` and `missing_periods`. Costs one call "
        "whatever the number of periods.",
        params=(
            _sigungu(True),
            query(
                "periods",
                string(pattern=f"^({MONTH_LIST}|{QUARTER_LIST})$"),
                "Comma-separated periods, no spaces, at most 12, all YYYY-MM or all "
                "YYYY-Qn. Give this or from_period and to_period.",
                example="2026-Q1,2026-Q2",
            ),
            query(
                "from_period",
                SERIES_PERIOD,
                "First period of an inclusive range (with to_period; at most 12 periods).",
            ),
            query("to_period", SERIES_PERIOD, "Last period of the range (with from_period)."),
            *PULSE_FILTERS,
        ),
        responses={
            "200": data_ok("PulseRow", "Rows of the periods that have data."),
            "404": envelope_404(
                "None of the requested periods has a cohort; `missing_periods` lists them all."
            ),
        },
    ),
    f"GET {RE}/coverage": Operation(
        operation_id="getRealEstateCoverage",
        tag="Real estate",
        summary="Which periods have data",
        description="Per cohort, the periods with at least 2 transactions, ordered by "
        "total samples (descending). Without filters: the top cohorts overall. An empty "
        f"result is a 200 with empty `data`, never a 404. {QUOTA_NOTE}",
        params=(
            _sigungu(False),
            *PULSE_FILTERS,
            query(
                "granularity",
                {**enum(GRANULARITIES), "default": "quarter"},
                "Period labels as quarters (YYYY-Qn) or months (YYYY-MM).",
                allow_empty=True,
            ),
            query(
                "limit",
                integer(minimum=1, maximum=500, default=200),
                "Most rows returned.",
                allow_empty=True,
            ),
        ),
        responses={"200": data_ok("CoverageRow", "Cohorts with data, busiest first.")},
    ),
    f"GET {RE}/indices": Operation(
        operation_id="getRealEstateIndices",
        tag="Real estate",
        summary="R-ONE market statistics",
        description="Vacancy, yields, returns and price indices from the R-ONE survey for "
        "districts mapped from its market areas. `annualized_cap_rate` is `value_pct` x 4 "
        f"on income_yield rows. CSV negotiation applies. {QUOTA_NOTE}",
        params=(
            _sigungu(True),
            PROPERTY_TYPE,
            query(
                "metric_type",
                enum(METRIC_TYPES),
                "One metric; all metrics when absent.",
                allow_empty=True,
            ),
            query(
                "period",
                {**string(pattern=f"^(last_4q|last_8q|{QUARTER}|{YEAR})$"), "default": "last_4q"},
                "A rolling window of quarters, a quarter YYYY-Qn or a year YYYY.",
                allow_empty=True,
                example="last_4q",
            ),
        ),
        responses={
            "200": data_ok("IndexRow", "Index values, by period."),
            "404": envelope_404("No index values for the district and period."),
        },
    ),
    f"GET {RE}/dimensions": Operation(
        operation_id="getRealEstateDimensions",
        tag="Real estate",
        summary="Districts and types with data",
        description="The districts, property types and transaction types with transactions "
        "in the last 6 months with data, with sample counts; `gu_dongs` is filled for "
        f"geo_precision=dong (pro plan or higher). {QUOTA_NOTE}",
        params=(GEO_PRECISION,),
        responses={
            "200": ok(
                obj({"data": ref("RealEstateDimensions"), "_meta": ref("LayerEnvelope")}),
                "The filter values, most samples first.",
            )
        },
    ),
    # marketplace -----------------------------------------------------------------------------
    "GET /api/v1/markets/pulse": Operation(
        operation_id="getMarketsPulse",
        tag="Marketplace",
        summary="Price and demand of one marketplace cohort",
        description="Price quartiles, views, bookings, demand index and occupancy of one "
        "region, category and month (one product type, or all combined). Suppressed and "
        f"empty cohorts answer the same 404. {QUOTA_NOTE}",
        params=(
            query(
                "region",
                string(minLength=1, maxLength=MAX_REGION_LENGTH, pattern="^\\S(.*\\S)?$"),
                "A region from GET /api/v1/markets/dimensions.",
                required=True,
                example="강남",
            ),
            query(
                "category",
                enum(CATEGORIES),
                "Listing category.",
                required=True,
                example="office",
            ),
            query(
                "period",
                string(pattern=f"^{MONTH}$"),
                "A month YYYY-MM.",
                required=True,
                example="2026-09",
            ),
            query(
                "product_type",
                enum(PRODUCT_TYPES),
                "rental or meeting; both combined when absent.",
                allow_empty=True,
            ),
        ),
        responses={
            "200": ok(
                obj({"data": array(ref("MarketPulseRow")), "_meta": ref("MarketMeta")}),
                "The cohort's row.",
            ),
            "404": {
                "description": "No published row for the cohort (none, or fewer than 3 "
                "listings, or suppressed).",
                "content": {
                    "application/json": {
                        "schema": obj(
                            {"error": ref("ErrorDetail"), "_meta": ref("MarketMeta")},
                        )
                    }
                },
            },
        },
    ),
    "GET /api/v1/markets/dimensions": Operation(
        operation_id="getMarketsDimensions",
        tag="Marketplace",
        summary="Regions, categories and months with data",
        description="Every value with at least one published cohort, with the number of "
        "combinations that include it. The data refreshes daily; cache for 6 hours. "
        f"{QUOTA_NOTE}",
        responses={
            "200": ok(
                obj({"data": ref("MarketDimensions"), "_meta": ref("MarketDimensionsMeta")}),
                "The dimension values.",
            )
        },
    ),
    # session ---------------------------------------------------------------------------------
    "POST /api/auth/session": Operation(
        operation_id="createSession",
        tag="Session",
        summary="Sign in",
        description="Exchange an identity-provider JWT (`exp` required; `iss`/`aud` checked "
        "when configured) for the `svc_session` cookie (HttpOnly, Secure, SameSite=Lax, "
        "15 minutes, renewed by each authenticated request). The first sign-in of a new "
        "user creates a starter consumer whose key is returned once as `api_key`.",
        body=json_body("SessionCreate", example={"jwt": "eyJhbGciOiJSUzI1NiIs..."}),
        responses={
            "200": {
                **account_ok({"data": ref("Session")}, "Signed in."),
                "headers": {
                    "Set-Cookie": {
                        "description": "svc_session=...; HttpOnly; Secure; SameSite=Lax; "
                        "Path=/; Max-Age=900",
                        "schema": {"type": "string"},
                    }
                },
            },
            "401": error(
                "Unauthorized",
                "JWT_INVALID: the token is missing, malformed, "
                "expired, or not signed by the configured provider.",
            ),
        },
    ),
    "DELETE /api/auth/session": Operation(
        operation_id="deleteSession",
        tag="Session",
        summary="Sign out",
        description="Revokes the session server-side (the old cookie then gets 401) and "
        "clears the cookie.",
        responses={
            "200": account_ok({"signed_out": {"type": "boolean", "const": True}}, "Signed out.")
        },
    ),
    # usage -------------------------------------------------------------------------------------
    f"GET {ME}/usage": Operation(
        operation_id="getUsage",
        tag="Usage",
        summary="Plan, limits and this month's usage",
        description="For the caller's highest-plan consumer. Counters update per minute; poll "
        "at most every 30 seconds. `Cache-Control: private, no-store`.",
        responses={
            "200": account_ok({"data": ref("UsageSummary")}, "The usage summary."),
            "404": error("NotFound", "NO_CONSUMER: the user has no active consumer."),
            "500": error("ServerError", "USAGE_FAILED: usage could not be read."),
        },
    ),
    # keys ----------------------------------------------------------------------------------------
    f"GET {ME}/keys": Operation(
        operation_id="listApiKeys",
        tag="API keys",
        summary="List API keys",
        description="Every key of the consumer, with its status (`active`, `grace` until "
        "`grace_until`, `revoked`, `expired`). Never the secret.",
        responses={
            "200": account_ok(
                {"data": array(ref("ApiKey"))},
                "The keys.",
                {"data": [KEY_EXAMPLE], "meta": META_EXAMPLE},
            ),
            "404": error("NotFound", "NO_CONSUMER."),
        },
    ),
    f"POST {ME}/keys": Operation(
        operation_id="createApiKey",
        tag="API keys",
        summary="Create an API key",
        description="The plaintext key is in `key`, in this response only. The body is "
        "checked first (400), then the role (403), then the plan's key limit (402 "
        "KEY_LIMIT_REACHED; keys in grace do not count).",
        body=json_body(
            "ApiKeyCreate",
            example={"label": "ci", "mode": "live", "scope": "read_only", "ip_allowlist": []},
        ),
        responses={
            "200": account_ok(
                {"data": ref("ApiKeyCreated")},
                "The new key.",
                {
                    "data": {**KEY_EXAMPLE, "key": "svc_pk_live_3f9a" + "0" * 28},
                    "meta": META_EXAMPLE,
                },
                links={
                    "update": ("updateApiKey", "key_id"),
                    "rotate": ("rotateApiKey", "key_id"),
                    "revoke": ("revokeApiKey", "key_id"),
                },
            ),
            "402": error("PaymentRequired", "KEY_LIMIT_REACHED."),
            "404": error("NotFound", "NO_CONSUMER."),
        },
    ),
    f"PATCH {ME}/keys/{{key_id}}": Operation(
        operation_id="updateApiKey",
        tag="API keys",
        summary="Rename a key or change its IP allowlist",
        description="Only `label` and `ip_allowlist` can change; `mode`, `scope` and the "
        "read-only fields are refused with 400.",
        path_params={"key_id": "The key's id."},
        body=json_body("ApiKeyPatch", example={"label": "ci-2"}),
        responses={
            "200": account_ok({"data": ref("ApiKey")}, "The updated key."),
            "404": error("NotFound", "No such key for this consumer (or NO_CONSUMER)."),
        },
    ),
    f"DELETE {ME}/keys/{{key_id}}": Operation(
        operation_id="deleteApiKey",
        tag="API keys",
        summary="Revoke a key",
        description="Same as POST .../revoke: the key gets 401 from now on; emits key.revoked.",
        path_params={"key_id": "The key's id."},
        responses={
            "200": account_ok({"revoked": {"type": "boolean", "const": True}}, "Revoked."),
            "404": error("NotFound", "No such key, or already revoked."),
        },
    ),
    f"POST {ME}/keys/{{key_id}}/rotate": Operation(
        operation_id="rotateApiKey",
        tag="API keys",
        summary="Rotate a key",
        description="Issues a new key now; the old one keeps working until `grace_until` "
        f"(`grace_period_seconds`, 0 to {MAX_GRACE_SECONDS}, default 86400). Emits "
        "key.rotated. Allowed at the key limit.",
        path_params={"key_id": "The key's id."},
        body=json_body("ApiKeyRotate", required=False, example={"grace_period_seconds": 3600}),
        responses={
            "200": ok(ref("ApiKeyRotated"), "The new key and the old key's grace."),
            "404": error("NotFound", "No such key for this consumer."),
            "409": error("Conflict", "KEY_NOT_ACTIVE: only an active key can be rotated."),
        },
    ),
    f"POST {ME}/keys/{{key_id}}/revoke": Operation(
        operation_id="revokeApiKey",
        tag="API keys",
        summary="Revoke a key",
        description="The key gets 401 from now on; emits key.revoked.",
        path_params={"key_id": "The key's id."},
        responses={
            "200": account_ok({"revoked": {"type": "boolean", "const": True}}, "Revoked."),
            "404": error("NotFound", "No such key, or already revoked."),
        },
    ),
    # webhooks -------------------------------------------------------------------------------------
    f"GET {ME}/webhooks": Operation(
        operation_id="listWebhookEndpoints",
        tag="Webhooks",
        summary="List webhook endpoints",
        description="Every endpoint of the consumer, revoked ones included, oldest first; "
        "never the secret.",
        responses={
            "200": account_ok({"data": array(ref("WebhookEndpoint"))}, "The endpoints."),
            "404": error("NotFound", "NO_CONSUMER."),
        },
    ),
    f"POST {ME}/webhooks": Operation(
        operation_id="createWebhookEndpoint",
        tag="Webhooks",
        summary="Register a webhook endpoint",
        description="The URL must be HTTPS, without user-info, at most 2048 characters, and "
        "its host must resolve only to public addresses. The signing secret is returned "
        "once as `secret_plaintext`. At most 16 non-revoked endpoints (402 "
        "ENDPOINT_LIMIT_REACHED).",
        body=json_body(
            "WebhookEndpointCreate",
            example={"url": "https://example.com/hooks/svc", "events": ["*"]},
        ),
        responses={
            "200": account_ok(
                {"data": ref("WebhookEndpointCreated")},
                "The new endpoint.",
                links={
                    "test": ("testWebhookEndpoint", "endpoint_id"),
                    "deliveries": ("listWebhookDeliveries", "endpoint_id"),
                    "revoke": ("deleteWebhookEndpoint", "endpoint_id"),
                },
            ),
            "402": error("PaymentRequired", "ENDPOINT_LIMIT_REACHED."),
            "404": error("NotFound", "NO_CONSUMER."),
        },
    ),
    f"DELETE {ME}/webhooks/{{endpoint_id}}": Operation(
        operation_id="deleteWebhookEndpoint",
        tag="Webhooks",
        summary="Revoke a webhook endpoint",
        description="Soft revoke: the record stays for the delivery log and cannot be "
        "re-activated; queued deliveries are settled unsent.",
        path_params={"endpoint_id": "The endpoint's id."},
        responses={
            "200": account_ok({"revoked": {"type": "boolean", "const": True}}, "Revoked."),
            "404": error("NotFound", "Not found, or already revoked."),
        },
    ),
    f"POST {ME}/webhooks/{{endpoint_id}}/enable": Operation(
        operation_id="enableWebhookEndpoint",
        tag="Webhooks",
        summary="Re-enable a disabled endpoint",
        description="Turns `disabled_after_failure` back to `active` and resets the failure count.",
        path_params={"endpoint_id": "The endpoint's id."},
        responses={
            "200": account_ok({"data": ref("WebhookEndpoint")}, "The endpoint, active again."),
            "404": error("NotFound", "No such endpoint."),
            "409": error("Conflict", "ENDPOINT_NOT_DISABLED: the endpoint is not disabled."),
        },
    ),
    f"POST {ME}/webhooks/{{endpoint_id}}/test": Operation(
        operation_id="testWebhookEndpoint",
        tag="Webhooks",
        summary="Send a test event",
        description="Sends `webhook.test` now, whatever the endpoint's event filter, signed "
        "like any event; the attempt is logged and a failure counts toward disabling.",
        path_params={"endpoint_id": "The endpoint's id."},
        responses={
            "200": account_ok({"data": ref("WebhookTest")}, "The attempt's outcome."),
            "404": error("NotFound", "No such endpoint."),
            "409": error("Conflict", "ENDPOINT_NOT_ACTIVE: only active endpoints are tested."),
        },
    ),
    f"GET {ME}/webhooks/{{endpoint_id}}/deliveries": Operation(
        operation_id="listWebhookDeliveries",
        tag="Webhooks",
        summary="Delivery log of an endpoint",
        description="Finished deliveries, newest first, with a 24-hour summary. An endpoint "
        "the caller does not own gives empty rows and a zero summary. Not counted against "
        "the quota.",
        path_params={"endpoint_id": "The endpoint's id."},
        params=(
            query("limit", integer(minimum=1, maximum=200, default=50), "Page size."),
            query(
                "offset",
                integer(minimum=0, maximum=2**31 - 1, default=0),
                "Rows to skip.",
            ),
        ),
        responses={
            "200": account_ok({"data": ref("DeliveryPage")}, "One page of the log."),
            "404": error("NotFound", "NO_CONSUMER."),
        },
    ),
    # team -----------------------------------------------------------------------------------------
    f"GET {ME}/team": Operation(
        operation_id="getTeam",
        tag="Team",
        summary="Members, invitations and seats",
        description="Active members and unexpired pending invitations; the owner and pending "
        "invitations hold seats.",
        responses={
            "200": account_ok(
                {
                    "members": array(ref("TeamMember")),
                    "seat_limit": integer(minimum=1),
                    "plan": string(),
                },
                "The team.",
            ),
            "404": error("NotFound", "NO_CONSUMER."),
        },
    ),
    f"POST {ME}/team": Operation(
        operation_id="inviteTeamMember",
        tag="Team",
        summary="Invite a member",
        description="Creates a pending invitation (expires after 7 days) for an email.",
        body=json_body("TeamInviteCreate", example={"email": "ana@example.com", "role": "member"}),
        responses={
            "200": account_ok(
                {"data": ref("TeamInvite")},
                "The pending invitation.",
                links={"withdraw": ("removeTeamMember", "member_id")},
            ),
            "402": error("PaymentRequired", "SEAT_LIMIT_REACHED."),
            "404": error("NotFound", "NO_CONSUMER."),
            "409": error("Conflict", "ALREADY_INVITED: already a member or invited."),
        },
    ),
    f"DELETE {ME}/team/{{member_id}}": Operation(
        operation_id="removeTeamMember",
        tag="Team",
        summary="Remove a member or withdraw an invitation",
        description="Soft revoke; the owner cannot be removed (403).",
        path_params={"member_id": "The member's or invitation's id."},
        responses={
            "200": account_ok({"removed": {"type": "boolean", "const": True}}, "Removed."),
            "404": error("NotFound", "No such member or invitation."),
        },
    ),
    f"GET {ME}/invites": Operation(
        operation_id="listMyInvitations",
        tag="Team",
        summary="Invitations addressed to me",
        description="Pending, unexpired invitations to the signed-in user's email.",
        responses={"200": account_ok({"invites": array(ref("Invitation"))}, "The invitations.")},
    ),
    f"POST {ME}/invites/{{invite_id}}/accept": Operation(
        operation_id="acceptInvitation",
        tag="Team",
        summary="Accept an invitation",
        description="Joins the inviting consumer with the invited role.",
        path_params={"invite_id": "The invitation's id."},
        responses={
            "200": account_ok({"accepted": {"type": "boolean", "const": True}}, "Accepted."),
            "404": error("NotFound", "Not found, expired, or addressed to another email."),
        },
    ),
}

OPERATIONS: Mapping[str, Operation] = MappingProxyType(_OPERATIONS)
"""Documentation of every operation, keyed ``"METHOD /openapi/path"``."""
