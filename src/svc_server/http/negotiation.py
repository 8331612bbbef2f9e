"""Content negotiation: JSON by default, CSV on ``Accept: text/csv`` or ``format=csv``,
NDJSON on ``format=ndjson`` where a route offers it (``wants_ndjson``); gzip on
``Accept-Encoding`` (``content_coding``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

import attrs
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from svc_core.params import FORMAT, STREAM_FORMAT

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


def wants_ndjson(params: Mapping[str, str]) -> bool:
    """True when ``format=ndjson``, on a route that offers it (``Route.ndjson``; elsewhere
    ``wants_csv`` refuses the value); a value no route takes is ``InvalidParams``."""
    return STREAM_FORMAT.read(params) == "ndjson"


@functools.lru_cache(maxsize=256)
def _prefers_csv(accept: str) -> bool:
    """The Accept header's choice, remembered per header text (clients repeat theirs;
    parsing one costs more than answering a cached call)."""
    return parse_accept_header(accept, MIMEAccept).best_match(OFFERED, default=JSON) == CSV


GZIP_MIN_BYTES = 1024
"""A smaller body goes out as it is: gzip's header and trailer would eat the saving."""


@attrs.frozen
class Coding:
    """What an ``Accept-Encoding`` header allows: ``gzip`` when gzip is acceptable and
    not less wanted than an explicit ``identity``; ``identity_refused`` when the caller
    excluded the unencoded form (``identity;q=0``, or ``*;q=0`` without ``identity``),
    so gzip is sent however small the body."""

    gzip: bool = False
    identity_refused: bool = False

    def uses_gzip(self, size: int) -> bool:
        """Whether a body of ``size`` bytes goes out gzip-coded."""
        return self.gzip and (size >= GZIP_MIN_BYTES or self.identity_refused)


IDENTITY = Coding()


@functools.lru_cache(maxsize=256)
def content_coding(accept_encoding: str | None) -> Coding:
    """The coding ``accept_encoding`` (the header's text; None when absent) allows, as
    RFC 9110 section 12.5.3 says: each coding gets the q of its own entry, else of ``*``;
    ``x-gzip`` is ``gzip``; a q of 0 excludes; ``identity`` is acceptable unless
    excluded. An entry whose q is malformed is ignored. No header: no coding."""
    if accept_encoding is None:
        return IDENTITY
    given: dict[str, float] = {}
    for item in accept_encoding.split(","):
        name, _, params = item.partition(";")
        name = name.strip().lower()
        if not name:
            continue
        q = _quality(params)
        if q is None:
            continue
        name = "gzip" if name == "x-gzip" else name
        given[name] = max(q, given.get(name, q))  # a repeated coding: its best q
    star = given.get("*")
    q_gzip = given.get("gzip", star if star is not None else 0.0)
    q_identity = given.get("identity", star if star is not None else 1.0)
    if q_gzip <= 0:
        return IDENTITY
    if q_identity <= 0:
        return Coding(gzip=True, identity_refused=True)
    if "identity" in given and q_identity > q_gzip:
        return IDENTITY
    return Coding(gzip=True)


def _quality(params: str) -> float | None:
    """The q of an entry's parameters (1 when none), None when they are anything but
    one valid qvalue (``0`` to ``1`` with at most three decimals)."""
    q = 1.0
    for param in params.split(";"):
        key, eq, value = param.partition("=")
        if not eq:
            if key.strip():
                return None
            continue
        if key.strip().lower() != "q":
            return None  # an entry has a weight and nothing else
        value = value.strip()
        if not _QVALUE.fullmatch(value):
            return None
        q = float(value)
    return q


_QVALUE = re.compile(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?")
