"""``GET /api/v1/real-estate/regions`` (and MCP ``find_district``): districts, legal
dongs and R-ONE market areas found by name or code, each saying which district (or
market area) holds it and which call to make next.

A query finds districts (``region_search``), dongs and market areas (``place_search``),
and a district followed by a dong (``강남구 역삼동``, ``Gangnam Yeoksam``: a district's
exact name, then the start of one of its dongs). Places in use come first, then exact
names before prefixes, then districts before market areas before dongs, then by code.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import attrs

from svc_core.convert import to_json
from svc_core.dongs import Dong
from svc_core.errors import InvalidParams
from svc_core.instants import iso
from svc_core.json_schema import (
    array,
    attrs_schema,
    boolean,
    doc,
    enum,
    nullable,
    string,
)
from svc_core.params import Param, read_all
from svc_core.realestate.indices import PLACE
from svc_core.realestate.place_search import (
    MarketArea,
    area_of,
    find_areas,
    find_dongs,
    market_areas,
)
from svc_core.realestate.region_search import SEARCH_LIMIT, normalize, search
from svc_core.realestate.row_docs import SIGUNGU_CODE
from svc_core.regions import Region, aliases, load_regions, region, replaces
from svc_core.romanize import romanize_place

RE = "/api/v1/real-estate"
KINDS = ("district", "market_area", "dong")
"""What a row is, in the order rows of equal rank come."""
MATCHES = ("exact", "prefix")
DONG_CODE = string("10-digit legal dong (법정동) code.", pattern="^[0-9]{10}$")
DATE_OR_NULL = nullable(string(format="date"))


@attrs.frozen(kw_only=True)
class DongRef:
    """A legal dong of a ``dong`` row: its own code, name and validity (the row's other
    fields are its district's)."""

    dong_code: str | None = attrs.field(
        metadata=doc(
            nullable(
                {
                    **DONG_CODE,
                    "description": "10-digit legal dong (법정동) code; null for a dong the "
                    "2026-10-08 list names without the code (code_source unlisted).",
                }
            )
        )
    )
    name: str = attrs.field(
        metadata=doc(string("The dong below its district (`역삼동`; a 리 with its 읍 or 면)."))
    )
    name_roman: str = attrs.field(metadata=doc(string("The name in Revised Romanization.")))
    in_use: bool = attrs.field(metadata=doc(boolean("False for a retired dong.")))
    valid_from: str | None = attrs.field(
        metadata=doc(nullable(string("The day the code came into use.", format="date")))
    )
    valid_to: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The day the dong was retired; null while in use, and for a dong "
                    "retired between 2022-09-01 and 2026-10-08 on a day neither list gives.",
                    format="date",
                )
            )
        )
    )
    replaced_by: tuple[str, ...] = attrs.field(
        metadata=doc(array(DONG_CODE, "The code that replaced it where a renumbering moved it."))
    )
    code_source: str = attrs.field(
        metadata=doc(
            enum(
                ("listed", "derived", "unlisted"),
                "How the code is known: listed (the 2022-09-01 list, the dong kept its "
                "district), derived (its district was renumbered: the new district code and "
                "the dong's own five digits), unlisted (not known).",
            )
        )
    )


