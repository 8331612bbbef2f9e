"""What kind of source file some bytes are, from their content alone.

``recognise(data)`` names the ingest kind a file's content shows, or None when the
content does not tell (an empty RTMS page, an unknown layout, or the fields two datasets
share: ``candidates``). It reads the tags of an
RTMS response (either API generation), the header row of a CSV file, or the root of an
R-ONE answer; it never parses records, so it is cheap and never raises. Loading uses it
to refuse a file given the wrong kind (an officetel sale file read as commercial sales
would be stored as mixed-use deals) and to load a file without a kind.

| evidence | kind |
|---|---|
| RTMS tags ``jimok`` or ``dealArea`` | ``rtms-land`` |
| RTMS tags ``buildingUse``, ``buildingAr``, ``plottageAr`` or ``buildingType`` | ``rtms-commercial`` or ``rtms-industrial`` |
| RTMS tags ``deposit`` or ``monthlyRent`` | ``rtms-officetel-rent`` |
| RTMS tags ``offiNm`` or ``excluUseAr`` (and none of the above) | ``rtms-officetel-trade`` |
| JSON ``SttsApiTblData`` root | ``rone-index`` |
| web CSV header with ``지목`` | ``rtms-land`` |
| web CSV header with ``건축물주용도``/``건물주용도`` | ``rtms-commercial`` or ``rtms-industrial`` |
| web CSV header with ``보증금(만원)`` | ``rtms-officetel-rent`` |
| web CSV header with ``전용면적(㎡)`` and ``거래금액(만원)`` | ``rtms-officetel-trade`` |
| CSV header ``period,region,property_class,item,value`` (any order, more allowed) | ``rone-index`` |
| svc samples header | ``samples`` |
| marketplace listing or activity columns | ``market-listings``, ``market-activity`` |

A factory/warehouse answer (InduTrade) carries exactly the commercial answer's fields
(NrgTrade's 22), so content cannot tell the two apart: ``candidates(data)`` names both
(``SHARED_FIELDS``) and ``recognise`` names neither, unless it is given the file's name
and the name is MOLIT's for one of them (``NRG_…``, ``INDU_…``:
``RtmsDataset.of_file_name``). A loader given neither a kind nor such a name refuses the
file naming the choice, rather than file one service's deals under the other.

``item_kinds(data)`` reads an RTMS answer item by item (the whole file, each item's own
tags by the same table): a file whose items show more than one kind (a lease file with
a sale item appended) is refused unless the kind to load it as is named, since any one
kind would reject the others' items and load the rest as if nothing were wrong. Items of
the shared fields count as ``rtms-commercial`` there (``layout`` names the kind that
stands for a kind's fields).
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.markets import ACTIVITY_COLUMNS, LISTING_COLUMNS
from svc_core.sources.rone import CSV_COLUMNS as RONE_COLUMNS
from svc_core.sources.rtms import canonical_tag
from svc_core.sources.rtms_csv import normalize_column
from svc_core.sources.samples import HEADER as SAMPLES_HEADER

OTHER_DESCRIPTIONS: dict[str, str] = {
    "rone-index": "an R-ONE statistics file",
    "samples": "an svc samples CSV",
    "market-listings": "a marketplace listings CSV",
    "market-activity": "a marketplace activity CSV",
}
"""What each kind that is no RTMS dataset's is, in words, for messages."""
KINDS: tuple[str, ...] = (*(d.ingest_kind for d in RtmsDataset), *OTHER_DESCRIPTIONS)
"""Every ingest kind: the RTMS datasets' (``RtmsDataset.ingest_kind``), then the others."""

HEAD_BYTES = 1 << 20
"""Bytes looked at: the tags and headers that decide are at the start of a file."""
_CSV_ROWS = 60
_XML_TAG = re.compile(r"<([^\s/>!?=\"']{1,40})[\s/>]")
_JSON_KEY = re.compile(r'"([^"\\]{1,40})"\s*:')
_LAND_TAGS = frozenset({"jimok", "dealarea"})
_COMMERCIAL_TAGS = frozenset({"buildinguse", "buildingar", "plottagear", "buildingtype"})
_RENT_TAGS = frozenset({"deposit", "monthlyrent"})
_OFFICETEL_TAGS = frozenset({"offinm", "excluusear"})


def _text(head: bytes) -> str:
    """The head as text: UTF-8 when it is (a character cut at the end tolerated), else
    CP949, undecodable bytes replaced."""
    try:
        return head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 3 and exc.reason == "unexpected end of data":
            return head[: exc.start].decode("utf-8-sig")
    return head.decode("cp949", errors="replace")


SHARED_FIELDS: tuple[str, ...] = (
    RtmsDataset.COMMERCIAL.ingest_kind,
    RtmsDataset.INDUSTRIAL.ingest_kind,
)
"""The kinds whose files carry the same fields (NrgTrade's): content cannot tell them."""


