"""The OpenAPI 3.1 document of the HTTP API, built from the routing table.

``build_document(routes)`` walks ``routes.ROUTES``: every route becomes an operation, its
path and method from the route, its security from the route's auth policy (``data``: API
key or cookie; ``account``: cookie; ``public``: none), its query parameter *names* from
``Route.params`` (plus ``format`` when the route negotiates CSV), the CSV media type and
the rate-limit headers from the route's flags. ``operations.OPERATIONS`` adds what a
route cannot know (schemas, descriptions, statuses, examples). A route missing from that
table still appears, marked ``x-undocumented``, and ``drift(routes)`` names it, so a
test fails instead of the document silently lying.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from svc_core.events import EVENT_TYPES
from svc_server.config import Config
from svc_server.openapi.operations import OPERATIONS, TAGS, Json, Operation, query
from svc_server.openapi.schemas import LAYER_ENVELOPE, SCHEMAS, event_envelope, obj, ref

if TYPE_CHECKING:
    from svc_server.routes import Route

__all__ = [
    "OPENAPI_VERSION",
    "Drift",
    "build_document",
    "drift",
    "openapi_path",
    "operation_key",
]

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0"
DIALECT = "https://spec.openapis.org/oas/3.1/dialect/base"
DEFAULT_SERVER = Config().public_url
_RULE_VARIABLE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})

DESCRIPTION = """\
Aggregate data on Korean commercial real estate and a workspace marketplace, and the
account endpoints that manage access to it.

**Authentication.** `/api/v1/*` takes an `X-API-Key` header (wins when both are sent) or
the `svc_session` cookie; `/api/auth/me/*` takes the cookie only. Cookie-authenticated
POST, PATCH and DELETE must carry an `Origin` (or `Referer`) of a configured site origin,
else 403 `CSRF_REJECTED`.

**Errors.** Every 4xx and 5xx is JSON, whatever was negotiated:
`{"error": {"code", "message", "hint"?, "request_id"}, "_meta"?}`. Unknown paths are 404
`NOT_FOUND` and other methods 405 `METHOD_NOT_ALLOWED` with an `Allow` header. Nothing a
client sends yields a 500, and a rejected request changes nothing stored.

**Strict parameters.** Unknown query parameters, repeated parameters and malformed values
are 400 `INVALID_PARAMS` with a `hint` naming what is allowed. Parameters marked
`allowEmptyValue` treat an empty value (`?period=`) as absent; elsewhere an empty value
is malformed. Path ids are UUIDs (anything else is 400). JSON bodies must be one object
(`Content-Type: application/json`, else 415) without duplicate keys, NaN/Infinity, lone
surrogates or nesting deeper than 32 levels.

**Request ids.** Every response has `X-Request-ID`, mirrored in `_meta.request_id` or
`error.request_id`. A caller's `X-Request-ID` of 8 to 128 characters of `[A-Za-z0-9_-]`
is kept; anything else is replaced by `req_` and 22 base64url characters.

**CSV.** pulse, pulse/series, coverage and indices answer RFC 4180 CSV with a UTF-8
byte-order mark for `Accept: text/csv` or `format=csv`; envelope fields travel as
`X-Svc-*` headers. Text cells starting with `=`, `+`, `-`, `@`, TAB or CR get a leading
`'` so spreadsheets do not run them as formulas.

