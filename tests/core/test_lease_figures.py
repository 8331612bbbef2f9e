"""Leases like with like (issue 28 item 3) and the contract filters (item 4) in the pure
pulse: lease kinds partition a lease row, lease rows carry deposits per m² and converted
deposits under their own names (recomputed here with ``tests.rent_law``), sale rows the
reverse, and a lease filter with a sale filter is refused."""

from __future__ import annotations

import datetime
import itertools
import statistics
from fractions import Fraction

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.cohorts.stats import quartiles
from svc_core.demo.realestate import demo_transactions
from svc_core.errors import InvalidParams
from svc_core.models import DEAL_TYPES, LEASE_KINDS, PARTY_TYPES
from svc_core.realestate import lease_figures, lease_kinds, pulse, query, series
from svc_core.realestate.pulse import Deal
from tests import rent_law

DAYS = st.dates(datetime.date(2013, 10, 1), datetime.date(2026, 3, 31))


@st.composite
def deals(draw: st.DrawFn) -> Deal:
    ttype = draw(st.sampled_from(("sale", "chartered_lease", "monthly_lease")))
    day = draw(DAYS)
    sale = ttype == "sale"
    return Deal(
        price=draw(st.integers(0, 10**10)),
        monthly_rent=draw(st.integers(1, 10**7)) if ttype == "monthly_lease" else None,
        area=draw(st.one_of(st.none(), st.floats(1, 500).map(lambda a: round(a, 2)))),
        source="rtms_official",
        sigungu_code="11680",
        sigungu="강남구",
        dong="역삼동",
        property_type="officetel",
        transaction_type=ttype,
        month=day.isoformat()[:7],
        building_type="unit",
        lease_kind=None if sale else draw(st.sampled_from((*LEASE_KINDS, None))),
        deal_type=draw(st.sampled_from((*DEAL_TYPES, None))) if sale else None,
        buyer_type=draw(st.sampled_from((*PARTY_TYPES, None))) if sale else None,
        deal_date=day.isoformat(),
    )


DEALS = st.lists(deals(), max_size=40)


def _rows(items: list[Deal], **params: str) -> dict[str, pulse.PulseRow]:
    """The rows of every deal, one period spanning all their months."""
    cohort = query.Cohort(sigungu_code="11680", **params)  # type: ignore[arg-type]
    months = {d.month: "all" for d in items}
    rows = pulse.group_rows(cohort, pulse.select(cohort, items, months), months)
    return {r.transaction_type: r for r in rows}


def _expected(values: list[int]) -> tuple[int, int, int] | None:
    if not values:
        return None
    if len(values) == 1:
        return (values[0],) * 3
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return round(Fraction(q1)), round(Fraction(q2)), round(Fraction(q3))


@settings(max_examples=60)
@given(DEALS)
def test_lease_kinds_partition_a_lease_row(items: list[Deal]) -> None:
    combined = _rows(items)
    parts = {kind: _rows(items, lease_kind=kind) for kind in LEASE_KINDS}
    for ttype, row in combined.items():
        mix = row.lease_kind_mix
        if ttype == "sale":
            assert mix == {} and row.lease_kind is None
            assert all(ttype not in p for p in parts.values())
            continue
        assert sum(mix.values()) == row.sample_count
        for kind in LEASE_KINDS:
            n = mix.get(kind, 0)
            part = parts[kind].get(ttype)
            assert (part.sample_count if part else 0) == (n if n >= 2 else 0)
            if part:
                assert part.lease_kind == kind and part.lease_kind_mix == {kind: n}


