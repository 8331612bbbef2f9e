"""Responses: JSON, CSV and NDJSON renderers, and the one place errors become HTTP
bodies."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

from werkzeug.wrappers import Response

from svc_core.csvfmt import csv_chunks
from svc_core.errors import SvcError
from svc_server.http.gzipped import gzip_chunks

JSON_TYPE = "application/json"
CSV_TYPE = "text/csv; charset=utf-8"
NDJSON_TYPE = "application/x-ndjson"


def _default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot serialize {type(value).__name__}")


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
)


def dumps(body: Any) -> bytes:
    """Compact UTF-8 JSON; non-finite floats become null rather than invalid JSON.

    The encoder refuses NaN and infinities, so the walk that replaces them runs only
    for the rare body that holds one, not for every response.
    """
    if type(body) is str:  # a call's own value (an id, a time): no encoder to build
        return encode_basestring(body).encode("utf-8")
    if type(body) is dict and (flat := _flat(body)) is not None:
        return flat
    try:
        text = _ENCODER.encode(body)
    except ValueError:
        text = _ENCODER.encode(_finite(body))
    return text.encode("utf-8")


def _flat(value: dict[Any, Any]) -> bytes | None:
    """``dumps`` of an object of whole numbers, nulls and texts (a call's rate limit),
    written directly: building json's encoder for it costs more than the encoding;
    None for any other object."""
    fields = []
    for k, v in value.items():
        if type(k) is not str:
            return None
        if v is None:
            text = "null"
        elif type(v) is int:
            text = str(v)
        elif type(v) is str:
            text = encode_basestring(v)
        else:
            return None
        fields.append(f"{encode_basestring(k)}:{text}")
    return ("{" + ",".join(fields) + "}").encode("utf-8")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_response(
    body: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """A JSON response."""
    return Response(dumps(body), status=status, headers=dict(headers or {}), mimetype=JSON_TYPE)


def csv_stream_response(
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    headers: Mapping[str, str] | None = None,
    filename: str = "data.csv",
    *,
    gzipped: bool = False,
) -> Response:
    """An RFC 4180 CSV response with a UTF-8 byte-order mark, streamed from ``rows`` as
    they are read (no
    Content-Length: the length is known only at the end); gzip-coded chunk by chunk
    when ``gzipped`` (``http.gzipped.gzip_chunks``), never held whole."""
    return _streamed(csv_chunks(columns, rows), CSV_TYPE, headers, filename, gzipped)


def ndjson_chunks(rows: Iterable[Any], *, per_chunk: int = 500) -> Iterator[bytes]:
    """Newline-delimited JSON: each of ``rows`` (JSON-ready) encoded as ``dumps`` does,
    one a line, ``\n`` after each (a string's own line breaks are escaped inside it),
    ``per_chunk`` lines at a time, so a long answer streams without being held."""
    lines: list[bytes] = []
    for row in rows:
        lines.append(dumps(row) + b"\n")
        if len(lines) >= per_chunk:
            yield b"".join(lines)
            lines = []
    if lines:
        yield b"".join(lines)


def ndjson_stream_response(
    rows: Iterable[Any],
    headers: Mapping[str, str] | None = None,
    filename: str = "data.ndjson",
    *,
    gzipped: bool = False,
) -> Response:
    """An NDJSON response streamed from ``rows`` (JSON-ready) as they are read, as
    ``csv_stream_response`` streams CSV (no Content-Length; gzip-coded chunk by chunk
    when ``gzipped``)."""
    return _streamed(ndjson_chunks(rows), NDJSON_TYPE, headers, filename, gzipped)


def _streamed(
    chunks: Iterator[bytes],
    content_type: str,
    headers: Mapping[str, str] | None,
    filename: str,
    gzipped: bool,
) -> Response:
    """A 200 whose body is ``chunks`` as they come (gzip-coded when ``gzipped``), shown
    inline as ``filename``."""
    out = Response(
        gzip_chunks(chunks) if gzipped else chunks, status=200, headers=dict(headers or {})
    )
    if gzipped:
        out.headers["Content-Encoding"] = "gzip"
    out.headers["Content-Type"] = content_type
    out.headers["Content-Disposition"] = f'inline; filename="{filename}"'
    return out


def error_response(
    err: SvcError, request_id: str, meta: Mapping[str, Any] | None = None
) -> Response:
    """SPEC's error body for any ``SvcError``, always JSON whatever was negotiated;
    ``meta`` is the ``_meta`` of an error that carries none of its own."""
    return json_response(err.body(request_id, meta), status=err.status, headers=err.headers)
