"""Syncing the R-ONE commercial rental survey, pure: answers, tables, eras.

R-ONE answers ``{ROOT: [{"head": [{"list_total_count": N}, {"RESULT": {"CODE", ...}}]},
{"row": [...]}]}`` (``INFO-000`` success, ``INFO-200`` no data) or, on an error, a bare
``{"RESULT": {...}}``; the same in XML (``Type=xml``: root ``<ROOT>`` with ``<head>`` and
``<row>`` elements, or a bare ``<RESULT>``). At most ``PAGE_ROWS`` rows come per call.
An answer is decoded by the charset its ``Content-Type`` declares, then UTF-8, then
CP949; bytes none of them decode are an error, and so is a table name that decoded into
replacement characters or UTF-8 read as Latin-1 (a garbled name would otherwise silently match no
table).

Result codes (``classify``): ``ERROR-300`` (required value missing), ``ERROR-310`` (no
such service), ``ERROR-333`` (``pIndex`` not a number), ``ERROR-336`` (more than 1,000
rows asked) are bugs in the request: ``request``, stop at once. ``ERROR-290`` (invalid
key) and ``INFO-300`` (key restricted): ``key``. ``ERROR-337`` (daily limit): ``limit``.
``INFO-200`` is no data (zero rows, not an error). ``ERROR-500/600/601`` and anything
unknown: ``retry``.

Table ids change when the survey is reorganised, so tables are chosen by name
(``describe_table``): ``임대동향 <metric>(<era>)_<class>``. Each era is its own table
(``ERA`` names them); ``(시계열)`` is the board's linked series, one series over every
quarter. ``plan`` reads, per (class, metric), the linked series when one exists, as a
series of its own (era ``linked``; answers prefer it), and the era tables, each for the
quarters of its own era only (from its start to the quarter before the next era's
start), so no two tables of one era ever supply the same value. A table is read in every
cycle it offers of ``QY`` and ``YY`` (``cycles_of``: the yields tables list ``YY,QY``), one
code a call. The survey's tables whose names fit no era pattern, no class or no statistic
are the plan's ``unread`` (``unread_reason``), listed rather than dropped.

Long because the answer reader (JSON and XML), the grammar of the table names (class,
statistic, era, cycles, the tables it cannot read) and the plan built on it all read one
table list; split, the name rules would be read in two places.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping
from typing import Any
from xml.parsers import expat

import attrs

from svc_core.errors import GatewayError, SourceError
from svc_core.sources import decode_text, json_text
from svc_core.sources.rone import CLASS_NAMES, NO_DATA_CODE, OK_CODE, area_key, row_area

PAGE_ROWS = 1_000
"""The most rows R-ONE returns per call."""
SURVEY_WORD = "임대동향"
FLOOR_WORD = "층별"
"""A rent table whose name says ``층별`` gives the rent of each floor, by item."""
REQUEST_CODES = frozenset({"ERROR-300", "ERROR-310", "ERROR-333", "ERROR-336"})
"""A bug in the request: no retry helps, the run stops at once."""
KEY_CODES = frozenset({"ERROR-290", "INFO-300"})
"""Key invalid or restricted: no retry helps."""
LIMIT_CODES = frozenset({"ERROR-337"})
"""The key's daily call limit."""
SERVER_CODES = frozenset({"ERROR-500", "ERROR-600", "ERROR-601"})
"""Server trouble: retried."""
CYCLES: tuple[str, ...] = ("QY", "YY", "HY", "MM", "WK")
"""``DTACYCLE_CD`` values, in svc's order of preference (the survey is quarterly)."""
LINKED = "linked"
"""The era of a ``(시계열)`` table."""

