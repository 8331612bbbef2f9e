"""Readers of real source formats: bytes in, validated records and a load report out.

Every reader is pure (no file or network access: the caller reads the bytes) and returns
a ``ParseResult`` (transactions) or an ``IndexParseResult`` (index observations) with a
``LoadReport``. A file that cannot be read at all raises ``SourceError`` naming the path;
a bad record is rejected, counted and kept with its line in the report.

| module | format |
|---|---|
| ``rtms`` | MOLIT RTMS open API responses, XML or JSON |
| ``rtms_csv`` | the RTMS web site's CSV export (CP949 or UTF-8) |
| ``rone`` | R-ONE statistics: open API JSON and a documented CSV |
| ``samples`` | svc's normalized samples CSV |

Natural keys: sources have no record id, so a key is the SHA-256 of the record's
normalized fields plus its ordinal among identical records of the file
(``natural_key``). Reading the same bytes twice gives the same keys; two identical deals
in one file get different ordinals and both load.

Long because it is the one kit every reader shares (decoding, CSV and JSON framing with
the cut-file checks, published numbers and dates, the collector of kept, excluded and
rejected records, natural keys); splitting it would make each reader import five
modules for one concept.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping
from json.encoder import encode_basestring as _encode_string
from typing import Any, ParamSpec

import attrs

from svc_core.errors import SourceError
from svc_core.models import IndexObservation, LoadReport, Transaction
from svc_core.sources.sniff import not_csv

_MANWON = re.compile(r"[0-9]{1,3}(,[0-9]{3})*|[0-9]+")


@attrs.frozen(kw_only=True)
class ExcludedRecord:
    """A record the reader excluded by rule (``reason``, as counted in the load report),
    built as it would have been kept, so it can be shown with its reason."""

    reason: str
    record: Transaction
    cancelled_on: datetime.date | None = None
    """A cancelled deal's cancellation date as the source gives it (RTMS ``cdealDay``,
    the CSV export's ``해제사유발생일``); None when it gives none or another reason."""


@attrs.frozen(kw_only=True)
class RejectedRecord:
    """A record the reader rejected as malformed, kept so that it leaves a trace: its
    natural key, the district and month its key names (``?``/``unknown`` when the source
    did not say them readably), the types the reader could tell without building it
    (None when it could not), the reason and detail, and its line (or item ordinal)."""

    natural_key: str
    sigungu_code: str
    month: str
    property_type: str | None
    transaction_type: str | None
    reason: str
    detail: str
    line: int


def key_place(key: str) -> tuple[str, str]:
    """(district code, month) a natural key names (``prefix:kind:code:month:digest:n``
    or ``prefix:code:month:digest:n``: the two fields before the digest)."""
    parts = key.split(":")
    if len(parts) < 4:
        return "?", "unknown"
    return parts[-4], parts[-3]


Types = tuple[str | None, str | None]
"""(property type, transaction type) a reader can tell of a record, None for unknown."""


@attrs.frozen(kw_only=True)
class ParseResult:
    """Transactions read from one file.

    ``retracted_keys`` are the natural keys of deals the file marks as cancelled: a store
    that holds them from an earlier load (before the cancellation was reported) may delete
    them. ``excluded`` are the excluded records that could be built (an excluded item
    that is also malformed is counted in the report only).
    """

    transactions: list[Transaction]
    report: LoadReport
    retracted_keys: tuple[str, ...] = ()
    excluded: tuple[ExcludedRecord, ...] = ()
    rejected: tuple[RejectedRecord, ...] = ()
    """Every record rejected as malformed that had a natural key (all of them, where the
    report keeps only the first lines of each reason)."""


@attrs.frozen(kw_only=True)
class IndexParseResult:
    """Index observations read from one file."""

    observations: list[IndexObservation]
    report: LoadReport


def decode_text(data: bytes, path: str) -> str:
    """Text of a CSV file: UTF-8 (BOM tolerated) when valid, else CP949."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp949")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"not UTF-8 or CP949 text (undecodable byte at offset {exc.start})", path=path
        ) from None


def decode_utf8(data: bytes, path: str) -> str:
    """UTF-8 text (a BOM allowed); SourceError naming the line of the first undecodable
    byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(
            f"not UTF-8 text (undecodable byte at offset {exc.start})", path=path, line=line
        ) from None


def csv_text(data: bytes, path: str, *, cp949: bool = False) -> str:
    """The text of a file a CSV reader was given: UTF-8 (or, with ``cp949``, CP949 when
    not UTF-8). An image, a workbook, an XML or JSON document is refused by name."""
    found = not_csv(data)
    if found is not None:
        raise SourceError(
            f"this is {found}, not a CSV file; export the data as CSV (comma-separated text)",
            path=path,
        )
    return decode_text(data, path) if cp949 else decode_utf8(data, path)


def load_json(data: bytes, path: str) -> Any:
    """A UTF-8 JSON document (``json_text``)."""
    return json_text(decode_utf8(data, path), path)


