"""Content negotiation: JSON by default, CSV on ``Accept: text/csv`` or ``format=csv``."""

from __future__ import annotations

from collections.abc import Mapping

from werkzeug.datastructures import MIMEAccept

from svc_core.errors import InvalidParams

JSON = "application/json"
CSV = "text/csv"
OFFERED = (JSON, CSV)
"""What CSV-capable routes offer, in the server's order of preference."""


def wants_csv(accept: MIMEAccept, params: Mapping[str, str], *, csv_only: bool = False) -> bool:
    """True when the caller asked for CSV.

    A route's ``.csv`` form (``csv_only``) always answers CSV. Else ``format`` wins when present (``json`` or ``csv``). Otherwise the Accept header
    decides as RFC 9110 says: each of ``application/json`` and ``text/csv`` gets the q of
    the most specific range that matches it (``text/csv`` over ``text/*`` over ``*/*``),
    and CSV is chosen when its q is higher; a tie, no header or only other types mean
    JSON (the server's preference).
    """
    if csv_only:
        return True
    fmt = params.get("format")
    if fmt:
        if fmt not in {"json", "csv"}:
            raise InvalidParams("Query parameter 'format' must be json or csv.")
        return fmt == "csv"
    return accept.best_match(OFFERED, default=JSON) == CSV