CLASSES: Mapping[str, str] = CLASS_NAMES
"""Survey classes by their name without spaces (the table name's ``_<class>`` suffix)."""
TABLE_METRICS: tuple[tuple[str, str | None], ...] = (
    ("순영업소득", "net_operating_income"),
    ("임대가격지수", "rent_index"),
    ("공실률", "vacancy_rate"),
    ("임대료", "rent_level"),
    ("소득수익률", "income_yield"),
    ("자본수익률", "capital_yield"),
    ("투자수익률", "total_return"),
    ("수익률", None),
)
"""Metric words of a table name, specific first; None: the metric is each row's item
(the yields tables: 소득수익률, 자본수익률, 투자수익률). The reader takes each row's
metric from its item where it names one (a floor table's 임대료 and 효용비율, the NOI
table's 순영업소득(천원/㎡)); the table's metric places it among the eras."""
_YIELDS = frozenset({"income_yield", "capital_yield", "total_return", None})

_ERA = re.compile(
    r"\((?:(?P<linked>시계열)|(?P<y0>[0-9]{4})년(?:(?P<q0>[1-4])분기)?~"
    r"|(?P<y1>[0-9]{4})년|(?P<y2>[0-9]{4})~(?P<y3>[0-9]{4}))\)"
)
_QUARTER = re.compile(r"([0-9]{4})0([1-4])")
_YEAR = re.compile(r"[0-9]{4}")
_CHARSET = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", re.IGNORECASE)
_DECLARATION = re.compile(r"^<\?xml[^>]*\?>")
_GARBLED = re.compile("\ufffd|[\u00c0-\u00ef][\u0080-\u00bf]")
"""A replacement character, or UTF-8 read as Latin-1 (a lead byte then a continuation
byte): Korean that did not decode. ``·`` alone is a real character."""

Quarter = tuple[int, int]


@attrs.frozen(kw_only=True)
class RonePage:
    """One successful answer: its rows and ``list_total_count``."""

    total_count: int
    rows: tuple[Mapping[str, Any], ...]


@attrs.frozen(kw_only=True)
class RoneTable:
    """A rental-survey statistic table as its name describes it.

    ``metric`` None: by item. ``era`` is ``linked`` or the name's era (``2024Q3~``,
    ``2022~``, ``2021``, ``2013~2016``); ``first``/``last`` the quarters ``plan`` gives
    it (None: open)."""

    table_id: str
    name: str
    survey_class: str
    metric: str | None
    era: str
    cycles: tuple[str, ...] = ("QY",)
    """The cycle codes read, one call series each: quarterly, and the annual (``YY``)
    values too when the list offers both (``YY,QY``, 매년,분기)."""
    first: Quarter | None = None
    last: Quarter | None = None
    by_floor: bool = False
    """A floor-rent table (``층별`` in its name): its items are floors."""

    @property
    def cycle(self) -> str:
        """The table's main cycle code (the first read)."""
        return self.cycles[0]

    @property
    def family(self) -> str:
        """What the table's eras follow one another in: the yields share one; floor
        rents are a family of their own beside the rent of all floors."""
        family = "yields" if self.metric in _YIELDS else str(self.metric)
        return family + (" by floor" if self.by_floor else "")

    def holds(self, period_id: str) -> bool:
        """Whether a row of period ``period_id`` (``YYYY0Q`` or ``YYYY``) is this table's
        to supply (inside its era; a linked table holds every period)."""
        text = period_id.strip()
        quarter = _QUARTER.fullmatch(text)
        if quarter is not None:
            span: tuple[Quarter, Quarter] = ((int(quarter[1]), int(quarter[2])),) * 2
        elif _YEAR.fullmatch(text):
            span = ((int(text), 1), (int(text), 4))
        else:
            return True  # malformed: the reader rejects it by reason
        return (self.first is None or span[0] >= self.first) and (
            self.last is None or span[1] <= self.last
        )


@attrs.frozen(kw_only=True)
class Plan:
    """The tables to read and the ones left out, each with why; ``unread``: the survey's
    (임대동향) tables whose names svc cannot read, as (id, name, why)."""

    tables: tuple[RoneTable, ...]
    skipped: tuple[tuple[RoneTable, str], ...] = ()
    unread: tuple[tuple[str, str, str], ...] = ()


