"""Cohort statistics: type-7 quartiles, exact means, per-source figures."""

from __future__ import annotations

import datetime
import statistics
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.cohorts.contracts import contract_id
from svc_core.cohorts.stats import (
    MIN_SAMPLES,
    Contract,
    Sample,
    contracts,
    mean,
    per_area_quartiles,
    quantile,
    quantile_exact,
    quartiles,
    sample_of,
    summarize,
)
from svc_core.models import Transaction

prices = st.integers(0, 10**13)
sources = st.sampled_from(["rtms_official", "public_assessment", "rone_index_derived"])
samples = st.builds(
    lambda price, source, area: Sample(price=price, monthly_rent=None, area=area, source=source),
    prices,
    sources,
    st.one_of(st.none(), st.floats(1.0, 10_000.0)),
)


def sale(price: int, source: str = "rtms_official", area: float | None = 50.0) -> Sample:
    return Sample(price=price, monthly_rent=None, area=area, source=source)


def test_quartiles_by_hand() -> None:
    # h = 3 * p: p25 -> 1 + 0.75 * (2 - 1) = 1.75 -> 2; median 2.5 -> 2 (half to even);
    # p75 -> 3.25 -> 3
    assert quartiles([4, 1, 3, 2]) == (2, 2, 3)
    assert mean([1, 2, 3, 4]) == 2  # 2.5 rounds half to even
    assert mean([1, 2, 3, 5]) == 3  # 2.75
    assert quartiles([10, 20, 30, 40, 50]) == (20, 30, 40)
    assert quantile_exact([10, 20], Fraction(1, 4)) == Fraction(25, 2)  # 10 + 0.25 * 10


def test_quantile_matches_statistics_inclusive() -> None:
    data = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    expected = statistics.quantiles(data, n=4, method="inclusive")
    got = [quantile(data, p) for p in (0.25, 0.5, 0.75)]
    assert got == pytest.approx(expected)


@given(st.lists(st.floats(-1e9, 1e9), min_size=2, max_size=40))
def test_quantile_is_type_7(data: list[float]) -> None:
    expected = statistics.quantiles(data, n=4, method="inclusive")
    got = [quantile(data, p) for p in (0.25, 0.5, 0.75)]
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-6)


@given(st.lists(st.integers(-(10**12), 10**12), min_size=2, max_size=40))
def test_exact_quartiles_match_statistics(data: list[int]) -> None:
    expected = statistics.quantiles([Fraction(x) for x in data], n=4, method="inclusive")
    exact = [quantile_exact(sorted(data), Fraction(k, 4)) for k in (1, 2, 3)]
    assert exact == expected


@given(st.lists(st.integers(-(10**15), 10**15), min_size=1, max_size=41))
def test_integer_quartiles_are_the_exact_quartiles_rounded_half_to_even(data: list[int]) -> None:
    """``quartiles`` interpolates in integers: the same as the exact type-7 quantiles
    rounded half to even (Python's ``round`` of a Fraction), ties included."""
    exact = tuple(round(quantile_exact(sorted(data), Fraction(k, 4))) for k in (1, 2, 3))
    assert quartiles(data) == exact


def test_integer_quartiles_round_ties_to_even() -> None:
    assert quartiles([0, 2]) == (0, 1, 2)  # 0.5 -> 0, 1, 1.5 -> 2
    assert quartiles([1, 3]) == (2, 2, 2)  # 1.5 -> 2, 2, 2.5 -> 2
    with pytest.raises(ValueError):
        quartiles([])


def test_quantile_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        quantile([], 0.5)
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)
    with pytest.raises(ValueError):
        mean([])


def test_fewer_than_min_samples_is_no_cohort() -> None:
    assert MIN_SAMPLES == 2
    assert summarize([]) is None
    assert summarize([sale(100)]) is None