@attrs.frozen(kw_only=True)
class RegionRow:
    """One place of a regions answer. The fields up to ``match`` are a district's (on a
    dong row, the district holding the dong; on a market-area row, the area's code and
    path); ``kind`` and what follows it were added with dongs and market areas."""

    sigungu_code: str | None = attrs.field(
        metadata=doc(
            nullable(
                {
                    **PLACE,
                    "description": "The district's 5-digit code (on a dong row, of the district "
                    "holding it); on a market-area row, A + its R-ONE CLS_ID, as /indices "
                    "takes it, or null while none of its values is loaded.",
                }
            )
        )
    )
    sido: str = attrs.field(
        metadata=doc(string("Province, in Korean as the code list names it (`경기도`)."))
    )
    sigungu: str = attrs.field(
        metadata=doc(
            string(
                "District, in Korean (`부천시 원미구`; the province for Sejong); a market "
                "area's path below the province (`도심`)."
            )
        )
    )
    full_name: str = attrs.field(
        metadata=doc(
            string("`sido` and `sigungu` (`경기도 부천시 원미구`; an area's `서울>도심`).")
        )
    )
    sido_roman: str = attrs.field(
        metadata=doc(string("Province in Revised Romanization (`Gyeonggi-do`, `Seoul`)."))
    )
    sigungu_roman: str = attrs.field(
        metadata=doc(string("District in Revised Romanization (`Bucheon-si Wonmi-gu`)."))
    )
    full_name_roman: str = attrs.field(metadata=doc(string("`sido_roman` and `sigungu_roman`.")))
    in_use: bool = attrs.field(metadata=doc(boolean("False for a retired code.")))
    valid_from: str | None = attrs.field(
        metadata=doc(nullable(string("The day the code came into use.", format="date")))
    )
    valid_to: str | None = attrs.field(
        metadata=doc(
            nullable(string("The day the code was retired (null while in use).", format="date"))
        )
    )
    replaced_by: tuple[str, ...] = attrs.field(
        metadata=doc(array(SIGUNGU_CODE, "The codes that replaced a retired code."))
    )
    replaces: tuple[str, ...] = attrs.field(
        metadata=doc(array(SIGUNGU_CODE, "The retired codes this code replaced."))
    )
    match: str = attrs.field(
        metadata=doc(enum(MATCHES, "Whether `q` is one of its names or starts one."))
    )
    kind: str = attrs.field(
        metadata=doc(
            enum(KINDS, "What was found: a district, an R-ONE market area or a legal dong.")
        )
    )
    dong: DongRef | None = attrs.field(
        metadata=doc(
            nullable(
                attrs_schema(
                    DongRef,
                    description="The legal dong of a dong row (null on other rows); the "
                    "district fields are the district holding it.",
                )
            )
        )
    )
    market_area: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The R-ONE market area of the bundled area table holding the district "
                    "(`서울>강남` for 11680), whose survey values /indices serves for it; "
                    "on a market-area row, the area itself. Null when none maps it."
                )
            )
        )
    )
    districts: tuple[str, ...] = attrs.field(
        metadata=doc(
            array(
                SIGUNGU_CODE,
                "A market area's districts in the bundled area table (each receives its "
                "values); empty for an unmapped area and on other rows.",
            )
        )
    )
    next: str = attrs.field(
        metadata=doc(
            string(
                "The call to make next, as a path and query on this server: a district's "
                "pulse, a dong's pulse at dong precision (Pro), a market area's indices."
            )
        )
    )


def _link(path: str, **query: str) -> str:
    return f"{RE}/{path}?{urlencode(query, quote_via=quote)}"


def _date(day: datetime.date | None) -> str | None:
    return day.isoformat() if day else None


def district_row(r: Region, *, exact: bool) -> RegionRow:
    """A district as the regions endpoint answers it."""
    return RegionRow(
        sigungu_code=r.code,
        sido=r.sido,
        sigungu=r.name,
        full_name=r.full_name,
        sido_roman=r.sido_roman,
        sigungu_roman=r.name_roman,
        full_name_roman=r.full_name_roman,
        in_use=r.in_use,
        valid_from=_date(r.valid_from),
        valid_to=_date(r.valid_to),
        replaced_by=r.replaced_by,
        replaces=tuple(sorted(replaces(r.code))),
        match=MATCHES[not exact],
        kind="district",
        dong=None,
        market_area=area_of(r.code),
        districts=(),
        next=_link("pulse", sigungu_code=r.code),
    )


def dong_row(d: Dong, *, exact: bool) -> RegionRow:
    """A legal dong: its district's fields, the dong, and its pulse at dong precision."""
    holder = region(d.sigungu_code)
    assert holder is not None, d.sigungu_code  # gen_bdong keeps the table's districts only
    ref = DongRef(
        dong_code=d.code,
        name=d.name,
        name_roman=romanize_place(d.name),
        in_use=d.in_use,
        valid_from=_date(d.valid_from),
        valid_to=_date(d.valid_to),
        replaced_by=d.replaced_by,
        code_source=d.code_source,
    )
    pulse = _link("pulse", sigungu_code=d.sigungu_code, geo_precision="dong", dong=d.name)
    return attrs.evolve(district_row(holder, exact=exact), kind="dong", dong=ref, next=pulse)


def area_row(a: MarketArea, *, exact: bool) -> RegionRow:
    """A market area: its code and path, its districts, and its indices."""
    sido, _, below = a.name.partition(">")
    roman = [romanize_place(p) for p in a.name.split(">")]
    target = a.code or (a.districts[0] if a.districts else None)
    return RegionRow(
        sigungu_code=a.code,
        sido=sido,
        sigungu=below or sido,
        full_name=a.name,
        sido_roman=roman[0],
        sigungu_roman=">".join(roman[1:]) or roman[0],
        full_name_roman=">".join(roman),
        in_use=True,
        valid_from=None,
        valid_to=None,
        replaced_by=(),
        replaces=(),
        match=MATCHES[not exact],
        kind="market_area",
        dong=None,
        market_area=a.name,
        districts=a.districts,
        next=_link("indices", sigungu_code=target) if target else _link("coverage"),
    )


