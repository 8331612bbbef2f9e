"""A local stand-in of the R-ONE open API, built from the public facts in the shared
data notes (``data/README.md``, "R-ONE (Korea Real Estate Board) statistics").

What it does as the real service does (the facts):

- ``SttsApiTbl.do`` (table list) and ``SttsApiTblData.do`` (values); ``KEY`` is required
  everywhere, ``STATBL_ID`` and ``DTACYCLE_CD`` on data calls: a missing one is answered
  ``ERROR-300`` in the bare ``RESULT`` form; an unknown key ``ERROR-290``; a non-numeric
  ``pIndex`` ``ERROR-333``; ``pSize`` over 1,000 ``ERROR-336``; another operation
  ``ERROR-310``; no rows ``INFO-200``.
- Answers: ``{ROOT: [{"head": [{"list_total_count": N}, {"RESULT": {...}}]}, {"row":
  [...]}]}`` for ``Type=json``, ``<ROOT><head>...</head><row>...</row></ROOT>`` for
  ``Type=xml``; errors as a bare ``RESULT`` (XML root ``<RESULT>``); the charset declared
  in ``Content-Type``.
- Table names per metric x era x class: ``임대동향 지역별 공실률(2024년3분기~)_오피스``,
  ``... 임대료(...)`` (천원/㎡), ``임대동향 지역별 임대가격지수(시계열)_<class>`` (one linked
  series from 2013 Q1, 2024 Q2 = 100), ``임대동향 수익률(분기)(2024년3분기~)_<class>``
  whose items are 소득수익률, 자본수익률, 투자수익률, and older eras as their own tables
  (``(2022년~)``, ``(2021년)``), older yields tables named by metric; the five classes
  오피스, 중대형 상가, 소규모 상가, 집합 상가, 일반 상가. No floor-rent table: the facts name
  none, so the stand-in serves none (svc's reading of one is tested on the pure reader).
- Rows: ``STATBL_ID, DTACYCLE_CD, WRTTIME_IDTFR_ID`` (``YYYY0Q``), ``WRTTIME_DESC,
  CLS_ID, CLS_NM, CLS_FULLNM`` (시도>권역>상권), ``ITM_ID, ITM_NM, ITM_FULLNM, DTA_VAL,
  UI_NM``; ``서울`` 500002, ``서울>도심`` 510003, ``서울>강남`` 510004, ``서울>여의도마포``
  510005, ``서울>기타`` 510006.

Placeholders (the facts give none; svc must not depend on them): every ``STATBL_ID``
(``PLACEHOLDER_NN``), the ``CLS_ID`` of 전국 and of the other 시도, the ``ITM_ID``\\ s, the
messages' wording, the list's composite ``DTACYCLE_CD`` form (``YY,QY``), the defaults of
``pIndex``/``pSize``/``Type`` when absent, ``INFO-200`` for a cycle or table without rows,
and every value (a formula, ``value``).

On demand (``fail``: one entry per call, ``""`` for a normal answer) it answers any result
code in the bare form, or ``500`` (HTTP 500); ``charset`` sets the declared charset
(``EUC-KR`` encodes the body so) and ``garble`` serves Korean as UTF-8 read as Latin-1
(what one public client saw in ``Type=json`` answers).
"""

from __future__ import annotations

import json
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
CLASSES = ("오피스", "중대형 상가", "소규모 상가", "집합 상가", "일반 상가")
AREAS: tuple[tuple[int, str], ...] = (
    (500001, "전국"),  # CLS_ID placeholder
    (500002, "서울"),
    (510003, "서울>도심"),
    (510004, "서울>강남"),
    (510005, "서울>여의도마포"),
    (510006, "서울>기타"),
    # other 시도, CLS_IDs placeholders: enough areas for the linked series to need 2 pages
    *(
        (520000 + i, name)
        for i, name in enumerate(
            [
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
            ]
        )
    ),
)
YIELD_ITEMS = ("소득수익률", "자본수익률", "투자수익률")
LAST = (2026, 2)
"""The last quarter published."""


def quarters(first: tuple[int, int], last: tuple[int, int]) -> list[str]:
    year, q = first
    out: list[str] = []
    while (year, q) <= last:
        out.append(f"{year}0{q}")
        year, q = (year, q + 1) if q < 4 else (year + 1, 1)
    return out


