"""MOLIT RTMS API responses: the real samples, JSON shapes, old tags and hostile input."""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import GatewayError, SourceError
from svc_core.models import PROPERTY_TYPES
from svc_core.sources import KeyMaker, parse_manwon
from svc_core.sources.rtms import commercial_property_type, parse_rtms, read_page

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MOLIT = FIXTURES / "molit"
RTMS = FIXTURES / "rtms"


def read(path: Path) -> bytes:
    return path.read_bytes()


# the real samples ----------------------------------------------------------------------


def test_commercial_sample_counts_and_exclusions() -> None:
    data = read(MOLIT / "NRG_11680_202506.xml")
    result = parse_rtms(data, "commercial", path="NRG_11680_202506.xml")
    report = result.report
    assert report.read == 83 == len(re.findall(rb"<item>", data))
    assert report.excluded == {"cancelled": 3, "partial_share": 7}
    assert report.rejected == {}
    assert len(result.transactions) == 73 == report.accepted
    assert len(result.retracted_keys) == 3
    assert report.page_info() is None  # 83 of totalCount 83: complete
    counts = Counter(t.property_type for t in result.transactions)
    # 업무 → office (20 집합 + 4 일반); 집합 retail uses → commercial_complex (14 + 12 + 4);
    # 일반 retail uses → retail (13 + 1); 숙박/기타 → mixed_use (3 + 1 + 1)
    assert counts == {"office": 24, "commercial_complex": 30, "retail": 14, "mixed_use": 5}
    assert {t.transaction_type for t in result.transactions} == {"sale"}
    assert {t.source for t in result.transactions} == {"rtms_official"}


def test_commercial_sample_hand_checked_items() -> None:
    result = parse_rtms(read(MOLIT / "NRG_11680_202506.xml"), "commercial")
    first, last = result.transactions[0], result.transactions[-1]
    # first item: 집합 제2종근린생활, 61,000만원, 대치동, 2025-06-24, 66.14 m²
    assert first.price_krw == 610_000_000
    assert first.dong == "대치동"
    assert first.deal_date == datetime.date(2025, 6, 24)
    assert first.area_m2 == 66.14
    assert first.property_type == "commercial_complex"
    assert (first.sigungu_code, first.sigungu) == ("11680", "강남구")
    assert first.period_month == "2025-06"
    # last item: 일반 제2종근린생활 in 역삼동, 8,370,000만원 on 2025-06-04, 6533.1 m²
    assert last.price_krw == 83_700_000_000
    assert last.dong == "역삼동"
    assert last.deal_date == datetime.date(2025, 6, 4)
    assert last.area_m2 == 6533.1
    assert last.property_type == "retail"


def test_published_details_and_excluded_deals_are_kept() -> None:
    result = parse_rtms(read(MOLIT / "NRG_11680_202506.xml"), "commercial")
    first = result.transactions[0]
    # first item: 집합 제2종근린생활, 4th floor, built 2004, lot 890-59
    assert (first.building_use, first.floor, first.build_year, first.jibun) == (
        "제2종근린생활",
        4,
        2004,
        "890-59",
    )
    assert any(t.jibun and "*" in t.jibun for t in result.transactions)  # masked as published
    assert any(t.floor is None for t in result.transactions)  # a blank floor
    reasons = Counter(e.reason for e in result.excluded)
    assert reasons == result.report.excluded == {"cancelled": 3, "partial_share": 7}
    cancelled = {e.record.natural_key for e in result.excluded if e.reason == "cancelled"}
    assert cancelled == set(result.retracted_keys)
    kept = {t.natural_key for t in result.transactions}
    assert kept.isdisjoint(e.record.natural_key for e in result.excluded)


def test_identical_deals_in_one_file_all_load() -> None:
    data = read(MOLIT / "NRG_11680_202506.xml")
    items = re.findall(rb"<item>.*?</item>", data)
    assert len(items) - len(set(items)) == 2  # the sample holds identical items
    result = parse_rtms(data, "commercial")
    keys = [t.natural_key for t in result.transactions]
    assert len(set(keys)) == len(keys)
    assert any(k.endswith(":1") for k in keys)
    assert all(k.startswith("rtms:commercial:11680:2025-06:") for k in keys)


