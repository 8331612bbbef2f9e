"""Real-estate endpoints: JSON by default, CSV on request, the envelope on every answer.

CSV (``Accept: text/csv`` or ``format=csv``; pulse, pulse/series, coverage, indices) has
the row fields as columns in SPEC order, nested values JSON-encoded, and the envelope
in ``X-Svc-*`` headers: every ``_meta`` field except ``request_id`` (already in
``X-Request-ID``) and ``rate_limit`` (already in ``X-RateLimit-*``), named
``X-Svc-`` + the field in title case (``lease_data_status`` → ``X-Svc-Lease-Data-Status``).
Errors are always JSON (the app renders every ``SvcError`` as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from werkzeug.wrappers import Response

from svc_core.convert import to_json
from svc_core.envelope import TRANSACTIONS_PATH, Answer
from svc_core.realestate import query as q
from svc_server.http.context import Ctx
from svc_server.http.deps import Deps
from svc_server.http.negotiation import wants_csv
from svc_server.http.responses import csv_response, json_response
from svc_server.services import coverage as coverage_service
from svc_server.services import realestate as service

HEADER_SKIPPED = frozenset({"request_id", "rate_limit"})
"""Envelope fields that already travel in their own headers."""

Service = Callable[..., Answer]


def links(deps: Deps) -> service.Links:
    """The disclosure and pricing pages and the deals route of this deployment."""
    base = deps.config.public_url
    return service.Links(
        disclosure_url=f"{base}/disclosure",
        upgrade_url=f"{base}/pricing",
        transactions_url=f"{base}{TRANSACTIONS_PATH}",
    )


def header_name(field: str) -> str:
    """``lease_data_status`` → ``X-Svc-Lease-Data-Status``."""
    return "X-Svc-" + "-".join(part.capitalize() for part in field.split("_"))


def header_value(value: Any) -> str:
    """A header-safe (ASCII) text: lists and objects as compact JSON with ``\\u`` escapes,
    null as empty, booleans as ``true``/``false``, other scalars as text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    text = str(value)
    if text.isascii() and text.isprintable():
        return text
    return json.dumps(text, ensure_ascii=True)[1:-1]


def envelope_headers(meta: Mapping[str, Any]) -> dict[str, str]:
    """``_meta`` as ``X-Svc-*`` headers (see the module docstring)."""
    return {
        header_name(name): header_value(value)
        for name, value in meta.items()
        if name not in HEADER_SKIPPED
    }


def _run(
    ctx: Ctx,
    deps: Deps,
    fn: Service,
    parse: Callable[[Mapping[str, str]], Any],
    columns: Sequence[str] | None,
    filename: str,
) -> Response:
    assert ctx.caller is not None  # the data auth policy guarantees it
    csv = columns is not None and wants_csv(ctx.request.accept_mimetypes, ctx.params)
    answer = fn(
        deps.store,
        parse({k: v for k, v in ctx.params.items() if k != "format"}),
        ctx.caller,
        request_id=ctx.request_id,
        now=ctx.now,
        links=links(deps),
    )
    data, meta = to_json(answer.data), answer.meta
    if csv and columns is not None:
        response = csv_response(columns, data, headers=envelope_headers(meta), filename=filename)
    else:
        response = json_response({"data": data, "_meta": meta})
    if columns is not None:
        response.headers["Vary"] = "Accept"
    return response


def pulse(ctx: Ctx, deps: Deps) -> Response:
    return _run(ctx, deps, service.pulse, q.parse_pulse, service.PULSE_COLUMNS, "pulse.csv")


def series(ctx: Ctx, deps: Deps) -> Response:
    return _run(
        ctx, deps, service.series, q.parse_series, service.PULSE_COLUMNS, "pulse-series.csv"
    )


def coverage(ctx: Ctx, deps: Deps) -> Response:
    return _run(
        ctx,
        deps,
        coverage_service.coverage,
        q.parse_coverage,
        coverage_service.COVERAGE_COLUMNS,
        "coverage.csv",
    )


def indices(ctx: Ctx, deps: Deps) -> Response:
    return _run(ctx, deps, service.indices, q.parse_indices, service.INDEX_COLUMNS, "indices.csv")


def dimensions(ctx: Ctx, deps: Deps) -> Response:
    return _run(ctx, deps, service.dimensions, q.parse_dimensions, None, "dimensions.csv")
