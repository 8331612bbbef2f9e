"""The RTMS web CSV export: encodings, preambles, headers, addresses and line numbers."""

from __future__ import annotations

import csv
import datetime
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import SourceError
from svc_core.sources.rtms_csv import normalize_column, parse_rtms_csv

CSV_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "rtms_csv"
COMMERCIAL = CSV_DIR / "commercial_11680_202506_cp949.csv"
OFFI_TRADE = CSV_DIR / "officetel_trade_11680_202506_cp949.csv"
OFFI_RENT = CSV_DIR / "officetel_rent_11680_202103_old_utf8.csv"

HEADER = (
    "NO,시군구,유형,지번,도로명,용도지역,건축물주용도,도로조건,전용/연면적(㎡),대지면적(㎡),"
    "거래금액(만원),층,매수,매도,계약년월,계약일,지분구분,건축년도,해제사유발생일,거래유형,중개사소재지"
)


def line_of(path: Path, needle: str) -> int:
    """1-based physical line of the first line containing ``needle``."""
    lines = path.read_bytes().decode("cp949").split("\r\n")
    return next(i for i, text in enumerate(lines, start=1) if needle in text)


def test_commercial_export_in_cp949() -> None:
    data = COMMERCIAL.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the fixture really is CP949
    result = parse_rtms_csv(data, "commercial", path=COMMERCIAL.name)
    report = result.report
    assert report.read == 8
    assert report.excluded == {"cancelled": 1, "partial_share": 1}
    # 춘천시 of 강원특별자치도 was outside the old 104-district table; it is a district now
    assert report.rejected == {"invalid_amount": 1}
    assert len(result.transactions) == 5
    assert len(result.retracted_keys) == 1


def test_commercial_values() -> None:
    txs = parse_rtms_csv(COMMERCIAL.read_bytes(), "commercial").transactions
    first, office, copy, bundang, chuncheon = txs
    assert (first.sigungu_code, first.sigungu, first.dong) == ("11680", "강남구", "대치동")
    assert first.price_krw == 610_000_000
    assert first.deal_date == datetime.date(2025, 6, 24)
    assert first.property_type == "commercial_complex"
    # quoted "1,900,000" and a broker cell with a comma inside quotes
    assert (office.property_type, office.price_krw, office.area_m2) == (
        "office",
        19_000_000_000,
        1234.5,
    )
    # NO differs but the deal is identical: distinct ordinal, same digest
    assert copy.natural_key.rsplit(":", 1)[0] == first.natural_key.rsplit(":", 1)[0]
    assert (first.natural_key[-2:], copy.natural_key[-2:]) == (":0", ":1")
    assert (bundang.sigungu_code, bundang.sigungu, bundang.dong) == (
        "41135",
        "성남시 분당구",
        "정자동",
    )
    assert bundang.property_type == "retail"
    assert (chuncheon.sigungu_code, chuncheon.sigungu, chuncheon.dong) == (
        "51110",
        "춘천시",
        "효자동",
    )


def test_rejections_carry_physical_line_numbers() -> None:
    report = parse_rtms_csv(COMMERCIAL.read_bytes(), "commercial", path="c.csv").report
    lines = {r.reason: r.line for r in report.rejections}
    # a quoted cell spanning two lines comes before these rows
    assert "unknown_district" not in lines  # 강원특별자치도 춘천시 (line 19) is in the table
    assert lines["invalid_amount"] == line_of(COMMERCIAL, '"8","서울특별시 강남구 삼성동"') == 20


def test_keys_are_idempotent_and_differ_from_api_keys() -> None:
    data = COMMERCIAL.read_bytes()
    a = [t.natural_key for t in parse_rtms_csv(data, "commercial").transactions]
    b = [t.natural_key for t in parse_rtms_csv(data, "commercial").transactions]
    assert a == b
    assert all(k.startswith("rtms_csv:commercial:") for k in a)
    assert len(set(a)) == len(a)


def test_utf8_export_gives_the_same_records() -> None:
    text = COMMERCIAL.read_bytes().decode("cp949")
    cp949 = parse_rtms_csv(COMMERCIAL.read_bytes(), "commercial").transactions
    utf8 = parse_rtms_csv(text.encode("utf-8"), "commercial").transactions
    with_bom = parse_rtms_csv(b"\xef\xbb\xbf" + text.encode("utf-8"), "commercial").transactions
    assert cp949 == utf8 == with_bom


def test_officetel_trade_export() -> None:
    result = parse_rtms_csv(OFFI_TRADE.read_bytes(), "officetel_trade")
    assert result.report.excluded == {"cancelled": 1}
    assert [(t.dong, t.price_krw, t.area_m2) for t in result.transactions] == [
        ("자곡동", 150_000_000, 25.6979),
        ("논현동", 1_150_000_000, 75.94),
    ]
    assert {(t.property_type, t.transaction_type) for t in result.transactions} == {
        ("officetel", "sale")
    }


