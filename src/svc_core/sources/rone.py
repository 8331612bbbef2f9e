"""R-ONE (Korea Real Estate Board) statistics → index observations.

Two input forms, one result:

- **Open API JSON** (``SttsApiTblData.do``): ``{"SttsApiTblData": [{"head":
  [{"list_total_count": N}, {"RESULT": {"CODE", "MESSAGE"}}]}, {"row": [...]}]}``.
  ``INFO-000`` is success, ``INFO-200`` (no data) an empty result, any other code (also as
  a bare top-level ``RESULT``) raises ``SourceError``. Row fields used: ``WRTTIME_IDTFR_ID``
  (period id), ``DTACYCLE_CD`` (``QY`` quarterly, ``YY`` yearly), ``CLS_FULLNM`` (class
  path), ``ITM_NM``/``ITM_FULLNM`` (item), ``GRP_NM`` when present, ``DTA_VAL``. The
  line of a rejected row is its 1-based ordinal in ``row``.
- **CSV** (UTF-8 or CP949, header required, other columns ignored)::

      period,region,property_class,item,value
      202502,서울>도심,오피스,공실률,9.8

  ``period`` is ``YYYY0Q``, ``YYYY-Qn`` or ``YYYY``; ``region`` a market-area path;
  ``property_class`` a survey class name (or a svc property type); ``item`` an item name
  (or a svc metric type); ``value`` a number, empty for no value. Lines are file lines.

Names, not table ids (which change when the survey is reorganised), decide the meaning.
Metric (first match, specific names first): 효용비율 → ``floor_utility_ratio`` (a
percentage), 임대가격지수 → ``rent_index``, 매매가격지수 → ``sale_price_index``, 공실률 →
``vacancy_rate``, 임대료 → ``rent_level`` (thousand won per m²), 소득수익률 →
``income_yield``, 자본수익률 → ``capital_yield``, 투자수익률 → ``total_return``, 가격지수 →
``sale_price_index``; 순영업소득 in thousand won per m² (``순영업소득(천원/㎡)``, or its
``UI_NM`` says 천원) → ``net_operating_income``, its percentage items are not served
(``item_not_served``). Searched in the item name, then the item's full name, then the
caller's ``table_name`` (the table's name from ``SttsApiTbl.do``), except in a table whose
items are its metrics (``층별`` or ``순영업소득`` in its name): there an item that names no
metric is ``item_not_served``.

Floor tables (``층별임대료 및 층별효용비율``: ``층별`` in the table's name, or a row whose
``GRP_ID`` is filled and whose ``CLS_NM`` is a floor such as ``1층``, ``지하1층``,
``6층이상``): the market area is the group (``GRP_FULLNM``/``GRP_NM``, ``GRP_ID``), the
floor the class (``CLS_NM``); each (area, floor, item, period) is one value carrying its
``floor``. A floor row without a group is rejected (``no_market_area``).

Property class (``DEFAULT_CLASS_MAP``): 오피스 → ``office``, 중대형 상가, 소규모 상가 and
일반 상가 → ``retail``, 집합 상가 → ``commercial_complex``. Every class is its own series:
each value carries its ``survey_class``, and ``PRIMARY_CLASS`` names the class a property
type's answers prefer (중대형 상가 for ``retail``; then ``CLASS_ORDER``). A ``class_map``
value None excludes the class (``unmapped_property_class``). The class is looked for
among the class path's and item's ``>`` parts, then ``GRP_NM``, then inside
``table_name``; ``property_type`` is the fallback (no ``survey_class`` then).

Geography: the survey's market area is the class path without its property-class part,
compared without spaces and ``·``/``/`` (``서울>여의도·마포`` = ``서울>여의도마포``). The
caller's ``area_map`` (market area → sigungu codes) turns it into districts; one row
gives one observation per mapped district, each carrying the area's value. Every area,
mapped or not (``전국``, ``서울``, other areas), is also served under its own code
``A<CLS_ID>`` (``A510006`` for ``서울>기타``), named by its full name as published
(``CLS_FULLNM``); in the CSV form, which has no ``CLS_ID``, an unmapped area is excluded
as ``unmapped_area``. A district may appear under one area only. Rows with a null value
are excluded as ``no_value``; other cycles than quarter and year as
``unsupported_cycle``.

Natural key (``index_key``): ``rone:<sigungu>:<property_type>:<metric_type>:<period>``,
then ``:class=<class>`` for a class other than the property type's primary one,
``:era=<era>`` when the caller names the table's era (``era``, from ``svc sync rone`` or
``--table-name``) and ``:floor=<floor>`` for a floor table's value: one value per place,
class, metric, period, era and floor (a repeat within a file is excluded as
``duplicate_in_file``). ``source_table`` is each row's ``STATBL_ID``.

Long because one reader covers both of R-ONE's input forms (open-API JSON and CSV) and
the name-based metric and class mapping they share; split, the mapping would be read
in two places.
"""