def test_natural_keys_are_idempotent() -> None:
    data = read(MOLIT / "NRG_11680_202506.xml")
    once = [t.natural_key for t in parse_rtms(data, "commercial").transactions]
    twice = [t.natural_key for t in parse_rtms(data, "commercial").transactions]
    assert once == twice
    assert (
        parse_rtms(data, "commercial").retracted_keys
        == parse_rtms(data, "commercial").retracted_keys
    )


def test_partial_page_reports_paging_and_reloads_identically() -> None:
    data = read(MOLIT / "NRG_11110_202505.xml")
    first = parse_rtms(data, "commercial", path="NRG_11110_202505.xml")
    report = first.report
    assert (report.read, report.total_count, report.page_no, report.num_of_rows) == (10, 32, 1, 10)
    assert report.is_partial
    assert report.page_count == 4
    assert report.page_info() == "page 1 of 4 (10 of 32 items)"
    assert report.summary() == (
        "NRG_11110_202505.xml: read 10; excluded 1 (partial_share 1); loaded 0, duplicate 0; "
        "page 1 of 4 (10 of 32 items)"
    )
    assert report.excluded == {"partial_share": 1}
    assert len(first.transactions) == 9
    again = parse_rtms(data, "commercial")
    assert [t.natural_key for t in again.transactions] == [
        t.natural_key for t in first.transactions
    ]
    assert first.transactions[0].dong == "숭인동"
    assert first.transactions[0].price_krw == 1_800_000_000


def test_officetel_trade_sample() -> None:
    data = read(MOLIT / "OFFICETEL_11680_202506.xml")
    result = parse_rtms(data, "officetel_trade")
    cancelled = len(re.findall(rb"<cdealType>O</cdealType>", data))
    assert result.report.read == 59
    assert result.report.excluded == {"cancelled": cancelled}
    assert len(result.transactions) == 59 - cancelled
    assert {(t.property_type, t.transaction_type) for t in result.transactions} == {
        ("officetel", "sale")
    }
    first = result.transactions[0]
    assert (first.price_krw, first.dong, first.area_m2) == (150_000_000, "자곡동", 25.6979)


def test_officetel_rent_split_matches_the_raw_file() -> None:
    data = read(MOLIT / "OFFICETEL_RENT_11680_202506.xml")
    jeonse = len(re.findall(rb"<monthlyRent>0</monthlyRent>", data))
    total = len(re.findall(rb"<item>", data))
    result = parse_rtms(data, "officetel_rent")
    types = Counter(t.transaction_type for t in result.transactions)
    assert types == {"chartered_lease": jeonse, "monthly_lease": total - jeonse}
    assert (jeonse, total) == (75, 339)
    for tx in result.transactions:
        if tx.transaction_type == "chartered_lease":
            assert tx.monthly_rent_krw is None
        else:
            assert tx.monthly_rent_krw is not None and tx.monthly_rent_krw % 10_000 == 0
    first, second = result.transactions[0], result.transactions[1]
    assert (first.transaction_type, first.price_krw) == ("chartered_lease", 252_000_000)
    assert (second.transaction_type, second.price_krw, second.monthly_rent_krw) == (
        "monthly_lease",
        10_000_000,
        830_000,
    )
    assert len({t.natural_key for t in result.transactions}) == total


# JSON ----------------------------------------------------------------------------------


def test_json_list_gives_the_same_keys_as_xml() -> None:
    xml = parse_rtms(read(MOLIT / "NRG_11680_202506.xml"), "commercial")
    doc = parse_rtms(read(RTMS / "nrg_11680_202506.json"), "commercial")
    # items: the first three of the XML sample (the 2nd and 3rd are partial-share), a copy
    # of the first, and a cancelled copy of the second
    assert doc.report.read == 5
    assert doc.report.excluded == {"partial_share": 2, "cancelled": 1}
    assert doc.transactions[0].natural_key == xml.transactions[0].natural_key
    assert doc.transactions[0] == xml.transactions[0]
    assert doc.transactions[1].natural_key.endswith(":1")
    assert doc.transactions[1].price_krw == doc.transactions[0].price_krw