def test_summary_by_hand() -> None:
    cohort = [
        sale(100_000_000, "rtms_official", 50.0),
        sale(120_000_000, "rtms_official", 60.0),
        sale(110_000_000, "public_assessment", None),
        sale(130_000_000, "public_assessment", 70.005),
    ]
    stats = summarize(cohort)
    assert stats is not None
    assert stats.sample_count == 4
    assert stats.avg_price == 115_000_000
    # sorted 100, 110, 120, 130 (millions): p25 = 107.5, median 115, p75 = 122.5
    assert (stats.p25_price, stats.median_price, stats.p75_price) == (
        107_500_000,
        115_000_000,
        122_500_000,
    )
    assert stats.source_mix == {"public_assessment": 2, "rtms_official": 2}
    assert stats.source_means == {"public_assessment": 120_000_000, "rtms_official": 110_000_000}
    assert stats.relative_spread == pytest.approx(round(10 / 115, 4))
    assert stats.distinct_sources == 2
    assert stats.avg_area_m2 == "60.00"  # (50 + 60 + 70.005) / 3 = 60.0016...
    assert stats.avg_monthly_rent is None
    assert stats.median_monthly_rent is None


def test_rent_statistics_for_monthly_leases() -> None:
    cohort = [
        Sample(price=10_000_000, monthly_rent=800_000, area=20.0, source="rtms_official"),
        Sample(price=20_000_000, monthly_rent=1_000_000, area=30.0, source="rtms_official"),
        Sample(price=30_000_000, monthly_rent=1_300_000, area=None, source="rtms_official"),
    ]
    stats = summarize(cohort)
    assert stats is not None
    assert stats.avg_monthly_rent == 1_033_333
    assert stats.p25_monthly_rent == 900_000
    assert stats.median_monthly_rent == 1_000_000
    assert stats.p75_monthly_rent == 1_150_000
    assert stats.avg_area_m2 == "25.00"
    assert stats.relative_spread == 0.0


def test_no_area_gives_none() -> None:
    stats = summarize([sale(1, area=None), sale(3, area=None)])
    assert stats is not None
    assert stats.avg_area_m2 is None
    assert stats.avg_price == 2


def test_sample_of_transaction() -> None:
    tx = Transaction(
        source="rtms_official",
        sigungu_code="11680",
        sigungu="강남구",
        dong="역삼동",
        property_type="officetel",
        transaction_type="monthly_lease",
        deal_date=datetime.date(2025, 6, 1),
        price_krw=10_000_000,
        monthly_rent_krw=830_000,
        area_m2=17.57,
        natural_key="k",
    )
    assert sample_of(tx) == Sample(
        price=10_000_000,
        monthly_rent=830_000,
        area=17.57,
        source="rtms_official",
        contract_id=contract_id(tx),
    )


@given(st.lists(samples, min_size=2, max_size=30), st.randoms(use_true_random=False))
def test_summary_properties(cohort: list[Sample], rnd: object) -> None:
    stats = summarize(cohort)
    assert stats is not None
    values = [s.price for s in cohort]
    assert stats.sample_count == len(cohort)
    assert min(values) <= stats.p25_price <= stats.median_price <= stats.p75_price <= max(values)
    assert min(values) <= stats.avg_price <= max(values)
    assert sum(stats.source_mix.values()) == len(cohort)
    assert set(stats.source_means) == set(stats.source_mix)
    assert stats.relative_spread >= 0
    if stats.distinct_sources == 1:
        assert stats.relative_spread == 0.0
    shuffled = list(cohort)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert summarize(shuffled) == stats


@given(st.lists(st.floats(1.0, 10_000.0), min_size=2, max_size=20))
def test_area_text_has_two_decimals(areas: list[float]) -> None:
    stats = summarize([sale(1, area=a) for a in areas])
    assert stats is not None
    assert stats.avg_area_m2 is not None
    _, _, decimals = stats.avg_area_m2.partition(".")
    assert len(decimals) == 2
    assert abs(float(stats.avg_area_m2) - sum(areas) / len(areas)) <= 0.0051


# contracts, not rows (issue 28) ------------------------------------------------------------

