"""The RTMS web site's CSV export → transactions.

The export is CP949 (UTF-8 accepted, BOM tolerated). Notice lines come first; the header
is the first row whose first cell is ``NO``, or, in older exports without ``NO``, the
first row holding both ``시군구`` and ``계약년월``. Column names are compared without spaces
and with ``m²``/``m2`` read as ``㎡``. ``-`` means empty; quoted cells may hold commas.

Columns read per kind (``RtmsDataset.csv_columns``; alternatives separated by ``/``;
other columns are ignored but enter the natural key):

- ``commercial``: 시군구, 유형, 건축물주용도 / 건물주용도,
  전용/연면적(㎡) / 연면적(㎡) / 건물면적(㎡), 거래금액(만원), 계약년월, 계약일
- ``officetel_trade``: 시군구, 전용면적(㎡), 거래금액(만원), 계약년월, 계약일
- ``officetel_rent``: 시군구, 전용면적(㎡), 보증금(만원), 월세금(만원) / 월세(만원),
  계약년월, 계약일
- ``industrial``: the commercial export's columns (the same 22 fields)
- ``land``: 시군구, 지목, 계약면적(㎡) / 거래면적(㎡), 거래금액(만원), 계약년월, 계약일

The factory/warehouse and land exports' column names are read from the open API's
fields and the commercial export, not from a saved export: a header they do not match
is refused naming the missing columns.

Optional: ``해제사유발생일`` (a date marks a cancelled deal, excluded as ``cancelled``, the
date kept as its ``cancelled_on``) and,
for commercial, factory/warehouse and land exports, ``지분구분`` (``지분`` is excluded as
``partial_share``) and
``대지면적(㎡)`` (the land area of a whole building); ``층``, ``건축년도`` and ``지번`` give the
published floor, build year and lot number (``지번``, or ``번지`` in officetel exports) (as in ``svc_core.sources.rtms``); ``거래유형``,
``매도``/``매도자``, ``매수``/``매수자``, ``용도지역``, ``중개사소재지``, ``건물명``/``단지명``, ``계약기간``, ``계약구분``,
``갱신요구권 사용``, ``종전계약 보증금(만원)`` and ``종전계약 월세(만원)`` give the parties and
contract fields (``svc_core.sources.rtms.published_details``). ``유형`` gives the building type as in
``svc_core.sources.rtms`` (``일반`` whole building, ``집합`` unit; officetels are units).

``시군구`` is the full address (``서울특별시 강남구 수서동``): the district is found in the
bundled table by province and district name (``svc_core.regions.split_address``), the rest
is the dong. A row whose district is not in the table is rejected (``unknown_district``).
Property types follow ``svc_core.sources.rtms`` (same mapping; officetel lease by rent:
0 → ``chartered_lease``; the ``전월세구분`` column is not consulted).

Lines in the report are physical file lines (1-based; a quoted cell spanning lines counts
its first line). Natural key: ``rtms_csv:<kind>:<sigungu>:<YYYY-MM>:<sha256>:<ordinal>``
over every cell except ``NO`` and the cancellation columns.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence

from svc_core.errors import SourceError
from svc_core.models import LoadReport, Transaction
from svc_core.regions import split_address
from svc_core.sources import (
    Collector,
    KeyMaker,
    ParseResult,
    Reject,
    csv_rows,
    csv_text,
    is_blank,
    parse_area,
    parse_manwon,
)
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.rtms import (
    BUILDINGS,
    SOURCE,
    building_property_type,
    published_fields,
)

_OPTIONAL: dict[str, tuple[str, ...]] = {
    "cancelled_on": ("해제사유발생일",),
    "cancelled_flag": ("해제여부",),
    "share": ("지분구분",),
    # what a deal publishes, by the API tag svc_core.sources.rtms.published_fields reads
    "plottagear": ("대지면적(㎡)",),
    "floor": ("층",),
    "buildyear": ("건축년도",),
    "jibun": ("지번", "번지"),
    "dealinggbn": ("거래유형",),
    "slergbn": ("매도", "매도자"),
    "buyergbn": ("매수", "매수자"),
    "landuse": ("용도지역",),
    "estateagentsggnm": ("중개사소재지",),
    "offinm": ("건물명", "단지명"),
    "contractterm": ("계약기간",),
    "contracttype": ("계약구분",),
    "userrright": ("갱신요구권사용",),
    "predeposit": ("종전계약보증금(만원)",),
    "premonthlyrent": ("종전계약월세(만원)",),
}
_KEY_IGNORED = frozenset({"NO", "해제사유발생일", "해제여부"})
_YM = re.compile(r"([0-9]{4})([0-9]{2})")
_DAY = re.compile(r"([0-9]{1,2})(~[0-9]{1,2})?")


def normalize_column(name: str) -> str:
    """Column name without spaces, BOM or unit spelling variants."""
    out = re.sub(r"\s+", "", name.replace("\ufeff", ""))
    return out.replace("m²", "㎡").replace("m2", "㎡").replace("M2", "㎡")


def _is_header(cells: Sequence[str]) -> bool:
    names = [normalize_column(c) for c in cells]
    if names and names[0].upper() == "NO":
        return True
    return "시군구" in names and "계약년월" in names


def _resolve_columns(
    header: Sequence[str], kind: RtmsDataset, path: str, line: int
) -> dict[str, int]:
    names = [normalize_column(c) for c in header]
    position = {name: i for i, name in reversed(list(enumerate(names)))}
    out: dict[str, int] = {}
    missing: list[str] = []
    for role, choices in kind.csv_columns:
        found = next((position[c] for c in choices if c in position), None)
        if found is None:
            missing.append("|".join(choices))
        else:
            out[role] = found
    if missing:
        raise SourceError(
            f"the header lacks column(s) {', '.join(missing)} for a {kind.parse_kind} export",
            path=path,
            line=line,
        )
    for role, choices in _OPTIONAL.items():
        found = next((position[c] for c in choices if c in position), None)
        if found is not None:
            out[role] = found
    return out


def _date(year_month: str, day: str) -> datetime.date:
    ym = _YM.fullmatch(year_month.strip())
    dm = _DAY.fullmatch(day.strip())
    if ym is None or dm is None:
        raise Reject("invalid_date", f"계약년월/계약일 {year_month!r}/{day!r} is malformed")
    try:
        value = datetime.date(int(ym.group(1)), int(ym.group(2)), int(dm.group(1)))
    except ValueError:
        raise Reject("invalid_date", f"no such date {year_month}{day}") from None
    if not 1990 <= value.year <= 2100:
        raise Reject("invalid_date", f"contract year {value.year} is out of range")
    return value


def _amount(raw: str, column: str, reason: str) -> int:
    value = parse_manwon(raw)
    if value is None:
        raise Reject(reason, f"{column} {raw!r} is not an amount in 만원")
    return value


def _exclusion(kind: RtmsDataset, cells: Mapping[str, str]) -> str | None:
    if not is_blank(cells.get("cancelled_on")) or cells.get("cancelled_flag", "").strip() == "O":
        return "cancelled"
    if kind.partial_shares and cells.get("share", "").strip() == "지분":
        return "partial_share"
    return None


def _transaction(kind: RtmsDataset, cells: Mapping[str, str], key: str) -> Transaction:
    address = cells["address"]
    found = split_address(address)
    if found is None:
        detail = f"시군구 {address.strip()!r} names no district of the table"
        raise Reject("unknown_district", detail)
    region, dong = found
    deal_date = _date(cells["month"], cells["day"])
    price = _amount(cells["amount"], "amount", "invalid_amount")
    rent: int | None = None
    if kind is RtmsDataset.OFFICETEL_RENT:
        prop = "officetel"
        monthly = _amount(cells["rent"], "monthly rent", "invalid_rent")
        ttype = "monthly_lease" if monthly else "chartered_lease"
        rent = monthly or None
    else:
        prop, ttype = _sale_type(kind, cells), "sale"
    area = parse_area(cells["area"], "area")
    published = {k: None if is_blank(v) else v for k, v in cells.items()}
    try:
        return Transaction(
            source=SOURCE,
            sigungu_code=region.code,
            sigungu=region.name,
            dong=dong,
            property_type=prop,
            transaction_type=ttype,
            deal_date=deal_date,
            price_krw=price,
            monthly_rent_krw=rent,
            area_m2=area,
            natural_key=key,
            **published_fields(kind, published, area),
        )
    except ValueError as exc:
        raise Reject("invalid_record", str(exc)) from None


def _sale_type(kind: RtmsDataset, cells: Mapping[str, str]) -> str:
    """The property type of a sale row of ``kind``."""
    if kind in BUILDINGS:
        use = cells.get("buildinguse", "")
        return building_property_type(kind, cells.get("buildingtype", ""), use)
    return "land" if kind is RtmsDataset.LAND else "officetel"


def _types(
    kind: RtmsDataset, cells: Mapping[str, str], key: str = ""
) -> tuple[str | None, str | None]:
    """(property type, transaction type) of a row told without its amounts."""
    if kind is not RtmsDataset.OFFICETEL_RENT:
        return _sale_type(kind, cells), "sale"
    rent = parse_manwon(cells.get("rent", ""))
    if rent is None:
        return "officetel", None
    return "officetel", "monthly_lease" if rent else "chartered_lease"


def _key_parts(cells: Mapping[str, str]) -> tuple[str, str]:
    found = split_address(cells["address"])
    code = found[0].code if found is not None else "?"
    ym = _YM.fullmatch(cells["month"].strip())
    month = f"{ym.group(1)}-{ym.group(2)}" if ym is not None else "unknown"
    return code, month


def parse_rtms_csv(data: bytes, kind: RtmsDataset | str, *, path: str = "<bytes>") -> ParseResult:
    """Read one RTMS web CSV export of ``kind``: a dataset, or its reader kind
    (``RtmsDataset.parse_kind``; ValueError for another string)."""
    dataset = RtmsDataset.of_parse_kind(kind)
    rows = csv_rows(csv_text(data, path, cp949=True), path)
    header: list[str] | None = None
    header_line = 0
    for line, cells in rows:
        if _is_header(cells):
            header, header_line = cells, line
            break
    if header is None:
        raise SourceError(
            "no header row found (a row starting with NO, or holding 시군구 and 계약년월)",
            path=path,
        )
    columns = _resolve_columns(header, dataset, path, header_line)
    names = [normalize_column(c) for c in header]

    report = LoadReport(path=path)
    keys = KeyMaker()
    found = Collector(report=report, types_of=_types)
    for line, cells in rows:
        if all(not c.strip() for c in cells):
            continue
        report.read += 1
        if len(cells) > len(names) and any(c.strip() for c in cells[len(names) :]):
            report.reject(line, "wrong_cell_count", f"{len(cells)} cells, header has {len(names)}")
            continue
        if len(cells) < len(names):
            report.reject(line, "wrong_cell_count", f"{len(cells)} cells, header has {len(names)}")
            continue
        by_role = {role: cells[i] for role, i in columns.items()}
        key_fields = {
            name: cell for name, cell in zip(names, cells, strict=False) if name not in _KEY_IGNORED
        }
        code, month = _key_parts(by_role)
        key = keys.key(f"rtms_csv:{dataset.parse_kind}", code, month, key_fields)
        excluded = _exclusion(dataset, by_role)
        found.add(line, key, excluded, _transaction, dataset, by_role, key)
        if excluded == "cancelled":
            found.date_cancellation(key, by_role.get("cancelled_on"))
    return found.result()