def test_json_single_item_object() -> None:
    result = parse_rtms(read(RTMS / "offi_trade_single_item.json"), "officetel_trade")
    assert result.report.read == 1
    (tx,) = result.transactions
    assert (tx.price_krw, tx.area_m2, tx.dong) == (150_000_000, 25.6979, "자곡동")
    xml = parse_rtms(read(MOLIT / "OFFICETEL_11680_202506.xml"), "officetel_trade")
    assert tx.natural_key == xml.transactions[0].natural_key


def test_json_empty_items() -> None:
    result = parse_rtms(read(RTMS / "offi_rent_empty.json"), "officetel_rent")
    assert result.transactions == []
    assert result.report.read == 0
    assert result.report.total_count == 0
    assert not result.report.is_partial


def test_json_with_bom_and_lowercase_keys() -> None:
    doc = {
        "RESPONSE": {
            "HEADER": {"resultcode": "000"},
            "BODY": {
                "ITEMS": {
                    "ITEM": {
                        "sggcd": "11680",
                        "DEALAMOUNT": "1,000",
                        "dealyear": "2025",
                        "dealmonth": "1",
                        "dealday": "2",
                        "deposit": "500",
                        "monthlyrent": "50",
                    }
                }
            },
        }
    }
    data = b"\xef\xbb\xbf" + json.dumps(doc).encode()
    (tx,) = parse_rtms(data, "officetel_rent").transactions
    assert (tx.price_krw, tx.monthly_rent_krw, tx.sigungu) == (5_000_000, 500_000, "강남구")


def test_json_item_that_is_not_flat_is_rejected() -> None:
    doc = {
        "response": {
            "header": {"resultCode": "000"},
            "body": {"items": {"item": [{"sggCd": {"nested": 1}}, "text"]}},
        }
    }
    report = parse_rtms(json.dumps(doc).encode(), "commercial").report
    assert report.read == 2
    assert report.rejected == {"invalid_record": 2}
    assert [r.line for r in report.rejections] == [1, 2]


# older generation and quirks -------------------------------------------------------------


def test_old_korean_tag_generation() -> None:
    result = parse_rtms(read(RTMS / "nrg_old_korean_tags.xml"), "commercial")
    assert result.report.read == 4
    assert result.report.excluded == {"partial_share": 1, "cancelled": 1}
    first, second = result.transactions
    assert first.deal_date == datetime.date(2021, 3, 11)  # 일 "11~20" → the 11th
    assert first.price_krw == 520_000_000  # "    52,000"
    assert first.dong == "역삼동"
    assert first.property_type == "commercial_complex"
    assert second.deal_date == datetime.date(2021, 3, 1)
    assert second.sigungu == "강남구"  # no 시군구 tag: named from the table
    assert second.property_type == "office"
    assert second.price_krw == 12_500_000_000
    assert second.area_m2 == 2310.5


def test_casing_quirks_and_rejections_with_ordinals() -> None:
    result = parse_rtms(read(RTMS / "nrg_11110_quirks.xml"), "commercial", path="q.xml")
    report = result.report
    assert report.read == 5
    assert report.rejected == {"invalid_amount": 1, "invalid_date": 1, "invalid_sigungu_code": 1}
    assert [(r.line, r.reason) for r in report.rejections] == [
        (3, "invalid_amount"),
        (4, "invalid_date"),
        (5, "invalid_sigungu_code"),
    ]
    retail, mixed = result.transactions
    assert (retail.property_type, retail.price_krw, retail.area_m2) == (
        "retail",
        985_000_000,
        120.5,
    )
    assert (mixed.property_type, mixed.area_m2) == ("mixed_use", None)  # 업무,판매; blank area


# errors --------------------------------------------------------------------------------