areas = st.one_of(st.none(), st.decimals(1, 10_000, places=2).map(float), st.floats(1.0, 10_000.0))
rows = st.builds(
    lambda price, source, area, rent, cid: Sample(
        price=price, monthly_rent=rent, area=area, source=source, contract_id=cid
    ),
    st.integers(0, 10**12),
    sources,
    areas,
    st.one_of(st.none(), st.integers(0, 10**7)),
    st.one_of(st.none(), st.sampled_from(["c1", "c2", "c3", "c4"])),
)


def by_hand(cohort: list[Sample]) -> dict[str, object]:
    """Mean, type-7 quartiles, per-source means and the mean area (of the areas as
    published) over ``cohort``'s rows, with the standard library alone."""
    prices = [s.price for s in cohort]
    known = [Decimal(repr(s.area)) for s in cohort if s.area is not None]
    means: dict[str, list[int]] = {}
    for s in cohort:
        means.setdefault(s.source, []).append(s.price)
    mean_area = None
    if known:
        exact = Fraction(sum(known, Decimal(0))) / len(known)
        mean_area = str(
            (Decimal(exact.numerator) / Decimal(exact.denominator)).quantize(
                Decimal("0.01"), rounding=ROUND_HALF_EVEN
            )
        )
    quartile = statistics.quantiles([Fraction(p) for p in prices], n=4, method="inclusive")
    return {
        "avg": round(Fraction(sum(prices), len(prices))),
        "quartiles": tuple(round(q) for q in quartile),
        "means": {src: round(Fraction(sum(v), len(v))) for src, v in sorted(means.items())},
        "area": mean_area,
    }


@given(st.lists(rows, max_size=30))
def test_grouping_into_contracts_preserves_totals(cohort: list[Sample]) -> None:
    """Every row is in one contract: the rows sharing a contract id and a source are one
    ``Contract`` of their total price, rent and area; the others pass as they are."""
    grouped = contracts(cohort)
    assert sum(c.units if isinstance(c, Contract) else 1 for c in grouped) == len(cohort)
    assert sum(c.price for c in grouped) == sum(s.price for s in cohort)
    members: dict[tuple[str, str], list[Sample]] = {}
    for s in cohort:
        if s.contract_id is not None:
            members.setdefault((s.contract_id, s.source), []).append(s)
    singles = sum(1 for s in cohort if s.contract_id is None)
    assert len(grouped) == len(members) + singles
    merged = sorted((c for c in grouped if isinstance(c, Contract)), key=repr)
    wanted = []
    for (_, source), group in members.items():
        if len(group) < 2:
            continue
        rents = [s.monthly_rent for s in group]
        known = [s.area for s in group]
        wanted.append(
            Contract(
                price=sum(s.price for s in group),
                monthly_rent=None if None in rents else sum(r or 0 for r in rents),
                area=None
                if None in known
                else sum((Decimal(repr(a)) for a in known if a is not None), Decimal(0)),
                source=source,
                units=len(group),
            )
        )
    assert merged == sorted(wanted, key=repr)


@given(st.lists(rows, min_size=2, max_size=30))
def test_counts_of_contracts_and_rows(cohort: list[Sample]) -> None:
    stats = summarize(cohort)
    grouped = contracts(cohort)
    if len(grouped) < MIN_SAMPLES:
        assert stats is None
        return
    assert stats is not None
    assert stats.sample_count == len(cohort)
    assert stats.bulk_contracts <= stats.contract_count <= stats.sample_count
    assert stats.contract_count == len(grouped)
    assert sum(stats.source_mix.values()) == len(cohort)
    assert 1 <= stats.largest_contract <= stats.sample_count
    assert (stats.bulk_contracts == 0) == (stats.largest_contract == 1)