# (name pattern, items, unit, first quarter, last quarter, cycles listed)
_SERIES: tuple[tuple[str, tuple[str, ...], str, tuple[int, int], tuple[int, int], str], ...] = (
    ("임대동향 지역별 공실률(2024년3분기~)", ("공실률",), "%", (2024, 3), LAST, "QY"),
    ("임대동향 지역별 공실률(2022년~)", ("공실률",), "%", (2022, 1), (2024, 2), "QY"),
    ("임대동향 지역별 공실률(2021년)", ("공실률",), "%", (2021, 1), (2021, 4), "QY"),
    ("임대동향 지역별 임대료(2024년3분기~)", ("임대료",), "천원/㎡", (2024, 3), LAST, "YY,QY"),
    ("임대동향 지역별 임대료(2022년~)", ("임대료",), "천원/㎡", (2022, 1), (2024, 2), "YY,QY"),
    (
        "임대동향 지역별 임대가격지수(시계열)",
        ("임대가격지수",),
        "2024.2Q=100",
        (2013, 1),
        LAST,
        "QY",
    ),
    (
        "임대동향 지역별 임대가격지수(2024년3분기~)",
        ("임대가격지수",),
        "2024.2Q=100",
        (2024, 3),
        LAST,
        "QY",
    ),
    ("임대동향 수익률(분기)(2024년3분기~)", YIELD_ITEMS, "%", (2024, 3), LAST, "QY"),
    ("임대동향 소득수익률(2022년~)", ("소득수익률",), "%", (2022, 1), (2024, 2), "QY"),
    ("임대동향 자본수익률(2022년~)", ("자본수익률",), "%", (2022, 1), (2024, 2), "QY"),
    ("임대동향 투자수익률(2022년~)", ("투자수익률",), "%", (2022, 1), (2024, 2), "QY"),
)
_BASE = {"공실률": 9.0, "임대료": 25.0, "임대가격지수": 100.0}
_BASE.update({"소득수익률": 1.0, "자본수익률": 0.4, "투자수익률": 1.4})


def value(name: str, cls_id: int, period: str, item: str) -> float:
    """The value the stand-in serves (a formula; ``name`` the table name): each class,
    era and area gives a value of its own, so a test can tell which table one came from."""
    area = cls_id % 100
    step = (int(period[:4]) - 2013) * 4 + int(period[-1]) - 1
    klass = CLASSES.index(name.rsplit("_", 1)[1]) if name.rsplit("_", 1)[-1] in CLASSES else 0
    if item == "임대가격지수":
        base = 100.0 if "시계열" in name else 105.0  # 2024 Q2 = 100 on the linked basis
        return round(base + 0.25 * (step - 45) + 0.01 * area + 0.1 * klass, 2)
    bump = 0.5 if "(2024년3분기~)" in name else 0.0
    return round(_BASE[item] + bump + 0.01 * area + 0.001 * step + 0.1 * klass, 3)


def _tables() -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = []
    for survey_class in CLASSES:
        for stem, items, unit, first, last, cycles in _SERIES:
            tables.append(
                {
                    "STATBL_ID": f"PLACEHOLDER_{len(tables) + 1:02d}",
                    "STATBL_NM": f"{stem}_{survey_class}",
                    "DTACYCLE_CD": cycles,
                    "items": items,
                    "unit": unit,
                    "periods": quarters(first, last),
                }
            )
    # a table of another survey (name and id placeholders): never read
    tables.append(
        {
            "STATBL_ID": "PLACEHOLDER_99",
            "STATBL_NM": "주택가격동향조사 매매가격지수",
            "DTACYCLE_CD": "MM",
            "items": ("매매가격지수",),
            "unit": "2021.6=100",
            "periods": [],
        }
    )
    return tables


TABLES = _tables()
BY_NAME = {t["STATBL_NM"]: t for t in TABLES}


def table_rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for period in table["periods"]:
        for cls_id, path in AREAS:
            for number, item in enumerate(table["items"], start=1):
                rows.append(
                    {
                        "STATBL_ID": table["STATBL_ID"],
                        "DTACYCLE_CD": "QY",
                        "WRTTIME_IDTFR_ID": period,
                        "WRTTIME_DESC": f"{period[:4]}년 {period[-1]}분기",
                        "CLS_ID": cls_id,
                        "CLS_NM": path.split(">")[-1],
                        "CLS_FULLNM": path,
                        "ITM_ID": 100000 + number,
                        "ITM_NM": item,
                        "ITM_FULLNM": item,
                        "DTA_VAL": value(table["STATBL_NM"], cls_id, period, item),
                        "UI_NM": table["unit"],
                    }
                )
    return rows


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


class RoneStandIn:
    def __init__(self) -> None:
        self.fail: deque[str] = deque()
        self.calls: list[dict[str, str]] = []
        self.refused: list[tuple[str, str]] = []
        """(code, what) of every request refused as malformed (not forced by ``fail``)."""
        self.charset = "UTF-8"
        self.garble = False
        self.tables = TABLES
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
        xml = query.get("Type", "xml").lower() != "json"
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
        if operation == "SttsApiTbl.do":
            root = "SttsApiTbl"
            rows = [
                {k: t[k] for k in ("STATBL_ID", "STATBL_NM", "DTACYCLE_CD")} for t in self.tables
            ]
        else:
            root = "SttsApiTblData"
            table = next((t for t in self.tables if t["STATBL_ID"] == query["STATBL_ID"]), None)
            rows = []
            if table is not None and query["DTACYCLE_CD"] == "QY" and not self.no_data:
                rows = table_rows(table)
        start = (max(int(index), 1) - 1) * int(size)
        page = rows[start : start + int(size)]
        if not page:
            return 200, self._error("INFO-200", xml), xml
        render = _xml if xml else _json
        return 200, render(root, page, len(rows), "INFO-000"), xml

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        status, text, xml = self.text(path, query)
        if self.garble:
            text = text.encode("utf-8").decode("latin-1")
        kind = "text/xml" if xml else "application/json"
        if xml:
            text = f'<?xml version="1.0" encoding="{self.charset}"?>' + text
        return status, text.encode(self.charset), f"{kind};charset={self.charset}"


@contextmanager
def serve() -> Iterator[RoneStandIn]:
    state = RoneStandIn()

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