def test_gateway_error_names_the_file() -> None:
    with pytest.raises(SourceError) as info:
        parse_rtms(read(RTMS / "gateway_error.xml"), "commercial", path="gw.xml")
    assert info.value.path == "gw.xml"
    assert "SERVICE_KEY_IS_NOT_REGISTERED_ERROR" in info.value.message
    assert "30" in info.value.message


def test_gateway_error_in_json() -> None:
    doc = {"OpenAPI_ServiceResponse": {"cmmMsgHeader": {"errMsg": "SERVICE ERROR",
           "returnAuthMsg": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR",
           "returnReasonCode": "22"}}}  # fmt: skip
    with pytest.raises(SourceError, match="LIMITED_NUMBER"):
        parse_rtms(json.dumps(doc).encode(), "commercial", path="x.json")


@pytest.mark.parametrize("code", ["20", "22", "30", "31", "32", "99"])
def test_an_error_code_in_a_normal_header_is_a_refusal_with_its_code(code: str) -> None:
    """The portal lists error codes inside a normal ``response/header`` too: they carry
    their code like the gateway's form, so a sync can tell a key from the limit."""
    xml = (
        f"<response><header><resultCode>{code}</resultCode><resultMsg>WHY</resultMsg>"
        "</header></response>"
    ).encode()
    doc = {"response": {"header": {"resultCode": code, "resultMsg": "WHY"}}}
    for data in (xml, json.dumps(doc).encode()):
        with pytest.raises(GatewayError) as info:
            read_page(data, path="p")
        assert (info.value.reason_code, info.value.auth_message) == (code, "WHY")
        assert f"API error {code}: WHY" in info.value.message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<response><header><resultCode>03</resultCode><resultMsg>NO_DATA</resultMsg>"
         b"</header></response>", "API error 03: NO_DATA"),
        (b"<response><body/></response>", "no header"),
        (b"<html><body>busy</body></html>", "unexpected XML root"),
        (b"<response><header>", "malformed XML"),
        (b"resultCode=000", "neither XML nor JSON"),
        (b"", "neither XML nor JSON"),
        (b'{"response": {"header": {"resultCode": "99", "resultMsg": "LIMIT"}}}', "API error 99"),
        (b'{"nothing": 1}', "no 'response'"),
        (b"{not json", "malformed JSON"),
        (b'{"response": {"header": {"resultCode": "000"}, "body": {"items": 5}}}', "items"),
    ],
)  # fmt: skip
def test_unreadable_documents_raise_source_error(data: bytes, message: str) -> None:
    with pytest.raises(SourceError, match=message) as info:
        parse_rtms(data, "commercial", path="bad.xml")
    assert info.value.path == "bad.xml"
    assert "bad.xml" in str(info.value)


def test_doctype_and_entities_are_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<response><header><resultCode>000</resultCode></header><body>&b;</body></response>"
    )
    with pytest.raises(SourceError, match="DOCTYPE"):
        parse_rtms(bomb, "commercial")
    # UTF-16 hides the declaration from a byte search; the expat path refuses it itself.
    utf16 = bomb.decode().replace('version="1.0"', 'version="1.0" encoding="UTF-16"')
    with pytest.raises(SourceError, match="DOCTYPE"):
        parse_rtms(utf16.encode("utf-16-le"), "commercial")
    with pytest.raises(SourceError, match="malformed XML"):
        parse_rtms(b"<response>&undefined;</response>", "commercial")


def test_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="kind"):
        parse_rtms(b"<response/>", "apartment")


# mapping and amounts -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("building_type", "use", "expected"),
    [
        ("일반", "업무", "office"),
        ("집합", "업무", "office"),
        ("집합", "업무시설", "office"),
        ("집합", "제1종근린생활", "commercial_complex"),
        ("집합", "제2종근린생활", "commercial_complex"),
        ("집합", "판매", "commercial_complex"),
        ("일반", "제2종 근린생활", "retail"),
        ("일반", "판매시설", "retail"),
        (" ", "판매", "retail"),
        ("집합", "제1종근린생활,제2종근린생활", "commercial_complex"),
        ("일반", "숙박", "mixed_use"),
        ("집합", "기타", "mixed_use"),
        ("일반", "의료", "mixed_use"),
        ("일반", "교육연구", "mixed_use"),
        ("일반", "업무,판매", "mixed_use"),
        ("일반", "판매/숙박", "mixed_use"),
        ("일반", " ", "mixed_use"),
    ],
)
def test_commercial_property_type_table(building_type: str, use: str, expected: str) -> None:
    assert commercial_property_type(building_type, use) == expected


