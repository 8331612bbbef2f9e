"""Land terms as MOLIT publishes them: the land category (지목) and the zoning (용도지역).

Land categories are the 28 of the cadastral law (공간정보의 구축 및 관리 등에 관한 법률
§67), spelled as the RTMS land service (``RTMSDataSvcLandTrade``) writes its ``jimok``:
``대``, ``전``, ``답``, ``임야``, ``공장용지``, ``창고용지``, ... A published value outside the
list is kept as published; it is shown and counted, but no filter names it.

Zoning: the land service writes the full name (``보전관리지역``, ``제2종일반주거지역``,
``개발제한구역``), the commercial and factory/warehouse services a short form
(``제2종일반주거``, ``일반상업``), and the land service itself writes ``자연환경보전``
without its suffix. ``zone_of`` names every spelling of one zone by its full legal name
(국토의 계획 및 이용에 관한 법률 §36; ``개발제한구역`` is a zone of its own in the data):
blanks dropped, then the name with its ``지역``/``구역`` suffix removed looked up in
``ZONES``; a value that names no zone of the list is kept as published (blanks dropped).
"""

from __future__ import annotations

import re

LAND_CATEGORIES: tuple[str, ...] = (
    "전",
    "답",
    "과수원",
    "목장용지",
    "임야",
    "광천지",
    "염전",
    "대",
    "공장용지",
    "학교용지",
    "주차장",
    "주유소용지",
    "창고용지",
    "도로",
    "철도용지",
    "제방",
    "하천",
    "구거",
    "유지",
    "양어장",
    "수도용지",
    "공원",
    "체육용지",
    "유원지",
    "종교용지",
    "사적지",
    "묘지",
    "잡종지",
)
"""The 28 land categories (지목), in the law's order."""

ZONES: tuple[str, ...] = (
    "제1종전용주거지역",
    "제2종전용주거지역",
    "제1종일반주거지역",
    "제2종일반주거지역",
    "제3종일반주거지역",
    "준주거지역",
    "중심상업지역",
    "일반상업지역",
    "근린상업지역",
    "유통상업지역",
    "전용공업지역",
    "일반공업지역",
    "준공업지역",
    "보전녹지지역",
    "생산녹지지역",
    "자연녹지지역",
    "보전관리지역",
    "생산관리지역",
    "계획관리지역",
    "농림지역",
    "자연환경보전지역",
    "개발제한구역",
    "주거지역",
    "상업지역",
    "공업지역",
    "녹지지역",
    "관리지역",
)
"""Zones by their full names: the 21 subdivided zones, the green belt, and the five
undivided zones some records name (a zone not yet subdivided)."""

_SUFFIX = re.compile(r"(지역|구역)$")
_BLANKS = re.compile(r"\s+")


def _stem(name: str) -> str:
    return _SUFFIX.sub("", _BLANKS.sub("", name))


_BY_STEM: dict[str, str] = {_stem(z): z for z in ZONES}


def zone_of(published: str | None) -> str | None:
    """The full name of the zone ``published`` names (module rule); None when blank."""
    text = _BLANKS.sub("", published or "")
    if not text:
        return None
    return _BY_STEM.get(_stem(text), text)