@given(st.lists(rows, min_size=2, max_size=30))
def test_single_unit_contracts_give_exactly_the_row_statistics(cohort: list[Sample]) -> None:
    """A cohort whose every row is a contract of its own (every lease, most sales) gets
    the figures of its rows: the same as without contract ids, and as by hand."""
    own = [attrs.evolve(s, contract_id=f"own-{n}") for n, s in enumerate(cohort)]
    none = [attrs.evolve(s, contract_id=None) for s in cohort]
    stats = summarize(own)
    assert stats is not None and stats == summarize(none)
    assert (stats.contract_count, stats.bulk_contracts, stats.largest_contract) == (
        len(cohort),
        0,
        1,
    )
    expected = by_hand(cohort)
    assert stats.avg_price == expected["avg"]
    assert (stats.p25_price, stats.median_price, stats.p75_price) == expected["quartiles"]
    assert stats.source_means == expected["means"]
    assert stats.avg_area_m2 == expected["area"]
    pairs = [(s.price, s.area) for s in cohort]
    assert per_area_quartiles(pairs) == per_area_quartiles(
        (c.price, c.area) for c in contracts(own)
    )


@given(st.lists(rows, min_size=2, max_size=30))
def test_a_bulk_contract_enters_once_with_its_totals(cohort: list[Sample]) -> None:
    """Summarizing rows equals summarizing their contracts given as rows of their own
    (a bulk contract as one sample with its total price, rent and area), but for the
    row counts."""
    grouped = contracts(cohort)
    merged = [
        Sample(
            price=c.price,
            monthly_rent=c.monthly_rent,
            area=None if c.area is None else float(c.area),
            source=c.source,
        )
        for c in grouped
    ]
    stats = summarize(cohort)
    alone = summarize(merged)
    if stats is None:
        assert len(grouped) < MIN_SAMPLES and (alone is None) == (len(merged) < MIN_SAMPLES)
        return
    assert alone is not None
    for name in (
        "avg_price",
        "p25_price",
        "median_price",
        "p75_price",
        "avg_monthly_rent",
        "median_monthly_rent",
        "source_means",
        "relative_spread",
    ):
        assert getattr(stats, name) == getattr(alone, name), name
    assert alone.contract_count == stats.contract_count


def test_a_bulk_contract_by_hand() -> None:
    """Three floors of one building bought together and two other sales: three
    contracts; the building enters once at 900 for 300 m², 3 per m²."""
    cohort = [
        Sample(price=300, monthly_rent=None, area=100.0, source="rtms_official", contract_id="b"),
        Sample(price=300, monthly_rent=None, area=100.0, source="rtms_official", contract_id="b"),
        Sample(price=300, monthly_rent=None, area=100.0, source="rtms_official", contract_id="b"),
        Sample(price=100, monthly_rent=None, area=50.0, source="rtms_official"),
        Sample(price=200, monthly_rent=None, area=40.0, source="rtms_official"),
    ]
    stats = summarize(cohort)
    assert stats is not None
    assert (stats.sample_count, stats.contract_count, stats.bulk_contracts) == (5, 3, 1)
    assert stats.largest_contract == 3
    assert (stats.p25_price, stats.median_price, stats.p75_price) == (150, 200, 550)
    assert stats.avg_price == 400
    assert stats.avg_area_m2 == "130.00"  # (300 + 50 + 40) / 3
    assert stats.source_mix == {"rtms_official": 5}
    # per m²: 2, 3, 5 -> p25 2.5 (rounds to 2), median 3, p75 4
    assert per_area_quartiles((c.price, c.area) for c in contracts(cohort)) == (2, 3, 4)
    assert summarize(cohort[:3]) is None  # one contract is below the minimum


def test_avg_area_rounds_the_published_decimals() -> None:
    """1.015 is stored as 1.01499999999999990...: the mean of the published areas is the
    tie 1.015, which rounds half to even to 1.02 (the stored floats would give 1.01)."""
    stats = summarize([sale(1, area=1.015), sale(2, area=1.015)])
    assert stats is not None and stats.avg_area_m2 == "1.02"
    stats = summarize([sale(1, area=2.675), sale(2, area=2.665)])  # 2.67 exactly
    assert stats is not None and stats.avg_area_m2 == "2.67"