def json_text(text: str, path: str) -> Any:
    """A JSON document; SourceError (with the line) when it is not one, and when it is
    one no source writes: nested deeper than Python's recursion allows, or holding an
    integer longer than Python converts (4,300 digits)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"malformed JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except RecursionError:
        raise SourceError("JSON nested too deeply to read", path=path) from None
    except ValueError:  # the only other error json raises: an integer int() refuses
        raise SourceError(
            "JSON holds a number too long to read (more than 4,300 digits)", path=path
        ) from None


CUT_SHORT = (
    "the file ends inside its last row (no line break after it): it looks cut short, "
    "like a copy stopped before the end; copy the whole file again, or, if it is "
    "complete, end it with a line break"
)
"""Why a CSV file whose last row is not terminated is refused: a copy killed part way
cuts a cell (``107.5`` becomes ``1``) into a record that reads as valid."""


def csv_rows(text: str, path: str, *, strict: bool = False) -> Iterator[tuple[int, list[str]]]:
    """(first physical line, cells) of every CSV row, as read; a malformed row is a
    SourceError naming its line. ``strict`` refuses stray quotes too.

    A file whose last row has no line break after it, or ends inside a quoted cell, is
    a SourceError (``CUT_SHORT``) and that row is never yielded: it is what a copy cut
    short leaves, and its last cell may be the start of the real one."""
    if text and not text.endswith(("\n", "\r")):
        raise SourceError(CUT_SHORT, path=path, line=_lines(text))
    reader = csv.reader(io.StringIO(text, newline=""), strict=strict)
    last: tuple[int, list[str]] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise SourceError(f"malformed CSV: {exc}", path=path, line=start) from None
        if last is not None:
            yield last
        last = start, row
    if last is None:
        return
    # A cut inside a quoted cell right after a line break in it ends the text with a
    # line break, and the cell (read to the end) ends with it: only then is the last
    # row's own text scanned.
    cells = last[1]
    if cells and cells[-1].endswith(("\n", "\r")) and open_quote(_from_line(text, last[0])):
        raise SourceError(CUT_SHORT, path=path, line=last[0])
    yield last


def _lines(text: str) -> int:
    """The number of physical lines in ``text`` as the csv module counts them (``\\r``,
    ``\\n`` and ``\\r\\n`` each end one)."""
    return sum(1 for _ in io.StringIO(text, newline=""))


def _from_line(text: str, line: int) -> str:
    """``text`` from the start of physical line ``line`` (1-based) on."""
    offset = 0
    for _, part in zip(range(line - 1), io.StringIO(text, newline=""), strict=False):
        offset += len(part)
    return text[offset:]


def open_quote(row: str) -> bool:
    """Whether the raw text of one CSV row ends inside a quoted cell, read as the csv
    module reads it without ``strict``: a quote opens a quoted cell only at the start of
    a cell, and ``""`` inside one is a quote character."""
    quoted = False
    cell_start = True
    at = 0
    while at < len(row):
        char = row[at]
        if quoted:
            if char == '"':
                if row.startswith('"', at + 1):
                    at += 1
                else:
                    quoted = False
        elif char == '"' and cell_start:
            quoted = True
        cell_start = not quoted and char == ","
        at += 1
    return quoted


def parse_area(raw: str | None, field: str) -> float | None:
    """An area in m² (thousands separators allowed); None when blank or 0; Reject when not
    a number or out of range."""
    if is_blank(raw):
        return None
    assert raw is not None
    try:
        value = float(raw.strip().replace(",", ""))
    except ValueError:
        raise Reject("invalid_area", f"{field} {raw!r} is not a number") from None
    if value != value or value < 0 or value >= 1e7:
        raise Reject("invalid_area", f"{field} {raw!r} is out of range")
    return value if value > 0 else None


_WHOLE = re.compile(r"-?[0-9]{1,4}")


def published_text(raw: str | None, max_length: int = 40) -> str | None:
    """A descriptive text as published (trimmed), or None when blank, longer than
    ``max_length`` or holding control characters: it describes a deal, never rejects it."""
    if is_blank(raw):
        return None
    assert raw is not None
    text = raw.strip()
    if len(text) > max_length or not text.isprintable():
        return None
    return text


def published_int(raw: str | None, low: int, high: int) -> int | None:
    """A whole number as published (ASCII digits, optional minus) within ``low`` to
    ``high``, or None: like ``published_text``, it never rejects a deal."""
    text = (raw or "").strip()
    if _WHOLE.fullmatch(text) is None:
        return None
    value = int(text)
    return value if low <= value <= high else None


def parse_manwon(text: str) -> int | None:
    """Amount in 만원 with optional thousands separators → whole KRW; None when malformed."""
    value = text.strip()
    if _MANWON.fullmatch(value) is None:
        return None
    return int(value.replace(",", "")) * 10_000


def is_blank(text: str | None) -> bool:
    """Blank in source conventions: missing, empty, a single space, or ``-``."""
    return text is None or text.strip() in ("", "-")


P = ParamSpec("P")


class Reject(Exception):
    """A record a reader refuses: ``reason`` (a stable id counted in the load report) and
    ``detail`` (what was wrong). Raised and caught inside the readers only, where it
    becomes ``LoadReport.reject``; it never leaves a parse, so it is not an ``SvcError``."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


