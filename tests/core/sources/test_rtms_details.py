"""What RTMS publishes of the parties and the contract (issue 28): read from the real
samples as published, the same from the web site's CSV export, never a rejection."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from svc_core.models import DEAL_TYPES, LEASE_KINDS, PARTY_TYPES
from svc_core.sources.rtms import contract_term, parse_rtms, published_details
from svc_core.sources.rtms_csv import parse_rtms_csv

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MOLIT = FIXTURES / "molit"
CSV = FIXTURES / "rtms_csv"

DEAL = {"중개거래": "brokered", "직거래": "direct"}
PARTY = {"개인": "individual", "법인": "company", "공공기관": "public_body", "기타": "other"}


def raw_items(name: str) -> list[dict[str, str]]:
    root = ET.parse(MOLIT / name).getroot()  # noqa: S314 - a fixture of ours
    items = [{c.tag: (c.text or "").strip() for c in item} for item in root.iter("item")]
    return [i for i in items if i.get("cdealType") != "O" and i.get("shareDealingType") != "지분"]


def test_commercial_sample_parties_equal_the_raw_items() -> None:
    result = parse_rtms((MOLIT / "NRG_11680_202506.xml").read_bytes(), "commercial")
    items = raw_items("NRG_11680_202506.xml")
    got = Counter(
        (t.deal_type, t.seller_type, t.buyer_type, t.land_use, t.broker_district)
        for t in result.transactions
    )
    want = Counter(
        (
            DEAL[i["dealingGbn"]],
            PARTY[i["slerGbn"]],
            PARTY[i["buyerGbn"]],
            i["landUse"] or None,
            i["estateAgentSggNm"] or None,
        )
        for i in items
    )
    assert got == want
    assert {t.lease_kind for t in result.transactions} == {None}


def test_officetel_lease_sample_contract_fields_equal_the_raw_items() -> None:
    result = parse_rtms((MOLIT / "OFFICETEL_RENT_11680_202506.xml").read_bytes(), "officetel_rent")
    items = raw_items("OFFICETEL_RENT_11680_202506.xml")
    kinds = {"신규": "new", "갱신": "renewal"}

    def expected(i: dict[str, str]) -> tuple[object, ...]:
        start, end = i["contractTerm"].split("~")
        used = True if i["useRRRight"] == "사용" else False if i["contractType"] == "갱신" else None
        return (
            kinds[i["contractType"]],
            f"20{start[:2]}-{start[3:]}",
            f"20{end[:2]}-{end[3:]}",
            used,
            int(i["preDeposit"].replace(",", "")) * 10_000 if i["preDeposit"] else None,
            i["offiNm"],
        )

    got = Counter(
        (
            t.lease_kind,
            t.term_start,
            t.term_end,
            t.renewal_right_used,
            t.previous_deposit_krw,
            t.building_name,
        )
        for t in result.transactions
    )
    assert got == Counter(expected(i) for i in items)
    assert Counter(t.lease_kind for t in result.transactions) == {"new": 265, "renewal": 74}


def test_csv_export_reads_the_parties_from_its_columns() -> None:
    data = (CSV / "commercial_11680_202506_cp949.csv").read_bytes()
    lines = data.decode("cp949").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"NO"'))
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[header:]))))
    kept = [r for r in rows if r["해제사유발생일"] == "-" and r["지분구분"] != "지분"]
    result = parse_rtms_csv(data, "commercial")

    def blank(v: str) -> str | None:
        return None if v.strip() in ("", "-") else v

    want = Counter(
        (
            DEAL.get(r["거래유형"]),
            PARTY.get(r["매도"]),
            PARTY.get(r["매수"]),
            blank(r["용도지역"]),
            blank(r["중개사소재지"]),
        )
        for r in kept
        if r["거래금액(만원)"] != "-"
    )
    got = Counter(
        (t.deal_type, t.seller_type, t.buyer_type, t.land_use, t.broker_district)
        for t in result.transactions
    )
    assert got == want
    assert ("brokered", "individual", "company", "일반상업", "경기 성남분당구") in got
    officetel = parse_rtms_csv(
        (CSV / "officetel_trade_11680_202506_cp949.csv").read_bytes(), "officetel_trade"
    )
    assert {t.buyer_type for t in officetel.transactions} >= {"individual"}
    assert all(t.jibun and t.building_name for t in officetel.transactions)


@given(
    deal=st.sampled_from(["중개거래", "직거래", " ", "", "중개", "x"]),
    party=st.sampled_from(["개인", "법인", "공공기관", "기타", " ", "회사"]),
    kind=st.sampled_from(["신규", "갱신", " ", "?"]),
    right=st.sampled_from(["사용", " ", "미사용"]),
    money=st.sampled_from(["1,000", " ", "x", "0"]),
)
def test_published_details_never_reject_and_map_only_known_values(
    deal: str, party: str, kind: str, right: str, money: str
) -> None:
    out = published_details(
        {
            "dealinggbn": deal,
            "slergbn": party,
            "buyergbn": party,
            "contracttype": kind,
            "userrright": right,
            "predeposit": money,
        }
    )
    assert out["deal_type"] in (*DEAL_TYPES, None)
    assert out["deal_type"] == DEAL.get(deal.strip())
    assert out["seller_type"] == out["buyer_type"] == PARTY.get(party.strip())
    assert out["lease_kind"] in (*LEASE_KINDS, None)
    assert out["seller_type"] in (*PARTY_TYPES, None)
    if right == "사용":
        assert out["renewal_right_used"] is True
    else:
        assert out["renewal_right_used"] is (False if kind == "갱신" else None)
    assert out["previous_deposit_krw"] == (
        int(money.replace(",", "")) * 10_000 if money.strip() not in ("", "x") else None
    )


@given(y1=st.integers(0, 99), m1=st.integers(0, 13), y2=st.integers(0, 99), m2=st.integers(0, 13))
def test_contract_term_reads_two_digit_years_and_refuses_bad_months(
    y1: int, m1: int, y2: int, m2: int
) -> None:
    start, end = contract_term(f"{y1:02d}.{m1:02d}~{y2:02d}.{m2:02d}")
    if 1 <= m1 <= 12 and 1 <= m2 <= 12:
        assert (start, end) == (f"{2000 + y1}-{m1:02d}", f"{2000 + y2}-{m2:02d}")
    else:
        assert (start, end) == (None, None)


def test_contract_term_blank_or_malformed_is_none() -> None:
    for raw in (None, "", " ", "25.06", "25.06-26.06", "2025.06~2026.07x"):
        assert contract_term(raw) == (None, None)
    assert contract_term("2025.06~2026.07") == ("2025-06", "2026-07")
