"""Shared pieces of the per-operation API-reference text: tags, response helpers, examples.

The text of each operation (``svc_server.http.routing.Operation``) lives in
``openapi.data_ops`` and ``openapi.account_ops`` and hangs on its route in
``svc_server.app.routes``; query parameters are described by their declarations
(``svc_core.params.Param``), not here. The builder (``svc_server.openapi``) adds what
follows from the route: security, the shared 4xx/5xx, ``format``, CSV and rate-limit
headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_core.envelope import CONTRACT_METHODOLOGY
from svc_core.json_schema import Schema, array, obj, ref, scalar

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

HTML_PAGE: Json = {
    "description": "An HTML page.",
    "content": {"text/html": {"schema": {"type": "string"}}},
}
"""The 200 of a browser page."""
NOT_MODIFIED: Json = {"description": "Not modified since the ETag in If-None-Match."}
"""The 304 of an answer whose ETag the caller sent in If-None-Match."""

# parameters --------------------------------------------------------------------------------------


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


def confirmed(field: str, description: str) -> Json:
    """The answer of an account action that returns no resource: ``{field: true}``."""
    return account_ok({field: scalar("boolean", const=True)}, description)


def json_body(schema_name: str, *, required: bool = True, example: Any = None) -> Json:
    media: Json = {"schema": ref(schema_name)}
    if example is not None:
        media["example"] = example
    return {"required": required, "content": {"application/json": media}}


# the table -------------------------------------------------------------------------------------

RE = "/api/v1/real-estate"
ME = "/api/auth/me"
QUOTA_NOTE = "Costs one call of the monthly quota when it succeeds (2xx)."
NOT_FOUND_RE = (
    "No cohort with at least 2 contracts matches; `hint` points at the dimensions and "
    "coverage endpoints. `error.reason` says why: `not_loaded` when no month of the period "
    "is loaded completely for the district and types (nothing was loaded for it: a month "
    "never loaded is not a month without deals), `too_few_transactions` when the period "
    "is loaded but no cohort has 2 contracts. `_meta` is the same envelope a 200 "
    "carries."
)
UNLOADED_YEAR_AGO: Json = {
    "base_period": "2025-04/2025-09",
    "value": 3_266_330_000,
    "base_value": None,
    "change_pct": None,
    "contract_count": 74,
    "base_contract_count": None,
    "interval_low_pct": None,
    "interval_high_pct": None,
    "significant": False,
    "reason": "not_loaded",
    "interval_reason": None,
}
"""The example row's changes against a year earlier: that period was never loaded."""
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
        "ladder_reason": "3 sources disagree beyond 20% spread (47.9%), 74 contracts "
        "(81 samples) >= 5; mixes whole buildings and units: at most medium",
        "mixed_building_types": True,
        "contract_count": 74,
    },
    "contract_count": 74,
    "bulk_contracts": 3,
    "largest_contract_units": 4,
    "building_type": None,
    "building_type_mix": {"unit": 74, "whole_building": 7},
    "p25_price_per_m2": 12_480_000,
    "median_price_per_m2": 14_310_000,
    "p75_price_per_m2": 17_050_000,
    "median_land_price_per_m2": 61_200_000,
    "lease_kind": None,
    "lease_kind_mix": {},
    "deal_type": None,
    "buyer_type": None,
    "p25_deposit_per_m2": None,
    "median_deposit_per_m2": None,
    "p75_deposit_per_m2": None,
    "avg_converted_deposit": None,
    "p25_converted_deposit": None,
    "median_converted_deposit": None,
    "p75_converted_deposit": None,
    "p25_converted_deposit_per_m2": None,
    "median_converted_deposit_per_m2": None,
    "p75_converted_deposit_per_m2": None,
    "complete": True,
    "provisional": True,
    "transactions_url": "https://api.example.com/api/v1/real-estate/transactions"
    "?sigungu_code=11680&from=2026-04&to=2026-09&property_type=office&transaction_type=sale",
    "months_loaded": 6,
    "months_expected": 6,
    "building_use_mix": {"업무": 81},
    "industrial_use": None,
    "land_category": None,
    "zoning": None,
    "industrial_use_mix": {},
    "land_category_mix": {},
    "zoning_mix": {"일반상업지역": 52, "제2종일반주거지역": 17, "제3종일반주거지역": 12},
    "change_vs_previous": {
        "base_period": "2025-10/2026-03",
        "value": 3_266_330_000,
        "base_value": 2_916_000_000,
        "change_pct": 12.01,
        "contract_count": 74,
        "base_contract_count": 69,
        "interval_low_pct": -9.35,
        "interval_high_pct": 38.62,
        "significant": False,
        "reason": None,
        "interval_reason": None,
    },
    "change_vs_year_ago": UNLOADED_YEAR_AGO,
    "change_vs_previous_per_m2": {
        "base_period": "2025-10/2026-03",
        "value": 14_310_000,
        "base_value": 14_020_000,
        "change_pct": 2.07,
        "contract_count": 74,
        "base_contract_count": 69,
        "interval_low_pct": -11.2,
        "interval_high_pct": 16.84,
        "significant": False,
        "reason": None,
        "interval_reason": None,
    },
    "change_vs_year_ago_per_m2": {**UNLOADED_YEAR_AGO, "value": 14_310_000},
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
        "building_type": None,
        "lease_kind": None,
        "deal_type": None,
        "buyer_type": None,
        "industrial_use": None,
        "land_category": None,
        "zoning": None,
        "area_unit": "m2",
    },
    "data_as_of": "2026-10-21T03:00:00Z",
    "data_version": 412,
    "incomplete_periods": [],
    "methodology": CONTRACT_METHODOLOGY,
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
