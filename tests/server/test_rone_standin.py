"""The R-ONE stand-in answers as the real service does: one check per fact of
``data/official-apis.md`` (section numbers are its own) that the stand-in serves, so a
stand-in that drifts from the facts fails here, not in svc's tests."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.rone_standin import (
    BY_ID,
    BY_NAME,
    FLOORS,
    KEY,
    SIDO,
    TABLES,
    RoneStandIn,
    areas,
    serve,
    table_rows,
)


@pytest.fixture(scope="module")
def standin() -> Iterator[RoneStandIn]:
    with serve() as state:
        yield state


def get(state: RoneStandIn, operation: str, **params: str) -> httpx.Response:
    return httpx.get(f"{state.url}/{operation}", params={"KEY": KEY, **params}, timeout=30)


def data(state: RoneStandIn, table_id: str, cycle: str = "QY", size: int = 1000) -> Any:
    answer = get(
        state, "SttsApiTblData.do", STATBL_ID=table_id, DTACYCLE_CD=cycle, Type="json",
        pIndex="1", pSize=str(size),
    )  # fmt: skip
    return answer.json()


def test_the_published_table_ids_and_names() -> None:
    # §1.6: the current tables of the survey, by class
    assert BY_ID["TT244763134428698"]["STATBL_NM"] == "임대동향 지역별 공실률(2024년3분기~)_오피스"
    assert (
        BY_ID["T248223134698125"]["STATBL_NM"] == "임대동향 지역별 임대료(2024년3분기~)_소규모 상가"
    )
    assert BY_ID["T245883135037859"]["STATBL_NM"] == "임대동향 수익률(분기)(2024년3분기~)_오피스"
    assert BY_ID["TT244963134453269"]["STATBL_NM"] == "임대동향 지역별 임대가격지수(시계열)_오피스"
    assert BY_ID["TT242303134253883"]["STATBL_NM"] == "임대동향 순영업소득(2024년3분기~)_오피스"
    floor = "임대동향 층별임대료 및 층별효용비율(2024년3분기~)_{}"
    assert [BY_NAME[floor.format(c)]["STATBL_ID"] for c in ("중대형 상가", "소규모 상가", "집합 상가")] == [
        "T241873134863890", "T246233134891629", "T249023134703697",
    ]  # fmt: skip
    # §1.9: the office's older eras
    assert BY_ID["A_2024_00366"]["STATBL_NM"] == "임대동향 수익률(분기)(2022년~)_오피스"
    assert BY_ID["A_2024_00238"]["STATBL_NM"] == "임대동향 지역별 공실률(2013~2016)_오피스"


def test_the_table_list_gives_yields_tables_both_cycles_as_one_value(
    standin: RoneStandIn,
) -> None:
    # §1.2 (the list's fields), §1.5 (YY,QY, 매년,분기 on the yields tables)
    listed = get(standin, "SttsApiTbl.do", Type="json", pIndex="1", pSize="1000").json()
    head, body = listed["SttsApiTbl"]
    assert head["head"][0]["list_total_count"] == len(TABLES) == len(body["row"])
    yields = next(r for r in body["row"] if r["STATBL_ID"] == "T245883135037859")
    assert (yields["DTACYCLE_CD"], yields["DTACYCLE_NM"]) == ("YY,QY", "매년,분기")
    # the composite value answers nothing; one code a call does
    assert data(standin, "T245883135037859", "YY,QY")["RESULT"]["CODE"] == "INFO-200"
    assert data(standin, "T245883135037859", "YY")["SttsApiTblData"][1]["row"]


def test_a_regional_row_has_every_field_and_null_groups(standin: RoneStandIn) -> None:
    # §1.2: the data-row fields; §1.7: GRP_* null outside floor tables
    (row,) = data(standin, "TT244763134428698", size=1)["SttsApiTblData"][1]["row"]
    assert set(row) == {
        "STATBL_ID", "DTACYCLE_CD", "WRTTIME_IDTFR_ID", "WRTTIME_DESC", "GRP_ID", "GRP_NM",
        "GRP_FULLNM", "CLS_ID", "CLS_NM", "CLS_FULLNM", "ITM_ID", "ITM_NM", "ITM_FULLNM",
        "UI_NM", "DTA_VAL",
    }  # fmt: skip
    assert (row["GRP_ID"], row["GRP_NM"], row["GRP_FULLNM"]) == (None, None, None)
    # §1.5: quarterly period ids YYYY0Q, described as "2024년 3분기"
    assert (row["WRTTIME_IDTFR_ID"], row["WRTTIME_DESC"]) == ("202403", "2024년 3분기")
    assert (row["CLS_ID"], row["CLS_FULLNM"], row["ITM_NM"], row["UI_NM"]) == (
        500002, "서울", "공실률", "%",
    )  # fmt: skip


def test_a_floor_table_has_the_area_as_group_and_the_floor_as_class() -> None:
    # §1.7: GRP_* the area, CLS_NM the floor, items 임대료 (천원/㎡) and 효용비율
    rows = table_rows("T241873134863890")
    area = [
        r for r in rows if r["GRP_FULLNM"] == "서울>강남대로" and r["WRTTIME_IDTFR_ID"] == "202602"
    ]
    assert sorted({r["CLS_NM"] for r in area}) == sorted(FLOORS)
    assert [r["CLS_NM"] for r in area if r["ITM_NM"] == "임대료"] == list(FLOORS)
    assert {r["ITM_NM"] for r in area} == {"임대료", "효용비율"}
    assert {r["UI_NM"] for r in area if r["ITM_NM"] == "임대료"} == {"천원/㎡"}
    # one rent per (area, floor, quarter); the floors repeat under every area
    keys = [(r["GRP_ID"], r["CLS_NM"], r["WRTTIME_IDTFR_ID"], r["ITM_NM"]) for r in rows]
    assert len(keys) == len(set(keys)) == len(areas("중대형 상가")) * len(FLOORS) * 8 * 2


def test_the_noi_table_items() -> None:
    # §1.8: 순영업소득(천원/㎡), ITM_ID 100005, beside a percentage item
    rows = table_rows("TT242303134253883")
    items = {(r["ITM_NM"], r["ITM_ID"], r["UI_NM"]) for r in rows}
    assert ("순영업소득(천원/㎡)", 100005, "천원/㎡") in items
    assert any(unit == "%" for _, _, unit in items)


def test_old_yields_tables_hold_three_items_and_the_rent_index_item_is_jisu() -> None:
    # §1.9: every old yields table holds all three items; §1.6: the rent index's item 지수
    for table in TABLES:
        if "수익률(분기)" in table["STATBL_NM"]:
            assert table["items"] == ("소득수익률", "자본수익률", "투자수익률"), table["STATBL_NM"]
    assert {r["ITM_NM"] for r in table_rows("TT244963134453269", "QY", 3)} == {"지수"}
    # §1.6: 소득수익률 is ITM_ID 100002
    assert {r["ITM_ID"] for r in table_rows("T245883135037859", "QY", 1) if r["ITM_NM"] == "소득수익률"} == {100002}  # fmt: skip


def test_annual_yields_compound_the_quarters() -> None:
    # §1.5: the board's annual yield is ∏(1 + r_q) − 1 of the four quarters
    quarterly = {
        r["WRTTIME_IDTFR_ID"]: r["DTA_VAL"]
        for r in table_rows("A_2024_00366", "QY", 1)
        if r["ITM_NM"] == "소득수익률"
    }
    (year,) = [r for r in table_rows("A_2024_00366", "YY", 1) if r["ITM_NM"] == "소득수익률" and r["WRTTIME_IDTFR_ID"] == "2023"]  # fmt: skip
    growth = math.prod(1 + quarterly[f"20230{q}"] / 100 for q in range(1, 5))
    assert year["DTA_VAL"] == round((growth - 1) * 100, 3)
    assert (year["DTACYCLE_CD"], year["WRTTIME_DESC"]) == ("YY", "2023년")


def test_market_areas_per_class() -> None:
    # §1.10: 287 중대형 and 258 소규모 상권 in 2026 Q2 (rows whose path has a '>'), about
    # 260 to 290 a class; the 시도 totals 500002 (서울) to 500018 (제주)
    def markets(survey_class: str) -> int:
        return sum(1 for _, path in areas(survey_class) if ">" in path)

    assert (markets("중대형 상가"), markets("소규모 상가")) == (287, 258)
    assert all(260 <= markets(c) <= 290 for c in ("오피스", "집합 상가", "일반 상가"))
    assert SIDO[0] == (500002, "서울") and SIDO[-1] == (500018, "제주") and len(SIDO) == 17
    office = dict(areas("오피스"))
    # Seoul's office 권역 and a 상권 of the office's 시도>권역>상권 form
    assert [office[i] for i in (510003, 510004, 510005, 510006)] == [
        "서울>도심", "서울>강남", "서울>여의도마포", "서울>기타",
    ]  # fmt: skip
    assert "서울>도심>광화문" in office.values()
    assert "대전>둔산" in dict(areas("소규모 상가")).values()  # retail: 시도>상권
    assert len(set(dict(areas("오피스")))) == len(areas("오피스"))  # one id an area


def test_xml_is_the_default_and_json_can_be_garbled() -> None:
    # §1.1: Type defaults to XML; §1.3: one client found Korean garbled in JSON, never in XML
    with serve(area_limit=2) as state:
        state.garble = True
        listing = get(state, "SttsApiTbl.do", pIndex="1", pSize="1000")
        assert listing.headers["content-type"] == "text/xml;charset=UTF-8"
        root = ET.fromstring(listing.content)  # noqa: S314 - the stand-in's own answer
        names = [row.findtext("STATBL_NM") for row in root.iter("row")]
        assert "임대동향 지역별 공실률(2024년3분기~)_오피스" in names
        as_json = get(state, "SttsApiTbl.do", Type="json", pIndex="1", pSize="1000")
        assert "\ufffd" in json.loads(as_json.text)["SttsApiTbl"][1]["row"][0]["STATBL_NM"]
