"""R-ONE sync, pure (``svc_core.sync.rone``): answers, codes, decoding, table plans."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import GatewayError, SourceError
from svc_core.sync.rone import (
    NO_CLASS,
    NO_ERA,
    NO_STATISTIC,
    classify,
    cycle_of,
    cycles_of,
    data_document,
    decode,
    describe_table,
    era_of,
    plan,
    read_page,
    unmapped_areas,
    unread_reason,
)

CLASSES = ["오피스", "중대형 상가", "소규모 상가", "집합 상가", "일반 상가"]
STEMS = [
    "임대동향 지역별 공실률(2024년3분기~)",
    "임대동향 지역별 공실률(2022년~)",
    "임대동향 지역별 공실률(2021년)",
    "임대동향 지역별 공실률(2013~2016)",
    "임대동향 지역별 임대료(2024년3분기~)",
    "임대동향 지역별 임대가격지수(시계열)",
    "임대동향 지역별 임대가격지수(2024년3분기~)",
    "임대동향 수익률(분기)(2024년3분기~)",
    "임대동향 소득수익률(2022년~)",
    "임대동향 자본수익률(2019년)",
    "주택가격동향조사 매매가격지수",
    "임대동향 표본 현황",
]


def test_codes_are_classified_as_the_service_means_them() -> None:
    for code in ("ERROR-300", "ERROR-310", "ERROR-333", "ERROR-336"):
        assert classify(code) == "request"
    assert classify("ERROR-290") == classify("INFO-300") == "key"
    assert classify("ERROR-337") == "limit"
    for code in ("ERROR-500", "ERROR-600", "ERROR-601", "INFO-100"):
        assert classify(code) == "retry"  # INFO-100 is not an R-ONE code


def test_answers_are_read_or_refused_by_their_code() -> None:
    rows = [{"STATBL_ID": "A_1", "DTA_VAL": 1.5}]
    page = read_page(data_document(rows), "SttsApiTblData")
    assert page.total_count == 1 and list(page.rows) == rows
    assert read_page(b'{"RESULT": {"CODE": "INFO-200"}}', "SttsApiTbl").rows == ()
    with pytest.raises(GatewayError) as refused:
        read_page(b'{"RESULT": {"CODE": "ERROR-300", "MESSAGE": "m"}}', "SttsApiTblData")
    assert refused.value.reason_code == "ERROR-300"
    for bad in (b"<html>", b"[]", json.dumps({"SttsApiTbl": [{"row": []}]}).encode()):
        with pytest.raises(SourceError):
            read_page(bad, "SttsApiTbl")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (b'{"x": ' + b"9" * 6_000 + b"}", "number too long"),
        (
            json.dumps(
                {
                    "SttsApiTblData": [
                        {"head": [{"list_total_count": 10**9}, {"RESULT": {"CODE": "INFO-000"}}]},
                        {"row": []},
                    ]
                }
            ).encode(),
            "more than any table of the survey holds",
        ),
    ],
    ids=["deep", "long-number", "huge-count"],
)
def test_a_hostile_answer_is_a_source_error_not_a_crash(answer: bytes, reason: str) -> None:
    """What fails one table (and lets the run go on), never a traceback or a budget spent
    on a billion rows."""
    with pytest.raises(SourceError) as refused:
        read_page(answer, "SttsApiTblData")
    assert reason in str(refused.value)


def test_xml_answers_read_as_json_ones() -> None:
    xml = (
        '<?xml version="1.0" encoding="EUC-KR"?><SttsApiTblData><head>'
        "<list_total_count>1</list_total_count><RESULT><CODE>INFO-000</CODE>"
        "<MESSAGE>정상</MESSAGE></RESULT></head><row><CLS_FULLNM>서울&gt;도심</CLS_FULLNM>"
        "<CLS_ID>510003</CLS_ID><DTA_VAL>9.8</DTA_VAL></row></SttsApiTblData>"
    )
    page = read_page(xml.encode("cp949"), "SttsApiTblData", content_type="text/xml;charset=EUC-KR")
    assert page.total_count == 1
    assert page.rows[0] == {"CLS_FULLNM": "서울>도심", "CLS_ID": "510003", "DTA_VAL": "9.8"}
    with pytest.raises(GatewayError) as refused:
        read_page(b"<RESULT><CODE>ERROR-336</CODE></RESULT>", "SttsApiTblData")
    assert refused.value.reason_code == "ERROR-336"
    with pytest.raises(SourceError):
        read_page(b'<!DOCTYPE x [<!ENTITY a "b">]><RESULT/>', "SttsApiTblData")


@given(text=st.text(max_size=30), charset=st.sampled_from(["UTF-8", "EUC-KR", "cp949", None]))
def test_text_decodes_by_its_declared_charset_or_fails_loudly(
    text: str, charset: str | None
) -> None:
    try:
        data = text.encode(charset or "utf-8")
    except UnicodeEncodeError:
        return
    header = f"application/json;charset={charset}" if charset else None
    assert decode(data, header) == text.removeprefix("\ufeff")
    with pytest.raises(SourceError):
        decode(b"\xff\xfe\xff", "application/json;charset=UTF-8")


@given(listed=st.lists(st.sampled_from(["YY", "QY", "MM", "HY", "WK", ",", " "]), max_size=6))
def test_one_cycle_code_is_sent_quarterly_first(listed: list[str]) -> None:
    code = cycle_of("".join(listed))
    assert code in ("QY", "YY", "HY", "MM", "WK")
    if "QY" in listed or not {"YY", "MM", "HY", "WK"} & set(listed):
        assert code == "QY"


def test_table_names_say_class_metric_and_era() -> None:
    table = describe_table(
        {"STATBL_ID": "T1", "STATBL_NM": "임대동향 수익률(분기)(2024년3분기~)_중대형 상가"}
    )
    assert table is not None
    assert (table.survey_class, table.metric, table.era, table.first) == (
        "중대형 상가",
        None,
        "2024Q3~",
        (2024, 3),
    )
    garbled = "임대동향 지역별 공실률(2021년)_오피스".encode().decode("latin-1")
    with pytest.raises(SourceError, match="did not decode"):
        describe_table({"STATBL_ID": "T2", "STATBL_NM": garbled})
    with pytest.raises(SourceError, match="did not decode"):
        describe_table({"STATBL_ID": "T3", "STATBL_NM": "임대동향 \ufffd"})
    # a middle dot is a real character of Korean names
    dotted = describe_table(
        {"STATBL_ID": "T4", "STATBL_NM": "임대동향 매매·임대 공실률(2021년)_오피스"}
    )
    assert dotted is not None and dotted.metric == "vacancy_rate"


@given(
    chosen=st.lists(
        st.tuples(st.sampled_from(STEMS), st.sampled_from(CLASSES), st.sampled_from("QYM")),
        max_size=25,
    )
)
def test_no_two_planned_tables_supply_one_value(chosen: list[tuple[str, str, str]]) -> None:
    listing = [
        {"STATBL_ID": f"T{i:02d}", "STATBL_NM": f"{stem}_{c}", "DTACYCLE_CD": cycle}
        for i, (stem, c, cycle) in enumerate(chosen)
    ]
    result = plan(listing)
    metrics = {
        None: ("income_yield", "capital_yield", "total_return"),
    }
    periods = [f"{y}0{q}" for y in range(2012, 2027) for q in range(1, 5)]
    supplied: set[tuple[str, str, str]] = set()
    for table in result.tables:
        for metric in metrics.get(table.metric, (str(table.metric),)):
            for period in periods:
                if table.holds(period):
                    # the linked series is a series of its own beside the era tables
                    key = (table.survey_class, metric, table.era == "linked", period)
                    assert key not in supplied, (table, key)
                    supplied.add(key)
    # every era table is read beside a linked series of its metric (answers prefer it)
    eras = {(t.survey_class, t.metric, t.era) for t in result.tables}
    described = [describe_table(t) for t in listing]
    assert eras == {(t.survey_class, t.metric, t.era) for t in described if t is not None}
    every = {t["STATBL_ID"] for t in listing if describe_table(t) is not None}
    assert {t.table_id for t in result.tables} | {t.table_id for t, _ in result.skipped} == every


def test_era_tables_hold_their_own_quarters_only() -> None:
    names = [
        "임대동향 소득수익률(2022년~)_오피스",
        "임대동향 수익률(분기)(2024년3분기~)_오피스",
        "임대동향 자본수익률(2019년)_오피스",
    ]
    tables = {t.era: t for t in plan({"STATBL_ID": n, "STATBL_NM": n} for n in names).tables}
    assert tables["2022~"].holds("202402") and not tables["2022~"].holds("202403")
    assert tables["2024Q3~"].holds("202503") and not tables["2024Q3~"].holds("202302")
    assert tables["2019"].holds("2019") and not tables["2019"].holds("202001")


AREAS = ["전국", "서울", "서울>도심", "서울>강남", "서울>여의도·마포", "서울>기타", "부산"]


@given(
    seen=st.lists(st.tuples(st.sampled_from(AREAS), st.integers(500000, 599999)), max_size=12),
    mapped=st.sets(st.sampled_from(["서울>도심", "서울>강남", "서울>여의도마포"])),
)
def test_every_area_read_is_mapped_or_listed(seen: list[tuple[str, int]], mapped: set[str]) -> None:
    rows = [{"CLS_FULLNM": path, "CLS_ID": cls_id} for path, cls_id in seen]
    listed = unmapped_areas(rows, dict.fromkeys(mapped, ("11110",)))
    for path, cls_id in seen:
        in_map = path.replace("·", "") in mapped
        assert (path in listed) != in_map
        if not in_map:
            first = next(c for p, c in seen if p == path)
            assert listed[path] == str(first) and cls_id >= 500000


def test_a_floor_rent_table_is_read_beside_the_rent_of_all_floors() -> None:
    listing = [
        {"STATBL_ID": "T1", "STATBL_NM": "임대동향 지역별 임대료(2024년3분기~)_중대형 상가"},
        {"STATBL_ID": "T2", "STATBL_NM": "임대동향 층별 임대료(2024년3분기~)_중대형 상가"},
        {"STATBL_ID": "T3", "STATBL_NM": "임대동향 층별 임대료(2022년~)_중대형 상가"},
    ]
    result = plan(listing)
    assert [(t.table_id, t.metric, t.by_floor, t.era) for t in result.tables] == [
        ("T1", "rent_level", False, "2024Q3~"),
        ("T3", "rent_level", True, "2022~"),
        ("T2", "rent_level", True, "2024Q3~"),
    ]
    assert result.skipped == ()
    # the older floor table ends where the current one begins, not where the rent does
    assert result.tables[1].last == (2024, 2)


@given(
    st.one_of(
        st.just("시계열").map(lambda _: ("(시계열)", "linked")),
        st.tuples(st.integers(2000, 2099), st.integers(1, 4)).map(
            lambda yq: (f"({yq[0]}년{yq[1]}분기~)", f"{yq[0]}Q{yq[1]}~")
        ),
        st.integers(2000, 2099).map(lambda y: (f"({y}년~)", f"{y}~")),
        st.integers(2000, 2099).map(lambda y: (f"({y}년)", str(y))),
        st.integers(2000, 2098).map(lambda y: (f"({y}~{y + 1})", f"{y}~{y + 1}")),
    ),
    st.sampled_from(["임대동향 지역별 공실률", "임대동향 수익률(분기)", "임대동향 층별 임대료"]),
    st.sampled_from(CLASSES),
)
def test_the_era_of_a_name_is_the_era_its_table_is_filed_under(
    era: tuple[str, str], stem: str, survey_class: str
) -> None:
    name = f"{stem}{era[0]}_{survey_class}"
    assert era_of(name) == era[1]
    table = describe_table({"STATBL_ID": "T1", "STATBL_NM": name})
    assert table is not None and table.era == era[1]


@given(listed=st.lists(st.sampled_from(["YY", "QY", "MM", "매년", "분기", ","]), max_size=5))
def test_the_annual_values_are_read_beside_the_quarters_when_offered(listed: list[str]) -> None:
    text = "".join(listed)
    cycles = cycles_of(text)
    assert cycles[0] == cycle_of(text.replace("매년", "YY").replace("분기", "QY"))
    annual = "YY" in text or "매년" in text
    assert cycles == ((cycles[0], "YY") if annual and cycles[0] != "YY" else (cycles[0],))
    assert len(set(cycles)) == len(cycles)


def test_survey_tables_svc_cannot_read_are_listed_with_why() -> None:
    listing = [
        {"STATBL_ID": "A1", "STATBL_NM": "임대동향 지역별 공실률(2017년~2018년)_오피스"},
        {"STATBL_ID": "A2", "STATBL_NM": "임대동향 지역별 공실률(2024년3분기~)_오피스"},
        {"STATBL_ID": "A3", "STATBL_NM": "임대동향 지역별 공실률(2024년3분기~)_창고"},
        {"STATBL_ID": "A4", "STATBL_NM": "임대동향 표본 현황(2024년3분기~)_오피스"},
        {"STATBL_ID": "A5", "STATBL_NM": "(연) 지역별 지가지수"},
        {
            "STATBL_ID": "A6",
            "STATBL_NM": "임대동향 순영업소득(2024년3분기~)_오피스",
            "DTACYCLE_CD": "YY,QY",
        },
    ]
    result = plan(listing)
    assert [(i, why) for i, _, why in result.unread] == [
        ("A1", NO_ERA),
        ("A3", NO_CLASS),
        ("A4", NO_STATISTIC),
    ]
    assert [(t.table_id, t.metric, t.cycles) for t in result.tables] == [
        ("A6", "net_operating_income", ("QY", "YY")),
        ("A2", "vacancy_rate", ("QY",)),
    ]
    assert unread_reason(listing[4]) is None  # another survey: not the survey's to list


def test_a_floor_tables_areas_are_its_groups() -> None:
    rows = [
        {"GRP_ID": 520001, "GRP_FULLNM": "서울>강남대로", "CLS_ID": 1, "CLS_NM": "1층"},
        {"GRP_ID": 520001, "GRP_FULLNM": "서울>강남대로", "CLS_ID": 2, "CLS_NM": "2층"},
    ]
    name = "임대동향 층별임대료 및 층별효용비율(2024년3분기~)_중대형 상가"
    assert unmapped_areas(rows, {}, name) == {"서울>강남대로": "520001"}
