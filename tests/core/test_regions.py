"""The bundled district table, address splitting and renumbering aliases."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from svc_core.regions import (
    aliases,
    find_region,
    load_regions,
    region,
    region_name,
    regions_in_use,
    split_address,
)
from svc_core.romanize import romanize_place

D = datetime.date


def test_table_is_loaded() -> None:
    regions = load_regions()
    used = regions_in_use()
    assert len({r.code for r in regions}) == len(regions)
    assert all(len(r.code) == 5 and r.code.isdigit() for r in regions)
    # every district in use (the 2026-10 code list: 256), not the 104 of the old table
    assert 250 <= len(used) <= 260
    assert sum(r.sido == "서울특별시" for r in used) == 25
    assert {"41192", "41194", "41196", "51110", "52111", "27720", "28710", "28720"} <= {
        r.code for r in used
    }
    assert all(r.valid_from is not None for r in regions)
    for r in regions:  # a retired code since 2020, replaced only by codes in use
        if not r.in_use:
            assert r.valid_to is not None and r.valid_to >= D(2020, 1, 1)
            assert r.replaced_by and all(region(c) in used for c in r.replaced_by)
        else:
            assert r.replaced_by == ()


def test_the_retirements_since_2020() -> None:
    def history(code: str) -> tuple[D | None, tuple[str, ...]]:
        found = region(code)
        assert found is not None
        return found.valid_to, found.replaced_by

    assert history("42110") == (D(2023, 6, 11), ("51110",))
    assert history("45111") == (D(2024, 1, 18), ("52111",))
    assert history("47720") == (D(2023, 7, 1), ("27720",))
    assert history("41190") == (D(2024, 1, 1), ("41192", "41194", "41196"))
    assert history("41590") == (D(2026, 2, 1), ("41591", "41593", "41595", "41597"))
    assert history("28110") == (D(2026, 7, 1), ("28125", "28155"))
    assert history("46770") == (D(2026, 7, 1), ("12740",))  # 고흥군: a new number
    gunwi = region("27720")
    assert gunwi is not None and gunwi.valid_from == D(2023, 7, 1) and gunwi.in_use
    assert sum(r.code.startswith("42") for r in load_regions()) == 18


def test_romanised_names() -> None:
    def names(code: str) -> tuple[str, str]:
        found = region(code)
        assert found is not None
        return found.sido_roman, found.name_roman

    assert names("11680") == ("Seoul", "Gangnam-gu")
    assert names("11110") == ("Seoul", "Jongno-gu")
    assert names("11140") == ("Seoul", "Jung-gu")
    assert names("41192") == ("Gyeonggi-do", "Bucheon-si Wonmi-gu")
    assert names("41597") == ("Gyeonggi-do", "Hwaseong-si Dongtan-gu")
    assert names("41281") == ("Gyeonggi-do", "Goyang-si Deogyang-gu")
    assert names("51150") == ("Gangwon", "Gangneung-si")
    for r in load_regions():  # the table is what the romaniser writes
        assert (r.sido_roman, r.name_roman) == (romanize_place(r.sido), romanize_place(r.name))
        assert r.full_name_roman.isascii()


def test_lookup_by_code_and_name() -> None:
    assert region_name("11680") == "강남구"
    assert region_name("41135") == "성남시 분당구"
    assert region_name("99999") is None
    found = region("11110")
    assert found is not None
    assert found.full_name == "서울특별시 종로구"
    # 중구 exists in several metros: the province decides
    assert find_region("서울특별시", "중구") == region("11140")
    assert find_region("부산광역시", "중구") == region("26110")


def test_split_address() -> None:
    gangnam = region("11680")
    assert split_address("서울특별시 강남구 수서동") == (gangnam, "수서동")
    assert split_address("서울특별시 강남구") == (gangnam, None)
    assert split_address("경기도 성남시 분당구 정자동") == (region("41135"), "정자동")
    assert split_address("  부산광역시  중구   중앙동4가 ") == (region("26110"), "중앙동4가")
    sejong = region("36110")
    assert split_address("세종특별자치시 조치원읍 원리") == (sejong, "조치원읍 원리")
    assert split_address("세종특별자치시 세종특별자치시 나성동") == (sejong, "나성동")
    # the province's new name finds the code in use, the old name the retired code
    assert split_address("강원특별자치도 춘천시 효자동") == (region("51110"), "효자동")
    assert split_address("강원도 춘천시 효자동") == (region("42110"), "효자동")
    assert split_address("경기도 부천시 원미구 중동") == (region("41192"), "중동")
    assert split_address("경기도 부천시 중동") == (region("41190"), "중동")
    assert split_address("서울특별시 없는구 어딘가동") is None
    assert split_address("") is None


def test_aliases_both_directions() -> None:
    assert aliases("42110") == {"51110"}
    assert aliases("51110") == {"42110"}
    assert aliases("45111") == {"52111"}
    assert aliases("52111") == {"45111"}
    assert aliases("47720") == {"27720"}
    assert aliases("27720") == {"47720"}
    assert aliases("41190") == {"41192", "41194", "41196"}
    assert aliases("41194") == {"41190"}
    assert aliases("41590") == {"41591", "41593", "41595", "41597"}
    assert aliases("41597") == {"41590"}
    assert aliases("46770") == {"12740"}
    assert aliases("12740") == {"46770"}
    assert aliases("28110") == {"28125", "28155"}
    assert aliases("28125") == {"28110", "28140"}
    assert aliases("11680") == set()
    assert aliases("not a code") == set()


@given(st.from_regex(r"[0-9]{5}", fullmatch=True))
def test_aliases_are_symmetric(code: str) -> None:
    found = aliases(code)
    assert code not in found
    for other in found:
        assert code in aliases(other)