def _district_dongs(query: str) -> list[RegionRow]:
    """Dongs of a query naming a district exactly (or a retired one, whose renumbering
    moved its dongs: ``부천 심곡동``), then the start of the dong's name."""
    q = normalize(query)
    out: list[RegionRow] = []
    for cut in range(1, len(q)):
        named = [m.region.code for m in search(q[:cut], limit=SEARCH_LIMIT) if m.exact]
        codes = {alias for code in named for alias in aliases(code)} | set(named)
        if codes and not q[cut:].isdigit():
            found = find_dongs(q[cut:], districts=codes)
            out += [dong_row(m.dong, exact=m.exact) for m in found]
    return out


def find(query: str, *, kind: str | None, areas: Mapping[str, str]) -> list[RegionRow]:
    """Every place ``query`` names (of ``kind`` only, when given), best first.
    ``areas``: the market areas loaded (code → published path)."""
    rows: list[RegionRow] = []
    if kind in (None, "district"):
        rows += [
            district_row(m.region, exact=m.exact) for m in search(query, limit=len(load_regions()))
        ]
    if kind in (None, "market_area"):
        rows += [area_row(a, exact=hit) for a, hit in find_areas(query, market_areas(areas))]
    if kind in (None, "dong"):
        dongs = [dong_row(m.dong, exact=m.exact) for m in find_dongs(query)]
        seen = {(r.dong.dong_code, r.dong.name, r.sigungu_code) for r in dongs if r.dong}
        dongs += [
            r
            for r in _district_dongs(query)
            if r.dong and (r.dong.dong_code, r.dong.name, r.sigungu_code) not in seen
        ]
        rows += dongs

    def rank(r: RegionRow) -> tuple[bool, bool, int, str, str]:
        live = r.dong.in_use if r.dong is not None else r.in_use
        code = r.dong.dong_code or "" if r.dong is not None else r.sigungu_code or ""
        return (not live, r.match != "exact", KINDS.index(r.kind), code, r.full_name)

    return sorted(rows, key=rank)


REGIONS_PARAMS: tuple[Param, ...] = (
    Param(
        name="q",
        description="A name or code, Korean or romanised: a district (`부천`, `Bucheon`, "
        "`강남구`, `Gangnam`, `서울 중구`, `Seoul Jung-gu`, `41192`, or its first digits), a "
        "legal dong (`역삼동`, `성수동1가`, `Yeoksam`, `강남구 역삼동`, a 10-digit code) or an "
        "R-ONE market area (`도심`, `강남`, `여의도마포`, `서울>도심`). Spaces, hyphens and "
        "case are ignored.",
        required=True,
        allow_empty=False,
        max_length=100,
        example="부천",
    ),
    Param(
        name="limit",
        description=f"The most places to answer (default and maximum {SEARCH_LIMIT}).",
        kind="integer",
        low=1,
        high=SEARCH_LIMIT,
        default=SEARCH_LIMIT,
    ),
    Param(
        name="kind",
        description="Only places of this kind: `district`, `market_area` or `dong` "
        "(default: all three).",
        kind="enum",
        choices=KINDS,
    ),
)


def regions_answer(
    query: Mapping[str, str],
    *,
    generated_at: datetime.datetime,
    auth_method: str,
    rate_limit: Mapping[str, int | None],
    areas: Mapping[str, str],
    request_id: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(data, _meta)`` of ``GET /api/v1/real-estate/regions``; ``InvalidParams`` for a
    missing, blank or malformed ``q``, ``limit`` or ``kind``. ``areas``: the market
    areas loaded (code → published path)."""
    values = read_all(REGIONS_PARAMS, query)
    q, limit = str(values["q"]), int(str(values["limit"]))
    kind = values["kind"] if isinstance(values["kind"], str) else None
    if not normalize(q):
        raise InvalidParams(
            "Query parameter 'q' must hold letters or digits of a place's name or code.",
            hint="For example q=부천, q=Bucheon, q=41192, q=역삼동 or q=도심.",
        )
    found = find(q, kind=kind, areas=areas)
    rows = to_json(found[:limit])
    meta: dict[str, Any] = {
        "service": "svc",
        "api_version": "v1",
        "generated_at": iso(generated_at, "generated_at"),
        "count": len(rows),
        "total": len(found),
        "query": {"q": q, "limit": limit, "kind": kind},
        "table": TABLE_NOTE,
        "auth_method": auth_method,
        "rate_limit": dict(rate_limit),
    }
    if request_id is not None:
        meta["request_id"] = request_id
    return rows, meta


TABLE_NOTE = (
    "The 법정동 district and legal dong codes of the Ministry of the Interior and Safety in "
    "use on 2026-10-08, and those retired since 2020 (valid_to, replaced_by); R-ONE market "
    "areas of the bundled area table and those loaded."
)
