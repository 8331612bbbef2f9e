"""Plans: what each tier allows, and the tier gates.

Gates compare tiers in the order ``starter < pro < team < enterprise``; ``internal``
passes every gate. The "highest plan" of a user with several consumers (usage endpoint,
cookie callers) follows a different priority, ``enterprise, team, pro, internal,
starter``, so an internal seat never hides a paying team account.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

import attrs

from svc_core.errors import TierRestricted
from svc_core.models import one_of

PLAN_NAMES: tuple[str, ...] = ("starter", "pro", "team", "enterprise", "internal")
"""Every plan name svc knows."""

TIER_ORDER: Mapping[str, int] = MappingProxyType(
    {"starter": 0, "pro": 1, "team": 2, "enterprise": 3}
)
"""Rank of each gated tier; ``internal`` is absent because it passes every gate."""

HIGHEST_PLAN_PRIORITY: tuple[str, ...] = ("enterprise", "team", "pro", "internal", "starter")
"""Which of a user's consumers speaks for them, best first."""


def _count(minimum: int) -> Callable[[object, attrs.Attribute[int], int], None]:
    def check(_: object, attribute: attrs.Attribute[int], value: int) -> None:
        if type(value) is not int or value < minimum:
            raise ValueError(f"{attribute.name} must be an int >= {minimum}: {value!r}")

    return check


@attrs.frozen(kw_only=True)
class Plan:
    """The limits of one plan: monthly quota, per-minute rate, API keys and seats."""

    name: str = attrs.field(validator=one_of(PLAN_NAMES))
    monthly_quota: int = attrs.field(validator=_count(0))
    rate_limit_per_minute: int = attrs.field(validator=_count(1))
    max_keys: int = attrs.field(validator=_count(1))
    seats: int = attrs.field(validator=_count(1))


DEFAULT_PLANS: Mapping[str, Plan] = MappingProxyType(
    {
        "starter": Plan(
            name="starter", monthly_quota=1_000, rate_limit_per_minute=60, max_keys=1, seats=1
        ),
        "pro": Plan(
            name="pro", monthly_quota=100_000, rate_limit_per_minute=120, max_keys=5, seats=3
        ),
        "team": Plan(
            name="team", monthly_quota=300_000, rate_limit_per_minute=200, max_keys=20, seats=10
        ),
        "enterprise": Plan(
            name="enterprise",
            monthly_quota=3_000_000,
            rate_limit_per_minute=1_000,
            max_keys=100,
            seats=100,
        ),
        "internal": Plan(
            name="internal",
            monthly_quota=100_000_000,
            rate_limit_per_minute=1_000,
            max_keys=100,
            seats=100,
        ),
    }
)
"""The DECISIONS plan table, keyed by name in the order of ``PLAN_NAMES``."""


def _known(name: str, what: str = "plan") -> str:
    if name not in PLAN_NAMES:
        raise ValueError(f"unknown {what} {name!r}; known plans: {', '.join(PLAN_NAMES)}")
    return name


def meets_tier(plan: str, required: str) -> bool:
    """True when ``plan`` may use a feature gated at tier ``required``."""
    _known(plan)
    if required not in TIER_ORDER:
        raise ValueError(f"required tier must be one of {', '.join(TIER_ORDER)}: {required!r}")
    if plan == "internal":
        return True
    return TIER_ORDER[plan] >= TIER_ORDER[required]


def require_tier(plan: str, required: str, upgrade_url: str) -> None:
    """Raise ``TierRestricted`` (403) with SPEC's tier fields unless ``plan`` meets ``required``."""
    if meets_tier(plan, required):
        return
    raise TierRestricted(
        f"This needs the {required} plan or higher; you are on {plan}.",
        hint=f"Upgrade at {upgrade_url}.",
        extra={"current_tier": plan, "required_tier": required, "upgrade_url": upgrade_url},
    )


def highest_plan(names: Iterable[str]) -> str:
    """The plan that speaks for a user holding all ``names``, by ``HIGHEST_PLAN_PRIORITY``."""
    present = {_known(name) for name in names}
    if not present:
        raise ValueError("highest_plan needs at least one plan name")
    return next(name for name in HIGHEST_PLAN_PRIORITY if name in present)


def effective_limits(
    plan_name: str,
    monthly_quota: int | None,
    rate_limit: int | None,
    *,
    plans: Mapping[str, Plan] = DEFAULT_PLANS,
) -> Plan:
    """The plan's limits with a consumer's overrides applied (None keeps the plan's value)."""
    plan = plans.get(_known(plan_name))
    if plan is None:
        raise ValueError(f"the plan table has no {plan_name!r} plan")
    return attrs.evolve(
        plan,
        monthly_quota=plan.monthly_quota if monthly_quota is None else monthly_quota,
        rate_limit_per_minute=plan.rate_limit_per_minute if rate_limit is None else rate_limit,
    )