def classify(code: str) -> str:
    """``request``, ``key``, ``limit`` or ``retry`` for an R-ONE result code."""
    if code in REQUEST_CODES:
        return "request"
    if code in KEY_CODES:
        return "key"
    if code in LIMIT_CODES:
        return "limit"
    return "retry"


def decode(data: bytes, content_type: str | None, *, path: str = "<bytes>") -> str:
    """The answer as text: by the declared charset, else as every source file is read
    (``sources.decode_text``: UTF-8, then CP949)."""
    declared = _CHARSET.search(content_type or "")
    if declared is not None:
        charset = declared.group(1)
        try:
            return data.decode("utf-8-sig" if charset.lower() in ("utf-8", "utf8") else charset)
        except (LookupError, UnicodeDecodeError):
            pass
    return decode_text(data, path)


def _result(value: Any) -> tuple[str, str]:
    result = value if isinstance(value, dict) else {}
    return str(result.get("CODE", "") or "").strip(), str(result.get("MESSAGE", "") or "").strip()


def _xml_document(text: str, root: str, path: str) -> dict[str, Any]:
    """An XML answer in the JSON answer's shape."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise SourceError("XML with a DOCTYPE is refused", path=path)
    try:
        # no DOCTYPE (checked above), so no entities to expand
        element = ET.fromstring(_DECLARATION.sub("", text, count=1))  # noqa: S314
    except (ET.ParseError, expat.ExpatError) as exc:
        raise SourceError(f"not an R-ONE XML answer: {exc}", path=path) from None

    def fields(node: ET.Element) -> dict[str, Any]:
        return {child.tag: child.text for child in node}

    if element.tag == "RESULT":
        return {"RESULT": fields(element)}
    if element.tag != root:
        return {}
    head: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for part in element:
        if part.tag == "head":
            for entry in part:
                if entry.tag == "list_total_count":
                    text_count = (entry.text or "").strip()
                    head.append(
                        {"list_total_count": int(text_count) if text_count.isdigit() else None}
                    )
                elif entry.tag == "RESULT":
                    head.append({"RESULT": fields(entry)})
        elif part.tag == "row":
            rows.append(fields(part))
    return {root: [{"head": head}, {"row": rows}]}


MAX_TABLE_ROWS = 1_000_000
"""A larger ``list_total_count`` fails its table (the largest holds under 50,000 rows)."""


def read_page(
    data: bytes, root: str, *, path: str = "<bytes>", content_type: str | None = None
) -> RonePage:
    """Read one R-ONE answer (JSON or XML) under ``root`` (``SttsApiTbl``,
    ``SttsApiTblData``).

    ``GatewayError`` (the code as ``reason_code``) for an error result, ``SourceError``
    for anything malformed or undecodable."""
    text = decode(data, content_type, path=path).lstrip("\ufeff \t\r\n")
    if text[:1] == "<":
        doc: Any = _xml_document(text, root, path)
    else:
        doc = json_text(text, path)
    if not isinstance(doc, dict):
        raise SourceError("not an R-ONE answer", path=path)
    if root not in doc:
        code, message = _result(doc.get("RESULT"))
        if code == NO_DATA_CODE:
            return RonePage(total_count=0, rows=())
        if code:
            raise GatewayError(f"R-ONE error {code}: {message}", path=path, reason_code=code)
        raise SourceError(f"the answer has no {root}", path=path)
    parts = doc[root] if isinstance(doc[root], list) else []
    head: list[Any] = []
    rows: list[Any] = []
    for part in parts:
        if isinstance(part, dict):
            head = part.get("head", head)
            rows = part.get("row", rows)
    total: int | None = None
    code = message = ""
    for entry in head if isinstance(head, list) else []:
        if isinstance(entry, dict) and "list_total_count" in entry:
            raw = entry["list_total_count"]
            total = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
        if isinstance(entry, dict) and "RESULT" in entry:
            code, message = _result(entry["RESULT"])
    if code == NO_DATA_CODE:
        return RonePage(total_count=0, rows=())
    if code != OK_CODE:
        detail = f"R-ONE error {code or '?'}" + (f": {message}" if message else "")
        raise GatewayError(detail, path=path, reason_code=code)
    if total is None or not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SourceError("the answer has no list_total_count or malformed rows", path=path)
    if total > MAX_TABLE_ROWS:
        msg = f"list_total_count {total} is more than any table of the survey holds"
        raise SourceError(f"{msg} ({MAX_TABLE_ROWS:,}): an upstream fault", path=path)
    return RonePage(total_count=total, rows=tuple(rows))


def cycle_of(listed: str) -> str:
    """The one ``DTACYCLE_CD`` to send for a table whose list entry says ``listed``
    (possibly several codes together): quarterly when offered, else the first known
    code, else ``QY`` (the survey's cycle)."""
    offered = {c for c in CYCLES if c in listed.upper()}
    return next((c for c in CYCLES if c in offered), "QY")


def cycles_of(listed: str) -> tuple[str, ...]:
    """The cycle codes to read of a table whose list entry says ``listed`` (codes, or
    their Korean names 매년/분기): ``cycle_of``'s, then ``YY`` when the annual values are
    offered beside it."""
    codes = listed.upper().replace("매년", "YY").replace("분기", "QY")
    first = cycle_of(codes)
    return (first, "YY") if first != "YY" and "YY" in codes else (first,)


def _era(match: re.Match[str]) -> tuple[str, Quarter | None, Quarter | None]:
    if match["linked"]:
        return LINKED, None, None
    if match["y0"]:
        start = (int(match["y0"]), int(match["q0"] or 1))
        label = f"{start[0]}Q{start[1]}~" if match["q0"] else f"{start[0]}~"
        return label, start, None
    if match["y1"]:
        year = int(match["y1"])
        return str(year), (year, 1), (year, 4)
    first, last = int(match["y2"]), int(match["y3"])
    return f"{first}~{last}", (first, 1), (last, 4)


def era_of(name: str) -> str:
    """The era a table's name gives (``linked``, ``2024Q3~``, ...), ``""`` for none."""
    match = _ERA.search(re.sub(r"\s+", "", name))
    return "" if match is None else _era(match)[0]


NO_CLASS = "its name ends in no survey class svc knows (_오피스, _중대형 상가, ...)"
NO_ERA = (
    "its name fits none of the era patterns svc reads ((시계열), (YYYY년~), "
    "(YYYY년N분기~), (YYYY년), (YYYY~YYYY))"
)
NO_STATISTIC = "a statistic svc does not read"


def unread_reason(row: Mapping[str, Any]) -> str | None:
    """Why a table-list row of the rental survey (임대동향) is not read by its name
    (``NO_CLASS``, ``NO_ERA``, ``NO_STATISTIC``); None for a table svc reads and for
    a table of another survey."""
    table_id = str(row.get("STATBL_ID", "") or "").strip()
    name = re.sub(r"\s+", "", str(row.get("STATBL_NM", "") or ""))
    if not table_id or SURVEY_WORD not in name:
        return None
    stem, _, suffix = name.rpartition("_")
    if not stem or suffix not in CLASSES:
        return NO_CLASS
    if _ERA.search(stem) is None:
        return NO_ERA
    words = stem.replace(SURVEY_WORD, "", 1)
    if not any(word in words for word, _ in TABLE_METRICS):
        return NO_STATISTIC
    return None


def describe_table(row: Mapping[str, Any]) -> RoneTable | None:
    """A table-list row as a rental-survey table svc reads, or None (another survey,
    another statistic, no class or no era in the name: ``unread_reason`` says which).
    ``SourceError`` for a name that did not decode."""
    table_id = str(row.get("STATBL_ID", "") or "").strip()
    name = str(row.get("STATBL_NM", "") or "").strip()
    if _GARBLED.search(name):
        raise SourceError(f"the table name {name!r} ({table_id}) did not decode")
    squashed = re.sub(r"\s+", "", name)
    if not table_id or SURVEY_WORD not in squashed or unread_reason(row) is not None:
        return None
    stem, suffix = squashed.rsplit("_", 1)
    survey_class = CLASSES[suffix]
    era = _ERA.search(stem)
    assert era is not None  # unread_reason checked it
    words = stem.replace(SURVEY_WORD, "", 1)
    metrics = [metric for word, metric in TABLE_METRICS if word in words]
    label, first, last = _era(era)
    by_floor = FLOOR_WORD in words and metrics[0] == "rent_level"
    return RoneTable(
        table_id=table_id,
        name=name,
        survey_class=survey_class,
        metric=metrics[0],
        era=label,
        cycles=cycles_of(
            str(row.get("DTACYCLE_CD", "") or "") or str(row.get("DTACYCLE_NM", "") or "")
        ),
        first=first,
        last=last,
        by_floor=by_floor,
    )


def _before(quarter: Quarter) -> Quarter:
    year, q = quarter
    return (year, q - 1) if q > 1 else (year - 1, 4)


def plan(rows: Iterable[Mapping[str, Any]], *, classes: Collection[str] | None = None) -> Plan:
    """The tables to read from a table list, and the ones left out with why.

    ``classes``: the survey classes to read (default all); a table of another class is
    left out.

    Per class and metric: the linked series when there is one (a series of its own),
    and every era table, each holding the quarters from its start to the one before the
    next era's start (the next era within the same class and family: the yields tables
    of the current survey follow the older per-metric ones). Of two tables of the same
    class, metric and era, the one with the smaller id is read."""
    listed = list(rows)
    described = [t for t in (describe_table(r) for r in listed) if t is not None]
    unread = tuple(
        (str(r.get("STATBL_ID", "")).strip(), str(r.get("STATBL_NM", "")).strip(), why)
        for r in listed
        if (why := unread_reason(r)) is not None
    )
    chosen: dict[tuple[str, str | None, bool, str], RoneTable] = {}
    skipped: list[tuple[RoneTable, str]] = []
    for table in sorted(described, key=lambda t: t.table_id):
        if classes is not None and table.survey_class not in classes:
            skipped.append((table, f"class {table.survey_class} is not read"))
            continue
        key = (table.survey_class, table.metric, table.by_floor, table.era)
        if key in chosen:
            skipped.append((table, f"same class, metric and era as {chosen[key].table_id}"))
            continue
        chosen[key] = table
    kept = list(chosen.values())
    starts: dict[tuple[str, str], list[Quarter]] = {}
    for table in kept:
        if table.first is not None:
            starts.setdefault((table.survey_class, table.family), []).append(table.first)
    tables: list[RoneTable] = []
    for table in kept:
        if table.first is not None:
            later = [s for s in starts[(table.survey_class, table.family)] if s > table.first]
            if later:
                end = _before(min(later))
                table = attrs.evolve(table, last=min(end, table.last or end))
        tables.append(table)
    tables.sort(key=lambda t: (t.survey_class, t.family, t.first or (0, 0), t.table_id))
    return Plan(tables=tuple(tables), skipped=tuple(skipped), unread=unread)


def unmapped_areas(
    rows: Iterable[Mapping[str, Any]], area_map: Mapping[str, Any], table_name: str = ""
) -> dict[str, str]:
    """The market areas of ``rows`` of table ``table_name`` (full name → id: the group
    in a floor table, else the class; ``rone.row_area``) that ``area_map`` maps to no
    district: what a sync lists so that the map can be extended."""
    mapped = {area_key(area) for area in area_map}
    found: dict[str, str] = {}
    for row in rows:
        path, area_id = row_area(row, table_name)
        if path and area_key(path) not in mapped:
            found.setdefault(path, area_id)
    return found


def data_document(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """Rows as one ``SttsApiTblData`` answer (what ``svc ingest rone-index`` reads)."""
    listed = list(rows)
    doc = {
        "SttsApiTblData": [
            {"head": [{"list_total_count": len(listed)}, {"RESULT": {"CODE": OK_CODE}}]},
            {"row": listed},
        ]
    }
    return json.dumps(doc, ensure_ascii=False).encode()