def layout(kind: str) -> str:
    """The kind that stands for ``kind``'s fields in ``item_kinds`` (the first of
    ``SHARED_FIELDS`` for either of them; any other kind itself)."""
    return SHARED_FIELDS[0] if kind in SHARED_FIELDS else kind


def _rtms_kinds(tags: set[str]) -> tuple[str, ...]:
    if tags & _LAND_TAGS:
        return (RtmsDataset.LAND.ingest_kind,)
    if tags & _COMMERCIAL_TAGS:
        return SHARED_FIELDS
    if tags & _RENT_TAGS:
        return (RtmsDataset.OFFICETEL_RENT.ingest_kind,)
    if tags & _OFFICETEL_TAGS:
        return (RtmsDataset.OFFICETEL_TRADE.ingest_kind,)
    return ()


def _structured(text: str) -> tuple[str, ...]:
    if text[:1] == "<":
        tags = {canonical_tag(t.split(":")[-1]) for t in _XML_TAG.findall(text)}
    else:
        keys = {k.strip().lower() for k in _JSON_KEY.findall(text)}
        if "sttsapitbldata" in keys:
            return ("rone-index",)
        tags = {canonical_tag(k) for k in keys}
    return _rtms_kinds(tags)


def _header_kinds(cells: list[str]) -> tuple[str, ...]:
    plain = [c.strip().lstrip("\ufeff").strip() for c in cells]
    lower = {c.lower() for c in plain}
    if tuple(plain) == SAMPLES_HEADER:
        return ("samples",)
    if lower >= set(LISTING_COLUMNS):
        return ("market-listings",)
    if lower >= set(ACTIVITY_COLUMNS):
        return ("market-activity",)
    if lower >= set(RONE_COLUMNS):
        return ("rone-index",)
    names = {normalize_column(c) for c in plain}
    if "시군구" not in names:
        return ()
    if "지목" in names:
        return (RtmsDataset.LAND.ingest_kind,)
    if names & {"건축물주용도", "건물주용도"}:
        return SHARED_FIELDS
    if "보증금(만원)" in names:
        return (RtmsDataset.OFFICETEL_RENT.ingest_kind,)
    if "전용면적(㎡)" in names and "거래금액(만원)" in names:
        return (RtmsDataset.OFFICETEL_TRADE.ingest_kind,)
    return ()


def _tabular(text: str) -> tuple[str, ...]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for number, row in enumerate(reader):
            if number >= _CSV_ROWS:
                break
            found = _header_kinds(row)
            if found:
                return found
    except csv.Error:
        return ()
    return ()


_XML_ITEM = re.compile(r"<item(?:\s[^>]*)?>(.*?)</item\s*>", re.S | re.I)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
"""Innermost JSON objects: an RTMS answer's items (objects of plain values)."""


def item_kinds(data: bytes) -> dict[str, int]:
    """How many items of an RTMS answer (XML or JSON; the whole of ``data``) show each
    kind, by their own tags; empty for anything else (CSV, R-ONE, no items)."""
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text[:1] == "<":
        tag_sets = [
            {canonical_tag(t.split(":")[-1]) for t in _XML_TAG.findall(chunk)}
            for chunk in _XML_ITEM.findall(text)
        ]
    elif text[:1] in ("{", "["):
        tag_sets = [
            {canonical_tag(k.strip()) for k in _JSON_KEY.findall(chunk)}
            for chunk in _JSON_OBJECT.findall(text)
        ]
    else:
        return {}
    found = Counter(kinds[0] for tags in tag_sets if (kinds := _rtms_kinds(tags)))
    return dict(found.most_common())


def candidates(data: bytes) -> tuple[str, ...]:
    """The ingest kinds the content of ``data`` allows: one, the two of
    ``SHARED_FIELDS``, or none when it does not tell."""
    text = _text(data[:HEAD_BYTES]).lstrip("\ufeff \t\r\n")
    if "\x00" in text:
        return ()
    if text[:1] in ("<", "{", "["):
        return _structured(text)
    return _tabular(text)


def recognise(data: bytes, file_name: str | None = None) -> str | None:
    """The ingest kind (one of ``KINDS``) the content of ``data`` shows, or None; where
    the content allows two kinds, the one ``file_name`` names as MOLIT names its files."""
    found = candidates(data)
    if len(found) == 1:
        return found[0]
    named = RtmsDataset.of_file_name(file_name) if file_name else None
    return named.ingest_kind if named is not None and named.ingest_kind in found else None


def undecided(kinds: tuple[str, ...], path: str) -> str:
    """The refusal of a file whose content allows ``kinds`` (several) and whose name
    names none of them: one line naming the choice."""
    listed = " or ".join(f"{describe(k)} ({k})" for k in kinds)
    return (
        f"this is {listed}: their fields are the same, so the content cannot tell; "
        f"give its KIND (svc ingest {kinds[-1]} {path})"
    )


def describe(kind: str) -> str:
    """``kind`` in words (the kind itself when unknown)."""
    dataset = RtmsDataset.of_ingest_kind(kind)
    return dataset.description if dataset is not None else OTHER_DESCRIPTIONS.get(kind, kind)
