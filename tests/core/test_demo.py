"""The synthetic demo data: deterministic, realistic, and covering every query."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from svc_core.demo.realestate import (
    DEMO_KEY_PREFIX,
    DEMO_LATEST,
    SEOUL_DONGS,
    demo_districts,
    demo_indices,
    demo_transactions,
)
from svc_core.envelope import DEMO_LIMITATION
from svc_core.models import (
    METRIC_TYPES,
    PROPERTY_TYPES,
    SOURCES,
    TRANSACTION_TYPES,
    IndexObservation,
    Transaction,
)
from svc_core.periods import Month, quarter_of, resolve_pulse_period
from svc_core.regions import region


@pytest.fixture(scope="module")
def transactions() -> list[Transaction]:
    return list(demo_transactions(1))


@pytest.fixture(scope="module")
def indices() -> list[IndexObservation]:
    return list(demo_indices(1))


def test_same_seed_same_data_other_seed_other_data() -> None:
    first = list(itertools.islice(demo_transactions(7), 2000))
    assert first == list(itertools.islice(demo_transactions(7), 2000))
    assert first != list(itertools.islice(demo_transactions(8), 2000))
    assert list(itertools.islice(demo_indices(7), 500)) == list(
        itertools.islice(demo_indices(7), 500)
    )


def test_size_and_window(transactions: list[Transaction]) -> None:
    assert 150_000 <= len(transactions) <= 250_000
    months = {t.period_month for t in transactions}
    assert max(months) == DEMO_LATEST.label == "2026-09"
    assert min(months) == "2021-10"
    assert len(months) == 60


def test_districts(transactions: list[Transaction]) -> None:
    codes = set(demo_districts())
    assert {t.sigungu_code for t in transactions} == codes
    assert sum(code.startswith("11") for code in codes) == 25
    assert len(codes) - 25 >= 10
    for tx in transactions[:5000]:
        found = region(tx.sigungu_code)
        assert found is not None and found.name == tx.sigungu


def test_sources_and_synthetic_keys(transactions: list[Transaction]) -> None:
    sources = Counter(t.source for t in transactions)
    assert set(sources) == {"rtms_official", "public_assessment", "rone_index_derived"}
    assert set(sources) <= set(SOURCES)
    assert sources.most_common(1)[0][0] == "rtms_official"
    keys = [t.natural_key for t in transactions]
    assert all(k.startswith(DEMO_KEY_PREFIX) for k in keys)
    assert len(set(keys)) == len(keys)
    assert DEMO_LIMITATION.startswith("Synthetic demo data: ")


PUBLISHED = [
    (p, t)
    for p, t in itertools.product(PROPERTY_TYPES, TRANSACTION_TYPES)
    if t == "sale" or p not in ("industrial", "land")
]
"""Every type pair some source publishes: no source svc reads has factory, warehouse or
land leases."""


def test_every_type_combination_and_no_rtms_commercial_leases(
    transactions: list[Transaction],
) -> None:
    combos = Counter((t.property_type, t.transaction_type) for t in transactions)
    assert set(combos) == set(PUBLISHED)
    for tx in transactions:
        if tx.transaction_type != "sale" and tx.property_type != "officetel":
            assert tx.source != "rtms_official"


def test_every_cohort_has_data_in_the_default_window(transactions: list[Transaction]) -> None:
    window = set(resolve_pulse_period("last_6m", DEMO_LATEST).months)
    counts = Counter(
        (t.sigungu_code, t.property_type, t.transaction_type)
        for t in transactions
        if t.period_month in window
    )
    for code in demo_districts():
        for combo in PUBLISHED:
            assert counts[(code, *combo)] >= 2, (code, combo)


def test_gangnam_office_sales_are_plentiful(transactions: list[Transaction]) -> None:
    per_quarter = Counter(
        quarter_of(Month.of(t.deal_date)).label
        for t in transactions
        if (t.sigungu_code, t.property_type, t.transaction_type) == ("11680", "office", "sale")
    )
    assert len(per_quarter) == 20
    assert min(per_quarter.values()) >= 24


def test_seoul_dongs_are_real_names(transactions: list[Transaction]) -> None:
    gangnam = {t.dong for t in transactions if t.sigungu_code == "11680"}
    assert gangnam == set(SEOUL_DONGS["11680"])
    assert "역삼동" in gangnam
    assert all(t.dong for t in transactions)


def test_amounts_are_plausible(transactions: list[Transaction]) -> None:
    for tx in transactions:
        assert tx.price_krw % 10_000 == 0 and tx.price_krw > 0
        assert tx.area_m2 is not None and 10 <= tx.area_m2 <= 50_000
        if tx.transaction_type == "monthly_lease":
            assert tx.monthly_rent_krw is not None
            assert tx.monthly_rent_krw < tx.price_krw
    officetel = sorted(
        t.price_krw
        for t in transactions
        if (t.sigungu_code, t.property_type, t.transaction_type) == ("11680", "officetel", "sale")
    )
    median = officetel[len(officetel) // 2]
    assert 150_000_000 <= median <= 800_000_000  # a Gangnam officetel costs hundreds of millions


def test_indices_cover_every_metric(indices: list[IndexObservation]) -> None:
    districts = set(demo_districts())
    quarters = {o.period for o in indices}
    assert len(quarters) == 20
    assert (min(quarters), max(quarters)) == ("2021-Q4", "2026-Q3")
    cells = Counter((o.sigungu_code, o.property_type, o.metric_type) for o in indices)
    assert {c[0] for c in cells} == districts
    metrics = set(METRIC_TYPES) - {"floor_utility_ratio"}  # a floor's: demo has no floors
    assert {c[2] for c in cells} == metrics
    assert set(cells.values()) == {20}
    assert len(indices) == len(districts) * 3 * len(metrics) * 20
    assert all(o.natural_key.startswith(DEMO_KEY_PREFIX) for o in indices)
    assert len({o.natural_key for o in indices}) == len(indices)


def test_index_values_are_plausible(indices: list[IndexObservation]) -> None:
    for o in indices:
        if o.metric_type == "vacancy_rate":
            assert 2.0 <= o.value_pct <= 15.0
        elif o.metric_type == "income_yield":
            assert 1.0 <= o.value_pct <= 1.5
        elif o.metric_type in ("rent_index", "sale_price_index"):
            assert 70.0 <= o.value_pct <= 140.0
    by_cell = {
        (o.sigungu_code, o.property_type, o.period, o.metric_type): o.value_pct for o in indices
    }
    for (code, ptype, period, metric), value in by_cell.items():
        if metric == "total_return":
            income = by_cell[(code, ptype, period, "income_yield")]
            capital = by_cell[(code, ptype, period, "capital_yield")]
            assert value == pytest.approx(income + capital, abs=0.011)
