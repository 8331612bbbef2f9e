"""Finding a district by name or code (``svc_core.realestate.region_search``)."""

from __future__ import annotations

import contextlib
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.realestate.region_search import normalize, resolve, search
from svc_core.regions import Region, load_regions, region, regions_in_use

IN_USE = st.sampled_from(regions_in_use())


def codes(query: str) -> list[str]:
    return [m.region.code for m in search(query)]


def test_names_in_any_spelling() -> None:
    for text in ("41192", "부천시원미구", "부천시 원미구", "경기도 부천시 원미구", "원미구", "Bucheon Wonmi",
                 "bucheon-si wonmi-gu", unicodedata.normalize("NFD", "부천시 원미구")):  # fmt: skip
        assert resolve(text).code == "41192", text
    assert resolve("강남").code == "11680"
    assert resolve("Seoul Jung-gu").code == "11140"
    assert resolve("서울 중구").code == "11140"
    assert resolve("광주 동구").code == "12210"  # the code in use, not 29110 (retired)
    assert codes("부천") == ["41192", "41194", "41196", "41190"]  # in use first


def test_a_retired_code_names_its_replacements() -> None:
    with pytest.raises(InvalidParams) as caught:
        resolve("41190")
    message = caught.value.message
    assert "retired on 2024-01-01" in message
    assert all(code in message for code in ("41192", "41194", "41196"))
    with pytest.raises(InvalidParams, match="27720"):
        resolve("경북 군위군")


def test_ambiguous_and_unknown_names() -> None:
    with pytest.raises(InvalidParams) as caught:
        resolve("중구")
    assert "ambiguous" in caught.value.message
    assert all(c in caught.value.message for c in ("11140", "26110", "27110", "30140", "31110"))
    with pytest.raises(InvalidParams, match="ambiguous"):
        resolve("부천")
    with pytest.raises(InvalidParams, match="no district in use"):
        resolve("아무데도")
    with pytest.raises(InvalidParams, match="unknown district code 99999"):
        resolve("99999")


@given(IN_USE)
def test_every_district_in_use_is_found_by_code_and_full_names(r: Region) -> None:
    assert resolve(r.code) == r
    assert resolve(r.full_name) == r
    assert resolve(r.full_name_roman) == r
    assert any(m.region == r and m.exact for m in search(r.full_name_roman.upper()))


@given(IN_USE, st.lists(st.sampled_from([" ", "-", "  ", ""]), min_size=1, max_size=40))
def test_spacing_and_case_do_not_matter(r: Region, seps: list[str]) -> None:
    chars = list(r.full_name_roman.replace(" ", "").replace("-", ""))
    spaced = "".join(c + seps[i % len(seps)] for i, c in enumerate(chars))
    assert normalize(spaced.swapcase()) == normalize(r.full_name_roman)
    assert resolve(spaced.swapcase()) == r


@given(st.text(max_size=30), st.integers(min_value=1, max_value=60))
def test_search_is_total_ordered_and_bounded(text: str, limit: int) -> None:
    found = search(text, limit=limit)
    assert len(found) <= limit
    order = [(not m.region.in_use, not m.exact, m.region.code) for m in found]
    assert order == sorted(order)
    if not normalize(text):
        assert found == []
    with contextlib.suppress(InvalidParams):  # a clear refusal, or a district in use
        assert resolve(text).in_use


@given(st.sampled_from([r for r in load_regions() if not r.in_use]))
def test_every_retired_code_is_refused_naming_what_replaced_it(r: Region) -> None:
    with pytest.raises(InvalidParams) as caught:
        resolve(r.code)
    for code in r.replaced_by:
        assert code in caught.value.message
        assert region(code) in regions_in_use()
