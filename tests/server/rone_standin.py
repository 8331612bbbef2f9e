"""A local stand-in of the R-ONE open API, built from the public facts in the shared data
notes: ``data/official-apis.md`` (section numbers below are its own, "§1.6" ...), each
fact citing there its public source, repeated here beside the code that serves it.

What it does as the real service does:

- ``SttsApiTbl.do`` (table list) and ``SttsApiTblData.do`` (values); ``KEY`` is required
  everywhere, ``STATBL_ID`` and ``DTACYCLE_CD`` on data calls: a missing one is answered
  ``ERROR-300`` in the bare ``RESULT`` form; an unknown key ``ERROR-290``; a non-numeric
  ``pIndex`` ``ERROR-333``; ``pSize`` over 1,000 ``ERROR-336``; another operation
  ``ERROR-310``; no rows ``INFO-200`` (§1.1, §1.4: ``hlucent/realestate-stats-mcp``
  ``ERROR_MESSAGES``, public file 62472876768, ``yooooonjae/cheungwi:src/collect/rone_office.py``).
- ``Type`` defaults to XML (§1.1, the board's specification in public file 62472876768);
  answers ``{ROOT: [{"head": [...]}, {"row": [...]}]}`` in JSON, ``<ROOT><head>...</head>
  <row>...</row></ROOT>`` in XML; errors as a bare ``RESULT`` (§1.2). ``garble`` serves
  the Korean of JSON answers as unrecoverable bytes while XML stays clean (§1.3:
  ``hlucent/realestate-stats-mcp:DEVLOG.md`` 2026-08-16 (2) item 6).
- The tables of §1.6, §1.8 and §1.9 under their published ids and names, data rows with
  the §1.2 fields (``GRP_*`` null outside floor tables, §1.7), floor tables whose market
  area is the group and whose floor is the class, the NOI table, old-era yields tables of
  three items each, the rent index's item ``지수``, market areas as §1.10 counts them.

Placeholders (the facts give none; svc must not depend on them): ids of the 상권 (market
areas below 시도 and Seoul's office 권역) and their names but for the few the facts
quote, the floors' ``CLS_ID``\\ s, ``ITM_ID``\\ s but 100002 (소득수익률) and 100005
(순영업소득(천원/㎡)), ``UI_NM`` of 지수 and 효용비율, the messages' wording, every value
(a formula, ``value``), the ids ``PLACEHOLDER_NN`` of tables the facts name by class but not
by id, how a null field is written in XML (an empty element), and the names of the
2002–2012 and 2017–2018 tables, which no source quotes (§1.9): they are written here in an
era form svc has not seen, as the facts say a reader must expect.

On demand (``fail``: one entry per call, ``""`` for a normal answer) it answers any result
code in the bare form, or ``500`` (HTTP 500); ``charset`` sets the declared charset
(``EUC-KR`` encodes the body so); ``area_limit`` serves only the first N areas of each
class (a subset of the real answer, every row as the service writes it: fewer rows for
fast tests).
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from tests.server.rtms_standin import background_http

KEY = "rone-test-key"
# §1.6: the classes of the survey's table names
CLASSES = ("오피스", "중대형 상가", "소규모 상가", "집합 상가", "일반 상가")
LAST = (2026, 2)
"""The last quarter published (§1.10: 2026 Q2, ``lij020218/build.up`` header, 2026-08-03)."""

# §1.10: the 시도 totals' CLS_IDs (public file 59496465054)
SIDO: tuple[tuple[int, str], ...] = tuple(
    (500002 + i, name)
    for i, name in enumerate(
        [
            "서울",
            "부산",
            "대구",
            "인천",
            "광주",
            "대전",
            "울산",
            "세종",
            "경기",
            "강원",
            "충북",
            "충남",
            "전북",
            "전남",
            "경북",
            "경남",
            "제주",
        ]
    )
)
# §1.10: Seoul's office 권역 (cheungwi ``REGION_CLS_ID``; public file 20903456140)
SEOUL_OFFICE = (
    (510003, "서울>도심"),
    (510004, "서울>강남"),
    (510005, "서울>여의도마포"),
    (510006, "서울>기타"),
)
MARKETS: dict[str, int] = {
    # §1.10: 중대형 287 and 소규모 258 상권 in 2026 Q2 (``lij020218/build.up`` header, rows
    # whose CLS_FULLNM has a '>'); "about 260 to 290 per class": 오피스, 집합 and 일반
    # are given the range's ends and middle [inferred]
    "오피스": 260,
    "중대형 상가": 287,
    "소규모 상가": 258,
    "집합 상가": 270,
    "일반 상가": 270,
}


@functools.cache
def areas(survey_class: str) -> tuple[tuple[int, str], ...]:
    """(id, CLS_FULLNM) of every area of a class: the 17 시도 totals and the class's 상권.
    Office areas are 시도>권역>상권 (``서울>도심>광화문``), retail 시도>상권 (``대전>둔산``)
    (§1.10, ``cheungwi``; ``build.up``); Seoul's four office 권역 count among the office's
    areas with a '>'. Placeholder ids and names past the quoted ones."""
    named: list[str]
    if survey_class == "오피스":
        named = [path for _, path in SEOUL_OFFICE] + ["서울>도심>광화문"]
    else:
        # 서울>강남대로: the shape of §1.7's illustrative floor row; 대전>둔산: §1.10
        named = ["서울>강남대로", "대전>둔산"]
    ids = dict(SEOUL_OFFICE)
    found: list[tuple[int, str]] = [
        (next((i for i, p in ids.items() if p == path), 520000 + n), path)
        for n, path in enumerate(named, start=1)
    ]
    klass = CLASSES.index(survey_class)
    for n in range(len(named), MARKETS[survey_class]):
        sido = SIDO[n % len(SIDO)][1]
        found.append((530000 + 1000 * klass + n, f"{sido}>상권{n:03d}"))
    seoul, rest = SIDO[0], SIDO[1:]
    return (seoul, *found[: len(named)], *rest, *found[len(named) :])


# §1.7: the floors of a floor table (public file 68442219407, ``SOURCE_FLOOR_NAMES``)
FLOORS = ("지하1층", "1층", "2층", "3층", "4층", "5층", "6층이상")
YIELD_ITEMS = ("소득수익률", "자본수익률", "투자수익률")
ITEM_IDS = {"소득수익률": 100002, "순영업소득(천원/㎡)": 100005}  # §1.6, §1.8


def quarters(first: tuple[int, int], last: tuple[int, int]) -> list[str]:
    year, q = first
    out: list[str] = []
    while (year, q) <= last:
        out.append(f"{year}0{q}")
        year, q = (year, q + 1) if q < 4 else (year + 1, 1)
    return out


# Eras (§1.9; the current one §1.6): (name part, first quarter, last quarter)
CURRENT = ("(2024년3분기~)", (2024, 3), LAST)
ERAS = (
    CURRENT,
    ("(2022년~)", (2022, 1), (2024, 2)),
    ("(2021년)", (2021, 1), (2021, 4)),
    ("(2020년)", (2020, 1), (2020, 4)),
    ("(2019년)", (2019, 1), (2019, 4)),
    ("(2017년~2018년)", (2017, 1), (2018, 4)),  # name not quoted by any source
    ("(2013~2016)", (2013, 1), (2016, 4)),
    ("(2002년~2012년)", (2002, 1), (2012, 4)),  # name not quoted by any source
)
UNSEEN_ERAS = ("(2017년~2018년)", "(2002년~2012년)")
"""Era forms svc has not seen (the real names are not quoted: §1.9)."""
QUARTERLY = ("QY", "분기")
BOTH = ("YY,QY", "매년,분기")
"""§1.5: the list may give a table both cycles as one value; the yields tables do
(public files 69581499918, 62044104309)."""

# (id, name, items, unit, era, cycles)
_Spec = tuple[
    str, str, tuple[str, ...], str, tuple[str, tuple[int, int], tuple[int, int]], tuple[str, str]
]


def _office() -> list[_Spec]:
    """§1.6 and §1.9 (public file 20903456140; ``cheungwi``): vacancy, rent and yields of
    each era, the linked rent index, the current NOI table (§1.8)."""
    old = {
        "공실률": ["A_2024_00253", "A_2024_00250", "A_2024_00247", "A_2024_00244", "A_2024_00241", "A_2024_00238", "A_2024_00678"],
        "임대료": ["A_2024_00277", "A_2024_00273", "A_2024_00269", "A_2024_00265", "A_2024_00261", "A_2024_00257", "A_2024_00680"],
        "수익률": ["A_2024_00366", "A_2024_00362", "A_2024_00358", "A_2024_00354", "A_2024_00350", "A_2024_00346", "A_2024_00682"],
    }  # fmt: skip
    specs: list[_Spec] = [
        ("TT244763134428698", "임대동향 지역별 공실률(2024년3분기~)_오피스", ("공실률",), "%", CURRENT, QUARTERLY),
        ("TT249843134237374", "임대동향 지역별 임대료(2024년3분기~)_오피스", ("임대료",), "천원/㎡", CURRENT, QUARTERLY),
        # §1.6: the current yields table's items are the three yields
        ("T245883135037859", "임대동향 수익률(분기)(2024년3분기~)_오피스", YIELD_ITEMS, "%", CURRENT, BOTH),
        # §1.6: item 지수, 2024.2Q = 100, linked from 2013 Q1 (public file 55726469166)
        ("TT244963134453269", "임대동향 지역별 임대가격지수(시계열)_오피스", ("지수",), "2024.2Q=100", ("(시계열)", (2013, 1), LAST), QUARTERLY),
        # §1.8: NOI in 천원/㎡ (ITM_ID 100005) beside a percentage item
        ("TT242303134253883", "임대동향 순영업소득(2024년3분기~)_오피스", ("순영업소득(천원/㎡)", "순영업소득(%)"), "", CURRENT, QUARTERLY),
    ]  # fmt: skip
    for n, era in enumerate(ERAS[1:]):
        specs.append(
            (
                old["공실률"][n],
                f"임대동향 지역별 공실률{era[0]}_오피스",
                ("공실률",),
                "%",
                era,
                QUARTERLY,
            )
        )
        specs.append(
            (
                old["임대료"][n],
                f"임대동향 지역별 임대료{era[0]}_오피스",
                ("임대료",),
                "천원/㎡",
                era,
                QUARTERLY,
            )
        )
        # §1.9: an old yields table holds all three items (``cheungwi`` ``_check_items``),
        # named 수익률(분기)(<era>) (``sangkwon-poly`` ``CommercialRentLoadService``)
        specs.append((old["수익률"][n], f"임대동향 수익률(분기){era[0]}_오피스", YIELD_ITEMS, "%", era, BOTH))  # fmt: skip
    return specs


def _retail() -> list[_Spec]:
    """§1.6 (public files 68793972050, 69581499918; ``build.up``), §1.7 and §1.9."""
    current = {
        "중대형 상가": ("T249633134845544", "T244363134858603", "T241873134863890"),
        "소규모 상가": ("T241833134686576", "T248223134698125", "T246233134891629"),
        "집합 상가": ("T243283134931290", "T244913134948657", "T249023134703697"),
    }
    specs: list[_Spec] = []
    for klass, (vacancy, rent, floor) in current.items():
        specs += [
            (vacancy, f"임대동향 지역별 공실률(2024년3분기~)_{klass}", ("공실률",), "%", CURRENT, QUARTERLY),
            (rent, f"임대동향 지역별 임대료(2024년3분기~)_{klass}", ("임대료",), "천원/㎡", CURRENT, QUARTERLY),
            # §1.7: items 임대료 (천원/㎡) and 효용비율 per area (group) and floor (class)
            (floor, f"임대동향 층별임대료 및 층별효용비율(2024년3분기~)_{klass}", ("임대료", "효용비율"), "", CURRENT, QUARTERLY),
        ]  # fmt: skip
    # §1.6: the 중대형 linked rent index (public file 55726469166)
    specs.append(("TT248473134635539", "임대동향 지역별 임대가격지수(시계열)_중대형 상가", ("지수",), "2024.2Q=100", ("(시계열)", (2013, 1), LAST), QUARTERLY))  # fmt: skip
    # §1.9: 중대형 상가 vacancy of the older eras (public file 55726469166)
    for table_id, era in zip(
        (
            "A_2024_00254",
            "A_2024_00251",
            "A_2024_00248",
            "A_2024_00245",
            "A_2024_00242",
            "A_2024_00239",
        ),
        ERAS[1:7],
        strict=True,
    ):
        specs.append((table_id, f"임대동향 지역별 공실률{era[0]}_중대형 상가", ("공실률",), "%", era, QUARTERLY))  # fmt: skip
    # §1.6 names the class 일반 상가 (recent), no table id: one placeholder table
    specs.append(("PLACEHOLDER_01", "임대동향 지역별 공실률(2024년3분기~)_일반 상가", ("공실률",), "%", CURRENT, QUARTERLY))  # fmt: skip
    return specs


UNITS = {
    "임대료": "천원/㎡",
    "효용비율": "%",
    "순영업소득(천원/㎡)": "천원/㎡",
    "순영업소득(%)": "%",
}
"""Units of the items of tables with several units (효용비율's ``UI_NM``: placeholder)."""


def _tables() -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = []
    for table_id, name, items, unit, (_, first, last), (code, label) in _office() + _retail():
        tables.append(
            {
                "STATBL_ID": table_id,
                "STATBL_NM": name,
                "DTACYCLE_CD": code,
                "DTACYCLE_NM": label,
                "items": items,
                "unit": unit,
                "periods": quarters(first, last),
            }
        )
    # another survey's table: the live list answer of §1.2 (public file 59951449733)
    tables.append(
        {
            "STATBL_ID": "A_2024_00900",
            "STATBL_NM": "(연) 지역별 지가지수",
            "DTACYCLE_CD": "YY",
            "DTACYCLE_NM": "매년",
            "items": ("지가지수",),
            "unit": "기준시점 : 2026.01.=100.0",
            "periods": [],
        }
    )
    return tables


TABLES = _tables()
BY_NAME = {t["STATBL_NM"]: t for t in TABLES}
BY_ID = {t["STATBL_ID"]: t for t in TABLES}

_BASE = {"공실률": 9.0, "임대료": 25.0, "지수": 100.0, "효용비율": 100.0}
_BASE.update({"소득수익률": 1.0, "자본수익률": 0.4, "투자수익률": 1.4})
_BASE.update({"순영업소득(천원/㎡)": 60.0, "순영업소득(%)": 75.0})


def survey_class(name: str) -> str:
    suffix = name.rsplit("_", 1)[-1]
    return suffix if suffix in CLASSES else ""


def value(name: str, cls_id: int, period: str, item: str, floor: str = "") -> float:
    """The quarter's value the stand-in serves (a formula; ``name`` the table name): each
    class, era, area and floor gives a value of its own, so a test can tell which table,
    area and floor one came from."""
    area = cls_id % 1000
    step = (int(period[:4]) - 2013) * 4 + int(period[-1]) - 1
    klass = CLASSES.index(survey_class(name)) if survey_class(name) else 0
    if item == "지수":
        return round(100.0 + 0.25 * (step - 45) + 0.01 * area + 0.1 * klass, 2)
    if floor:
        level = FLOORS.index(floor)
        if item == "효용비율":  # §1.7 [illustrative]: 1층 = 100, the others below
            return round(100.0 if floor == "1층" else 30.0 + 5 * level + 0.01 * area, 1)
        return round(20.0 + 40.0 / (1 + abs(level - 1)) + 0.5 * level + 0.01 * area, 3)
    bump = 0.5 if "(2024년3분기~)" in name else 0.0
    return round(_BASE[item] + bump + 0.01 * area + 0.001 * step + 0.1 * klass, 3)


def annual_value(name: str, cls_id: int, year: int, item: str) -> float:
    """A yields table's ``YY`` value: the compounding of the year's four quarters,
    ∏(1 + r_q) − 1 (§1.5: public file 59109269987, ``compound_annual``)."""
    growth = math.prod(1 + value(name, cls_id, f"{year}0{q}", item) / 100 for q in range(1, 5))
    return round((growth - 1) * 100, 3)


def _row(table: dict[str, Any], cycle: str, period: str, area: tuple[int, str]) -> dict[str, Any]:
    year = period[:4]
    return {
        "STATBL_ID": table["STATBL_ID"],
        "DTACYCLE_CD": cycle,
        "WRTTIME_IDTFR_ID": period,
        "WRTTIME_DESC": f"{year}년" if cycle == "YY" else f"{year}년 {period[-1]}분기",
        "GRP_ID": None,
        "GRP_NM": None,
        "GRP_FULLNM": None,
        "CLS_ID": area[0],
        "CLS_NM": area[1].split(">")[-1],
        "CLS_FULLNM": area[1],
    }


def _items(
    table: dict[str, Any], row: dict[str, Any], values: dict[str, float]
) -> list[dict[str, Any]]:
    out = []
    for number, item in enumerate(table["items"], start=1):
        out.append(
            {
                **row,
                "ITM_ID": ITEM_IDS.get(item, 100000 + number),
                "ITM_NM": item,
                "ITM_FULLNM": item,
                "UI_NM": table["unit"] or UNITS[item],
                "DTA_VAL": values[item],
            }
        )
    return out


@functools.cache
def table_rows(
    table_id: str, cycle: str = "QY", area_limit: int | None = None
) -> tuple[dict[str, Any], ...]:
    """Every row of a table's cycle (``QY``; ``YY``: whole years of a table offering both)."""
    table = BY_ID[table_id]
    name = table["STATBL_NM"]
    served = areas(survey_class(name))[:area_limit]
    rows: list[dict[str, Any]] = []
    if cycle == "YY":
        if "YY" not in table["DTACYCLE_CD"]:
            return ()
        years = sorted({p[:4] for p in table["periods"]})
        for year in (y for y in years if all(f"{y}0{q}" in table["periods"] for q in range(1, 5))):
            for area in served:
                values = {i: annual_value(name, area[0], int(year), i) for i in table["items"]}
                rows += _items(table, _row(table, "YY", year, area), values)
        return tuple(rows)
    for period in table["periods"]:
        for area in served:
            base = _row(table, "QY", period, area)
            if "층별" not in name:
                values = {i: value(name, area[0], period, i) for i in table["items"]}
                rows += _items(table, base, values)
                continue
            # §1.7: a floor table's area is the group, its floor the class
            for number, floor in enumerate(FLOORS, start=1):
                floor_row = {
                    **base,
                    "GRP_ID": area[0],
                    "GRP_NM": area[1].split(">")[-1],
                    "GRP_FULLNM": area[1],
                    "CLS_ID": 600000 + number,  # placeholder: not published
                    "CLS_NM": floor,
                    "CLS_FULLNM": floor,
                }
                values = {i: value(name, area[0], period, i, floor) for i in table["items"]}
                rows += _items(table, floor_row, values)
    return tuple(rows)


def _json(root: str, rows: list[dict[str, Any]], total: int, code: str) -> str:
    head = [{"list_total_count": total}, {"RESULT": {"CODE": code, "MESSAGE": MESSAGES[code]}}]
    return json.dumps({root: [{"head": head}, {"row": rows}]}, ensure_ascii=False)


def _fields(values: dict[str, Any]) -> str:
    return "".join(f"<{k}>{'' if v is None else escape(str(v))}</{k}>" for k, v in values.items())


def _xml(root: str, rows: list[dict[str, Any]], total: int, code: str) -> str:
    result = _fields({"CODE": code, "MESSAGE": MESSAGES[code]})
    body = "".join(f"<row>{_fields(r)}</row>" for r in rows)
    return (
        f"<{root}><head><list_total_count>{total}</list_total_count>"
        f"<RESULT>{result}</RESULT></head>{body}</{root}>"
    )


# §1.4: the codes (messages' wording: placeholders but INFO-000's, §1.2)
MESSAGES = {
    "INFO-000": "정상 처리되었습니다.",
    "INFO-200": "해당하는 데이터가 없습니다.",
    "INFO-300": "인증키 사용이 제한되었습니다.",
    "ERROR-290": "인증키가 유효하지 않습니다.",
    "ERROR-300": "필수 값이 누락되어 있습니다.",
    "ERROR-310": "해당하는 서비스를 찾을 수 없습니다.",
    "ERROR-333": "요청위치 값의 타입이 유효하지 않습니다.",
    "ERROR-336": "데이터요청은 한번에 최대 1,000건을 넘을 수 없습니다.",
    "ERROR-337": "일일 트래픽을 초과하였습니다.",
    "ERROR-500": "서버 오류입니다.",
    "ERROR-600": "데이터베이스 연결 오류입니다.",
    "ERROR-601": "SQL 문장 오류입니다.",
}
LIST_FIELDS = ("STATBL_ID", "STATBL_NM", "DTACYCLE_CD", "DTACYCLE_NM")


class RoneStandIn:
    def __init__(self, area_limit: int | None = None) -> None:
        self.fail: deque[str] = deque()
        self.calls: list[dict[str, str]] = []
        self.refused: list[tuple[str, str]] = []
        """(code, what) of every request refused as malformed (not forced by ``fail``)."""
        self.charset = "UTF-8"
        self.garble = False
        """Korean of JSON answers as unrecoverable bytes (§1.3); XML stays clean."""
        self.tables = TABLES
        self.area_limit = area_limit
        self.no_data = False
        """Answer every data call ``INFO-200`` (the table holds no rows)."""
        self.lock = threading.Lock()
        self.url = ""

    def _error(self, code: str, xml: bool) -> str:
        if xml:
            return (
                f"<RESULT>{_fields({'CODE': code, 'MESSAGE': MESSAGES.get(code, code)})}</RESULT>"
            )
        return json.dumps(
            {"RESULT": {"CODE": code, "MESSAGE": MESSAGES.get(code, code)}}, ensure_ascii=False
        )

    def _refuse(self, code: str, what: str, xml: bool) -> str:
        with self.lock:
            self.refused.append((code, what))
        return self._error(code, xml)

    def text(self, path: str, query: dict[str, str]) -> tuple[int, str, bool]:
        """(HTTP status, body text, whether XML)."""
        with self.lock:
            self.calls.append({"path": path, **query})
            mode = self.fail.popleft() if self.fail else ""
        xml = query.get("Type", "xml").lower() != "json"  # §1.1: XML by default
        if mode == "500":
            return 500, "error", False
        if mode:
            return 200, self._error(mode, xml), xml
        operation = path.rsplit("/", 1)[-1]
        if operation not in ("SttsApiTbl.do", "SttsApiTblData.do"):
            return 200, self._refuse("ERROR-310", operation, xml), xml
        required = ["KEY"] + (["STATBL_ID", "DTACYCLE_CD"] if operation != "SttsApiTbl.do" else [])
        missing = [name for name in required if not query.get(name, "").strip()]
        if missing:
            return 200, self._refuse("ERROR-300", ",".join(missing), xml), xml
        if query["KEY"] != KEY:
            return 200, self._error("ERROR-290", xml), xml
        index, size = query.get("pIndex", "1"), query.get("pSize", "100")
        if not index.isdigit() or not size.isdigit():
            return 200, self._refuse("ERROR-333", f"pIndex={index} pSize={size}", xml), xml
        if int(size) > 1000:
            return 200, self._refuse("ERROR-336", f"pSize={size}", xml), xml
        rows: tuple[dict[str, Any], ...] | list[dict[str, Any]]
        if operation == "SttsApiTbl.do":
            root = "SttsApiTbl"
            rows = [{k: t[k] for k in LIST_FIELDS} for t in self.tables]
        else:
            root = "SttsApiTblData"
            known = {t["STATBL_ID"] for t in self.tables}
            rows = ()
            # §1.5: one code per call; the list's composite value answers nothing
            cycle = query["DTACYCLE_CD"]
            if query["STATBL_ID"] in known and cycle in ("QY", "YY") and not self.no_data:
                rows = table_rows(query["STATBL_ID"], query["DTACYCLE_CD"], self.area_limit)
        start = (max(int(index), 1) - 1) * int(size)
        page = list(rows[start : start + int(size)])
        if not page:
            return 200, self._error("INFO-200", xml), xml
        render = _xml if xml else _json
        return 200, render(root, page, len(rows), "INFO-000"), xml

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        status, text, xml = self.text(path, query)
        kind = "text/xml" if xml else "application/json"
        if xml:
            text = f'<?xml version="1.0" encoding="{self.charset}"?>' + text
        elif self.garble:  # §1.3: bytes that decode to U+FFFD
            text = "".join("\ufffd" if ord(c) > 0x2FF else c for c in text)
        return status, text.encode(self.charset, errors="replace"), f"{kind};charset={self.charset}"


@contextmanager
def serve(area_limit: int | None = None) -> Iterator[RoneStandIn]:
    state = RoneStandIn(area_limit)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            status, body, content_type = state.answer(parts.path, query)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with background_http(Handler) as base:
        state.url = f"{base}/r-one/openapi"
        yield state
