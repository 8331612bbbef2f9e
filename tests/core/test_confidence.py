"""The confidence ladder: each rule, its reason sentence, and the series minimum."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.cohorts.confidence import (
    LEVELS,
    MAX_SPREAD,
    MIN_SAMPLES,
    assess,
    cap_mixed,
    confidence_of,
    worst,
)
from svc_core.cohorts.stats import Sample, summarize


def test_sources_that_agree_are_high() -> None:
    c = assess(distinct_sources=2, relative_spread=0.081, sample_count=3)
    assert c.level == "high"
    assert c.factors.ladder_reason == "2 sources agree within 20% spread (8.1%)"
    assert c.factors.as_dict() == {
        "distinct_sources": 2,
        "relative_spread": 0.081,
        "sample_count": 3,
        "ladder_reason": "2 sources agree within 20% spread (8.1%)",
        "mixed_building_types": False,
        "contract_count": 3,
    }


def test_a_mix_of_building_types_is_never_high_and_says_so() -> None:
    high = assess(distinct_sources=2, relative_spread=0.081, sample_count=3)
    capped = cap_mixed(high)
    assert capped.level == "medium"
    assert capped.factors.mixed_building_types
    assert capped.factors.ladder_reason.endswith("mixes whole buildings and units: at most medium")
    low = assess(distinct_sources=1, relative_spread=0.0, sample_count=3)
    assert cap_mixed(low).level == "low"


@given(
    st.integers(min_value=1, max_value=4),
    st.floats(min_value=0, max_value=2, allow_nan=False),
    st.integers(min_value=4, max_value=50),
)
def test_capping_a_mix_never_raises_a_level(sources: int, spread: float, count: int) -> None:
    grade = assess(distinct_sources=sources, relative_spread=spread, sample_count=count)
    capped = cap_mixed(grade)
    assert capped.level != "high"
    assert LEVELS.index(capped.level) <= LEVELS.index(grade.level)


def test_spread_threshold_is_inclusive() -> None:
    assert assess(distinct_sources=3, relative_spread=0.20, sample_count=3).level == "high"
    assert assess(distinct_sources=3, relative_spread=0.2001, sample_count=3).level == "low"


def test_sources_that_disagree_fall_back_on_the_contract_count() -> None:
    many = assess(distinct_sources=2, relative_spread=0.34, sample_count=12)
    assert many.level == "medium"
    assert many.factors.ladder_reason == (
        "2 sources disagree beyond 20% spread (34.0%), 12 contracts >= 5"
    )
    few = assess(distinct_sources=2, relative_spread=0.34, sample_count=4)
    assert few.level == "low"
    assert "4 contracts < 5" in few.factors.ladder_reason
    bulk = assess(distinct_sources=2, relative_spread=0.34, sample_count=12, contract_count=4)
    assert bulk.level == "low"
    assert bulk.factors.ladder_reason.endswith("4 contracts (12 samples) < 5")


def test_single_source() -> None:
    c = assess(distinct_sources=1, relative_spread=0.0, sample_count=4)
    assert c.level == "low"
    assert c.factors.ladder_reason == "single source, 4 contracts < 5"
    c = assess(distinct_sources=1, relative_spread=0.0, sample_count=5)
    assert c.level == "medium"
    assert c.factors.ladder_reason == "single source, 5 contracts >= 5"


def test_the_ladder_counts_contracts_not_rows() -> None:
    """Yongsan office sales, 2025 Q2 (issue 28): 12 rows of one contract are not 12
    observations."""
    one = assess(distinct_sources=1, relative_spread=0.0, sample_count=12, contract_count=1)
    assert one.level == "low"
    assert one.factors.ladder_reason == "single source, 1 contract (12 samples) < 5"
    assert (one.factors.sample_count, one.factors.contract_count) == (12, 1)
    five = assess(distinct_sources=1, relative_spread=0.0, sample_count=17, contract_count=5)
    assert five.level == "medium"
    assert five.factors.ladder_reason == "single source, 5 contracts (17 samples) >= 5"


def test_invalid_factors() -> None:
    with pytest.raises(ValueError):
        assess(distinct_sources=0, relative_spread=0.0, sample_count=3)
    with pytest.raises(ValueError):
        assess(distinct_sources=1, relative_spread=-0.1, sample_count=3)
    with pytest.raises(ValueError):
        assess(distinct_sources=3, relative_spread=0.0, sample_count=2)
    with pytest.raises(ValueError):  # more contracts than rows
        assess(distinct_sources=1, relative_spread=0.0, sample_count=2, contract_count=3)
    with pytest.raises(ValueError):  # more sources than contracts
        assess(distinct_sources=2, relative_spread=0.0, sample_count=4, contract_count=1)


def test_confidence_of_cohort_stats() -> None:
    stats = summarize(
        [
            Sample(price=100, monthly_rent=None, area=None, source="rtms_official"),
            Sample(price=110, monthly_rent=None, area=None, source="public_assessment"),
        ]
    )
    assert stats is not None
    c = confidence_of(stats)
    assert c.level == "high"
    assert c.factors.distinct_sources == 2
    assert c.factors.sample_count == 2
    assert c.factors.contract_count == 2
    assert c.factors.relative_spread == stats.relative_spread


def test_confidence_of_a_cohort_of_bulk_contracts_counts_contracts() -> None:
    rows = [
        Sample(price=100, monthly_rent=None, area=None, source="rtms_official", contract_id=cid)
        for cid in ("a", "a", "a", "b", "b", "c")
    ]
    stats = summarize(rows)
    assert stats is not None
    c = confidence_of(stats)
    assert (c.factors.sample_count, c.factors.contract_count) == (6, 3)
    assert c.level == "low"
    assert c.factors.ladder_reason == "single source, 3 contracts (6 samples) < 5"


def test_worst() -> None:
    assert worst([]) is None
    assert worst([None, None]) is None
    assert worst(["high", "medium", "high"]) == "medium"
    assert worst(["high", None, "low"]) == "low"
    assert worst(["high"]) == "high"


levels = st.sampled_from(["low", "medium", "high"])


@given(st.lists(levels, min_size=1))
def test_worst_is_the_minimum(items: list[str]) -> None:
    order = ["low", "medium", "high"]
    assert worst(items) == min(items, key=order.index)


@given(st.integers(1, 5), st.floats(0.0, 3.0), st.integers(0, 1000), st.integers(0, 1000))
def test_ladder_properties(sources: int, spread: float, extra: int, units: int) -> None:
    count = sources + extra
    rows = count + units
    c = assess(
        distinct_sources=sources, relative_spread=spread, sample_count=rows, contract_count=count
    )
    assert c.level in ("low", "medium", "high")
    assert (c.level == "high") == (sources >= 2 and spread <= MAX_SPREAD)
    if c.level != "high":
        assert (c.level == "medium") == (count >= MIN_SAMPLES)
    if c.level == "high":
        assert f"({spread * 100:.1f}%)" in c.factors.ladder_reason
    else:
        assert f"{count} contract" in c.factors.ladder_reason
        assert (f"({rows} samples)" in c.factors.ladder_reason) == (rows != count)
    assert (c.factors.sample_count, c.factors.contract_count) == (rows, count)
    more = assess(distinct_sources=sources, relative_spread=spread, sample_count=count + 10)
    assert ["low", "medium", "high"].index(more.level) >= ["low", "medium", "high"].index(c.level)
    # more rows of the same contracts never raise a level
    same = assess(
        distinct_sources=sources,
        relative_spread=spread,
        sample_count=rows + 10,
        contract_count=count,
    )
    assert same.level == c.level