@settings(max_examples=60)
@given(DEALS)
def test_lease_rows_summarise_converted_deposits_as_the_law_says(items: list[Deal]) -> None:
    for ttype, row in _rows(items).items():
        chosen = [d for d in items if d.transaction_type == ttype]
        if ttype == "sale":
            assert attrs.asdict(lease_figures.lease_figures(ttype, chosen)) == attrs.asdict(
                lease_figures.NO_FIGURES
            )
            assert row.avg_converted_deposit is None and row.median_deposit_per_m2 is None
            continue
        assert row.p25_price_per_m2 is row.median_land_price_per_m2 is None
        values = [
            c
            for d in chosen
            if d.deal_date
            and (
                c := rent_law.converted(
                    d.price, d.monthly_rent or 0, datetime.date.fromisoformat(d.deal_date)
                )
            )
            is not None
        ]
        expected = _expected(sorted(values))
        got = (row.p25_converted_deposit, row.median_converted_deposit, row.p75_converted_deposit)
        assert got == (expected or (None, None, None))
        assert row.avg_converted_deposit == (
            round(Fraction(sum(values), len(values))) if values else None
        )
        if ttype == "chartered_lease":
            assert got == (row.p25_price, row.median_price, row.p75_price)
            assert row.avg_converted_deposit == row.avg_price


def test_converted_deposits_per_m2_divide_each_lease() -> None:
    day = "2025-06-10"  # 2.50 + 2 = 4.5 %
    items = [
        Deal(
            price=deposit,
            monthly_rent=rent,
            area=area,
            source="rtms_official",
            sigungu_code="11680",
            sigungu="강남구",
            dong="역삼동",
            property_type="officetel",
            transaction_type="monthly_lease",
            month="2025-06",
            lease_kind="new",
            deal_date=day,
        )
        for deposit, rent, area in ((10_000_000, 900_000, 20.0), (50_000_000, 300_000, 25.5))
    ]
    figures = lease_figures.lease_figures("monthly_lease", items)
    converted = [10_000_000 + 240_000_000, 50_000_000 + 80_000_000]
    assert (figures.p25_converted_deposit, figures.p75_converted_deposit) == (
        quartiles(converted)[0],
        quartiles(converted)[2],
    )
    per_m2 = sorted([Fraction(250_000_000, 20), Fraction(130_000_000) / Fraction("25.5")])
    assert figures.median_converted_deposit_per_m2 == round((per_m2[0] + per_m2[1]) / 2)
    assert figures.median_deposit_per_m2 == round(
        (Fraction(10_000_000, 20) + Fraction(50_000_000) / Fraction("25.5")) / 2
    )


def test_office_leases_convert_at_the_commercial_rate() -> None:
    """An office's monthly lease falls under 상가건물임대차보호법: 2.50 x 4.5 = 11.25 %."""
    day = "2025-06-10"
    items = [
        Deal(
            price=deposit,
            monthly_rent=rent,
            area=30.0,
            source="public_assessment",
            sigungu_code="11680",
            sigungu="강남구",
            dong="역삼동",
            property_type="office",
            transaction_type="monthly_lease",
            month="2025-06",
            deal_date=day,
        )
        for deposit, rent in ((100_000_000, 4_500_000), (20_000_000, 900_000))
    ]
    figures = lease_figures.lease_figures("monthly_lease", items)
    on = datetime.date(2025, 6, 10)
    expected = sorted(
        rent_law.converted(d.price, d.monthly_rent or 0, on, commercial=True) or 0 for d in items
    )
    assert expected == [20_000_000 + 96_000_000, 100_000_000 + 480_000_000]
    assert (figures.p25_converted_deposit, figures.p75_converted_deposit) == (
        quartiles(expected)[0],
        quartiles(expected)[2],
    )


@pytest.mark.parametrize(
    "params",
    [
        {"lease_kind": "new", "transaction_type": "sale"},
        {"deal_type": "direct", "transaction_type": "monthly_lease"},
        {"buyer_type": "company", "transaction_type": "chartered_lease"},
        {"lease_kind": "renewal", "deal_type": "brokered"},
        {"lease_kind": "renewal", "buyer_type": "individual"},
        {"lease_kind": "old"},
        {"deal_type": "broker"},
        {"buyer_type": "person"},
    ],
)
def test_a_filter_of_the_other_side_or_an_unknown_value_is_refused(
    params: dict[str, str],
) -> None:
    for parse, period in ((query.parse_pulse, "period"), (query.parse_series, "periods")):
        with pytest.raises(InvalidParams):
            parse({"sigungu_code": "11680", period: "2025-06", **params})


