"""Real-estate endpoints: JSON by default, CSV on request, envelope on every answer."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from werkzeug.wrappers import Response

from svc_server.http.context import Ctx
from svc_server.http.negotiation import wants_csv
from svc_server.http.responses import csv_response, json_response
from svc_server.services import realestate as service

# Envelope fields that travel as X-Svc-* headers on CSV responses (ASCII-safe values).
CSV_HEADER_FIELDS = (
    "api_version",
    "vertical",
    "tier",
    "auth_method",
    "data_sources",
    "confidence",
    "count",
    "generated_at",
    "lease_data_status",
    "coverage_note",
    "disclosure_url",
    "source_mix",
    "known_limitations",
    "periods_requested",
    "periods_returned",
    "missing_periods",
    "granularity",
    "row_cap",
)

Service = Callable[..., tuple[Any, dict[str, Any]]]


def links(ctx: Ctx) -> service.Links:
    base = ctx.app.config.public_url
    return service.Links(disclosure_url=f"{base}/disclosure", upgrade_url=f"{base}/pricing")


def envelope_headers(meta: Mapping[str, Any]) -> dict[str, str]:
    """``_meta`` fields as ``X-Svc-Field-Name`` headers; lists and objects as ASCII JSON."""
    out = {}
    for name in CSV_HEADER_FIELDS:
        if name not in meta:
            continue
        value = meta[name]
        if isinstance(value, list | dict):
            text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
        elif value is None:
            text = ""
        else:
            text = str(value).encode("ascii", "backslashreplace").decode("ascii")
        out["X-Svc-" + "-".join(part.capitalize() for part in name.split("_"))] = text
    return out


def _run(ctx: Ctx, fn: Service, columns: Sequence[str] | None, filename: str) -> Response:
    assert ctx.caller is not None  # the data auth policy guarantees it
    rows, meta = fn(
        ctx.app.store,
        ctx.caller,
        ctx.params,
        request_id=ctx.request_id,
        now=ctx.now,
        links=links(ctx),
    )
    if columns is not None and wants_csv(ctx.request.accept_mimetypes, ctx.params):
        return csv_response(columns, rows, headers=envelope_headers(meta), filename=filename)
    return json_response({"data": rows, "_meta": meta})


def pulse(ctx: Ctx) -> Response:
    return _run(ctx, service.pulse, service.PULSE_COLUMNS, "pulse.csv")


def series(ctx: Ctx) -> Response:
    return _run(ctx, service.series, service.PULSE_COLUMNS, "pulse-series.csv")


def coverage(ctx: Ctx) -> Response:
    return _run(ctx, service.coverage, service.COVERAGE_COLUMNS, "coverage.csv")


def indices(ctx: Ctx) -> Response:
    return _run(ctx, service.indices, service.INDEX_COLUMNS, "indices.csv")


def dimensions(ctx: Ctx) -> Response:
    return _run(ctx, service.dimensions, None, "dimensions.csv")
