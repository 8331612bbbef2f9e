"""The statutory conversion rate and converted deposits (issue 28 item 3): the bundled
table against the law and the Bank of Korea's decisions as ``tests.rent_law`` restates
them, and the properties of the pure functions."""

from __future__ import annotations

import datetime
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import svc_core
from svc_core.realestate import rent_conversion as rc
from tests import rent_law

TABLE = Path(svc_core.__file__).parent / rc.TABLE_FILE
DAYS = st.dates(datetime.date(2010, 1, 1), datetime.date(2030, 12, 31))
AMOUNTS = st.integers(0, 10**11)
RENTS = st.integers(0, 10**9)
RATES = st.fractions(Fraction(1, 1000), Fraction(1, 10))


def test_the_bundled_table_is_the_law_and_the_bank_of_koreas_decisions() -> None:
    table = rc.rate_table()
    assert table.checked_through == rent_law.CHECKED_THROUGH
    assert [(r.effective, r.pct) for r in table.base_rates] == [
        (day, Fraction(pct)) for day, pct in rent_law.BASE_RATES
    ]
    assert [e.start for e in table.eras] == [
        rent_law.LAW_START,
        rent_law.PLUS_35_FROM,
        rent_law.PLUS_2_FROM,
    ]
    assert [(e.start, e.cap_pct, e.base_times) for e in table.commercial_eras] == [
        (rent_law.LAW_START, Fraction(12), Fraction("4.5"))
    ]
    doc = json.loads(TABLE.read_text("utf-8"))
    assert doc["limits"]["source"].startswith("https://www.law.go.kr/")
    assert doc["commercial_limits"]["source"].startswith("https://www.law.go.kr/")
    assert doc["base_rates"]["source"].startswith("https://www.bok.or.kr/")


@given(DAYS)
def test_the_rate_in_force_is_the_law_restated(day: datetime.date) -> None:
    assert rc.conversion_rate(day) == rent_law.statutory_rate(day)
    commercial = rc.conversion_rate(day, law=rc.COMMERCIAL)
    assert commercial == rent_law.statutory_rate(day, commercial=True)
    assert rc.rate_assumed(day) is (day > rent_law.CHECKED_THROUGH)


def test_the_rate_of_known_days() -> None:
    day = datetime.date
    assert rc.conversion_rate(day(2013, 12, 31)) is None
    assert rc.conversion_rate(day(2014, 1, 1)) == Fraction(10, 100)  # min(10, 2.5 x 4)
    assert rc.conversion_rate(day(2016, 11, 29)) == Fraction(5, 100)  # 1.25 x 4
    assert rc.conversion_rate(day(2016, 11, 30)) == Fraction("4.75") / 100  # 1.25 + 3.5
    assert rc.conversion_rate(day(2020, 9, 28)) == Fraction(4, 100)  # 0.5 + 3.5
    assert rc.conversion_rate(day(2020, 9, 29)) == Fraction("2.5") / 100  # 0.5 + 2
    assert rc.conversion_rate(day(2025, 5, 28)) == Fraction("4.75") / 100
    assert rc.conversion_rate(day(2025, 5, 29)) == Fraction("4.5") / 100
    assert rc.base_rate_pct(day(2013, 5, 8)) is None
    assert rc.conversion_rate(day(2014, 1, 1), law=rc.COMMERCIAL) == Fraction(1125, 10000)
    assert rc.conversion_rate(day(2023, 1, 13), law=rc.COMMERCIAL) == Fraction(12, 100)
    assert rc.conversion_rate(day(2025, 5, 29), law=rc.COMMERCIAL) == Fraction(1125, 10000)
    assert rc.law_of("officetel") == rc.HOUSING
    assert {rc.law_of(t) for t in ("office", "retail", "mixed_use")} == {rc.COMMERCIAL}


@given(DAYS, DAYS)
def test_the_rate_is_constant_between_two_changes(a: datetime.date, b: datetime.date) -> None:
    a, b = min(a, b), max(a, b)
    table = rc.rate_table()
    changes = [r.effective for r in table.base_rates] + [e.start for e in table.eras]
    if not any(a < change <= b for change in changes):
        assert rc.conversion_rate(a) == rc.conversion_rate(b)