from __future__ import annotations

import datetime
import functools
import importlib.resources
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from svc_core.errors import SourceError
from svc_core.models import (
    METRIC_TYPES,
    PROPERTY_TYPES,
    SIGUNGU_CODE,
    IndexObservation,
    LoadReport,
)
from svc_core.periods import period_end_date
from svc_core.regions import region_name
from svc_core.sources import IndexParseResult, Reject, csv_rows, csv_text, is_blank, load_json

SOURCE = "rone_official"

AREA_TABLE = "data/rone_areas.csv"
"""The bundled market-area table (``market_area,sigungu_code``, one district a line)."""


def bundled_area_map() -> dict[str, tuple[str, ...]]:
    """The bundled market areas → districts (``AREA_TABLE``), in table order."""
    text = importlib.resources.files("svc_core").joinpath(AREA_TABLE).read_text("utf-8-sig")
    out: dict[str, list[str]] = {}
    for line, cells in csv_rows(text, AREA_TABLE):
        if line > 1 and cells:
            out.setdefault(cells[0].strip(), []).append(cells[1].strip())
    return {area: tuple(codes) for area, codes in out.items()}


DEFAULT_AREA_MAP: Mapping[str, Sequence[str]] = bundled_area_map()
"""Seoul's four office market areas (the ones the public facts name: 도심, 강남, 여의도마포,
기타) → Seoul's 25 districts, each once (``AREA_TABLE``). An approximation: an area's
value stands for each district it covers. Pass your own ``area_map`` for other areas or
metros; every area is served under its own code anyway."""

CLASS_NAMES: Mapping[str, str] = {
    "오피스": "오피스",
    "중대형상가": "중대형 상가",
    "소규모상가": "소규모 상가",
    "집합상가": "집합 상가",
    "일반상가": "일반 상가",
}
"""Survey classes by their name without spaces → as published (``_<class>`` of a table)."""
DEFAULT_CLASS_MAP: Mapping[str, str | None] = {
    "오피스": "office",
    "중대형상가": "retail",
    "소규모상가": "retail",
    "집합상가": "commercial_complex",
    "일반상가": "retail",
}
CLASS_ORDER: tuple[str, ...] = ("오피스", "중대형 상가", "집합 상가", "일반 상가", "소규모 상가")
"""Which class an answer prefers when several give a property type's value: the
first (``""``, a class not known, ranks with the primary one)."""
PRIMARY_CLASS: Mapping[str, str] = {
    "office": "오피스",
    "retail": "중대형 상가",
    "commercial_complex": "집합 상가",
}
"""The class each property type's values came from before every class was read."""

METRIC_NAMES: tuple[tuple[str, str], ...] = (
    ("효용비율", "floor_utility_ratio"),
    ("임대가격지수", "rent_index"),
    ("매매가격지수", "sale_price_index"),
    ("공실률", "vacancy_rate"),
    ("임대료", "rent_level"),
    ("소득수익률", "income_yield"),
    ("자본수익률", "capital_yield"),
    ("투자수익률", "total_return"),
    ("가격지수", "sale_price_index"),
)

OK_CODE = "INFO-000"
NO_DATA_CODE = "INFO-200"

FLOOR_WORD = "층별"
"""A table whose name says ``층별`` (floor rents and floor utility ratios) has the market
area as its group (``GRP_*``) and the floor as its class (``CLS_NM``)."""
NOI_WORD = "순영업소득"
"""Net operating income: served in thousand won per m² only (``순영업소득(천원/㎡)``)."""
BY_ITEM_WORDS: tuple[str, ...] = (FLOOR_WORD, NOI_WORD)
"""Tables whose items are their metrics: an item naming none is not served, never
read as the metric of the table's name."""
FLOOR_NAME = re.compile(r"(지하)?[0-9]{1,3}층(이상|이하)?")
"""A floor as R-ONE names it: ``지하1층``, ``1층`` ... ``5층``, ``6층이상``."""

