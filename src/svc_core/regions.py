"""Districts (sigungu): the bundled code table, name lookup and renumbering aliases.

The table is ``svc_core/data/sigungu.csv`` (``sigungu_code,sido,sigungu``): Seoul's 25 gu
and the main districts of the other metros; cities with gu have one code per gu and a
name such as ``성남시 분당구``.

Codes change over time. Records keep the code valid on the deal date; ``aliases`` links
old and new codes both ways so a query by either finds both:

| old | new | change |
|---|---|---|
| 42xxx | 51xxx (same last three digits) | Gangwon became a special self-governing province (2023) |
| 45xxx | 52xxx (same last three digits) | Jeonbuk became a special self-governing province (2024) |
| 47720 | 27720 | Gunwi county moved from Gyeongbuk to Daegu (2023) |
| 41190 | 41192, 41194, 41196 | Bucheon's three gu restored (2024) |
| 41590 | 41591, 41593, 41595, 41597 | Hwaseong split into four gu (2026) |

A split's new codes are aliases of the old code, not of each other.
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import io
import re

import attrs

_CODE = re.compile(r"[0-9]{5}")

_PREFIX_MOVES: tuple[tuple[str, str], ...] = (("42", "51"), ("45", "52"))
_RENUMBERED: dict[str, tuple[str, ...]] = {
    "47720": ("27720",),
    "41190": ("41192", "41194", "41196"),
    "41590": ("41591", "41593", "41595", "41597"),
}


@attrs.frozen(kw_only=True)
class Region:
    """A district: 5-digit code, province (``sido``) and district name."""

    code: str
    sido: str
    name: str

    @property
    def full_name(self) -> str:
        return f"{self.sido} {self.name}"


@functools.cache
def load_regions() -> tuple[Region, ...]:
    """Every district of the bundled table, in table order."""
    text = (
        importlib.resources.files("svc_core")
        .joinpath("data/sigungu.csv")
        .read_text(encoding="utf-8-sig")
    )
    rows = csv.DictReader(io.StringIO(text))
    return tuple(
        Region(code=row["sigungu_code"], sido=row["sido"], name=row["sigungu"]) for row in rows
    )


@functools.cache
def _by_code() -> dict[str, Region]:
    return {r.code: r for r in load_regions()}


@functools.cache
def _by_name() -> dict[tuple[str, str], Region]:
    return {(r.sido, r.name): r for r in load_regions()}


def region(code: str) -> Region | None:
    """The district with this code, or None when the table does not hold it."""
    return _by_code().get(code)


def region_name(code: str) -> str | None:
    """The district name for a code (``11680`` → ``강남구``), or None when unknown."""
    found = region(code)
    return found.name if found is not None else None


def find_region(sido: str, name: str) -> Region | None:
    """The district named ``name`` in province ``sido`` (both exact, as in the table)."""
    return _by_name().get((sido, name))


def split_address(address: str) -> tuple[Region, str | None] | None:
    """Split a full address (``서울특별시 강남구 수서동``) into district and dong.

    The district may take two words (``경기도 성남시 분당구 정자동``); a province that is
    itself the district (``세종특별자치시 ...``) matches without a district word. The
    dong is the rest of the address (None when nothing follows). None when no district of
    the table matches.
    """
    words = address.split()
    if not words:
        return None
    sido = words[0]
    for n in (2, 1):
        if len(words) > n:
            found = find_region(sido, " ".join(words[1 : 1 + n]))
            if found is not None:
                return found, " ".join(words[1 + n :]) or None
    if len(words) == 1 or find_region(sido, words[1]) is None:
        found = find_region(sido, sido)
        if found is not None:
            return found, " ".join(words[1:]) or None
    return None


def aliases(code: str) -> set[str]:
    """Other codes for the same place across renumberings (never ``code`` itself)."""
    if _CODE.fullmatch(code) is None:
        return set()
    out: set[str] = set()
    for old, new in _PREFIX_MOVES:
        if code.startswith(old):
            out.add(new + code[2:])
        elif code.startswith(new):
            out.add(old + code[2:])
    for old, news in _RENUMBERED.items():
        if code == old:
            out.update(news)
        elif code in news:
            out.add(old)
    out.discard(code)
    return out


def equivalent_codes(code: str) -> set[str]:
    """``code`` and its aliases: the codes a query by ``code`` should match."""
    return {code} | aliases(code)
