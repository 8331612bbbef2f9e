"""The change of a median and its interval (issue 46, item 2), pinned on random cohorts.

The binomial tail is recomputed here with ``math.comb`` and ``fractions`` (not svc's
loop), the type-7 median with ``statistics``.
"""

from __future__ import annotations

import math
import random
import statistics
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.realestate.median_change import (
    ALONE_ALPHA,
    MIN_INTERVAL_CONTRACTS,
    NO_VALUE,
    SIDE_ALPHA,
    TOO_FEW_CONTRACTS,
    Side,
    change_between,
    median_bounds,
    median_interval,
    order_rank,
)

PRICES = st.lists(st.integers(min_value=1, max_value=10**11), min_size=2, max_size=80)


def tail(n: int, k: int) -> Fraction:
    """2·P(Binomial(n, ½) ≤ k − 1), the miss probability of [x(k), x(n+1−k)]."""
    return 2 * Fraction(sum(math.comb(n, i) for i in range(k)), 2**n)


def side(values: list[int]) -> Side:
    ordered = sorted(values)
    median = round(Fraction(statistics.median(ordered)))
    return Side(median, median_bounds(ordered), len(values))


@given(st.integers(min_value=1, max_value=400), st.sampled_from([SIDE_ALPHA, ALONE_ALPHA]))
def test_the_rank_is_the_largest_whose_exact_miss_probability_is_within_alpha(
    n: int, alpha: Fraction
) -> None:
    rank = order_rank(n, alpha)
    if rank is None:
        assert tail(n, 1) > alpha
        return
    assert 1 <= rank <= (n + 1) // 2
    assert tail(n, rank) <= alpha
    assert rank == (n + 1) // 2 or tail(n, rank + 1) > alpha


def test_seven_contracts_are_the_fewest_with_an_interval() -> None:
    assert order_rank(MIN_INTERVAL_CONTRACTS - 1, SIDE_ALPHA) is None
    assert order_rank(MIN_INTERVAL_CONTRACTS, SIDE_ALPHA) == 1


@given(PRICES)
def test_a_median_lies_in_its_interval(values: list[int]) -> None:
    ordered = sorted(values)
    median = round(Fraction(statistics.median(ordered)))
    bounds = median_bounds(ordered)
    for interval in (bounds.paired, bounds.alone):
        if interval is not None:
            assert interval.low <= median <= interval.high
    if bounds.paired is not None and bounds.alone is not None:  # 97.5 % holds 95 %
        assert bounds.paired.low <= bounds.alone.low <= bounds.alone.high <= bounds.paired.high


@given(PRICES, st.integers(min_value=2, max_value=5))
def test_an_interval_narrows_as_the_same_values_get_more_contracts(
    values: list[int], copies: int
) -> None:
    """The same distribution over ``copies`` times the contracts: the interval is within
    the one of fewer contracts (fewer contracts, wider interval)."""
    few = median_interval(sorted(values), SIDE_ALPHA)
    many = median_interval(sorted(values * copies), SIDE_ALPHA)
    if few is None:
        return
    assert many is not None
    assert few.low <= many.low <= many.high <= few.high


@given(PRICES, PRICES, st.randoms(use_true_random=False))
def test_a_change_is_the_ratio_of_the_medians_and_its_interval_holds_it(
    now: list[int], then: list[int], rng: random.Random
) -> None:
    this, base = side(now), side(then)
    change = change_between("2024-06", this, base)
    assert change.reason is None
    assert change.change_pct == float(round((Fraction(this.value or 0, base.value) - 1) * 100, 2))
    assert (change.contract_count, change.base_contract_count) == (len(now), len(then))
    if min(len(now), len(then)) < MIN_INTERVAL_CONTRACTS:
        assert change.interval_reason == TOO_FEW_CONTRACTS
        assert (change.interval_low_pct, change.interval_high_pct) == (None, None)
        assert change.significant is False
    else:
        low, high = change.interval_low_pct, change.interval_high_pct
        assert low is not None and high is not None
        assert low <= change.change_pct <= high
        assert change.significant == (low > 0 or high < 0)
    # reproducible: the same cohorts in any order give the same figures
    rng.shuffle(now)
    rng.shuffle(then)
    assert change_between("2024-06", side(now), side(then)) == change


@given(PRICES, PRICES, st.integers(min_value=2, max_value=4))
def test_a_change_interval_widens_when_contracts_are_fewer(
    now: list[int], then: list[int], copies: int
) -> None:
    few = change_between(None, side(now), side(then))
    many = change_between(None, side(now * copies), side(then * copies))
    if few.interval_low_pct is None or few.interval_high_pct is None:
        return
    assert many.interval_low_pct is not None and many.interval_high_pct is not None
    assert few.interval_low_pct <= many.interval_low_pct
    assert many.interval_high_pct <= few.interval_high_pct


@settings(max_examples=50)
@given(st.integers(min_value=7, max_value=60), st.integers(min_value=1, max_value=10**9))
def test_a_cohort_against_itself_is_no_significant_change(n: int, seed: int) -> None:
    values = random.Random(seed).sample(range(1, 10**10), n)
    change = change_between("2025-05", side(values), side(values))
    assert change.change_pct == 0.0
    assert change.interval_low_pct is not None and change.interval_low_pct <= 0
    assert change.interval_high_pct is not None and change.interval_high_pct >= 0
    assert change.significant is False


def test_a_clear_doubling_of_many_contracts_is_significant() -> None:
    then = [100_000_000 + 1_000 * i for i in range(40)]
    now = [2 * v for v in then]
    change = change_between("2024-Q2", side(now), side(then))
    assert change.change_pct == 100.0
    assert change.interval_low_pct is not None and change.interval_low_pct > 0
    assert change.significant is True


def test_a_side_without_the_median_has_no_change() -> None:
    change = change_between("2025-05", Side(None, median_bounds([]), 3), side([1, 2, 3]))
    assert (change.change_pct, change.reason, change.significant) == (None, NO_VALUE, False)
