"""Marketplace files → listings and monthly activity (``svc ingest market-listings`` and
``svc ingest market-activity``).

Both files are RFC 4180 CSV in UTF-8 (a leading BOM is tolerated), comma separated, with
a header row naming exactly these columns, in any order:

- listings: ``listing_id,region,category,product_type,list_price,discounted_price``
- activity: ``listing_id,period,views,bookings,booked_hours,available_hours``

Cells are trimmed. ``listing_id`` is 1 to 128 characters of ``[A-Za-z0-9._:-]`` starting
with a letter or digit; ``region`` is free text (NFC-normalized, at most 64 characters);
``category`` and ``product_type`` are the SPEC enumerations, lowercase; prices and hours
are plain non-negative decimals (``12000``, ``9900.5``; no signs, exponents or thousands
separators), an empty ``discounted_price`` means none; ``views`` and ``bookings`` are
non-negative integers; ``period`` is ``YYYY-MM``; ``booked_hours <= available_hours``.

A file that is not UTF-8, holds a NUL byte or malformed quoting, or whose header is
missing or differs from the list raises ``SourceError`` with the path and line. A bad row
is rejected, counted by reason in the ``LoadReport`` with its line, and the rest load.
Reasons: ``wrong_cell_count``, ``bad_<column>`` (first failing column in file order),
``booked_over_available``, ``unknown_listing`` (activity of a listing not in
``known_listings``), ``duplicate_listing_id`` / ``duplicate_key`` (a key repeated within
the file: the first row wins).

Natural keys: ``listing_id`` for listings, (``listing_id``, ``period``) for activity. The
store upserts by them, so loading a file twice changes nothing and a later file updates
a listing's prices or a month's counts.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import TypeVar

import attrs

from svc_core.errors import SourceError
from svc_core.markets import (
    CATEGORIES,
    LISTING_ID,
    MAX_COUNT,
    MAX_HOURS,
    MAX_PRICE,
    PRODUCT_TYPES,
    Activity,
    Listing,
    is_period,
    is_region,
)
from svc_core.models import LoadReport
from svc_core.sources import Reject, csv_rows, csv_text

LISTING_COLUMNS: tuple[str, ...] = tuple(f.name for f in attrs.fields(Listing))
"""A listings file's columns: the fields of ``Listing``, in order."""
ACTIVITY_COLUMNS: tuple[str, ...] = tuple(f.name for f in attrs.fields(Activity))
"""An activity file's columns: the fields of ``Activity``, in order."""
T = TypeVar("T")

_DECIMAL = re.compile(r"[0-9]{1,16}(\.[0-9]{1,400})?")
_INTEGER = re.compile(r"[0-9]{1,13}")


SHOWN_UNKNOWN = 5
"""Unknown header cells a refusal names; the rest are counted."""


