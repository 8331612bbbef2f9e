"""svc's normalized samples CSV → transactions (for sources without a reader of their own).

Format: UTF-8 (a BOM is tolerated), RFC 4180 quoting, this exact header::

    source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,monthly_rent_krw,area_m2

| column | rule |
|---|---|
| source | source id, ``[a-z][a-z0-9_]{1,39}`` (e.g. ``public_assessment``) |
| sigungu_code | 5 digits, a district of the bundled table |
| dong | legal dong name, or empty |
| property_type | ``office``, ``retail``, ``commercial_complex``, ``mixed_use``, ``officetel`` |
| transaction_type | ``sale``, ``chartered_lease``, ``monthly_lease`` |
| contract_date | ``YYYY-MM-DD`` (1990 to 2100) |
| price_krw | whole KRW, digits only: the sale price, or the deposit of a lease |
| monthly_rent_krw | whole KRW, positive: required for ``monthly_lease``, else empty |
| area_m2 | positive decimal (``84.5``), or empty |

Every row is validated on its own: a bad row is rejected with its file line and reason
and the others load. Natural key: ``samples:<source>:<sigungu>:<YYYY-MM>:<sha256>:<ordinal>``
over the row's cells (identical rows in one file get distinct ordinals).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping

from svc_core.errors import SourceError
from svc_core.models import (
    PROPERTY_TYPES,
    SIGUNGU_CODE,
    SOURCE_ID,
    TRANSACTION_TYPES,
    LoadReport,
    Transaction,
)
from svc_core.regions import region_name
from svc_core.sources import Collector, KeyMaker, ParseResult, Reject, csv_rows, csv_text

HEADER: tuple[str, ...] = (
    "source",
    "sigungu_code",
    "dong",
    "property_type",
    "transaction_type",
    "contract_date",
    "price_krw",
    "monthly_rent_krw",
    "area_m2",
)

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DIGITS = re.compile(r"[0-9]{1,16}")
_DECIMAL = re.compile(r"[0-9]{1,7}(\.[0-9]{1,6})?")


def _check(ok: bool, reason: str, detail: str) -> None:
    if not ok:
        raise Reject(reason, detail)


def _row(cells: Mapping[str, str], key: str) -> Transaction:
    source = cells["source"]
    _check(SOURCE_ID.fullmatch(source) is not None, "invalid_source", f"source {source!r}")
    code = cells["sigungu_code"]
    _check(
        SIGUNGU_CODE.fullmatch(code) is not None, "invalid_sigungu_code", f"sigungu_code {code!r}"
    )
    name = region_name(code)
    _check(name is not None, "unknown_district", f"sigungu_code {code} is not in the table")
    ptype = cells["property_type"]
    _check(ptype in PROPERTY_TYPES, "invalid_property_type", f"property_type {ptype!r}")
    ttype = cells["transaction_type"]
    _check(ttype in TRANSACTION_TYPES, "invalid_transaction_type", f"transaction_type {ttype!r}")
    raw_date = cells["contract_date"]
    m = _DATE.fullmatch(raw_date)
    if m is None:
        raise Reject("invalid_date", f"contract_date {raw_date!r} is not YYYY-MM-DD")
    try:
        deal_date = datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        raise Reject("invalid_date", f"no such date {raw_date}") from None
    _check(1990 <= deal_date.year <= 2100, "invalid_date", f"year of {raw_date} is out of range")
    price = cells["price_krw"]
    _check(_DIGITS.fullmatch(price) is not None, "invalid_amount", f"price_krw {price!r}")
    rent_text = cells["monthly_rent_krw"]
    rent: int | None = None
    if ttype == "monthly_lease":
        _check(
            _DIGITS.fullmatch(rent_text) is not None and int(rent_text) > 0,
            "invalid_rent",
            f"monthly_lease needs a positive monthly_rent_krw, got {rent_text!r}",
        )
        rent = int(rent_text)
    else:
        _check(rent_text == "", "invalid_rent", f"a {ttype} has no monthly_rent_krw")
    area_text = cells["area_m2"]
    area: float | None = None
    if area_text:
        _check(_DECIMAL.fullmatch(area_text) is not None, "invalid_area", f"area_m2 {area_text!r}")
        area = float(area_text)
        _check(area > 0, "invalid_area", "area_m2 must be positive")
    try:
        return Transaction(
            source=source,
            sigungu_code=code,
            sigungu=name or "",
            dong=cells["dong"] or None,
            property_type=ptype,
            transaction_type=ttype,
            deal_date=deal_date,
            price_krw=int(price),
            monthly_rent_krw=rent,
            area_m2=area,
            natural_key=key,
            building_type="unit" if ptype == "officetel" else None,
        )
    except ValueError as exc:
        raise Reject("invalid_record", str(exc)) from None


def parse_samples(data: bytes, *, path: str = "<bytes>") -> ParseResult:
    """Read a samples CSV; SourceError for a wrong header or undecodable file."""
    rows = csv_rows(csv_text(data, path), path)
    header = next(rows, (1, None))[1]
    if header is None or tuple(header) != HEADER:
        raise SourceError(f"the header must be exactly: {','.join(HEADER)}", path=path, line=1)

    report = LoadReport(path=path)
    keys = KeyMaker()
    found = Collector(report=report)
    for line, cells in rows:
        if not cells or all(c == "" for c in cells):
            continue
        report.read += 1
        if len(cells) != len(HEADER):
            report.reject(line, "wrong_cell_count", f"{len(cells)} cells, expected {len(HEADER)}")
            continue
        if any(c != c.strip() for c in cells):
            report.reject(line, "surrounding_blanks", "a cell has leading or trailing blanks")
            continue
        by_name = dict(zip(HEADER, cells, strict=True))
        prefix = f"samples:{by_name['source'][:40]}"
        month = by_name["contract_date"][:7]
        key = keys.key(prefix, by_name["sigungu_code"][:5], month, by_name)
        found.add(line, key, None, _row, by_name, key)
    return found.result()
