"""Finding a legal dong or an R-ONE market area by name: the places below and beside
the districts that ``GET /api/v1/real-estate/regions`` also answers.

Names are compared as district names are (``region_search.normalize``: NFC, case-folded,
no spaces or punctuation). A dong answers to its name (``역삼동``, ``성수동1가``; a 리 also
to its own word, ``창리`` for ``구지면 창리``) in Korean or romanised, and to its 10-digit
code (or its first digits beyond the district's five). A market area answers to its
path (``서울>도심``) and to every tail of it (``도심``; ``강남>테헤란로`` and ``테헤란로`` for
``서울>강남>테헤란로``), ``·`` and ``/`` ignored (``여의도마포`` is ``서울>여의도·마포``).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Mapping, Sequence

import attrs

from svc_core.dongs import Dong, load_dongs
from svc_core.realestate.region_search import normalize
from svc_core.romanize import romanize
from svc_core.sources.rone import DEFAULT_AREA_MAP, area_key


def _dong_keys(dong: Dong) -> set[str]:
    names = {dong.name, dong.name.split()[-1]}
    return {normalize(n) for n in names} | {normalize(romanize(n)) for n in names}


@functools.cache
def _dong_index() -> tuple[list[str], list[int]]:
    """Every (name, position in the table) of the dongs sorted by name, as two lists."""
    dongs = load_dongs()
    pairs = sorted((key, at) for at, d in enumerate(dongs) for key in _dong_keys(d) if key)
    return [key for key, _ in pairs], [at for _, at in pairs]


@attrs.frozen(kw_only=True)
class DongMatch:
    """A dong found by ``find_dongs``: ``exact`` when the query is one of its names."""

    dong: Dong
    exact: bool


def find_dongs(query: str, *, districts: Iterable[str] | None = None) -> list[DongMatch]:
    """Dongs one of whose names starts with ``query`` (normalised), or whose code does
    when ``query`` is more than five digits; only those of ``districts`` when given. In
    table order (district, then code)."""
    q = normalize(query)
    dongs = load_dongs()
    within = None if districts is None else set(districts)
    if not q or (q.isdigit() and len(q) <= 5):
        return []
    if q.isdigit():
        hits = {at: d.code == q for at, d in enumerate(dongs) if (d.code or "").startswith(q)}
    else:
        names, where = _dong_index()
        hits = {}
        at = bisect.bisect_left(names, q)
        while at < len(names) and names[at].startswith(q):
            hits[where[at]] = hits.get(where[at], False) or names[at] == q
            at += 1
    return [
        DongMatch(dong=dongs[at], exact=exact)
        for at, exact in sorted(hits.items())
        if within is None or dongs[at].sigungu_code in within
    ]


@attrs.frozen(kw_only=True)
class MarketArea:
    """An R-ONE market area: its path as published (``서울>도심``), the code ``/indices``
    serves it under (``A`` + its ``CLS_ID``; None while none of its values is loaded)
    and the districts the bundled area table maps it to (empty for an unmapped area)."""

    name: str
    code: str | None
    districts: tuple[str, ...]


def market_areas(loaded: Mapping[str, str]) -> list[MarketArea]:
    """The market areas known: those loaded (``loaded``: code → published path) and the
    bundled table's, each mapped area with its districts; a bundled area not loaded
    has no code. In path order, then code."""
    mapped = {area_key(name): (name, tuple(codes)) for name, codes in DEFAULT_AREA_MAP.items()}
    out = [
        MarketArea(name=name, code=code, districts=mapped.get(area_key(name), ("", ()))[1])
        for code, name in loaded.items()
    ]
    seen = {area_key(a.name) for a in out}
    out += [
        MarketArea(name=name, code=None, districts=codes)
        for key, (name, codes) in mapped.items()
        if key not in seen
    ]
    return sorted(out, key=lambda a: (area_key(a.name), a.code or ""))


def area_of(code: str) -> str | None:
    """The bundled market area a district is mapped to (``11680`` → ``서울>강남``)."""
    return next((name for name, codes in DEFAULT_AREA_MAP.items() if code in codes), None)


def _area_keys(name: str) -> set[str]:
    parts = area_key(name).split(">")
    tails = {"".join(parts[i:]) for i in range(len(parts))}
    return {normalize(t) for t in tails} | {normalize(romanize(t)) for t in tails}


def find_areas(query: str, areas: Sequence[MarketArea]) -> list[tuple[MarketArea, bool]]:
    """The areas of ``areas`` one of whose names starts with ``query``, each with whether
    the query is one of them (exact)."""
    q = normalize(query)
    if not q:
        return []
    out = []
    for area in areas:
        keys = _area_keys(area.name)
        if any(k.startswith(q) for k in keys):
            out.append((area, q in keys))
    return out
