"""R-ONE statistics: open-API JSON and CSV, name mapping and market-area geography."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import SourceError
from svc_core.models import METRIC_TYPES
from svc_core.regions import region_name
from svc_core.sources.rone import (
    DEFAULT_AREA_MAP,
    PRIMARY_CLASS,
    area_key,
    bundled_area_map,
    index_key,
    parse_rone,
    parse_rone_csv,
    parse_rone_json,
)

RONE = Path(__file__).resolve().parents[2] / "fixtures" / "rone"


def api_doc(rows: list[dict[str, object]], code: str = "INFO-000") -> bytes:
    head = [{"list_total_count": len(rows)}, {"RESULT": {"CODE": code, "MESSAGE": "m"}}]
    return json.dumps({"SttsApiTblData": [{"head": head}, {"row": rows}]}).encode()


def api_row(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "STATBL_ID": "T1",
        "DTACYCLE_CD": "QY",
        "WRTTIME_IDTFR_ID": "202501",
        "CLS_FULLNM": "오피스>서울>도심",
        "ITM_NM": "공실률",
        "ITM_FULLNM": "공실률",
        "DTA_VAL": 9.5,
    }
    row.update(fields)
    return row


def test_office_vacancy_openapi() -> None:
    data = (RONE / "office_vacancy_openapi.json").read_bytes()
    result = parse_rone_json(data, table_name="오피스 공실률(시장별)", path="v.json")
    report = result.report
    assert report.read == 10
    # 강남 2025-Q2 has no value
    assert report.excluded == {"no_value": 1}
    assert report.rejected == {}
    by_key = {o.natural_key: o for o in result.observations}
    cbd = by_key["rone:11110:office:vacancy_rate:2025-Q1"]
    assert (cbd.sigungu, cbd.value_pct, cbd.period_end_date) == (
        "종로구",
        9.8,
        datetime.date(2025, 3, 31),
    )
    assert by_key["rone:11140:office:vacancy_rate:2025-Q1"].value_pct == 9.8  # same area
    assert by_key["rone:11650:office:vacancy_rate:2025-Q1"].value_pct == 5.9
    # "여의도·마포" matches the map's "여의도마포"; a string value is read as a number
    assert by_key["rone:11440:office:vacancy_rate:2025-Q2"].value_pct == 7.05
    annual = by_key["rone:11110:office:vacancy_rate:2024"]
    assert annual.period_end_date == datetime.date(2024, 12, 31)
    # every area is served under its own code A<CLS_ID>, named by its full name as
    # published (여의도·마포 keeps its ·), mapped or not
    own = {o.sigungu_code: o.sigungu for o in result.observations if o.sigungu_code[0] == "A"}
    assert own == {
        "A500001": "전국",
        "A500002": "서울",
        "A510003": "서울>도심",
        "A510004": "서울>강남",
        "A510005": "서울>여의도·마포",
        "A510040": "서울>강남>테헤란로",
    }
    assert by_key["rone:A500002:office:vacancy_rate:2025-Q1"].value_pct == 8.4
    assert by_key["rone:A510004:office:vacancy_rate:2025-Q1"].value_pct == 5.9
    assert len(result.observations) == 21  # 12 for districts, 9 under the areas' codes
    assert {o.source_table for o in result.observations} == {"PLACEHOLDER_01"}
    # the class from the table's name; no era given, none recorded
    assert {(o.survey_class, o.era) for o in result.observations} == {("오피스", "")}
    assert {o.source for o in result.observations} == {"rone_official"}


YIELDS = "임대동향 수익률(분기)(2024년3분기~)_중대형 상가"


def test_the_current_yields_table_by_item_class_and_era_from_its_name() -> None:
    # a real answer names no class in its rows: the table's name does, and its era
    result = parse_rone(
        (RONE / "retail_yields_openapi.json").read_bytes(), table_name=YIELDS, era="2024Q3~"
    )
    report = result.report
    assert (report.read, report.excluded, report.rejected) == (15, {"no_value": 1}, {})
    got = {
        (o.sigungu_code, o.property_type, o.metric_type): o.value_pct for o in result.observations
    }
    assert got[("11680", "retail", "income_yield")] == 1.12
    assert got[("11650", "retail", "capital_yield")] == 0.35
    assert got[("A510004", "retail", "total_return")] == 1.47
    assert got[("11170", "retail", "income_yield")] == 1.21  # 서울>기타 → 용산구
    assert ("11170", "retail", "total_return") not in got  # null: no value
    assert {(o.survey_class, o.era) for o in result.observations} == {("중대형 상가", "2024Q3~")}
    key = "rone:11680:retail:income_yield:2025-Q2:era=2024Q3~"
    assert key in {o.natural_key for o in result.observations}


@pytest.mark.parametrize(
    ("survey_class", "key_part"),
    [("소규모 상가", ":class=소규모상가"), ("일반 상가", ":class=일반상가")],
)
def test_every_retail_class_is_retail_a_series_of_its_own(survey_class: str, key_part: str) -> None:
    data = (RONE / "retail_yields_openapi.json").read_bytes()
    name = YIELDS.replace("중대형 상가", survey_class)
    other = parse_rone(data, table_name=name, era="2024Q3~").observations
    assert {(o.property_type, o.survey_class) for o in other} == {("retail", survey_class)}
    primary = {o.natural_key for o in parse_rone(data, table_name=YIELDS).observations}
    assert all(key_part in o.natural_key for o in other)
    assert not primary & {o.natural_key for o in other}


def test_a_class_can_be_left_out_by_the_caller() -> None:
    result = parse_rone(
        (RONE / "retail_yields_openapi.json").read_bytes(),
        table_name=YIELDS.replace("중대형 상가", "소규모 상가"),
        class_map={"소규모상가": None},
    )
    assert result.observations == []
    assert result.report.excluded == {"unmapped_property_class": 14, "no_value": 1}


def test_no_data_is_an_empty_result() -> None:
    result = parse_rone((RONE / "no_data_openapi.json").read_bytes())
    assert result.observations == []
    assert result.report.read == 0
    top = {"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}}
    assert parse_rone_json(json.dumps(top).encode()).observations == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (json.dumps({"RESULT": {"CODE": "ERROR-300", "MESSAGE": "필수 값이 누락"}}), "ERROR-300"),
        (api_doc([], code="INFO-300").decode(), "INFO-300"),
        ('{"SttsApiTblData": [{"row": []}]}', "missing"),
        ('{"other": 1}', "SttsApiTblData"),
        ("[1, 2]", "not an object"),
        ("{broken", "malformed JSON"),
    ],
)
def test_api_errors(data: str, message: str) -> None:
    with pytest.raises(SourceError, match=message) as info:
        parse_rone_json(data.encode(), path="r.json")
    assert info.value.path == "r.json"


def test_metric_names_most_specific_first() -> None:
    rows = [
        api_row(ITM_NM="임대가격지수", ITM_FULLNM="임대가격지수"),
        api_row(ITM_NM="매매가격지수", ITM_FULLNM="매매가격지수", WRTTIME_IDTFR_ID="202502"),
        api_row(ITM_NM="가격지수", ITM_FULLNM="가격지수", WRTTIME_IDTFR_ID="202503"),
        api_row(ITM_NM="투자수익률", ITM_FULLNM="투자수익률"),
        api_row(ITM_NM="자본수익률", ITM_FULLNM="자본수익률"),
        api_row(ITM_NM="소득수익률", ITM_FULLNM="소득수익률"),
        api_row(ITM_NM="공실률", ITM_FULLNM="공실률"),
    ]
    result = parse_rone_json(api_doc(rows), area_map={"서울>도심": ["11110"]})
    assert [o.metric_type for o in result.observations] == [
        "rent_index",
        "sale_price_index",
        "sale_price_index",
        "total_return",
        "capital_yield",
        "income_yield",
        "vacancy_rate",
    ]


def test_class_from_table_name_or_fallback() -> None:
    rows = [api_row(CLS_FULLNM="서울>강남")]
    by_table = parse_rone_json(api_doc(rows), table_name="중대형상가 공실률")
    assert {o.property_type for o in by_table.observations} == {"retail"}
    by_fallback = parse_rone_json(api_doc(rows), property_type="office")
    assert {o.property_type for o in by_fallback.observations} == {"office"}
    neither = parse_rone_json(api_doc(rows))
    assert neither.report.rejected == {"unknown_property_class": 1}
    small = parse_rone_json(api_doc(rows), table_name="소규모상가 공실률")
    assert {(o.property_type, o.survey_class) for o in small.observations} == {
        ("retail", "소규모 상가")
    }


def test_cycles_values_and_duplicates() -> None:
    rows = [
        api_row(DTACYCLE_CD="MM", WRTTIME_IDTFR_ID="202501"),
        api_row(DTACYCLE_CD="YY", WRTTIME_IDTFR_ID="202501"),
        api_row(DTA_VAL="NaN"),
        api_row(DTA_VAL=True),
        api_row(DTA_VAL="-"),
        api_row(DTA_VAL="1,234.5", WRTTIME_IDTFR_ID="202504"),
        api_row(WRTTIME_IDTFR_ID="202504", DTA_VAL=2.0),
        api_row(WRTTIME_IDTFR_ID="1985"),
    ]
    result = parse_rone_json(api_doc(rows), area_map={"서울>도심": ["11110"]})
    assert result.report.excluded == {
        "unsupported_cycle": 1,
        "no_value": 1,
        "duplicate_in_file": 1,
    }
    assert result.report.rejected == {"invalid_period": 2, "invalid_value": 2}
    (obs,) = result.observations
    assert (obs.period, obs.value_pct) == ("2025-Q4", 1234.5)


def test_area_map_is_validated() -> None:
    rows = [api_row()]
    with pytest.raises(ValueError, match="not a known district"):
        parse_rone_json(api_doc(rows), area_map={"서울>도심": ["99999"]})
    with pytest.raises(ValueError, match="under both"):
        parse_rone_json(api_doc(rows), area_map={"서울>도심": ["11110"], "서울>종로": ["11110"]})


def test_default_area_map_is_consistent() -> None:
    codes = [c for cs in DEFAULT_AREA_MAP.values() for c in cs]
    assert len(codes) == len(set(codes))
    assert {"11110", "11140", "11680", "11650", "11560", "11440"} <= set(codes)
    # the four Seoul office areas the public facts name cover Seoul's 25 gu, once each
    assert set(DEFAULT_AREA_MAP) == {"서울>도심", "서울>강남", "서울>여의도마포", "서울>기타"}
    assert len(codes) == 25 and all(c.startswith("11") for c in codes)


def test_csv_form() -> None:
    data = (RONE / "indices.csv").read_bytes()
    result = parse_rone_csv(data, path="indices.csv")
    report = result.report
    assert report.read == 9
    assert report.excluded == {"no_value": 1, "unmapped_area": 1}  # empty value; 부산>서면
    assert [(r.line, r.reason) for r in report.rejections] == [
        (8, "invalid_period"),
        (9, "invalid_value"),
    ]
    got = {(o.sigungu_code, o.property_type, o.metric_type, o.period): o.value_pct
           for o in result.observations}  # fmt: skip
    assert got[("11110", "office", "vacancy_rate", "2025-Q1")] == 9.8
    assert got[("11680", "office", "income_yield", "2025-Q1")] == 1.05
    assert got[("11440", "office", "sale_price_index", "2025-Q2")] == 103.2
    assert got[("11650", "retail", "rent_index", "2025-Q2")] == 100.4
    assert got[("11140", "commercial_complex", "total_return", "2024")] == 5.12
    assert len(got) == 10
    assert parse_rone(data).observations == result.observations  # detected as CSV


def test_csv_accepts_svc_names_and_cp949() -> None:
    text = "period,region,property_class,item,value\n2025-Q3,서울>강남,office,vacancy_rate,4.4\n"
    observations = parse_rone_csv(text.encode("cp949")).observations
    assert [(o.sigungu_code, o.property_type, o.metric_type, o.period) for o in observations] == [
        ("11680", "office", "vacancy_rate", "2025-Q3"),
        ("11650", "office", "vacancy_rate", "2025-Q3"),
    ]


def test_csv_header_is_required() -> None:
    with pytest.raises(SourceError, match="lacks column") as info:
        parse_rone_csv("기간,지역,값\n202501,서울>도심,9.8\n".encode(), path="i.csv")
    assert info.value.line == 1


def test_observations_are_idempotent() -> None:
    data = (RONE / "office_vacancy_openapi.json").read_bytes()
    a = parse_rone_json(data, table_name="오피스 공실률").observations
    b = parse_rone_json(data, table_name="오피스 공실률").observations
    assert a == b


@given(st.lists(st.text(max_size=6), min_size=1, max_size=4))
def test_area_key_is_stable(parts: list[str]) -> None:
    key = area_key(">".join(parts))
    assert area_key(key) == key
    assert " " not in key


@given(
    st.sampled_from(
        ["공실률", "소득수익률", "자본수익률", "투자수익률", "임대가격지수", "매매가격지수"]
    ),
    st.integers(1990, 2100),
    st.integers(1, 4),
    st.floats(-50, 200, allow_nan=False),
)
def test_generated_rows_map_to_observations(item: str, year: int, q: int, value: float) -> None:
    row = api_row(ITM_NM=item, ITM_FULLNM=item, WRTTIME_IDTFR_ID=f"{year}0{q}", DTA_VAL=value)
    (obs,) = parse_rone_json(api_doc([row]), area_map={"서울>도심": ["11110"]}).observations
    assert obs.metric_type in METRIC_TYPES
    assert obs.period == f"{year}-Q{q}"
    assert obs.value_pct == value


@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["전국", "서울", "서울>도심", "서울>강남", "서울>기타", "부산"]),
            st.integers(1, 999_999),
            st.floats(0, 50, allow_nan=False),
        ),
        max_size=10,
    )
)
def test_every_area_is_served_by_its_districts_or_its_own_code(
    rows: list[tuple[str, int, float]],
) -> None:
    doc = {
        "SttsApiTblData": [
            {"head": [{"list_total_count": len(rows)}, {"RESULT": {"CODE": "INFO-000"}}]},
            {
                "row": [
                    {
                        "WRTTIME_IDTFR_ID": f"20250{i % 4 + 1}",
                        "CLS_FULLNM": path,
                        "CLS_ID": cls_id,
                        "ITM_NM": "공실률",
                        "DTA_VAL": value,
                    }
                    for i, (path, cls_id, value) in enumerate(rows)
                ]
            },
        ]
    }
    area_map = {"서울>도심": ("11110", "11140"), "서울>강남": ("11680",)}
    result = parse_rone(json.dumps(doc).encode(), area_map=area_map, property_type="office")
    places = {o.sigungu_code for o in result.observations}
    expected: set[str] = set()
    for path, cls_id, _ in rows:
        expected |= {*area_map.get(path, ()), f"A{cls_id}"}
    assert places == expected
    named = {o.sigungu_code: o.sigungu for o in result.observations if o.sigungu_code[0] == "A"}
    assert all(
        named[f"A{cls_id}"] in {p for p, c, _ in rows if c == cls_id} for _, cls_id, _ in rows
    )
    assert result.report.excluded.get("unmapped_area", 0) == 0


def test_the_bundled_area_table_names_known_districts_once() -> None:
    bundled = bundled_area_map()
    assert bundled == dict(DEFAULT_AREA_MAP)
    codes = [code for codes in bundled.values() for code in codes]
    assert codes and len(codes) == len(set(codes))
    assert all(region_name(code) is not None for code in codes)
    assert bundled["서울>도심"] == ("11110", "11140")


FLOOR_TABLE = "임대동향 층별임대료 및 층별효용비율(2024년3분기~)_중대형 상가"


def floor_row(area: tuple[int, str], floor: str, item: str, value: float) -> dict[str, object]:
    """A floor table's row as R-ONE writes it: the area in GRP_*, the floor in CLS_*
    (official-apis.md §1.7)."""
    return api_row(
        GRP_ID=area[0],
        GRP_NM=area[1].split(">")[-1],
        GRP_FULLNM=area[1],
        CLS_ID=900000 + len(floor),
        CLS_NM=floor,
        CLS_FULLNM=floor,
        ITM_NM=item,
        ITM_FULLNM=item,
        UI_NM="천원/㎡" if item == "임대료" else "%",
        DTA_VAL=value,
    )


def test_a_floor_table_reads_the_area_from_the_group_and_the_floor_from_the_class() -> None:
    areas = [(510004, "서울>강남"), (520001, "서울>강남대로"), (520002, "대전>둔산")]
    floors = ["지하1층", "1층", "2층", "6층이상"]
    rows = [
        floor_row(area, floor, item, (100.0 if item == "효용비율" else 40.0) + a + f / 10)
        for a, area in enumerate(areas)
        for f, floor in enumerate(floors)
        for item in ("임대료", "효용비율")
    ]
    result = parse_rone_json(api_doc(rows), table_name=FLOOR_TABLE, era="2024Q3~")
    got = {(o.sigungu_code, o.metric_type, o.floor): o.value_pct for o in result.observations}
    # every area, every floor: nothing dropped as a duplicate
    assert result.report.excluded == {} and result.report.rejected == {}
    for a, (area_id, _) in enumerate(areas):
        for f, floor in enumerate(floors):
            assert got[(f"A{area_id}", "rent_level", floor)] == 40.0 + a + f / 10
            # the utility ratio is its own metric, never a rent
            assert got[(f"A{area_id}", "floor_utility_ratio", floor)] == 100.0 + a + f / 10
    # the area mapped to districts gives them its floors' values too
    assert got[("11680", "rent_level", "1층")] == 40.1
    names = {o.sigungu_code: o.sigungu for o in result.observations}
    assert names["A520002"] == "대전>둔산" and names["A510004"] == "서울>강남"
    assert {o.floor for o in result.observations} == set(floors)
    assert all(o.natural_key.endswith(f":floor={o.floor}") for o in result.observations)
    # without the table's name, a row with a group whose class is a floor is a floor row
    unnamed = parse_rone_json(api_doc(rows[:2]), area_map={}, property_type="retail")
    assert {(o.sigungu_code, o.metric_type, o.floor) for o in unnamed.observations} == {
        ("A510004", "rent_level", "지하1층"),
        ("A510004", "floor_utility_ratio", "지하1층"),
    }
    # the rent of all floors is another value: a regional row, no floor
    plain = parse_rone_json(
        api_doc(
            [api_row(CLS_FULLNM="서울>강남", CLS_ID=510004, ITM_NM="임대료", ITM_FULLNM="임대료")]
        ),
        table_name="임대동향 지역별 임대료(2024년3분기~)_중대형 상가",
    )
    assert {o.floor for o in plain.observations} == {""}
    # a floor row without its group is refused, not filed under the floor as an area
    lost = floor_row((510004, "서울>강남"), "1층", "임대료", 1.0)
    lost.update(GRP_ID=None, GRP_NM=None, GRP_FULLNM=None)
    refused = parse_rone_json(api_doc([lost]), table_name=FLOOR_TABLE, area_map={})
    assert refused.report.rejected == {"no_market_area": 1}
    # an item of a floor table that names no metric is not served as the table's rent
    other = floor_row((510004, "서울>강남"), "1층", "환산보증금", 1.0)
    skipped = parse_rone_json(api_doc([other]), table_name=FLOOR_TABLE, area_map={})
    assert skipped.observations == [] and skipped.report.excluded == {"item_not_served": 1}


def test_net_operating_income_is_read_in_thousand_won_per_m2_only() -> None:
    table = "임대동향 순영업소득(2024년3분기~)_오피스"
    rows = [
        api_row(CLS_FULLNM="서울>강남", CLS_ID=510004, ITM_ID=100005, ITM_NM=item, ITM_FULLNM=item, UI_NM=unit, DTA_VAL=v)
        for item, unit, v in (
            ("순영업소득(천원/㎡)", "천원/㎡", 61.2),
            ("순영업소득(%)", "%", 75.0),
            ("운영경비(%)", "%", 20.0),
        )
    ]  # fmt: skip
    result = parse_rone_json(api_doc(rows), table_name=table, era="2024Q3~", area_map={})
    assert [(o.sigungu_code, o.metric_type, o.value_pct) for o in result.observations] == [
        ("A510004", "net_operating_income", 61.2)
    ]
    assert result.report.excluded == {"item_not_served": 2}


_PART = st.sampled_from(["", "오피스", "중대형 상가", "소규모 상가", "일반 상가", "집합 상가"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["11680", "A510004"]),
            st.sampled_from(["office", "retail", "commercial_complex"]),
            st.sampled_from(["rent_level", "vacancy_rate"]),
            st.sampled_from(["2025-Q1", "2025"]),
            _PART,
            st.sampled_from(["", "linked", "2024Q3~", "2022~"]),
            st.sampled_from(["", "1층", "2층"]),
        ),
        max_size=20,
    )
)
def test_an_index_key_names_one_value(
    values: list[tuple[str, str, str, str, str, str, str]],
) -> None:
    # the primary class of a property type is the class its older keys were read from
    def canon(v: tuple[str, str, str, str, str, str, str]) -> tuple[str, ...]:
        place, prop, metric, period, survey_class, era, floor = v
        if survey_class == PRIMARY_CLASS.get(prop):
            survey_class = ""
        return (place, prop, metric, period, survey_class, era, floor)

    keys = {index_key(*v): canon(v) for v in values}
    assert len(keys) == len({canon(v) for v in values})
    for key, value in keys.items():
        assert key.startswith(f"rone:{value[0]}:{value[1]}:{value[2]}:{value[3]}")