def _table(pcts: list[Fraction]) -> rc.RateTable:
    """The bundled eras with base rates ``pcts`` on the bundled dates."""
    bundled = rc.rate_table()
    return rc.RateTable(
        base_rates=tuple(
            rc.BaseRate(effective=r.effective, pct=p)
            for r, p in zip(bundled.base_rates, pcts, strict=True)
        ),
        eras=bundled.eras,
        checked_through=bundled.checked_through,
    )


N_RATES = len(rent_law.BASE_RATES)
BASIS_POINTS = st.lists(st.integers(1, 800), min_size=N_RATES, max_size=N_RATES)


@given(BASIS_POINTS, BASIS_POINTS, DAYS)
def test_the_rate_is_monotone_in_the_table(
    points: list[int], rises: list[int], day: datetime.date
) -> None:
    """Higher base rates never give a lower statutory rate, which stays within the cap."""
    pcts = [Fraction(p, 100) for p in points]
    low = _table(pcts)
    high = _table([p + Fraction(r, 100) for p, r in zip(pcts, rises, strict=True)])
    rate, higher = rc.conversion_rate(day, low), rc.conversion_rate(day, high)
    if rate is None or higher is None:
        assert rate is higher is None and day < rent_law.LAW_START
    else:
        assert 0 < rate <= higher <= Fraction(1, 10)


@given(AMOUNTS, RATES)
def test_no_rent_converts_to_the_deposit(deposit: int, rate: Fraction) -> None:
    assert rc.converted_deposit(deposit, 0, rate) == deposit


@given(AMOUNTS, RENTS, RATES)
def test_the_converted_deposit_is_the_exact_formula_rounded_half_to_even(
    deposit: int, rent: int, rate: Fraction
) -> None:
    exact = deposit + Fraction(12 * rent) / rate
    value = rc.converted_deposit(deposit, rent, rate)
    assert abs(value - exact) <= Fraction(1, 2)
    if abs(value - exact) == Fraction(1, 2):
        assert value % 2 == 0
    assert value >= deposit


@given(AMOUNTS, RENTS, st.integers(1, 10**6), RATES)
def test_more_rent_converts_to_more(deposit: int, rent: int, more: int, rate: Fraction) -> None:
    # a won of rent a month is at least 120 won of deposit (12 / 10 %): rounding keeps order
    assert rc.converted_deposit(deposit, rent + more, rate) > rc.converted_deposit(
        deposit, rent, rate
    )


@given(AMOUNTS, RENTS, RATES, RATES)
def test_a_higher_rate_converts_to_less(deposit: int, rent: int, a: Fraction, b: Fraction) -> None:
    low, high = min(a, b), max(a, b)
    assert rc.converted_deposit(deposit, rent, high) <= rc.converted_deposit(deposit, rent, low)


@given(AMOUNTS, st.one_of(st.none(), RENTS), DAYS)
def test_the_deposit_equivalent_is_the_law_restated(
    deposit: int, rent: int | None, day: datetime.date
) -> None:
    assert rc.deposit_equivalent(deposit, rent, day) == rent_law.converted(deposit, rent or 0, day)
    assert rc.deposit_equivalent(deposit, rent, day, law=rc.COMMERCIAL) == rent_law.converted(
        deposit, rent or 0, day, commercial=True
    )


def test_bad_amounts_and_tables_are_refused() -> None:
    with pytest.raises(ValueError):
        rc.converted_deposit(-1, 10, Fraction(1, 20))
    with pytest.raises(ValueError):
        rc.converted_deposit(1, 10, Fraction(0))
    doc = json.loads(TABLE.read_text("utf-8"))
    eras = doc["limits"]["eras"]
    eras[1]["from"] = "2016-12-01"  # a gap between two eras
    with pytest.raises(ValueError, match="gap"):
        rc.parse_table(json.dumps(doc))
    doc = json.loads(TABLE.read_text("utf-8"))
    doc["base_rates"]["rates"].reverse()
    with pytest.raises(ValueError, match="ascending"):
        rc.parse_table(json.dumps(doc))
    doc = json.loads(TABLE.read_text("utf-8"))
    doc["checked_through"] = "2025-01-01"
    with pytest.raises(ValueError, match="checked_through"):
        rc.parse_table(json.dumps(doc))


def test_the_assumed_rate_caveat_names_the_date_and_the_file() -> None:
    text = rc.assumed_rate_limitation()
    assert "2025-08-28" in text and "rent_conversion.json" in text
