"""Content negotiation: JSON by default, CSV on ``Accept: text/csv`` or ``format=csv``."""

from __future__ import annotations

from collections.abc import Mapping

from werkzeug.datastructures import MIMEAccept

from svc_core.errors import InvalidParams


def wants_csv(accept: MIMEAccept, params: Mapping[str, str]) -> bool:
    """True when the caller asked for CSV.

    ``format`` wins when present (``json`` or ``csv``). Otherwise CSV is chosen when the
    Accept header names ``text/csv`` with q > 0 and does not name ``application/json``
    with an equal or higher q; ``*/*``, ``text/*``, no header or other types mean JSON.
    """
    fmt = params.get("format")
    if fmt:
        if fmt not in {"json", "csv"}:
            raise InvalidParams("Query parameter 'format' must be json or csv.")
        return fmt == "csv"
    explicit = {value.lower(): q for value, q in accept}
    if "text/csv" not in explicit or explicit["text/csv"] <= 0:
        return False
    json_q = explicit.get("application/json")
    return json_q is None or explicit["text/csv"] > json_q
