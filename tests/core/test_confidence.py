"""The confidence ladder: each rule, its reason sentence, and the series minimum."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.confidence import (
    LEVELS,
    MAX_SPREAD,
    MIN_SAMPLES,
    assess,
    cap_mixed,
    confidence_of,
    worst,
)
from svc_core.stats import Sample, summarize


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


def test_sources_that_disagree_fall_back_on_sample_count() -> None:
    many = assess(distinct_sources=2, relative_spread=0.34, sample_count=12)
    assert many.level == "medium"
    assert many.factors.ladder_reason == (
        "2 sources disagree beyond 20% spread (34.0%), 12 samples >= 5"
    )
    few = assess(distinct_sources=2, relative_spread=0.34, sample_count=4)
    assert few.level == "low"
    assert "4 samples < 5" in few.factors.ladder_reason


def test_single_source() -> None:
    c = assess(distinct_sources=1, relative_spread=0.0, sample_count=4)
    assert c.level == "low"
    assert c.factors.ladder_reason == "single source, 4 samples < 5"
    c = assess(distinct_sources=1, relative_spread=0.0, sample_count=5)
    assert c.level == "medium"
    assert c.factors.ladder_reason == "single source, 5 samples >= 5"


def test_invalid_factors() -> None:
    with pytest.raises(ValueError):
        assess(distinct_sources=0, relative_spread=0.0, sample_count=3)
    with pytest.raises(ValueError):
        assess(distinct_sources=1, relative_spread=-0.1, sample_count=3)
    with pytest.raises(ValueError):
        assess(distinct_sources=3, relative_spread=0.0, sample_count=2)


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
    assert c.factors.relative_spread == stats.relative_spread


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


@given(st.integers(1, 5), st.floats(0.0, 3.0), st.integers(0, 1000))
def test_ladder_properties(sources: int, spread: float, extra: int) -> None:
    count = sources + extra
    c = assess(distinct_sources=sources, relative_spread=spread, sample_count=count)
    assert c.level in ("low", "medium", "high")
    assert (c.level == "high") == (sources >= 2 and spread <= MAX_SPREAD)
    if c.level != "high":
        assert (c.level == "medium") == (count >= MIN_SAMPLES)
    if c.level == "high":
        assert f"({spread * 100:.1f}%)" in c.factors.ladder_reason
    else:
        assert f"{count} samples" in c.factors.ladder_reason
    more = assess(distinct_sources=sources, relative_spread=spread, sample_count=count + 10)
    assert ["low", "medium", "high"].index(more.level) >= ["low", "medium", "high"].index(c.level)
