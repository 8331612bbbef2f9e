"""The normalized samples CSV: strict per-row validation with line numbers."""

from __future__ import annotations

import csv
import datetime
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import SourceError
from svc_core.sources.samples import HEADER, parse_samples

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "samples" / "samples.csv"


def csv_bytes(*rows: tuple[str, ...]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


GOOD = (
    "public_assessment",
    "11680",
    "역삼동",
    "office",
    "sale",
    "2025-06-03",
    "1000000000",
    "",
    "100",
)


def test_fixture_rows() -> None:
    result = parse_samples(SAMPLES.read_bytes(), path="samples.csv")
    report = result.report
    assert report.read == 16  # the blank line is not a record
    assert len(result.transactions) == 6
    assert [(r.line, r.reason) for r in report.rejections] == [
        (7, "invalid_source"),
        (8, "unknown_district"),
        (9, "invalid_rent"),
        (10, "invalid_rent"),
        (11, "invalid_date"),
        (12, "invalid_amount"),
        (13, "invalid_area"),
        (14, "invalid_property_type"),
        (15, "wrong_cell_count"),
        (16, "surrounding_blanks"),
    ]
    first = result.transactions[0]
    assert (first.source, first.sigungu, first.dong, first.price_krw, first.area_m2) == (
        "public_assessment",
        "강남구",
        "역삼동",
        19_000_000_000,
        1234.5,
    )
    lease = result.transactions[1]
    assert (lease.transaction_type, lease.monthly_rent_krw) == ("monthly_lease", 4_500_000)
    no_dong = result.transactions[2]
    assert (no_dong.dong, no_dong.area_m2, no_dong.monthly_rent_krw) == (None, None, None)
    assert result.transactions[3].source == "broker_survey_2025"  # any well-formed id
    assert result.transactions[-1].deal_date == datetime.date(2025, 6, 30)  # after a blank line


def test_identical_rows_get_distinct_stable_keys() -> None:
    data = SAMPLES.read_bytes()
    keys = [t.natural_key for t in parse_samples(data).transactions]
    assert keys == [t.natural_key for t in parse_samples(data).transactions]
    assert len(set(keys)) == len(keys)
    assert keys[1].rsplit(":", 1)[0] == keys[4].rsplit(":", 1)[0]
    assert all(k.startswith("samples:") for k in keys)


def test_header_must_match_exactly() -> None:
    with pytest.raises(SourceError, match="header") as info:
        parse_samples(b"source,sigungu_code\n", path="s.csv")
    assert (info.value.path, info.value.line) == ("s.csv", 1)
    with pytest.raises(SourceError, match="header"):
        parse_samples(b"")
    with pytest.raises(SourceError, match="UTF-8"):
        parse_samples(b"\xff\xfe")


@pytest.mark.parametrize(
    ("index", "value", "reason"),
    [
        (0, "a", "invalid_source"),
        (0, "x" * 41, "invalid_source"),
        (0, "9source", "invalid_source"),
        (1, "1168", "invalid_sigungu_code"),
        (4, "lease", "invalid_transaction_type"),
        (5, "2025-6-3", "invalid_date"),
        (5, "1989-12-31", "invalid_date"),
        (6, "-1", "invalid_amount"),
        (6, "1e9", "invalid_amount"),
        (8, "0", "invalid_area"),
        (8, "nan", "invalid_area"),
        (2, "역삼동\x07", "invalid_record"),
    ],
)
def test_bad_cells(index: int, value: str, reason: str) -> None:
    row = list(GOOD)
    row[index] = value
    report = parse_samples(csv_bytes(tuple(row))).report
    assert report.rejected == {reason: 1}
    assert report.rejections[0].line == 2


def test_bom_is_tolerated() -> None:
    (tx,) = parse_samples(b"\xef\xbb\xbf" + csv_bytes(GOOD)).transactions
    assert tx.price_krw == 1_000_000_000


amounts = st.integers(0, 10**15).map(str)


@given(
    st.sampled_from(["11680", "11110", "26350", "41135"]),
    st.sampled_from(["office", "retail", "commercial_complex", "mixed_use", "officetel"]),
    st.sampled_from(["sale", "chartered_lease", "monthly_lease"]),
    st.dates(datetime.date(1990, 1, 1), datetime.date(2100, 12, 31)),
    amounts,
    st.integers(1, 10**9),
)
def test_valid_rows_round_trip(
    code: str, ptype: str, ttype: str, day: datetime.date, price: str, rent: int
) -> None:
    rent_text = str(rent) if ttype == "monthly_lease" else ""
    row = ("public_assessment", code, "", ptype, ttype, day.isoformat(), price, rent_text, "")
    (tx,) = parse_samples(csv_bytes(row)).transactions
    assert (tx.sigungu_code, tx.property_type, tx.transaction_type) == (code, ptype, ttype)
    assert tx.deal_date == day
    assert tx.price_krw == int(price)
    assert tx.monthly_rent_krw == (rent if ttype == "monthly_lease" else None)


@given(st.lists(st.lists(st.text(max_size=10), min_size=1, max_size=10), max_size=5))
def test_garbage_rows_are_rejected_not_raised(rows: list[list[str]]) -> None:
    try:
        result = parse_samples(csv_bytes(*map(tuple, rows)))
    except SourceError as exc:
        assert "malformed CSV" in str(exc)
        return
    report = result.report
    assert report.read == len(result.transactions) + report.rejected_total