_QUARTER_ID = re.compile(r"([0-9]{4})0([1-4])")
_QUARTER_LABEL = re.compile(r"([0-9]{4})-Q([1-4])")
_YEAR = re.compile(r"[0-9]{4}")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_AREA_ID = re.compile(r"[0-9]{1,12}")


def area_key(path: str) -> str:
    """Comparable form of a market-area path: no spaces, ``·`` or ``/`` inside parts."""
    parts = [re.sub(r"[\s·/]+", "", p) for p in path.split(">")]
    return ">".join(p for p in parts if p)


@functools.lru_cache(maxsize=4096)
def _squash(name: str) -> str:
    return re.sub(r"\s+", "", name)


def _districts(area_map: Mapping[str, Sequence[str]]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Area key → ((code, name), ...); ValueError for unknown or repeated codes."""
    by_area: dict[str, tuple[tuple[str, str], ...]] = {}
    owner: dict[str, str] = {}
    for area, codes in area_map.items():
        resolved: list[tuple[str, str]] = []
        for code in codes:
            name = region_name(code) if SIGUNGU_CODE.fullmatch(code) else None
            if name is None:
                raise ValueError(f"area_map: {area!r} names {code!r}, not a known district code")
            if code in owner:
                raise ValueError(
                    f"area_map: district {code} is under both {owner[code]!r} and {area!r}"
                )
            owner[code] = area
            resolved.append((code, name))
        by_area[area_key(area)] = tuple(resolved)
    return by_area


@attrs.frozen(kw_only=True)
class _Row:
    line: int
    period_id: str
    cycle: str | None
    class_path: str
    item_names: tuple[str, ...]
    group_name: str
    property_class: str | None
    value: Any
    area_id: str = ""
    """The market area's ``CLS_ID`` (open-API rows only)."""
    table_id: str = ""
    """The row's ``STATBL_ID`` (open-API rows only)."""
    floor_name: str = ""
    """``CLS_NM``: the floor of a floor table's row."""
    unit: str = ""
    """``UI_NM`` (open-API rows only)."""
    by_floor: bool = False
    """A floor table's row: ``class_path`` and ``area_id`` are its group's, the floor is
    ``floor_name``."""


class _Exclude(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def is_floor_table(table_name: str | None) -> bool:
    """Whether a table's name says it is a floor table (``층별``)."""
    return FLOOR_WORD in _squash(table_name or "")


def is_floor_row(row: Mapping[str, Any], table_name: str | None) -> bool:
    """Whether an open-API row is a floor table's: the table's name says ``층별``, or the
    row has a group and its class is a floor (``1층``, ``지하1층``, ``6층이상``)."""
    if is_floor_table(table_name):
        return True
    floor = _squash(_text(row.get("CLS_NM")))
    return bool(_text(row.get("GRP_ID")).strip()) and FLOOR_NAME.fullmatch(floor) is not None


def row_area(row: Mapping[str, Any], table_name: str | None) -> tuple[str, str]:
    """(market-area path, area id) of an open-API row: the group in a floor table
    (``GRP_FULLNM`` or ``GRP_NM``, ``GRP_ID``), else the class (``CLS_FULLNM`` or
    ``CLS_NM``, ``CLS_ID``)."""
    if is_floor_row(row, table_name):
        path = _text(row.get("GRP_FULLNM")) or _text(row.get("GRP_NM"))
        return path.strip(), _text(row.get("GRP_ID")).strip()
    path = _text(row.get("CLS_FULLNM")) or _text(row.get("CLS_NM"))
    return path.strip(), _text(row.get("CLS_ID")).strip()


def _item_metric(name: str, unit: str) -> str | None:
    """The metric an item's name gives (``unit``: the row's ``UI_NM``), None for none;
    ``_Exclude`` for net operating income in another unit than thousand won per m²."""
    if name in METRIC_TYPES:
        return name
    if NOI_WORD in name:
        if "천원" in name or "천원" in unit:
            return "net_operating_income"
        raise _Exclude("item_not_served")
    return next((found for keyword, found in METRIC_NAMES if keyword in name), None)


def _metric(row: _Row, table_name: str | None) -> str:
    """The metric of a row: its item's, else its table's (not in a table whose items are
    its metrics: there an item that names none is not served)."""
    for candidate in row.item_names:
        metric = _item_metric(_squash(candidate), row.unit)
        if metric is not None:
            return metric
    table = _squash(table_name or "")
    if any(word in table for word in BY_ITEM_WORDS):
        raise _Exclude("item_not_served")
    metric = _item_metric(table, row.unit) if table else None
    if metric is not None:
        return metric
    raise Reject("unknown_metric", f"item {row.item_names[0]!r} names no known metric")


def _floor(row: _Row) -> str:
    """The floor of a floor table's row (its ``CLS_NM``, as published)."""
    floor = row.floor_name.strip()
    if not floor or len(floor) > 20:
        raise Reject("unknown_floor", f"class {floor[:40]!r} names no floor")
    return floor


def _class(name: str, mapped: str | None) -> tuple[str, str]:
    if mapped is None:
        raise _Exclude("unmapped_property_class")
    return mapped, CLASS_NAMES.get(name, "")


@functools.lru_cache(maxsize=64)
def _class_keys(items: tuple[tuple[str, str | None], ...]) -> Mapping[str, str | None]:
    return {_squash(k): v for k, v in items}


def _property(
    row: _Row,
    table_name: str | None,
    class_map: Mapping[str, str | None],
    fallback: str | None,
) -> tuple[str, str, str]:
    """(property type, market-area path without the class part as published, survey
    class or ``""``)."""
    classes = _class_keys(tuple(class_map.items()))
    raw = [p.strip() for p in row.class_path.split(">")]
    parts = [_squash(p) for p in raw]
    area = ">".join(r for r, p in zip(raw, parts, strict=True) if p and p not in classes)
    candidates: list[str] = []
    if row.property_class is not None:
        candidates.append(_squash(row.property_class))
    candidates += [p for p in parts if p in classes]
    for item in row.item_names:
        candidates += [_squash(p) for p in item.split(">")]
    candidates.append(_squash(row.group_name))
    for candidate in candidates:
        if candidate in classes:
            prop, survey_class = _class(candidate, classes[candidate])
            return prop, area, survey_class
        if candidate in PROPERTY_TYPES:
            return candidate, area, ""
    if table_name:
        for name, mapped in classes.items():
            if name in _squash(table_name):
                prop, survey_class = _class(name, mapped)
                return prop, area, survey_class
    if fallback is not None:
        return fallback, area, ""
    raise Reject("unknown_property_class", f"no property class in {row.class_path!r}")


def _period(row: _Row) -> str:
    cycle = (row.cycle or "").strip().upper() or None
    if cycle not in (None, "QY", "YY"):
        raise _Exclude("unsupported_cycle")
    pid = row.period_id.strip()
    quarter = _QUARTER_ID.fullmatch(pid) or _QUARTER_LABEL.fullmatch(pid)
    if quarter is not None and cycle in (None, "QY"):
        year, q = int(quarter.group(1)), int(quarter.group(2))
        label = f"{year:04d}-Q{q}"
    elif _YEAR.fullmatch(pid) is not None and cycle in (None, "YY"):
        year = int(pid)
        label = pid
    else:
        raise Reject("invalid_period", f"period {pid!r} is not YYYY0Q, YYYY-Qn or YYYY")
    if not 1990 <= year <= 2100:
        raise Reject("invalid_period", f"period {pid!r} is out of range")
    return label


@functools.lru_cache(maxsize=1024)
def _period_end(period: str) -> datetime.date:
    return period_end_date(period)


def _value(row: _Row) -> float:
    raw = row.value
    if raw is None or (isinstance(raw, str) and is_blank(raw)):
        raise _Exclude("no_value")
    if isinstance(raw, bool):
        raise Reject("invalid_value", f"value {raw!r} is not a number")
    if isinstance(raw, int | float):
        value = float(raw)
    elif isinstance(raw, str) and _NUMBER.fullmatch(raw.strip().replace(",", "")):
        value = float(raw.strip().replace(",", ""))
    else:
        raise Reject("invalid_value", f"value {str(raw)[:40]!r} is not a number")
    if not math.isfinite(value):
        raise Reject("invalid_value", f"value {raw!r} is not finite")
    return value


def _targets(
    row: _Row, area: str, mapped: tuple[tuple[str, str], ...] | None
) -> tuple[tuple[str, str], ...]:
    """Where a row's value is served: its area's districts, and the area under its own
    code ``A<CLS_ID>`` named by its full name; ``unmapped_area`` when there is neither
    (a CSV row of an area the map does not name)."""
    own: tuple[tuple[str, str], ...] = ()
    if _AREA_ID.fullmatch(row.area_id):
        own = ((f"A{row.area_id}", (area or row.class_path.strip())[:40].strip()),)
    if mapped is None and not own:
        raise _Exclude("unmapped_area")
    return (*(mapped or ()), *own)


def index_key(
    place: str,
    prop: str,
    metric: str,
    period: str,
    survey_class: str = "",
    era: str = "",
    floor: str = "",
) -> str:
    """The natural key of a value (module docstring): the class when not the property
    type's primary one, the era when known, the floor of a floor rent."""
    key = f"rone:{place}:{prop}:{metric}:{period}"
    if survey_class and survey_class != PRIMARY_CLASS.get(prop):
        key += f":class={_squash(survey_class)}"
    key += f":era={era}" if era else ""
    return key + (f":floor={_squash(floor)}" if floor else "")


def _observations(
    rows: Iterator[_Row],
    report: LoadReport,
    *,
    area_map: Mapping[str, Sequence[str]],
    class_map: Mapping[str, str | None],
    table_name: str | None,
    property_type: str | None,
    era: str = "",
) -> list[IndexObservation]:
    districts = _districts(area_map)
    seen: set[str] = set()
    out: list[IndexObservation] = []
    for row in rows:
        report.read += 1
        try:
            value = _value(row)
            metric = _metric(row, table_name)
            floor = _floor(row) if row.by_floor else ""
            if row.by_floor and not row.class_path.strip():
                raise Reject("no_market_area", f"floor {floor!r} has no group (GRP_FULLNM)")
            prop, area, survey_class = _property(row, table_name, class_map, property_type)
            period = _period(row)
            targets = _targets(row, area, districts.get(area_key(area)))
        except _Exclude as exc:
            report.exclude(exc.reason)
            continue
        except Reject as rej:
            report.reject(row.line, rej.reason, rej.detail)
            continue
        end = _period_end(period)
        for code, name in targets:
            key = index_key(code, prop, metric, period, survey_class, era, floor)
            if key in seen:
                report.exclude("duplicate_in_file")
                continue
            seen.add(key)
            out.append(
                IndexObservation(
                    sigungu_code=code,
                    sigungu=name,
                    property_type=prop,
                    metric_type=metric,
                    period=period,
                    period_end_date=end,
                    value_pct=value,
                    source=SOURCE,
                    natural_key=key,
                    survey_class=survey_class,
                    era=era,
                    source_table=row.table_id[:40],
                    floor=floor,
                )
            )
    return out


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _json_rows(data: bytes, path: str, table_name: str | None) -> list[_Row]:
    doc = load_json(data, path)
    if not isinstance(doc, dict):
        raise SourceError("JSON is not an object: not an R-ONE response", path=path)
    if "RESULT" in doc and "SttsApiTblData" not in doc:
        result = doc["RESULT"] if isinstance(doc["RESULT"], dict) else {}
        top_code = _text(result.get("CODE"))
        if top_code == NO_DATA_CODE:
            return []
        raise SourceError(f"R-ONE error {top_code}: {_text(result.get('MESSAGE'))}", path=path)
    parts = doc.get("SttsApiTblData")
    if not isinstance(parts, list):
        raise SourceError("no SttsApiTblData list: not an R-ONE data response", path=path)
    code: str | None = None
    message = ""
    raw_rows: list[Any] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        for entry in part.get("head") or []:
            if isinstance(entry, dict) and isinstance(entry.get("RESULT"), dict):
                code = _text(entry["RESULT"].get("CODE"))
                message = _text(entry["RESULT"].get("MESSAGE"))
        if isinstance(part.get("row"), list):
            raw_rows.extend(part["row"])
    if code == NO_DATA_CODE:
        return []
    if code != OK_CODE:
        raise SourceError(f"R-ONE error {code or 'missing'}: {message or 'no message'}", path=path)
    rows: list[_Row] = []
    for i, raw in enumerate(raw_rows, start=1):
        item = raw if isinstance(raw, dict) else {}
        by_floor = is_floor_row(item, table_name)
        area, area_id = row_area(item, table_name)
        rows.append(
            _Row(
                line=i,
                period_id=_text(item.get("WRTTIME_IDTFR_ID")),
                cycle=_text(item.get("DTACYCLE_CD")) or None,
                class_path=area,
                item_names=(_text(item.get("ITM_NM")), _text(item.get("ITM_FULLNM"))),
                group_name="" if by_floor else _text(item.get("GRP_NM")),
                property_class=None,
                value=item.get("DTA_VAL"),
                area_id=area_id,
                table_id=_text(item.get("STATBL_ID")).strip(),
                floor_name=(_text(item.get("CLS_NM")) or _text(item.get("CLS_FULLNM")))
                if by_floor
                else "",
                unit=_text(item.get("UI_NM")).strip(),
                by_floor=by_floor,
            )
        )
    return rows


CSV_COLUMNS: tuple[str, ...] = ("period", "region", "property_class", "item", "value")


def _csv_rows(data: bytes, path: str) -> Iterator[_Row]:
    rows = csv_rows(csv_text(data, path, cp949=True), path)
    header = [c.strip().lower() for c in next(rows, (1, []))[1]]
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise SourceError(
            f"the header lacks column(s) {', '.join(missing)}; expected {','.join(CSV_COLUMNS)}",
            path=path,
            line=1,
        )
    index = {c: header.index(c) for c in CSV_COLUMNS}
    for line, cells in rows:
        if all(not c.strip() for c in cells):
            continue
        if len(cells) < len(header):
            cells = cells + [""] * (len(header) - len(cells))
        yield _Row(
            line=line,
            period_id=cells[index["period"]],
            cycle=None,
            class_path=cells[index["region"]],
            item_names=(cells[index["item"]],),
            group_name="",
            property_class=cells[index["property_class"]],
            value=cells[index["value"]],
        )


def parse_rone_json(
    data: bytes,
    *,
    path: str = "<bytes>",
    area_map: Mapping[str, Sequence[str]] = DEFAULT_AREA_MAP,
    class_map: Mapping[str, str | None] = DEFAULT_CLASS_MAP,
    table_name: str | None = None,
    property_type: str | None = None,
    era: str = "",
) -> IndexParseResult:
    """Read an R-ONE ``SttsApiTblData`` JSON answer; ``era``: the era of the table it
    is an answer of (``""``: not known). ValueError for a bad ``area_map``."""
    report = LoadReport(path=path, unit="item")
    rows = _json_rows(data, path, table_name)
    observations = _observations(
        iter(rows),
        report,
        area_map=area_map,
        class_map=class_map,
        table_name=table_name,
        property_type=property_type,
        era=era,
    )
    return IndexParseResult(observations=observations, report=report)


def parse_rone_csv(
    data: bytes,
    *,
    path: str = "<bytes>",
    area_map: Mapping[str, Sequence[str]] = DEFAULT_AREA_MAP,
    class_map: Mapping[str, str | None] = DEFAULT_CLASS_MAP,
) -> IndexParseResult:
    """Read the documented R-ONE CSV form. ValueError for a bad ``area_map``."""
    report = LoadReport(path=path)
    observations = _observations(
        _csv_rows(data, path),
        report,
        area_map=area_map,
        class_map=class_map,
        table_name=None,
        property_type=None,
    )
    return IndexParseResult(observations=observations, report=report)


def parse_rone(
    data: bytes,
    *,
    path: str = "<bytes>",
    area_map: Mapping[str, Sequence[str]] = DEFAULT_AREA_MAP,
    class_map: Mapping[str, str | None] = DEFAULT_CLASS_MAP,
    table_name: str | None = None,
    property_type: str | None = None,
    era: str = "",
) -> IndexParseResult:
    """Either form, detected: JSON when the content starts with ``{``, else CSV."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return parse_rone_json(
            data,
            path=path,
            area_map=area_map,
            class_map=class_map,
            table_name=table_name,
            property_type=property_type,
            era=era,
        )
    return parse_rone_csv(data, path=path, area_map=area_map, class_map=class_map)
