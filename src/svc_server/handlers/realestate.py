"""Real-estate endpoints: JSON by default, CSV on request, the envelope on every answer.

CSV (``Accept: text/csv``, ``format=csv`` or the route's ``.csv`` form such as
``/pulse.csv``; pulse, pulse/series, compare, coverage, indices, transactions) has
the row fields as columns in SPEC order, nested values JSON-encoded, and the envelope
in ``X-Svc-*`` headers: every ``_meta`` field except ``request_id`` (already in
``X-Request-ID``) and ``rate_limit`` (already in ``X-RateLimit-*``), named
``X-Svc-`` + the field in title case (``lease_data_status`` → ``X-Svc-Lease-Data-Status``).
The transactions listing and compare also answer NDJSON (``format=ndjson``: one record
or row a line, the same envelope headers; the whole selection streamed, or a page with
``limit``), through
``stream_records`` and ``ndjson_page``, which any listing that streams its records can
answer with. Errors are always JSON (the app renders every ``SvcError`` as JSON).

Every answer has a weak ``ETag``, answers a matching ``If-None-Match`` with a 304 (which
the access pipeline does not bill: it is not a 2xx) and is gzip-coded when
``Accept-Encoding`` allows (``http.answers.Rendered.respond``; the streamed CSV and
NDJSON in ``stream_records``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from werkzeug.wrappers import Response

from svc_core.convert import to_json
from svc_core.csvfmt import render_csv
from svc_core.envelope import PER_CALL_FIELDS, TRANSACTIONS_PATH, Answer, rate_limit
from svc_core.params import FORMAT
from svc_core.realestate import change_feed, listing
from svc_core.realestate import query as q
from svc_core.realestate.compare import parse_compare
from svc_core.realestate.contract_record import CONTRACT_COLUMNS
from svc_core.realestate.record import TRANSACTION_COLUMNS
from svc_server.http.answers import (
    CachedAnswer,
    Rendered,
    data_version,
    iso_second,
    per_call_values,
    rendered_json,
)
from svc_server.http.conditional import entity_tag, gzip_tag, none_match, not_modified
from svc_server.http.context import Ctx
from svc_server.http.negotiation import content_coding, wants_csv, wants_ndjson
from svc_server.http.responses import (
    CSV_TYPE,
    JSON_TYPE,
    NDJSON_TYPE,
    csv_stream_response,
    ndjson_chunks,
    ndjson_stream_response,
)
from svc_server.runtime.deps import Deps
from svc_server.services import changes as change_service
from svc_server.services import compare as compare_service
from svc_server.services import coverage as coverage_service
from svc_server.services import realestate as service
from svc_server.services import transactions as listings

HEADER_SKIPPED = frozenset({"request_id", "rate_limit"})
"""Envelope fields that already travel in their own headers."""
VARY_CSV = "Accept, Accept-Encoding"
"""What a CSV-capable answer depends on besides its URL (and the caller)."""
VARY_JSON = "Accept-Encoding"
GENERATED_AT_HEADER = "X-Svc-Generated-At"
CHANGES_PATH = "/api/v1/real-estate/changes"
ANSWER_WAIT_SECONDS = 10.0
"""How long a request waits for another thread computing the same answer before it
computes the answer itself (past the store's own busy timeout)."""
JSON, CSV, NDJSON = "json", "csv", "ndjson"
"""The forms a data answer is encoded in (``_cached``)."""

Service = Callable[..., Answer]
Columns = Sequence[str] | Callable[[Any], Sequence[str]]
"""An endpoint's CSV columns, or how they follow from its parsed query (pulse and
series name their per-area columns in the query's ``area_unit``)."""


def links(deps: Deps) -> service.Links:
    """The disclosure and pricing pages and the deals route of this deployment."""
    base = deps.config.public_url
    return service.Links(
        disclosure_url=f"{base}/disclosure",
        upgrade_url=f"{base}/pricing",
        transactions_url=f"{base}{TRANSACTIONS_PATH}",
    )


def call_of(ctx: Ctx, deps: Deps) -> service.Call:
    """The use cases' ``Call`` of an admitted request."""
    assert ctx.caller is not None  # the data auth policy guarantees it
    return service.Call(
        caller=ctx.caller,
        versions=deps.versions,
        request_id=ctx.request_id,
        now=ctx.now,
        links=links(deps),
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


def _render(answer: Answer, columns: Sequence[str] | None, form: str, filename: str) -> Rendered:
    """``answer`` encoded once in ``form`` (``json``, ``csv`` or ``ndjson``) with its
    per-call ``_meta`` fields left open."""
    if form == NDJSON:
        return ndjson_page(answer, (), filename.replace(".csv", ".ndjson"))
    csv = form == CSV
    data, meta = to_json(answer.data), answer.meta
    vary = ("Vary", VARY_CSV if columns is not None else VARY_JSON)
    if csv and columns is not None:
        headers = envelope_headers({k: v for k, v in meta.items() if k not in PER_CALL_FIELDS})
        return Rendered(
            parts=(render_csv(columns, data),),
            slots=(),
            headers=(
                ("Content-Type", CSV_TYPE),
                ("Content-Disposition", f'inline; filename="{filename}"'),
                *headers.items(),
                vary,
            ),
            header_slots=tuple(
                (header_name(f), f)
                for f in PER_CALL_FIELDS
                if f in meta and f not in HEADER_SKIPPED
            ),
            version=data_version(meta),
        )
    return rendered_json({"data": data, "_meta": meta}, [("Content-Type", JSON_TYPE), vary])


def _run(
    ctx: Ctx,
    deps: Deps,
    fn: Service,
    parse: Callable[[Mapping[str, str]], Any],
    columns: Columns | None,
    filename: str,
    *,
    ndjson: bool = False,
) -> Response:
    """Answer from the encoded-answer cache (``http.answers``) or compute, encode and
    keep the answer; errors (400, 403, 404) are raised, never kept. ``ndjson``: the
    route also answers ``format=ndjson`` (its rows, one a line)."""
    form, given, cached = _cached(ctx, columns, ndjson=ndjson)
    key = cached.key
    version = deps.versions.version(deps.store)  # read before computing (see answers)
    rendered = deps.answers.get(version, key)
    running = None
    if rendered is None and (running := deps.answers.computing(version, key)) is not None:
        running.wait(ANSWER_WAIT_SECONDS)  # another thread computes it: take its answer
        rendered = deps.answers.get(version, key)  # (None if it was refused: compute)
    if rendered is None:
        try:
            query = parse(dict(given))
            answer = fn(deps.store, query, call_of(ctx, deps))
            named = columns(query) if callable(columns) else columns
            rendered = _render(answer, named, form, filename)
            deps.answers.put(version, key, rendered)
        finally:
            if running is None:  # this thread claimed it
                deps.answers.done(version, key)
    return rendered.respond(cached.environ, cached.values(ctx), cached.header_value)


def _cached(
    ctx: Ctx, columns: Columns | None, *, ndjson: bool = False
) -> tuple[str, tuple[tuple[str, str], ...], CachedAnswer]:
    """The form the call is answered in (``json``, ``csv``, or ``ndjson`` where the route
    offers it), its query, and how the calls of ``ctx``'s
    request are answered from the answer cache, by ``_run`` and from memory alone
    (``app.warm``). The answer's key is its route's operation, the query as sent (names
    sorted; only a valid one is ever kept, so a hit skips parsing too; the same query
    spelt two ways is kept twice, which is harmless), the form, what the tier gate reads
    of the caller, and the UTC day; the call's own fields fill it."""
    caller = ctx.caller
    assert caller is not None  # the data auth policy guarantees it
    form = JSON
    if ndjson and wants_ndjson(ctx.params):
        form = NDJSON
    elif columns is not None and wants_csv(
        ctx.request.environ.get("HTTP_ACCEPT"), ctx.params, csv_only=ctx.csv_only
    ):
        form = CSV
    given = tuple(sorted((k, v) for k, v in ctx.params.items() if k != FORMAT.name))
    day = math.floor(ctx.now) // 86400
    cached = CachedAnswer(
        key=(ctx.operation, given, form, caller.plan, caller.auth_method, day),
        environ=ctx.request.environ,
        values=_per_call,
        header_value=header_value,
    )
    return form, given, cached


def _per_call(ctx: Ctx) -> dict[str, Any]:
    """The call's own ``_meta`` fields (``PER_CALL_FIELDS``) of an admitted call."""
    assert ctx.caller is not None  # the data auth policy guarantees it
    return {
        "generated_at": iso_second(math.floor(ctx.now)),
        "rate_limit": rate_limit(ctx.caller),
        "request_id": ctx.request_id,
    }


def warm_pulse(ctx: Ctx) -> CachedAnswer:
    return _cached(ctx, service.pulse_columns)[2]


def warm_series(ctx: Ctx) -> CachedAnswer:
    return _cached(ctx, service.pulse_columns)[2]


def warm_compare(ctx: Ctx) -> CachedAnswer:
    return _cached(ctx, compare_service.COMPARE_COLUMNS, ndjson=True)[2]


def warm_coverage(ctx: Ctx) -> CachedAnswer:
    return _cached(ctx, coverage_service.COVERAGE_COLUMNS)[2]


def warm_indices(ctx: Ctx) -> CachedAnswer:
    return _cached(ctx, service.INDEX_COLUMNS)[2]


def warm_dimensions(ctx: Ctx) -> CachedAnswer:
    return _cached(ctx, None)[2]


def pulse(ctx: Ctx, deps: Deps) -> Response:
    return _run(ctx, deps, service.pulse, q.parse_pulse, service.pulse_columns, "pulse.csv")


def series(ctx: Ctx, deps: Deps) -> Response:
    return _run(
        ctx, deps, service.series, q.parse_series, service.pulse_columns, "pulse-series.csv"
    )


def compare(ctx: Ctx, deps: Deps) -> Response:
    return _run(
        ctx,
        deps,
        compare_service.compare,
        parse_compare,
        compare_service.COMPARE_COLUMNS,
        "compare.csv",
        ndjson=True,
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


def next_link(
    deps: Deps,
    params: Mapping[str, str],
    next_cursor: str,
    *,
    path: str = TRANSACTIONS_PATH,
    name: str = "cursor",
) -> str:
    """The ``Link`` header of a page: the same query with the next cursor (in the
    parameter ``name``), as an absolute URL on this deployment's public address."""
    pairs = [(k, v) for k, v in params.items() if k != name] + [(name, next_cursor)]
    return f'<{deps.config.public_url}{path}?{urlencode(pairs)}>; rel="next"'


def transactions(ctx: Ctx, deps: Deps) -> Response:
    """The records behind a figure: a page as JSON (``Link`` to the next), or the whole
    selection streamed as CSV or NDJSON (an NDJSON call with ``limit`` is a page, as
    JSON's)."""
    ndjson = wants_ndjson(ctx.params)
    accept = ctx.request.environ.get("HTTP_ACCEPT")
    csv = not ndjson and wants_csv(accept, ctx.params, csv_only=ctx.csv_only)
    given = {k: v for k, v in ctx.params.items() if k != FORMAT.name}
    query = listing.parse_transactions_query(given)
    call = call_of(ctx, deps)
    if csv or (ndjson and listing.LIMIT.name not in given):
        version = deps.versions.version(deps.store)  # read before the records
        meta, records = listings.stream(deps.store, query, call)
        if ndjson:
            return stream_records(ctx, version, given, meta, records, "transactions.ndjson")
        columns = CONTRACT_COLUMNS if query.by_contract else TRANSACTION_COLUMNS
        return stream_records(ctx, version, given, meta, records, "transactions.csv", columns)
    answer = listings.transactions(deps.store, query, call)
    headers = [("Content-Type", JSON_TYPE), ("Vary", VARY_CSV)]
    next_cursor = answer.meta["next_cursor"]
    if next_cursor is not None:
        headers.append(("Link", next_link(deps, ctx.params, next_cursor)))
    if ndjson:
        rendered = ndjson_page(answer, headers[2:], "transactions.ndjson")
    else:
        rendered = rendered_json({"data": to_json(answer.data), "_meta": answer.meta}, headers)
    return rendered.respond(ctx.request.environ, per_call_values(answer.meta))


def ndjson_page(answer: Answer, headers: Sequence[tuple[str, str]], filename: str) -> Rendered:
    """A page of ``answer`` as NDJSON, one record a line, its ``_meta`` as ``X-Svc-*``
    headers (``next_cursor`` too) beside ``headers`` (its ``Link``), as a CSV answer
    carries it; encoded once, like every rendered answer."""
    meta = answer.meta
    shared = envelope_headers({k: v for k, v in meta.items() if k not in PER_CALL_FIELDS})
    return Rendered(
        parts=(b"".join(ndjson_chunks(to_json(answer.data))),),
        slots=(),
        headers=(
            ("Content-Type", NDJSON_TYPE),
            ("Content-Disposition", f'inline; filename="{filename}"'),
            *shared.items(),
            ("Vary", VARY_CSV),
            *headers,
        ),
        header_slots=tuple(
            (header_name(f), f) for f in PER_CALL_FIELDS if f in meta and f not in HEADER_SKIPPED
        ),
        version=data_version(meta),
    )


def changes(ctx: Ctx, deps: Deps) -> Response:
    """A page of change records (JSON), with a ``Link`` to the next while more follow."""
    query = change_feed.parse_changes(ctx.params)
    answer = change_service.changes(
        deps.store, query, call_of(ctx, deps), base=deps.config.public_url
    )
    headers = [("Content-Type", JSON_TYPE), ("Vary", VARY_JSON)]
    next_cursor = answer.meta["next_cursor"]
    if next_cursor is not None:
        link = next_link(deps, ctx.params, next_cursor, path=CHANGES_PATH, name="since")
        headers.append(("Link", link))
    rendered = rendered_json({"data": answer.data, "_meta": answer.meta}, headers)
    return rendered.respond(ctx.request.environ, per_call_values(answer.meta))


RECORD_BYTES_AT_LEAST = 150
"""A CSV record of a deal is longer than this (its natural key and id alone are): a
streamed answer of ``count`` records is at least ``count`` times this long."""


def stream_records(
    ctx: Ctx,
    version: Hashable,
    given: Mapping[str, str],
    meta: Mapping[str, Any],
    records: Iterator[Any],
    filename: str,
    columns: Sequence[str] | None = None,
) -> Response:
    """A whole selection streamed as CSV in ``columns`` or, without them, as NDJSON (one
    record a line; what a listing answers to ``format=ndjson``, ``records`` as its service
    streams them), gzip-coded as it goes when asked for, its ``_meta`` as ``X-Svc-*``
    headers.

    Its tag cannot be a digest of a body not yet read: it is one of the format
    (``filename``), the data version, the query and the envelope headers (every ``_meta``
    field but the per-call ones), so it changes with any load and with anything the
    headers say."""
    headers = envelope_headers(meta)
    shared = [(k, v) for k, v in headers.items() if k != GENERATED_AT_HEADER]
    tag = entity_tag(
        (
            filename.encode(),
            repr(version).encode(),
            repr(sorted(given.items())).encode(),
            *(f"{k}: {v}".encode() for k, v in shared),
        ),
        data_version(meta),
    )
    environ = ctx.request.environ
    coding = content_coding(environ.get("HTTP_ACCEPT_ENCODING"))
    size = RECORD_BYTES_AT_LEAST * int(meta.get("count") or 0)
    gzipped = coding.uses_gzip(size) and environ.get("REQUEST_METHOD") != "HEAD"
    if gzipped:
        tag = gzip_tag(tag)
    if none_match(environ.get("HTTP_IF_NONE_MATCH"), tag):
        # the records are never read: their iterator has not started
        return not_modified(tag, [("Vary", VARY_CSV)])
    rows = (to_json(record) for record in records)
    if columns is None:
        response = ndjson_stream_response(rows, headers=headers, filename=filename, gzipped=gzipped)
    else:
        response = csv_stream_response(
            columns, rows, headers=headers, filename=filename, gzipped=gzipped
        )
    response.headers["Vary"] = VARY_CSV
    response.headers["ETag"] = tag
    return response