def test_the_filters_are_echoed_and_series_rows_match_pulse_rows() -> None:
    items = [
        Deal(
            price=price,
            monthly_rent=None,
            area=30.0,
            source="rtms_official",
            sigungu_code="11680",
            sigungu="강남구",
            dong="역삼동",
            property_type="officetel",
            transaction_type="sale",
            month="2025-06",
            deal_type=dtype,
            buyer_type="individual",
            deal_date="2025-06-03",
        )
        for price, dtype in ((1, "direct"), (2, "direct"), (3, "brokered"))
    ]
    q = query.parse_pulse({"sigungu_code": "11680", "period": "2025-06", "deal_type": "direct"})
    [row] = pulse.pulse_rows(items, q)
    assert (row.sample_count, row.deal_type, row.buyer_type) == (2, "direct", None)
    assert "deal_type=direct" in str(pulse.row_link("https://x/t", row, ["2025-06"]))
    s = query.parse_series({"sigungu_code": "11680", "periods": "2025-06", "deal_type": "direct"})
    assert series.series_rows(items, s) == [row]
    assert q.cohort.deal_echo() == {
        "lease_kind": None,
        "deal_type": "direct",
        "buyer_type": None,
        "industrial_use": None,
        "land_category": None,
        "zoning": None,
    }


def _lease_row(period: str, mix: dict[str, int], kind: str | None = None) -> pulse.PulseRow:
    [row] = pulse.pulse_rows(
        [
            Deal(
                price=10**8,
                monthly_rent=10**6,
                area=20.0,
                source="rtms_official",
                sigungu_code="11680",
                sigungu="강남구",
                dong=None,
                property_type="officetel",
                transaction_type="monthly_lease",
                month="2025-06",
                deal_date="2025-06-02",
            )
        ]
        * 2,
        query.parse_pulse({"sigungu_code": "11680", "period": "2025-06"}),
    )
    return attrs.evolve(row, period=period, lease_kind_mix=mix, lease_kind=kind)


def test_lease_caveats_name_a_pooled_row_and_an_assumed_rate() -> None:
    both = {"new": 3, "renewal": 1}
    pooled = _lease_row("2025-06", both)
    assert lease_figures.lease_limitations([pooled], {"2025-06": "2025-06"}) == [
        lease_kinds.LEASE_KIND_LIMITATION
    ]
    assert lease_figures.lease_limitations([_lease_row("2025-06", {"new": 4}, "new")], {}) == []
    late = _lease_row("2025-Q3", {"new": 4})
    months = {"2025-07": "2025-Q3", "2025-08": "2025-Q3", "2025-09": "2025-Q3"}
    [caveat] = lease_figures.lease_limitations([late], months)
    assert "2025-08-28" in caveat
    # a chartered lease converts nothing: no rate is assumed
    chartered = attrs.evolve(late, transaction_type="chartered_lease")
    assert lease_figures.lease_limitations([chartered], months) == []


def test_demo_data_says_what_rtms_publishes_of_a_contract() -> None:
    seen = list(itertools.islice(demo_transactions(3), 20_000))
    for t in seen:
        officetel_lease = t.transaction_type != "sale" and t.property_type == "officetel"
        assert (t.lease_kind is not None) is officetel_lease
        rtms_sale = t.transaction_type == "sale" and t.source == "rtms_official"
        assert (t.deal_type is not None) is (
            rtms_sale and t.deal_date >= datetime.date(2021, 11, 1)
        )
        assert (t.buyer_type is not None) is (
            rtms_sale and t.deal_date >= datetime.date(2024, 1, 1)
        )
    kinds = {t.lease_kind for t in seen} | {t.deal_type for t in seen}
    assert kinds >= {"new", "renewal", "brokered", "direct"}
