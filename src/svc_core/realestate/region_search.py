"""Finding a district by name or code: the ``--sigungu`` of ``svc sync`` and the
districts of ``GET /api/v1/real-estate/regions`` (``regions_answer``).

A district answers to its province (full, short or left out: ``서울특별시``, ``서울``,
``Seoul``) followed by its district words from any word on, each with or without its
unit (시, 군, 구), in Korean or Revised Romanization; names are compared normalised
(NFC, case-folded, no spaces or punctuation), so ``부천시원미구``, ``부천시 원미구`` and
``Bucheon Wonmi`` are one name. A query matches a district exactly (it is one of its
names) or by prefix (it starts one); a query of digits matches codes by prefix.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata

import attrs

from svc_core.errors import InvalidParams
from svc_core.regions import Region, load_regions, region, regions_in_use
from svc_core.romanize import romanize, romanize_place

_CODE = re.compile(r"[0-9]{5}")

_LONG_SUFFIXES = ("특별자치도", "특별자치시", "통합특별시", "특별시", "광역시")
_UNITS = ("시", "군", "구")
_DROP = re.compile(r"[\W_]+")
SEARCH_LIMIT = 50
"""The most districts a search answers."""


def normalize(text: str) -> str:
    """``text`` as names are compared: NFC, case-folded, without spaces, hyphens or other
    punctuation (``Jung-gu`` and ``jung gu`` → ``junggu``)."""
    return _DROP.sub("", unicodedata.normalize("NFC", text).casefold())


def _short_sido(sido: str) -> set[str]:
    """Short Korean forms of a province: ``서울특별시`` → 서울, ``경기도`` → 경기,
    ``충청북도`` → 충청북, 충북; a merged one also by each part (``전남광주`` → 전남, 광주)."""
    out: set[str] = set()
    for suffix in (*_LONG_SUFFIXES, "도"):
        if sido.endswith(suffix) and len(sido) > len(suffix):
            stem = sido[: -len(suffix)]
            out.add(stem)
            if len(stem) == 3 and suffix == "도":
                out.add(stem[0] + stem[2])
            if len(stem) == 4:
                out.update((stem[:2], stem[2:]))
            break
    return out


def _forms(korean: set[str], roman: set[str]) -> frozenset[str]:
    """Every normalised spelling of one name part, Korean and romanised."""
    out = {normalize(k) for k in korean} | {normalize(r) for r in roman}
    out |= {normalize(romanize(k)) for k in korean}
    out.discard("")
    return frozenset(out)


def _word_forms(word: str, roman: str) -> frozenset[str]:
    korean = {word} | _short_sido(word)
    if word.endswith(_UNITS) and len(word) > 1:
        korean.add(word[:-1])
    romans = {roman}
    if "-" in roman:
        romans.add(roman.rsplit("-", 1)[0])
    return _forms(korean, romans)


@functools.cache
def _keys(code: str) -> frozenset[str]:
    """The normalised names a district answers to: its province (full, short, romanised,
    or left out) followed by its district words from any word on, each full or without
    its unit (시, 군, 구), in Korean or romanised."""
    r = _table(code)
    sido = frozenset({""}) | _word_forms(r.sido, r.sido_roman)
    words = r.name.split()
    romans = r.name_roman.split()
    if len(romans) != len(words):
        romans = [romanize_place(w) for w in words]
    parts = [_word_forms(w, rw) for w, rw in zip(words, romans, strict=True)]
    keys: set[str] = set(sido - {""})
    for start in range(len(parts)):
        tails = [""]
        for forms in parts[start:]:
            tails = [t + f for t in tails for f in forms]
        keys.update(s + t for s in sido for t in tails)
    return frozenset(keys)


@functools.cache
def _index() -> tuple[list[str], list[str]]:
    """Every (name, code) of the table sorted by name, as two lists: the names starting
    with a query are one run of it (``bisect``)."""
    pairs = sorted((key, r.code) for r in load_regions() for key in _keys(r.code))
    return [key for key, _ in pairs], [code for _, code in pairs]


def _table(code: str) -> Region:
    found = region(code)
    assert found is not None, code  # only codes of the table are indexed
    return found


@attrs.frozen(kw_only=True)
class Match:
    """A district found by ``search``: ``exact`` when the query is one of its names, not
    only the start of one."""

    region: Region
    exact: bool


def search(query: str, *, limit: int = SEARCH_LIMIT) -> list[Match]:
    """Districts whose code starts with ``query`` (digits), or one of whose names starts
    with it (Korean or romanised, province and district, spaces and case ignored:
    ``부천``, ``Bucheon Wonmi``, ``서울 중구``, ``gangnam-gu``). In use before retired,
    exact names before prefixes, then by code; at most ``limit``. Empty for a blank
    query."""
    q = normalize(query)
    if not q:
        return []
    if q.isdigit():
        found = [Match(region=r, exact=r.code == q) for r in load_regions() if r.code.startswith(q)]
    else:
        exact: dict[str, bool] = {}
        names, codes = _index()
        at = bisect.bisect_left(names, q)
        while at < len(names) and names[at].startswith(q):
            code = codes[at]
            exact[code] = exact.get(code, False) or names[at] == q
            at += 1
        found = [Match(region=_table(code), exact=hit) for code, hit in exact.items()]
    found.sort(key=lambda m: (not m.region.in_use, not m.exact, m.region.code))
    return found[:limit]


def province_districts(text: str) -> tuple[Region, ...]:
    """The districts in use of the province ``text`` names, in code order: its full,
    short or romanised name (``서울특별시``, ``서울``, ``Seoul``; spaces, hyphens and case
    ignored); empty when no province in use has that name."""
    wanted = normalize(text)
    if not wanted:
        return ()
    return tuple(r for r in regions_in_use() if wanted in _word_forms(r.sido, r.sido_roman))


def _label(r: Region) -> str:
    return f"{r.code} ({r.full_name})"


def retired_message(r: Region) -> str:
    """Why a retired code cannot be used, naming what replaced it."""
    by = ", ".join(_label(found) for c in r.replaced_by if (found := region(c)) is not None)
    return (
        f"district {_label(r)} was retired on {r.valid_to}: use {by}"
        if by
        else f"district {_label(r)} was retired on {r.valid_to}"
    )


def resolve(text: str) -> Region:
    """The district in use that ``text`` names: a 5-digit code, or a name that only one
    district in use answers to exactly (or, failing that, starts with).

    ``InvalidParams`` when no district in use matches, when several do (listing them),
    or when it is a retired code (naming the codes that replaced it).
    """
    wanted = text.strip()
    if _CODE.fullmatch(wanted):
        found = region(wanted)
        if found is None:
            raise InvalidParams(f"unknown district code {wanted}: not in the bundled table")
        if not found.in_use:
            raise InvalidParams(retired_message(found))
        return found
    matches = search(wanted, limit=len(load_regions()))
    live = [m for m in matches if m.region.in_use]
    exact = [m for m in live if m.exact]
    chosen = exact or live
    if len(chosen) == 1:
        return chosen[0].region
    if chosen:
        listed = ", ".join(_label(m.region) for m in chosen[:20])
        more = f" and {len(chosen) - 20} more" if len(chosen) > 20 else ""
        raise InvalidParams(
            f"district name {wanted!r} is ambiguous: {listed}{more}; give the code or more "
            "of the name (e.g. the province)"
        )
    retired = [m.region for m in matches if m.exact and not m.region.in_use]
    if len(retired) == 1:
        raise InvalidParams(retired_message(retired[0]))
    raise InvalidParams(f"no district in use is named {wanted!r}")
