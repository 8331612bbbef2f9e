"""The OpenAPI 3.1 document of the HTTP API, built from the routing table.

``build_document(routes)`` walks the routes: every route becomes an operation, its path
and method from the route, its security from the route's auth policy (``data``: API key
or cookie; ``account``: cookie; ``public``: none), its query parameters from the same
``Param`` declarations that validate requests (plus ``format`` when the route negotiates
CSV), the CSV media type and the rate-limit headers from the route's flags, and its
text, statuses, bodies and examples from the ``Operation`` hanging on the route. A route
without one still appears, marked ``x-undocumented``, and ``drift(routes)`` names it, so
a test fails instead of the document silently lying.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence

import attrs

from svc_core.params import FORMAT, STREAM_FORMAT, Param
from svc_server.config import Config
from svc_server.http.responses import NDJSON_TYPE
from svc_server.http.routing import CSV_SUFFIX, Auth, Operation, Route
from svc_server.openapi.components import (
    CACHE_HEADERS,
    CONDITIONAL_PARAMS,
    CSV_EXAMPLE,
    CSV_HEADERS,
    DATA_HEADERS,
    HEADERS,
    NDJSON_CONTENT,
    REQUEST_ID_PARAM,
    RESPONSES,
    SECURITY,
    SECURITY_SCHEMES,
    header_refs,
)
from svc_server.openapi.events import webhooks_section
from svc_server.openapi.operations import TAGS, Json
from svc_server.openapi.schemas import SCHEMAS

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

**CSV.** pulse, pulse/series, compare, coverage, indices and transactions answer RFC 4180 CSV
with a UTF-8 byte-order mark for `Accept: text/csv` or `format=csv`, and always at their
path plus `.csv` (`/api/v1/real-estate/pulse.csv`, its own operation, for generated
clients that read one media type per operation); envelope fields travel as `X-Svc-*`
headers. Text cells starting with `=`, `+`, `-`, `@`, TAB or CR get a leading `'` so
spreadsheets do not run them as formulas.

**Caching and compression.** Every data answer (`/api/v1/*`) carries a weak `ETag`
derived from its data and representation, never from the request id or the time; send
it back in `If-None-Match` and an unchanged answer is a 304 without a body, not counted
against the monthly quota (it still counts toward the per-minute limit). With
`Accept-Encoding: gzip` a body of 1 KiB or more is gzip-coded (`Content-Encoding: gzip`,
its own `ETag`; a streamed CSV is coded as it streams); `Vary` names `Accept-Encoding`.

**Limits.** Request bodies above {max_body} bytes get 413; request URIs above
{max_url} bytes get 414 (both configurable). Monthly quotas count only 2xx answers of
`/api/v1/*`; per-minute limits give 429 with `Retry-After`.
"""

# routes -> operations ------------------------------------------------------------------------------


def openapi_path(rule: str) -> str:
    """A werkzeug rule (``/keys/<key_id>``) in OpenAPI syntax (``/keys/{key_id}``)."""
    return _RULE_VARIABLE.sub(lambda m: "{" + m.group(1) + "}", rule)


def operation_key(method: str, rule: str) -> str:
    """The ``OPERATIONS`` key of a route method: ``"GET /api/auth/me/keys/{key_id}"``."""
    return f"{method.upper()} {openapi_path(rule)}"


def _pattern(text: str) -> str:
    """``text`` anchored at both ends, grouped when it alternates at the top level."""
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            return f"^({text})$"
    return f"^{text}$"


def param_object(param: Param) -> Json:
    """A query parameter object from its declaration."""
    schema: Json
    if param.kind == "enum":
        schema = {"type": "string", "enum": list(param.choices)}
    elif param.kind == "integer":
        schema = {"type": "integer", "minimum": param.low, "maximum": param.high}
    elif param.kind == "boolean":
        schema = {"type": "boolean"}
    else:
        schema = {"type": "string"}
        if param.max_length is not None:
            schema["maxLength"] = param.max_length
        pattern = param.pattern or param.doc_pattern
        if pattern is not None:
            schema["pattern"] = _pattern(pattern)
    if param.default is not None:
        schema["default"] = param.default
    out: Json = {
        "name": param.name,
        "in": "query",
        "required": param.required,
        "schema": schema,
        "description": param.description,
    }
    if param.allow_empty and not param.required:
        out["allowEmptyValue"] = True
    if param.example is not None:
        out["example"] = param.example
    return out


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
    declared = route.params
    if route.csv:
        declared = (*route.params, STREAM_FORMAT if route.ndjson else FORMAT)
    params += [param_object(p) for p in declared]
    params.append(dict(REQUEST_ID_PARAM))
    if route.auth is Auth.DATA:
        params += [dict(p) for p in CONDITIONAL_PARAMS]
    return params


