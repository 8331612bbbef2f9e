"""Shared components of the OpenAPI document: headers, error responses, security."""

from __future__ import annotations

from collections.abc import Iterable

from svc_core.json_schema import ref
from svc_server.http.routing import Auth
from svc_server.openapi.operations import Json
from svc_server.openapi.schemas import LAYER_ENVELOPE


def _digits_header(description: str) -> Json:
    """A header whose value is a whole number in ASCII digits."""
    return {"description": description, "schema": {"type": "string", "pattern": "^[0-9]+$"}}


HEADERS: dict[str, Json] = {
    "X-Request-ID": {
        "description": "The request's id (the caller's when acceptable, else generated).",
        "required": True,
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{8,128}$"},
    },
    "X-RateLimit-Limit": _digits_header(
        "The caller's per-minute limit (once the caller is known)."
    ),
    "X-RateLimit-Remaining": _digits_header("Calls left in the current minute."),
    "X-Quota-Limit": _digits_header("Monthly quota (quota-bound callers)."),
    "X-Quota-Used": _digits_header("Successful calls this UTC month."),
    "X-Quota-Resets-At": {
        "description": "When the quota month resets (UTC).",
        "schema": {"type": "string"},
    },
    "Retry-After": _digits_header("Seconds until a call may succeed."),
    "ETag": {
        "description": "A weak entity tag of the answer: the same for identical answers (the "
        "same data, query, format, coding and caller plan), whatever the request id, time "
        "or rate limit in `_meta`; it changes when a load changes the data. It is derived "
        "from `_meta.data_version`: a data answer's tag starts with `v` and that version "
        '(`W/"v412-..."`), so it changes exactly when the data behind the answer does '
        "(or the answer's other content). A gzip-coded answer has its own tag (ending in "
        "`-gzip`). Send it back in `If-None-Match`.",
        "schema": {"type": "string", "pattern": '^W/"(v[0-9]+-)?[0-9a-f]{32}(-gzip)?"$'},
    },
    "Vary": {
        "description": "The request headers the answer depends on besides the URL and the "
        "caller: `Accept` (CSV-capable routes) and `Accept-Encoding`.",
        "schema": {"type": "string"},
    },
    "Content-Encoding": {
        "description": "`gzip` when the answer is gzip-coded (`Accept-Encoding` allowed it "
        "and the body is 1 KiB or more, or identity was refused); absent otherwise.",
        "schema": {"type": "string", "enum": ["gzip"]},
    },
}
DATA_HEADERS = (
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-Quota-Limit",
    "X-Quota-Used",
    "X-Quota-Resets-At",
)
CACHE_HEADERS = ("ETag", "Vary", "Content-Encoding")
"""Headers of every data answer with a body (``Content-Encoding`` only when coded)."""
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


def header_refs(names: Iterable[str]) -> Json:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _error_response(description: str, headers: Iterable[str] = ()) -> Json:
    return {
        "description": description,
        "headers": header_refs(("X-Request-ID", *headers)),
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
        "QUOTA_EXCEEDED: successful calls used up the monthly quota.", DATA_HEADERS
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
        "RATE_LIMITED: the per-minute limit is reached, or the account already has its "
        "calls in progress at once on this server (not charged).",
        ("Retry-After", *DATA_HEADERS),
    ),
    "TestSendLimited": _error_response(
        "RATE_LIMITED: a test send of the account is running (one at a time), or it has "
        "started its test sends for this minute (5 by default).",
        ("Retry-After",),
    ),
    "ServerError": _error_response("INTERNAL or QUERY_FAILED: the server failed; retry later."),
    "NotModified": {
        "description": "Not modified: `If-None-Match` holds the answer's current `ETag` (or "
        "`*`). No body. Not counted against the monthly quota (`X-Quota-Used` does not "
        "move), but it is a call of the per-minute rate limit.",
        "headers": header_refs(("X-Request-ID", "ETag", "Vary", *DATA_HEADERS)),
    },
    "ServiceUnavailable": _error_response(
        "QUOTA_IN_FLIGHT: the last units of the monthly quota are held by calls still in "
        "flight and none came back within the wait (a unit returns if one of them fails; "
        "402 comes only once successful calls used the quota); or STORE_BUSY: a wait for "
        "the database reached its bound. Retry after `Retry-After` seconds.",
        ("Retry-After", *DATA_HEADERS),
    ),
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
SECURITY: dict[Auth, list[Json]] = {
    Auth.PUBLIC: [],
    Auth.DATA: [{"apiKey": []}, {"sessionCookie": []}],
    Auth.ACCOUNT: [{"sessionCookie": []}],
    Auth.PAGE: [{}, {"sessionCookie": []}],
}
REQUEST_ID_PARAM: Json = {
    "name": "X-Request-ID",
    "in": "header",
    "required": False,
    "description": "Your id for this request; echoed when it is 8 to 128 characters of "
    "[A-Za-z0-9_-], else replaced by a generated one.",
    "schema": {"type": "string"},
}
CONDITIONAL_PARAMS: tuple[Json, ...] = (
    {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "description": "The `ETag` of an answer you hold (or a comma-separated list, or "
        "`*`): when it is still the current answer, the reply is a 304 without a body that "
        "costs no quota. Compared weakly (`W/` or not).",
        "schema": {"type": "string"},
        "example": 'W/"5f0c6e1d2a7b4c3e9d8f1a2b3c4d5e6f"',
    },
    {
        "name": "Accept-Encoding",
        "in": "header",
        "required": False,
        "description": "`gzip` (or `x-gzip`, `*`) to get the body gzip-coded when it is 1 KiB "
        "or more; q values are honoured (`gzip;q=0` refuses it, `identity;q=0` asks for it "
        "whatever the size). A streamed CSV is coded as it streams.",
        "schema": {"type": "string"},
        "example": "gzip",
    },
)
"""Request headers every data route reads (``http.conditional``, ``http.negotiation``)."""
CSV_EXAMPLE = "\ufeffsigungu_code,sigungu,...\r\n11680,강남구,...\r\n"
NDJSON_CONTENT = {
    "schema": {
        "type": "string",
        "description": "format=ndjson: newline-delimited JSON, one line per row of the JSON "
        "answer's data with the same fields; the envelope is in the X-Svc-* headers, as "
        "with CSV.",
    }
}
"""The ``application/x-ndjson`` answer of a route that streams NDJSON (``Route.ndjson``)."""