@given(st.text(max_size=8), st.text(max_size=20))
def test_commercial_property_type_is_total(building_type: str, use: str) -> None:
    assert commercial_property_type(building_type, use) in PROPERTY_TYPES[:4]


@given(st.integers(0, 10**9))
def test_manwon_amounts_with_separators(value: int) -> None:
    assert parse_manwon(f"{value:,}") == value * 10_000
    assert parse_manwon(f" {value} ") == value * 10_000


@pytest.mark.parametrize("text", ["", " ", "-", "1,00", "12만", "1.5", "-100", "1,000,00", "١٢"])
def test_malformed_amounts(text: str) -> None:
    assert parse_manwon(text) is None


FIELDS = ["sggCd", "sggNm", "umdNm", "dealYear", "dealMonth", "dealDay", "dealAmount",
          "buildingType", "buildingUse", "buildingAr", "cdealType", "shareDealingType",
          "deposit", "monthlyRent", "excluUseAr"]  # fmt: skip
values = st.one_of(
    st.text(max_size=10),
    st.integers(-(10**6), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.sampled_from(["11680", "2025", "6", "15", "1,000", "집합", "업무", "O", "지분", "0"]),
)


@given(
    st.lists(st.dictionaries(st.sampled_from(FIELDS), values), max_size=6),
    st.sampled_from(["commercial", "officetel_trade", "officetel_rent"]),
)
def test_arbitrary_json_items_are_accounted_for(items: list[dict[str, object]], kind: str) -> None:
    doc = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": items}}}}
    result = parse_rtms(json.dumps(doc).encode(), kind)
    report = result.report
    assert report.read == len(items)
    assert report.read == len(result.transactions) + report.excluded_total + report.rejected_total
    for tx in result.transactions:
        assert tx.price_krw % 10_000 == 0


def test_integral_json_floats_match_xml_text() -> None:
    item = {"sggCd": "11680", "dealYear": 2025, "dealMonth": 6, "dealDay": 1,
            "dealAmount": "100", "buildingAr": 18.0, "buildingType": "집합", "buildingUse": "판매"}  # fmt: skip
    doc = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": item}}}}
    xml = (
        "<response><header><resultCode>000</resultCode></header><body><items><item>"
        + "".join(f"<{k}>{v if k != 'buildingAr' else '18'}</{k}>" for k, v in item.items())
        + "</item></items></body></response>"
    )
    (from_json,) = parse_rtms(json.dumps(doc).encode(), "commercial").transactions
    (from_xml,) = parse_rtms(xml.encode(), "commercial").transactions
    assert from_json == from_xml


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12),
        st.one_of(st.none(), st.text(max_size=20), st.sampled_from([" ", "-", " - "])),
        max_size=8,
    )
)
def test_natural_keys_keep_their_published_derivation(fields: dict[str, str | None]) -> None:
    """Keys already stored must be derived again identically whatever the code does to
    go faster: sha256 of the prefix and the compact json.dumps of the sorted non-blank
    (name, stripped value) pairs, then the ordinal among equal records."""
    pairs = sorted(
        (k, v.strip()) for k, v in fields.items() if v is not None and v.strip() not in ("", "-")
    )
    canonical = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(f"rtms:commercial|{canonical}".encode()).hexdigest()
    maker = KeyMaker()
    first = maker.key("rtms:commercial", "11680", "2025-06", fields)  # type: ignore[arg-type]
    again = maker.key("rtms:commercial", "11680", "2025-06", fields)  # type: ignore[arg-type]
    assert first == f"rtms:commercial:11680:2025-06:{digest}:0"
    assert again == f"rtms:commercial:11680:2025-06:{digest}:1"