def _show(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def _decode(data: bytes, path: str) -> str:
    """UTF-8 text without NUL bytes (a marketplace export never holds one)."""
    text = csv_text(data, path)
    nul = text.find("\x00")
    if nul >= 0:
        raise SourceError("the file holds a NUL byte", path=path, line=text.count("\n", 0, nul) + 1)
    return text


def _rows(text: str, path: str) -> Iterator[tuple[int, list[str]]]:
    """(first physical line, cells stripped) of every non-blank CSV row."""
    for start, row in csv_rows(text, path, strict=True):
        if any(cell.strip() for cell in row):
            yield start, [cell.strip() for cell in row]


def _header(rows: Iterator[tuple[int, list[str]]], expected: Sequence[str], path: str) -> list[str]:
    first = next(rows, None)
    if first is None:
        raise SourceError(
            f"the file is empty; the first row must be the header {','.join(expected)}",
            path=path,
            line=1,
        )
    line, names = first
    problems: list[str] = []
    missing = [c for c in expected if c not in names]
    unknown = [c for c in names if c not in expected]
    repeated = sorted({c for c in names if names.count(c) > 1})
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if unknown:
        shown = ", ".join(_show(c) for c in unknown[:SHOWN_UNKNOWN])
        more = len(unknown) - SHOWN_UNKNOWN
        problems.append(f"unknown {shown}" + (f" and {more} more" if more > 0 else ""))
    if repeated:
        problems.append(f"repeated {', '.join(repeated)}")
    if problems:
        raise SourceError(
            f"bad header ({'; '.join(problems)}); expected the columns {','.join(expected)}",
            path=path,
            line=line,
        )
    return names


def _decimal(raw: str, column: str, high: float) -> float:
    if _DECIMAL.fullmatch(raw) is None:
        raise Reject(
            f"bad_{column}", f"{column} must be a plain non-negative decimal: {_show(raw)}"
        )
    value = float(raw)
    if value > high:
        raise Reject(f"bad_{column}", f"{column} must be at most {high:g}: {_show(raw)}")
    return value


def _integer(raw: str, column: str) -> int:
    if _INTEGER.fullmatch(raw) is None or int(raw) > MAX_COUNT:
        raise Reject(f"bad_{column}", f"{column} must be a non-negative integer: {_show(raw)}")
    return int(raw)


def _listing_id(raw: str) -> str:
    if LISTING_ID.fullmatch(raw) is None:
        raise Reject("bad_listing_id", f"listing_id must match {LISTING_ID.pattern}: {_show(raw)}")
    return raw


def _choice(raw: str, column: str, choices: tuple[str, ...]) -> str:
    if raw not in choices:
        raise Reject(f"bad_{column}", f"{column} must be one of {', '.join(choices)}: {_show(raw)}")
    return raw


def _listing(cells: dict[str, str]) -> Listing:
    listing_id = _listing_id(cells["listing_id"])
    region = unicodedata.normalize("NFC", cells["region"])
    if not is_region(region):
        raise Reject("bad_region", f"region must be 1 to 64 printable characters: {_show(region)}")
    category = _choice(cells["category"], "category", CATEGORIES)
    product_type = _choice(cells["product_type"], "product_type", PRODUCT_TYPES)
    list_price = _decimal(cells["list_price"], "list_price", MAX_PRICE)
    discounted = cells["discounted_price"]
    discounted_price = _decimal(discounted, "discounted_price", MAX_PRICE) if discounted else None
    return Listing(
        listing_id=listing_id,
        region=region,
        category=category,
        product_type=product_type,
        list_price=list_price,
        discounted_price=discounted_price,
    )


def _activity(cells: dict[str, str]) -> Activity:
    listing_id = _listing_id(cells["listing_id"])
    period = cells["period"]
    if not is_period(period):
        raise Reject("bad_period", f"period must be YYYY-MM (month 01 to 12): {_show(period)}")
    views = _integer(cells["views"], "views")
    bookings = _integer(cells["bookings"], "bookings")
    booked = _decimal(cells["booked_hours"], "booked_hours", MAX_HOURS)
    available = _decimal(cells["available_hours"], "available_hours", MAX_HOURS)
    if booked > available:
        raise Reject(
            "booked_over_available",
            f"booked_hours {cells['booked_hours']} exceeds available_hours "
            f"{cells['available_hours']}",
        )
    return Activity(
        listing_id=listing_id,
        period=period,
        views=views,
        bookings=bookings,
        booked_hours=booked,
        available_hours=available,
    )


def _records(
    data: bytes,
    path: str,
    columns: Sequence[str],
    read: Callable[[dict[str, str]], T],
    report: LoadReport,
) -> Iterator[tuple[int, T]]:
    """(line, what ``read`` makes of its cells by column) of every data row with the right
    cell count that ``read`` does not refuse (a ``Reject`` is reported for the line)."""
    rows = _rows(_decode(data, path), path)
    names = _header(rows, columns, path)
    for line, cells in rows:
        report.read += 1
        if len(cells) != len(names):
            report.reject(line, "wrong_cell_count", f"{len(cells)} cells, header has {len(names)}")
            continue
        try:
            record = read(dict(zip(names, cells, strict=True)))
        except Reject as rej:
            report.reject(line, rej.reason, rej.detail)
            continue
        yield line, record


def parse_listings(data: bytes, *, path: str = "<bytes>") -> tuple[list[Listing], LoadReport]:
    """Read a listings file; later rows with an id already seen are rejected."""
    out: list[Listing] = []
    seen: set[str] = set()
    report = LoadReport(path=path)
    for line, listing in _records(data, path, LISTING_COLUMNS, _listing, report):
        if listing.listing_id in seen:
            report.reject(line, "duplicate_listing_id", f"listing {listing.listing_id} repeated")
            continue
        seen.add(listing.listing_id)
        out.append(listing)
    return out, report


def parse_activity(
    data: bytes, *, path: str = "<bytes>", known_listings: Collection[str] | None = None
) -> tuple[list[Activity], LoadReport]:
    """Read an activity file; rows of listings outside ``known_listings`` (when given) are
    rejected as ``unknown_listing``, a repeated (listing_id, period) as ``duplicate_key``."""
    out: list[Activity] = []
    seen: set[tuple[str, str]] = set()
    report = LoadReport(path=path)
    for line, activity in _records(data, path, ACTIVITY_COLUMNS, _activity, report):
        if known_listings is not None and activity.listing_id not in known_listings:
            report.reject(line, "unknown_listing", f"no listing {activity.listing_id} is known")
            continue
        key = (activity.listing_id, activity.period)
        if key in seen:
            report.reject(line, "duplicate_key", f"{key[0]} {key[1]} repeated")
            continue
        seen.add(key)
        out.append(activity)
    return out, report


def format_number(value: float) -> str:
    """A number as the files spell it: plain decimal, no exponent, exact round trip."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def _csv(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def format_listings(listings: Iterable[Listing]) -> bytes:
    """A listings file (UTF-8, CRLF) that ``parse_listings`` reads back unchanged."""
    return _csv(
        LISTING_COLUMNS,
        (
            (
                x.listing_id,
                x.region,
                x.category,
                x.product_type,
                format_number(x.list_price),
                "" if x.discounted_price is None else format_number(x.discounted_price),
            )
            for x in listings
        ),
    )


def format_activity(activities: Iterable[Activity]) -> bytes:
    """An activity file (UTF-8, CRLF) that ``parse_activity`` reads back unchanged."""
    return _csv(
        ACTIVITY_COLUMNS,
        (
            (
                a.listing_id,
                a.period,
                str(a.views),
                str(a.bookings),
                format_number(a.booked_hours),
                format_number(a.available_hours),
            )
            for a in activities
        ),
    )
