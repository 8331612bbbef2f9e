"""Plans: the DECISIONS plan table, tier gates, highest plan and overrides."""

from __future__ import annotations

import random

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.accounts.plans import (
    DEFAULT_PLANS,
    PLAN_NAMES,
    TIER_ORDER,
    Plan,
    effective_limits,
    highest_plan,
    meets_tier,
    require_tier,
)
from svc_core.errors import TierRestricted

plan_names = st.sampled_from(PLAN_NAMES)
tiers = st.sampled_from(tuple(TIER_ORDER))


def test_default_table_matches_decisions() -> None:
    rows = {
        name: (p.monthly_quota, p.rate_limit_per_minute, p.max_keys, p.seats)
        for name, p in DEFAULT_PLANS.items()
    }
    assert rows == {
        "starter": (1_000, 60, 1, 1),
        "pro": (100_000, 120, 5, 3),
        "team": (300_000, 200, 20, 10),
        "enterprise": (3_000_000, 1_000, 100, 100),
        "internal": (100_000_000, 1_000, 100, 100),
    }
    assert all(p.name == name for name, p in DEFAULT_PLANS.items())


def test_default_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        DEFAULT_PLANS["starter"] = DEFAULT_PLANS["pro"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("plan", "allowed"),
    [("starter", False), ("pro", True), ("team", True), ("enterprise", True), ("internal", True)],
)
def test_dong_gate_needs_pro(plan: str, allowed: bool) -> None:
    assert meets_tier(plan, "pro") is allowed


@given(tiers, tiers)
def test_gates_follow_tier_order(plan: str, required: str) -> None:
    assert meets_tier(plan, required) is (TIER_ORDER[plan] >= TIER_ORDER[required])


@given(tiers)
def test_internal_passes_every_gate(required: str) -> None:
    assert meets_tier("internal", required)


def test_unknown_names_are_programming_errors() -> None:
    with pytest.raises(ValueError, match="unknown plan"):
        meets_tier("gold", "pro")
    with pytest.raises(ValueError, match="required tier"):
        meets_tier("pro", "internal")


def test_require_tier_raises_403_with_spec_fields() -> None:
    require_tier("pro", "pro", "https://svc.example/pricing")  # no error
    with pytest.raises(TierRestricted) as info:
        require_tier("starter", "pro", "https://svc.example/pricing")
    err = info.value
    assert err.status == 403
    assert err.code == "TIER_RESTRICTED"
    assert err.extra == {
        "current_tier": "starter",
        "required_tier": "pro",
        "upgrade_url": "https://svc.example/pricing",
    }
    body = err.body("req_x")["error"]
    assert body["required_tier"] == "pro"
    assert body["current_tier"] == "starter"


@pytest.mark.parametrize(
    ("names", "best"),
    [
        (["starter", "internal"], "internal"),
        (["internal", "pro"], "pro"),
        (["pro", "team", "starter"], "team"),
        (["team", "enterprise"], "enterprise"),
        (["starter"], "starter"),
        (["starter", "starter"], "starter"),
    ],
)
def test_highest_plan_priority(names: list[str], best: str) -> None:
    assert highest_plan(names) == best


@given(st.lists(plan_names, min_size=1), st.randoms())
def test_highest_plan_is_one_of_them_and_order_free(names: list[str], rnd: random.Random) -> None:
    best = highest_plan(names)
    assert best in names
    shuffled = list(names)
    rnd.shuffle(shuffled)
    assert highest_plan(shuffled) == best
    assert highest_plan([*names, "starter"]) == best


def test_highest_plan_needs_a_name() -> None:
    with pytest.raises(ValueError):
        highest_plan([])
    with pytest.raises(ValueError):
        highest_plan(["pro", "platinum"])


def test_effective_limits_without_overrides_is_the_plan() -> None:
    assert effective_limits("team", None, None) == DEFAULT_PLANS["team"]


@given(
    plan_names,
    st.none() | st.integers(min_value=0, max_value=10**9),
    st.none() | st.integers(min_value=1, max_value=10**6),
)
def test_overrides_replace_only_what_they_name(
    name: str, quota: int | None, rate: int | None
) -> None:
    base = DEFAULT_PLANS[name]
    limits = effective_limits(name, quota, rate)
    assert limits.monthly_quota == (base.monthly_quota if quota is None else quota)
    assert limits.rate_limit_per_minute == (base.rate_limit_per_minute if rate is None else rate)
    assert (limits.name, limits.max_keys, limits.seats) == (base.name, base.max_keys, base.seats)


def test_bad_overrides_are_refused() -> None:
    with pytest.raises(ValueError, match="rate_limit_per_minute"):
        effective_limits("pro", None, 0)
    with pytest.raises(ValueError, match="monthly_quota"):
        effective_limits("pro", -1, None)
    with pytest.raises(ValueError, match="monthly_quota"):
        effective_limits("pro", True, None)  # a bool is not a count


def test_a_configured_table_can_replace_the_defaults() -> None:
    custom = dict(DEFAULT_PLANS)
    custom["pro"] = attrs.evolve(DEFAULT_PLANS["pro"], max_keys=7)
    assert effective_limits("pro", None, None, plans=custom).max_keys == 7
    assert effective_limits("pro", None, None).max_keys == 5


def test_plan_validates_its_fields() -> None:
    with pytest.raises(ValueError):
        Plan(name="gold", monthly_quota=1, rate_limit_per_minute=1, max_keys=1, seats=1)
    with pytest.raises(ValueError):
        Plan(name="pro", monthly_quota=1, rate_limit_per_minute=1, max_keys=0, seats=1)