def test_older_officetel_lease_export_without_no_column() -> None:
    result = parse_rtms_csv(OFFI_RENT.read_bytes(), "officetel_rent", path=OFFI_RENT.name)
    jeonse, wolse = result.transactions
    assert (jeonse.transaction_type, jeonse.price_krw, jeonse.monthly_rent_krw) == (
        "chartered_lease",
        252_000_000,
        None,
    )
    assert (wolse.transaction_type, wolse.price_krw, wolse.monthly_rent_krw) == (
        "monthly_lease",
        10_000_000,
        830_000,
    )
    assert jeonse.deal_date == datetime.date(2021, 3, 28)
    assert [(r.line, r.reason) for r in result.report.rejections] == [(7, "invalid_rent")]


def test_missing_header_row() -> None:
    data = '"안내문"\r\n"1","2"\r\n'.encode("cp949")
    with pytest.raises(SourceError, match="no header row") as info:
        parse_rtms_csv(data, "commercial", path="x.csv")
    assert info.value.path == "x.csv"


def test_header_missing_columns_for_the_kind() -> None:
    with pytest.raises(SourceError, match=r"보증금\(만원\)") as info:
        parse_rtms_csv((HEADER + "\r\n").encode("cp949"), "officetel_rent", path="x.csv")
    assert info.value.line == 1


def test_undecodable_file() -> None:
    with pytest.raises(SourceError, match="UTF-8 or CP949"):
        parse_rtms_csv(b"\xff\xfe\xfa\xfb", "commercial")


def test_cell_count_mismatch_and_blank_rows() -> None:
    row = '"1","서울특별시 강남구 역삼동","일반","1","-","일반상업","업무","-","100","50","10,000","-","법인","법인","202506","3","-","1990","-","중개거래","-"'
    short = '"2","서울특별시 강남구 역삼동","일반"'
    extra = row.replace('"1",', '"3",', 1) + ',"surplus"'
    data = "\r\n".join(["notice", HEADER, row, "", short, extra, ""]).encode("cp949")
    result = parse_rtms_csv(data, "commercial")
    assert len(result.transactions) == 1
    assert result.report.read == 3
    assert [(r.line, r.reason) for r in result.report.rejections] == [
        (5, "wrong_cell_count"),
        (6, "wrong_cell_count"),
    ]


def test_basement_floor_and_dash_cells() -> None:
    row = '"1","서울특별시 중구 명동2가","집합","1","-","일반상업","판매","-","-","-","5,000","-1","개인","개인","202501","07","-","-","-","-","-"'
    (tx,) = parse_rtms_csv(
        (HEADER + "\r\n" + row + "\r\n").encode("cp949"), "commercial"
    ).transactions
    assert (tx.sigungu_code, tx.dong, tx.area_m2) == ("11140", "명동2가", None)
    assert tx.deal_date == datetime.date(2025, 1, 7)
    # published details: the basement floor, the lot number and use as given, no year
    assert (tx.floor, tx.jibun, tx.building_use, tx.build_year) == (-1, "1", "판매", None)


@pytest.mark.parametrize(
    ("ym", "day"), [("2025-06", "1"), ("202513", "1"), ("202502", "30"), ("198912", "1")]
)
def test_bad_dates_are_rejected(ym: str, day: str) -> None:
    row = f'"1","서울특별시 강남구 역삼동","일반","1","-","일반상업","업무","-","100","50","10,000","-","법인","법인","{ym}","{day}","-","1990","-","-","-"'
    report = parse_rtms_csv((HEADER + "\r\n" + row + "\r\n").encode("cp949"), "commercial").report
    assert report.rejected == {"invalid_date": 1}


@given(st.text(max_size=30))
def test_normalize_column_removes_spaces(name: str) -> None:
    out = normalize_column(name)
    assert not any(c.isspace() for c in out)
    assert normalize_column(out) == out


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    try:
        result = parse_rtms_csv(data, "commercial")
    except SourceError:
        return
    assert result.report.read >= len(result.transactions)


cells = st.text(max_size=12)


@given(st.lists(st.lists(cells, min_size=1, max_size=24), max_size=6))
def test_arbitrary_rows_under_a_header_are_counted(rows: list[list[str]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADER.split(","))
    writer.writerows(rows)
    try:
        result = parse_rtms_csv(out.getvalue().encode("utf-8"), "commercial")
    except SourceError as exc:
        assert "NUL" in str(exc) or "malformed CSV" in str(exc)
        return
    report = result.report
    non_blank = [r for r in rows if any(c.strip() for c in r)]
    assert report.read == len(non_blank)
    assert report.read == len(result.transactions) + report.excluded_total + report.rejected_total