def _with_headers(response: Json, names: Iterable[str]) -> Json:
    if "$ref" in response:
        return response
    out = copy.deepcopy(response)
    headers = out.setdefault("headers", {})
    for name, value in header_refs(("X-Request-ID", *names)).items():
        headers.setdefault(name, value)
    return out


def _responses(route: Route, method: str, op: Operation | None) -> Json:
    own: dict[str, Json] = dict(op.responses) if op else {"200": {"description": "Undocumented."}}
    auto: dict[str, Json] = {"400": error_ref("BadRequest"), "414": error_ref("UriTooLong")}
    if route.auth is Auth.DATA:
        auto.update(
            {
                "401": error_ref("Unauthorized"),
                "402": error_ref("PaymentRequired"),
                "403": error_ref("Forbidden"),
                "429": error_ref("RateLimited"),
                "500": error_ref("ServerError"),
                "503": error_ref("ServiceUnavailable"),
            }
        )
    elif route.auth is Auth.ACCOUNT:
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
    if route.auth is Auth.DATA:
        auto["304"] = error_ref("NotModified")
    merged = {**auto, **own}
    extra = DATA_HEADERS if route.auth is Auth.DATA else ()
    out: Json = {}
    for status in sorted(merged, key=lambda s: (len(s), s)):
        cached = CACHE_HEADERS if status == "200" and route.auth is Auth.DATA else ()
        response = _with_headers(merged[status], (*extra, *cached))
        if status == "200" and (route.csv or route.csv_only) and "$ref" not in response:
            csv_content = {"schema": {"type": "string"}, "example": CSV_EXAMPLE}
            if route.csv_only:  # the .csv form: CSV only, so a generated client reads text
                response["content"] = {"text/csv": csv_content}
                response["description"] = "The rows as RFC 4180 CSV with a UTF-8 BOM."
            else:
                response["content"]["text/csv"] = csv_content
            if route.ndjson:
                response["content"][NDJSON_TYPE] = NDJSON_CONTENT
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


def _csv_form(op: Operation, path: str) -> Operation:
    """The text of a route's ``.csv`` form, from the text of the route itself."""
    base = path.removesuffix(CSV_SUFFIX)
    return attrs.evolve(
        op,
        operation_id=op.operation_id + "Csv",
        summary=f"{op.summary} (CSV)",
        description=f"`GET {base}` answered as CSV whatever the `Accept` header: the "
        "same parameters (no `format`), rows, quota and errors (JSON), with the envelope "
        "in `X-Svc-*` headers. For clients that read one media type per operation, such "
        "as generated ones.\n\n" + op.description,
    )


def _operation(route: Route, method: str, op: Operation | None, path: str) -> Json:
    if op is not None and route.csv_only:
        op = _csv_form(op, path)
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
    out["x-svc-auth"] = route.auth.value
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
            item[method.lower()] = _operation(route, method.upper(), route.doc, path)
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
        "webhooks": webhooks_section(),
        "components": {
            "schemas": copy.deepcopy(SCHEMAS),
            "responses": copy.deepcopy(RESPONSES),
            "headers": copy.deepcopy(HEADERS),
            "securitySchemes": copy.deepcopy(SECURITY_SCHEMES),
        },
        "security": [{"apiKey": []}, {"sessionCookie": []}],
    }


# what the routing table leaves undocumented --------------------------------------------------------


@attrs.frozen(kw_only=True)
class Drift:
    """What the routing table leaves undocumented; falsy when every route has its text
    and every parameter a description. Entries read ``"GET /path"`` or
    ``"GET /path ?name"``."""

    undocumented_operations: tuple[str, ...] = ()
    undescribed_params: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(attrs.astuple(self))


def drift(routes: Sequence[Route]) -> Drift:
    """Which of ``routes`` lack API-reference text or parameter descriptions."""
    keys = {operation_key(m, r.path): r for r in routes for m in r.methods}
    return Drift(
        undocumented_operations=tuple(sorted(k for k, r in keys.items() if r.doc is None)),
        undescribed_params=tuple(
            sorted(f"{k} ?{p.name}" for k, r in keys.items() for p in r.params if not p.description)
        ),
    )