**Limits.** Request bodies above {max_body} bytes get 413; request URIs above
{max_url} bytes get 414 (both configurable). Monthly quotas count only 2xx answers of
`/api/v1/*`; per-minute limits give 429 with `Retry-After`.
"""

# headers and shared responses ------------------------------------------------------------------

HEADERS: dict[str, Json] = {
    "X-Request-ID": {
        "description": "The request's id (the caller's when acceptable, else generated).",
        "required": True,
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{8,128}$"},
    },
    "X-RateLimit-Limit": {
        "description": "The caller's per-minute limit (once the caller is known).",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    "X-RateLimit-Remaining": {
        "description": "Calls left in the current minute.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    "X-Quota-Limit": {
        "description": "Monthly quota (quota-bound callers).",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    "X-Quota-Used": {
        "description": "Successful calls this UTC month.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    "X-Quota-Resets-At": {
        "description": "When the quota month resets (UTC).",
        "schema": {"type": "string"},
    },
    "Retry-After": {
        "description": "Seconds until a call may succeed.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
}
DATA_HEADERS = (
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-Quota-Limit",
    "X-Quota-Used",
    "X-Quota-Resets-At",
)
CSV_SKIPPED = frozenset({"request_id", "rate_limit"})
"""Envelope fields a CSV answer carries in their own headers (X-Request-ID, X-RateLimit-*)."""


def csv_header(field: str) -> str:
    """``lease_data_status`` -> ``X-Svc-Lease-Data-Status``."""
    return "X-Svc-" + "-".join(part.capitalize() for part in field.split("_"))


CSV_HEADERS: dict[str, str] = {
    csv_header(field): f"CSV answers only: envelope `{field}` (lists, objects as ASCII JSON)."
    for field in LAYER_ENVELOPE["properties"]
    if field not in CSV_SKIPPED
}
"""On CSV answers the layer envelope travels as headers, one per ``_meta`` field."""


def _header_refs(names: Iterable[str]) -> Json:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _error_response(description: str, headers: Iterable[str] = ()) -> Json:
    return {
        "description": description,
        "headers": _header_refs(("X-Request-ID", *headers)),
        "content": {"application/json": {"schema": ref("Error")}},
    }


RESPONSES: dict[str, Json] = {
    "BadRequest": _error_response(
        "INVALID_PARAMS: a missing, malformed, unknown or repeated query parameter, a "
        "path id that is not a UUID, or an invalid JSON body; `hint` says what is allowed."
    ),
    "Unauthorized": _error_response(
        "UNAUTHORIZED on /api/v1 (missing, malformed, unknown or revoked key, or no valid "
        "session; `_meta` is {service, api_version}); NOT_SIGNED_IN or JWT_INVALID on "
        "account endpoints."
    ),
    "PaymentRequired": _error_response(
        "QUOTA_EXCEEDED: the monthly quota is used up.", DATA_HEADERS
    ),
    "Forbidden": _error_response(
        "TIER_RESTRICTED (with current_tier, required_tier and upgrade_url), or "
        "IP_NOT_ALLOWED (the key's ip_allowlist excludes the caller).",
        DATA_HEADERS,
    ),
    "AccountForbidden": _error_response(
        "CSRF_REJECTED (a cookie-authenticated write without a site Origin), or FORBIDDEN "
        "(members may not write; the owner cannot be removed)."
    ),
    "NotFound": _error_response("NOT_FOUND."),
    "Conflict": _error_response("The resource's state does not allow this."),
    "PayloadTooLarge": _error_response("PAYLOAD_TOO_LARGE: the body is over the limit."),
    "UriTooLong": _error_response("URI_TOO_LONG: path and query are over the limit."),
    "UnsupportedMediaType": _error_response(
        "UNSUPPORTED_MEDIA_TYPE: the body is not application/json."
    ),
    "RateLimited": _error_response(
        "RATE_LIMITED: the per-minute limit is reached.", ("Retry-After", *DATA_HEADERS)
    ),
    "ServerError": _error_response("INTERNAL or QUERY_FAILED: the server failed; retry later."),
}

SECURITY_SCHEMES: dict[str, Json] = {
    "apiKey": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "`svc_pk_live_<32 hex>` or `svc_pk_test_<32 hex>`, for server-to-server "
        "use; never in browser code.",
    },
    "sessionCookie": {
        "type": "apiKey",
        "in": "cookie",
        "name": "svc_session",
        "description": "Set by POST /api/auth/session; 15 minutes, renewed by each request.",
    },
}
SECURITY: dict[str, list[Json]] = {
    "public": [],
    "data": [{"apiKey": []}, {"sessionCookie": []}],
    "account": [{"sessionCookie": []}],
}
REQUEST_ID_PARAM: Json = {
    "name": "X-Request-ID",
    "in": "header",
    "required": False,
    "description": "Your id for this request; echoed when it is 8 to 128 characters of "
    "[A-Za-z0-9_-], else replaced by a generated one.",
    "schema": {"type": "string"},
}
FORMAT_PARAM = query(
    "format",
    {"type": "string", "enum": ["json", "csv"]},
    "csv for CSV, json for JSON; wins over the Accept header.",
    allow_empty=True,
)
CSV_EXAMPLE = "\ufeffsigungu_code,sigungu,...\r\n11680,강남구,...\r\n"

# outbound events ---------------------------------------------------------------------------------

EVENT_DATA: dict[str, Json] = {
    "subscription.updated": obj({"subscription": ref("Subscription")}),
    "subscription.cancelled": obj({"subscription": ref("Subscription")}),
    "subscription.trial_will_end": obj({"subscription": ref("Subscription")}),
    "quota.warning_80pct": ref("QuotaEventData"),
    "quota.exceeded": ref("QuotaEventData"),
    "key.rotated": ref("KeyEventData"),
    "key.revoked": ref("KeyEventData"),
    "webhook.test": ref("TestEventData"),
}
EVENT_SUMMARY: dict[str, str] = {
    "subscription.updated": "A subscription was created or changed",
    "subscription.cancelled": "A subscription was cancelled",
    "subscription.trial_will_end": "A trial ends in 3 days",
    "quota.warning_80pct": "Monthly usage reached 80% of the quota",
    "quota.exceeded": "Monthly usage reached the quota; data calls now get 402",
    "key.rotated": "An API key was rotated",
    "key.revoked": "An API key was revoked",
    "webhook.test": "A test send from POST /api/auth/me/webhooks/{endpoint_id}/test",
}
DELIVERY_HEADERS: tuple[Json, ...] = (
    {"name": "X-Svc-Event", "in": "header", "required": True, "schema": {"type": "string"}},
    {"name": "X-Svc-Event-Id", "in": "header", "required": True, "schema": {"type": "string"}},
    {
        "name": "X-Svc-Signature",
        "in": "header",
        "required": True,
        "description": "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>'>, keyed with "
        "the hex-decoded part of the secret after whsec_. Reject timestamps more than 300 s "
        "from your clock. Not verifiable with Stripe's libraries.",
        "schema": {"type": "string", "pattern": "^t=[0-9]+(,v1=[0-9a-f]{64})+$"},
    },
    {
        "name": "User-Agent",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "const": "Svc-Webhooks/1.0"},
    },
)


def _webhooks() -> Json:
    out: Json = {}
    for event_type in EVENT_TYPES:
        out[event_type] = {
            "post": {
                "tags": ["Webhook events"],
                "operationId": "event_" + event_type.replace(".", "_"),
                "summary": EVENT_SUMMARY.get(event_type, event_type),
                "parameters": [dict(p) for p in DELIVERY_HEADERS],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": event_envelope(
                                event_type, EVENT_DATA.get(event_type, {"type": "object"})
                            )
                        }
                    },
                },
                "responses": {
                    "2XX": {
                        "description": "Delivered. Anything else (3xx included), or no "
                        "answer within 5 s, is a failure; there are no retries."
                    }
                },
            }
        }
    return out


# routes -> operations ------------------------------------------------------------------------------


def openapi_path(rule: str) -> str:
    """A werkzeug rule (``/keys/<key_id>``) in OpenAPI syntax (``/keys/{key_id}``)."""
    return _RULE_VARIABLE.sub(lambda m: "{" + m.group(1) + "}", rule)


def operation_key(method: str, rule: str) -> str:
    """The ``OPERATIONS`` key of a route method: ``"GET /api/auth/me/keys/{key_id}"``."""
    return f"{method.upper()} {openapi_path(rule)}"


def _accepted_params(route: Route) -> list[str]:
    return sorted(set(route.params) | ({"format"} if route.csv else set()))


def _parameters(route: Route, op: Operation | None, path: str) -> list[Json]:
    params: list[Json] = []
    for name in re.findall(r"{([^}]+)}", path):
        description = (op.path_params.get(name) if op else None) or "Undocumented."
        schema = op.path_schemas.get(name) if op else None
        if schema is None:
            description += " A UUID; anything else is 400."
            schema = {"type": "string", "format": "uuid"}
        params.append(
            {
                "name": name,
                "in": "path",
                "required": True,
                "description": description,
                "schema": dict(schema),
            }
        )
    accepted = _accepted_params(route)
    documented = [p["name"] for p in op.params] if op else []
    for name in [
        *[n for n in documented if n in accepted],
        *[n for n in accepted if n not in documented],
    ]:
        found = op.param(name) if op else None
        if found is None and name == "format":
            found = FORMAT_PARAM
        if found is None:
            found = {
                "name": name,
                "in": "query",
                "required": False,
                "schema": {"type": "string"},
                "description": "Undocumented.",
                "x-undocumented": True,
            }
        params.append(copy.deepcopy(found))
    params.append(dict(REQUEST_ID_PARAM))
    return params


def _with_headers(response: Json, names: Iterable[str]) -> Json:
    if "$ref" in response:
        return response
    out = copy.deepcopy(response)
    headers = out.setdefault("headers", {})
    for name, value in _header_refs(("X-Request-ID", *names)).items():
        headers.setdefault(name, value)
    return out


def _responses(route: Route, method: str, op: Operation | None) -> Json:
    own: dict[str, Json] = dict(op.responses) if op else {"200": {"description": "Undocumented."}}
    auto: dict[str, Json] = {"400": error_ref("BadRequest"), "414": error_ref("UriTooLong")}
    if route.auth == "data":
        auto.update(
            {
                "401": error_ref("Unauthorized"),
                "402": error_ref("PaymentRequired"),
                "403": error_ref("Forbidden"),
                "429": error_ref("RateLimited"),
                "500": error_ref("ServerError"),
            }
        )
    elif route.auth == "account":
        auto["401"] = error_ref("Unauthorized")
        if method in WRITE_METHODS:
            auto["403"] = error_ref("AccountForbidden")
    if op is not None and op.body is not None:
        auto.update(
            {
                "413": error_ref("PayloadTooLarge"),
                "415": error_ref("UnsupportedMediaType"),
            }
        )
    merged = {**auto, **own}
    extra = DATA_HEADERS if route.auth == "data" else ()
    out: Json = {}
    for status in sorted(merged, key=lambda s: (len(s), s)):
        response = _with_headers(merged[status], extra)
        if status == "200" and route.csv and "$ref" not in response:
            response["content"]["text/csv"] = {
                "schema": {"type": "string"},
                "example": CSV_EXAMPLE,
            }
            response["headers"].update(
                {
                    name: {"description": text, "schema": {"type": "string"}}
                    for name, text in CSV_HEADERS.items()
                }
            )
        out[status] = response
    return out


def error_ref(name: str) -> Json:
    return {"$ref": f"#/components/responses/{name}"}


def _operation(route: Route, method: str, op: Operation | None, path: str) -> Json:
    out: Json = {
        "tags": [op.tag if op else "Undocumented"],
        "summary": op.summary if op else f"{method} {path}",
        "operationId": op.operation_id if op else _fallback_id(method, path),
    }
    if op is not None:
        out["description"] = op.description
    else:
        out["x-undocumented"] = True
    out["parameters"] = _parameters(route, op, path)
    if op is not None and op.body is not None:
        out["requestBody"] = copy.deepcopy(op.body)
    out["responses"] = _responses(route, method, op)
    out["security"] = copy.deepcopy(SECURITY[route.auth])
    out["x-svc-auth"] = route.auth
    out["x-svc-quota-counted"] = route.counted
    if op is not None:
        out.update(copy.deepcopy(dict(op.extensions)))
    return out


def _fallback_id(method: str, path: str) -> str:
    return method.lower() + re.sub(r"[^A-Za-z0-9]+", "_", path).rstrip("_")


def build_document(
    routes: Sequence[Route],
    *,
    server_url: str = DEFAULT_SERVER,
    max_body_bytes: int = Config().max_body_bytes,
    max_url_bytes: int = Config().max_url_bytes,
) -> Json:
    """The OpenAPI 3.1 document for ``routes`` (a fresh dict each call)."""
    paths: Json = {}
    for route in routes:
        path = openapi_path(route.path)
        item = paths.setdefault(path, {})
        for method in route.methods:
            op = OPERATIONS.get(operation_key(method, route.path))
            item[method.lower()] = _operation(route, method.upper(), op, path)
    used_tags = {op["tags"][0] for item in paths.values() for op in item.values()} | {
        "Webhook events"
    }
    tags = [dict(t) for t in TAGS if t["name"] in used_tags]
    tags += [{"name": name} for name in sorted(used_tags - {t["name"] for t in TAGS})]
    return {
        "openapi": OPENAPI_VERSION,
        "jsonSchemaDialect": DIALECT,
        "info": {
            "title": "svc API",
            "version": API_VERSION,
            "summary": "Korean commercial real-estate and workspace-marketplace data.",
            "description": DESCRIPTION.replace("{max_body}", str(max_body_bytes)).replace(
                "{max_url}", str(max_url_bytes)
            ),
        },
        "servers": [{"url": server_url}],
        "tags": tags,
        "paths": paths,
        "webhooks": _webhooks(),
        "components": {
            "schemas": copy.deepcopy(SCHEMAS),
            "responses": copy.deepcopy(RESPONSES),
            "headers": copy.deepcopy(HEADERS),
            "securitySchemes": copy.deepcopy(SECURITY_SCHEMES),
        },
        "security": [{"apiKey": []}, {"sessionCookie": []}],
    }


# drift between the router and the table -------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Drift:
    """What the routing table and ``OPERATIONS`` disagree on; falsy when in sync.

    Entries read ``"GET /path"`` or ``"GET /path ?name"``.
    """

    undocumented_operations: tuple[str, ...] = ()
    stale_operations: tuple[str, ...] = ()
    undocumented_params: tuple[str, ...] = ()
    stale_params: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(attrs.astuple(self))


def drift(routes: Sequence[Route]) -> Drift:
    """How ``routes`` and the documentation table disagree."""
    keys = {operation_key(m, r.path): r for r in routes for m in r.methods}
    undocumented: list[str] = []
    stale: list[str] = []
    for key, route in sorted(keys.items()):
        op = OPERATIONS.get(key)
        if op is None:
            continue
        accepted = set(_accepted_params(route))
        named = {p["name"] for p in op.params}
        implicit = {"format"} if route.csv else set()
        undocumented += [f"{key} ?{n}" for n in sorted(accepted - named - implicit)]
        stale += [f"{key} ?{n}" for n in sorted(named - accepted)]
    return Drift(
        undocumented_operations=tuple(sorted(set(keys) - set(OPERATIONS))),
        stale_operations=tuple(sorted(set(OPERATIONS) - set(keys))),
        undocumented_params=tuple(undocumented),
        stale_params=tuple(stale),
    )