@attrs.define
class Collector:
    """Gathers one file's records into a ``ParseResult``: an excluded record is counted
    (a cancelled one also retracts its key), a kept one is built, and a ``Reject`` from
    building it is counted against its line and kept as a ``RejectedRecord``, with the
    types ``types_of`` (called with the build's arguments) tells of it."""

    report: LoadReport
    types_of: Callable[..., Types] | None = None
    transactions: list[Transaction] = attrs.field(factory=list)
    retracted: list[str] = attrs.field(factory=list)
    excluded: list[ExcludedRecord] = attrs.field(factory=list)
    rejected: list[RejectedRecord] = attrs.field(factory=list)

    def add(
        self,
        line: int,
        key: str,
        excluded: str | None,
        build: Callable[P, Transaction],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> None:
        """Count record ``key`` as ``excluded`` (and keep it with its reason when it can
        be built), or keep ``build(*args, **kwargs)``."""
        if excluded is not None:
            self.report.exclude(excluded)
            if excluded == "cancelled":
                self.retracted.append(key)
            with contextlib.suppress(Reject):  # counted as excluded; too malformed to show
                self.excluded.append(ExcludedRecord(reason=excluded, record=build(*args, **kwargs)))
            return
        try:
            self.transactions.append(build(*args, **kwargs))
        except Reject as rej:
            self.report.reject(line, rej.reason, rej.detail)
            code, month = key_place(key)
            prop, ttype = self.types_of(*args, **kwargs) if self.types_of else (None, None)
            self.rejected.append(
                RejectedRecord(
                    natural_key=key,
                    sigungu_code=code,
                    month=month,
                    property_type=prop,
                    transaction_type=ttype,
                    reason=rej.reason,
                    detail=rej.detail,
                    line=line,
                )
            )

    def date_cancellation(self, key: str, raw: str | None) -> None:
        """Give the excluded record ``key`` just added (a cancelled deal) the cancellation
        date ``raw`` says (``cancellation_date``)."""
        day = cancellation_date(raw)
        last = self.excluded[-1] if self.excluded else None
        if day is not None and last is not None and last.record.natural_key == key:
            self.excluded[-1] = attrs.evolve(last, cancelled_on=day)

    def result(self) -> ParseResult:
        return ParseResult(
            transactions=self.transactions,
            report=self.report,
            retracted_keys=tuple(self.retracted),
            excluded=tuple(self.excluded),
            rejected=tuple(self.rejected),
        )


_CANCEL_DAY = re.compile(
    r"([0-9]{2}|[0-9]{4})[.\-/]([0-9]{1,2})[.\-/]([0-9]{1,2})|([0-9]{4})([0-9]{2})([0-9]{2})"
)


def cancellation_date(raw: str | None) -> datetime.date | None:
    """A cancellation date as RTMS publishes it (``cdealDay`` ``YY.MM.DD``: ``26.04.30`` is
    2026-04-30; a four-digit year, ``-`` or ``/`` separators and ``YYYYMMDD`` are read
    too); None when blank or not a date (it never rejects a record)."""
    found = _CANCEL_DAY.fullmatch(re.sub(r"\s+", "", raw or ""))
    if found is None:
        return None
    year, month, day = (g for g in found.groups() if g is not None)
    try:
        value = datetime.date(int(year) + (2000 if len(year) == 2 else 0), int(month), int(day))
    except ValueError:
        return None
    return value if 1990 <= value.year <= 2100 else None


class KeyMaker:
    """Natural keys for the records of one file: digest of fields + ordinal among equals.

    ``key(prefix, sigungu_code, month, fields)`` hashes ``fields`` (blank values dropped,
    names sorted) and appends how many identical records came before in this file.
    """

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def key(
        self,
        prefix: str,
        sigungu_code: str,
        month: str,
        fields: Mapping[str, str],
        ignore: frozenset[str] = frozenset(),
    ) -> str:
        """The key of one record; fields named in ``ignore`` do not take part."""
        # The digest input is json.dumps(sorted pairs, ensure_ascii=False, compact), built
        # by hand from the same string encoder, with list comprehensions rather than
        # generators: this runs for every record, and the generic encoder cost as much as
        # the rest of the key. is_blank is inlined.
        pairs = sorted(
            [
                (k, text)
                for k, v in fields.items()
                if v is not None and (text := v.strip()) not in ("", "-") and k not in ignore
            ]
        )
        enc = _encode_string
        canonical = "[" + ",".join([f"[{enc(k)},{enc(v)}]" for k, v in pairs]) + "]"
        digest = hashlib.sha256(f"{prefix}|{canonical}".encode()).hexdigest()
        ordinal = self._seen.get(digest, 0)
        self._seen[digest] = ordinal + 1
        return f"{prefix}:{sigungu_code}:{month}:{digest}:{ordinal}"
