"""The bundled district table, address splitting and renumbering aliases."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from svc_core.regions import (
    aliases,
    equivalent_codes,
    find_region,
    load_regions,
    region,
    region_name,
    split_address,
)


def test_table_is_loaded() -> None:
    regions = load_regions()
    assert len(regions) == 104
    assert len({r.code for r in regions}) == len(regions)
    assert sum(r.sido == "서울특별시" for r in regions) == 25
    assert all(len(r.code) == 5 and r.code.isdigit() for r in regions)


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
    assert split_address("강원특별자치도 춘천시 효자동") is None
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
    assert aliases("11680") == set()
    assert aliases("not a code") == set()
    assert equivalent_codes("41192") == {"41192", "41190"}


@given(st.from_regex(r"[0-9]{5}", fullmatch=True))
def test_aliases_are_symmetric(code: str) -> None:
    found = aliases(code)
    assert code not in found
    for other in found:
        assert code in aliases(other)
    assert equivalent_codes(code) == found | {code}
