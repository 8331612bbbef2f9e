"""Content negotiation: JSON by default, CSV on ``Accept: text/csv`` or ``format=csv``."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from svc_core.params import FORMAT

JSON = "application/json"
CSV = "text/csv"
OFFERED = (JSON, CSV)
"""What CSV-capable routes offer, in the server's order of preference."""


def wants_csv(accept: str | None, params: Mapping[str, str], *, csv_only: bool = False) -> bool:
    """True when the caller asked for CSV (``accept`` is the Accept header's text).

    A route's ``.csv`` form (``csv_only``) always answers CSV. Else ``format`` wins when
    present (``svc_core.params.FORMAT``: ``json`` or ``csv``). Otherwise the Accept header
    decides as RFC 9110 says: each of ``application/json`` and ``text/csv`` gets the q of
    the most specific range that matches it (``text/csv`` over ``text/*`` over ``*/*``),
    and CSV is chosen when its q is higher; a tie, no header or only other types mean
    JSON (the server's preference).
    """
    if csv_only:
        return True
    fmt = FORMAT.read(params)
    if fmt is not None:
        return fmt == "csv"
    return _prefers_csv(accept or "")


@functools.lru_cache(maxsize=256)
def _prefers_csv(accept: str) -> bool:
    """The Accept header's choice, remembered per header text (clients repeat theirs;
    parsing one costs more than answering a cached call)."""
    return parse_accept_header(accept, MIMEAccept).best_match(OFFERED, default=JSON) == CSV
