"""Legal dongs and market areas by name (``svc_core.dongs``,
``svc_core.realestate.place_search``, ``svc_core.realestate.regions_answer``)."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from svc_core.dongs import CODE_SOURCES, Dong, load_dongs
from svc_core.realestate.place_search import find_areas, find_dongs, market_areas
from svc_core.realestate.region_search import normalize
from svc_core.realestate.regions_answer import find, regions_answer
from svc_core.regions import region
from svc_core.romanize import romanize

DONGS = load_dongs()
IN_USE_WITH_CODE = st.sampled_from([d for d in DONGS if d.in_use and d.code])
NOW = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


def test_the_table_is_consistent() -> None:
    codes = [d.code for d in DONGS if d.code]
    assert len(codes) == len(set(codes))  # a code is one dong
    by_code = {d.code: d for d in DONGS if d.code}
    for d in DONGS:
        assert region(d.sigungu_code) is not None, d
        assert d.code_source in CODE_SOURCES
        assert (d.code is None) == (d.code_source == "unlisted")
        assert d.code is None or d.code[:5] == d.sigungu_code
        assert not (d.in_use and d.valid_to is not None)  # in use: never retired
        for new in d.replaced_by:  # a moved dong: the code that replaced it, in use
            heir = by_code[new]
            assert heir.in_use and heir.name == d.name and heir.valid_from == d.valid_to
            assert not d.in_use and heir.code_source == "derived"


def test_known_dongs() -> None:
    (yeoksam,) = [m.dong for m in find_dongs("역삼동")]
    assert (yeoksam.code, yeoksam.sigungu_code, yeoksam.in_use) == ("1168010100", "11680", True)
    (seongsu,) = [m for m in find_dongs("성수동1가")]
    assert (seongsu.dong.code, seongsu.exact) == ("1120011400", True)
    # Gangwon's renumbering (42 → 51) moved 춘천시's 봉의동 with its own digits
    old, new = sorted((m.dong for m in find_dongs("봉의동") if "42110" <= m.dong.sigungu_code
                       < "51120"), key=lambda d: d.sigungu_code)  # fmt: skip
    assert (old.code, old.in_use, old.replaced_by) == ("4211010100", False, ("5111010100",))
    assert (new.code, new.valid_from) == ("5111010100", datetime.date(2023, 6, 11))


@given(IN_USE_WITH_CODE)
def test_every_dong_in_use_is_found_by_name_and_code(dong: Dong) -> None:
    by_name = [m for m in find_dongs(dong.name) if m.dong == dong]
    assert by_name and by_name[0].exact
    assert [m.dong for m in find_dongs(dong.code or "") if m.exact] == [dong]
    holder = region(dong.sigungu_code)
    assert holder is not None
    within = find(f"{holder.full_name} {dong.name}", kind="dong", areas={})
    assert any(r.dong is not None and r.dong.dong_code == dong.code for r in within)


def _names(dong: Dong) -> set[str]:
    words = {dong.name, dong.name.split()[-1]}
    return {normalize(w) for w in words} | {normalize(romanize(w)) for w in words}


@given(st.text(alphabet="역삼성수동가리읍면1234567890abgjkmnoqsuy -", max_size=12))
def test_every_match_starts_with_the_query(query: str) -> None:
    q = normalize(query)
    for m in find_dongs(query):
        if q.isdigit():
            assert len(q) > 5 and (m.dong.code or "").startswith(q)
        else:
            assert any(name.startswith(q) for name in _names(m.dong)), (q, m)


def test_market_areas_bundled_and_loaded() -> None:
    bundled = market_areas({})
    assert [(a.name, a.code) for a in bundled] == [
        ("서울>강남", None),
        ("서울>기타", None),
        ("서울>도심", None),
        ("서울>여의도마포", None),
    ]
    loaded = market_areas({"A510003": "서울>도심", "A520012": "서울>강남대로"})
    dosim = next(a for a in loaded if a.code == "A510003")
    assert dosim.districts == ("11110", "11140")
    assert [a.name for a, exact in find_areas("도심", loaded)] == ["서울>도심"]
    assert [(a.code, exact) for a, exact in find_areas("강남", loaded)] == [
        (None, True),
        ("A520012", False),
    ]
    assert [a.name for a, _ in find_areas("여의도·마포", loaded)] == ["서울>여의도마포"]
    assert [a.name for a, _ in find_areas("Dosim", loaded)] == ["서울>도심"]


def test_the_answer_ranks_kinds_and_echoes_the_query() -> None:
    data, meta = regions_answer(
        {"q": "강남"}, generated_at=NOW, auth_method="api_key", rate_limit={}, areas={}
    )
    assert [r["kind"] for r in data[:2]] == ["district", "market_area"]
    assert {r["kind"] for r in data[2:]} == {"dong"}
    assert meta["query"] == {"q": "강남", "limit": 50, "kind": None}
    assert meta["total"] == len(data)
    only, _ = regions_answer(
        {"q": "강남", "kind": "market_area"},
        generated_at=NOW,
        auth_method="api_key",
        rate_limit={},
        areas={},
    )
    assert [r["full_name"] for r in only] == ["서울>강남"]
