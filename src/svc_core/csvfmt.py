"""CSV rendering: RFC 4180 with a UTF-8 byte-order mark, safe to open in a spreadsheet.

Lines end in CRLF; a cell holding a comma, double quote, CR or LF is quoted, with inner
quotes doubled. The BOM appears once, at the start, so spreadsheet programs read the
Korean text as UTF-8.

Formula injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, TAB or CR would
be run as a formula by a spreadsheet, so it gets a leading ``'``. Only text is touched:
numbers (``-1.5``) stay numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal

from svc_core.instants import iso

BOM = "\ufeff"
CRLF = "\r\n"
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NEEDS_QUOTES = frozenset(',"\r\n')


def neutralize(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would take it for a formula."""
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def _number(value: float | Decimal) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        value = Decimal(repr(value))  # shortest round-trip digits, then no exponent
    if not value.is_finite():
        return "NaN" if value.is_nan() else ("Infinity" if value > 0 else "-Infinity")
    return format(value, "f")


def cell_text(value: object) -> str:
    """The text of one cell before quoting.

    None is empty; booleans are ``true``/``false``; numbers are plain decimals (never an
    exponent); objects and arrays are compact JSON; aware datetimes are ISO-8601 UTC with
    ``Z``; text is neutralized against formula injection.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float | Decimal):
        return _number(value)
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("CSV datetimes must be aware (UTC)")
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"cannot render a {type(value).__name__} in a CSV cell")


def quote(text: str) -> str:
    """RFC 4180 quoting: only when needed, inner quotes doubled."""
    if _NEEDS_QUOTES.isdisjoint(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def _line(cells: Iterable[str]) -> str:
    line = ",".join(quote(cell) for cell in cells)
    # A lone empty cell would make a blank line, which readers skip: quote it.
    return (line or '""') + CRLF


def render_csv(columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> bytes:
    """A header line of ``columns`` and one line per row (missing keys are empty cells)."""
    parts = [BOM, _line(neutralize(name) for name in columns)]
    parts.extend(_line(cell_text(row.get(name)) for name in columns) for row in rows)
    return "".join(parts).encode("utf-8", errors="replace")


def csv_chunks(
    columns: Sequence[str], rows: Iterable[Mapping[str, object]], *, per_chunk: int = 500
) -> Iterator[bytes]:
    """``render_csv``'s bytes, lazily: the BOM and header, then ``per_chunk`` lines at a
    time, so a long answer streams without being held in memory."""
    yield (BOM + _line(neutralize(name) for name in columns)).encode("utf-8")
    lines: list[str] = []
    for row in rows:
        lines.append(_line(cell_text(row.get(name)) for name in columns))
        if len(lines) >= per_chunk:
            yield "".join(lines).encode("utf-8", errors="replace")
            lines = []
    if lines:
        yield "".join(lines).encode("utf-8", errors="replace")
