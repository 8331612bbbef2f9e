"""Syncing the R-ONE commercial rental survey, pure: answers, tables, eras.

R-ONE answers ``{ROOT: [{"head": [{"list_total_count": N}, {"RESULT": {"CODE", ...}}]},
{"row": [...]}]}`` (``INFO-000`` success, ``INFO-200`` no data) or, on an error, a bare
``{"RESULT": {...}}``; at most ``PAGE_ROWS`` rows come per call (``pIndex``/``pSize``).
Table ids change when the survey is reorganised, so tables are chosen by name
(``choose_tables``): the rental survey (``임대동향``) tables of a metric svc serves.

The survey redrew its market areas in 2024 Q3 (``REDRAWN``): an area of the old series
and the area of the same name in the new one cover different ground, so their values
are two series. Every row belongs to an era (``era_of``); a sync loads one era with the
area map drawn for it and records the era, so the two are never joined silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from svc_core.errors import GatewayError, SourceError
from svc_core.sources.rone import METRIC_NAMES, NO_DATA_CODE, OK_CODE

PAGE_ROWS = 1_000
"""The most rows R-ONE returns per call."""
REDRAWN = (2024, 3)
"""(year, quarter) of the first survey on the redrawn market areas."""
ERAS: tuple[str, ...] = ("from-2024Q3", "before-2024Q3")
SURVEY_WORD = "임대동향"
KEY_CODES = frozenset({"INFO-100", "ERROR-290", "ERROR-310"})
"""Key missing, invalid or not allowed: no retry helps."""
LIMIT_CODES = frozenset({"ERROR-337"})
"""The key's daily call limit."""

_QUARTER = re.compile(r"([0-9]{4})0([1-4])")
_YEAR = re.compile(r"[0-9]{4}")


@attrs.frozen(kw_only=True)
class RonePage:
    """One successful answer: its rows and ``list_total_count``."""

    total_count: int
    rows: tuple[Mapping[str, Any], ...]


@attrs.frozen(kw_only=True)
class RoneTable:
    """A statistic table chosen for sync."""

    table_id: str
    name: str


def _result(value: Any) -> tuple[str, str]:
    result = value if isinstance(value, dict) else {}
    return str(result.get("CODE", "")).strip(), str(result.get("MESSAGE", "")).strip()


def read_page(data: bytes, root: str, *, path: str = "<bytes>") -> RonePage:
    """Read one R-ONE answer under ``root`` (``SttsApiTbl``, ``SttsApiTblData``).

    ``GatewayError`` (the code as ``reason_code``) for an error result, ``SourceError``
    for anything malformed."""
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"not an R-ONE JSON answer: {exc}", path=path) from None
    if not isinstance(doc, dict):
        raise SourceError("not an R-ONE JSON answer", path=path)
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
    code = ""
    for entry in head if isinstance(head, list) else []:
        if isinstance(entry, dict) and "list_total_count" in entry:
            raw = entry["list_total_count"]
            total = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
        if isinstance(entry, dict) and "RESULT" in entry:
            code, message = _result(entry["RESULT"])
    if code == NO_DATA_CODE:
        return RonePage(total_count=0, rows=())
    if code != OK_CODE:
        raise GatewayError(f"R-ONE error {code or '?'}", path=path, reason_code=code)
    if total is None or not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SourceError("the answer has no list_total_count or malformed rows", path=path)
    return RonePage(total_count=total, rows=tuple(rows))


def classify(code: str) -> str:
    """``key``, ``limit`` or ``retry`` (see ``svc_core.sync.classify_gateway``)."""
    if code in KEY_CODES:
        return "key"
    if code in LIMIT_CODES:
        return "limit"
    return "retry"


def choose_tables(rows: Iterable[Mapping[str, Any]]) -> tuple[RoneTable, ...]:
    """The rental-survey tables of a metric svc serves, by name (ids change), in id
    order, each once."""
    found: dict[str, RoneTable] = {}
    for row in rows:
        table_id = str(row.get("STATBL_ID", "")).strip()
        name = str(row.get("STATBL_NM", "")).strip()
        squashed = re.sub(r"\s+", "", name)
        if not table_id or SURVEY_WORD not in squashed:
            continue
        if any(word in squashed for word, _ in METRIC_NAMES):
            found.setdefault(table_id, RoneTable(table_id=table_id, name=name))
    return tuple(found[k] for k in sorted(found))


def era_of(period_id: str) -> str | None:
    """The market-area era of a period id (``YYYY0Q`` or ``YYYY``); None when malformed.

    A year counts in the new era from 2024: annual figures are compiled after the year
    ends, when the redrawn areas are in force."""
    text = period_id.strip()
    quarter = _QUARTER.fullmatch(text)
    if quarter:
        key = (int(quarter.group(1)), int(quarter.group(2)))
        return ERAS[0] if key >= REDRAWN else ERAS[1]
    if _YEAR.fullmatch(text):
        return ERAS[0] if int(text) >= REDRAWN[0] else ERAS[1]
    return None


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
