"""The usage summary (SPEC "Usage summary"): the ``data`` of ``GET /api/auth/me/usage``.

Built from plain values: the plan and its effective limits, this month's count of
successful calls, the clock, and the consumer's trial and subscription state. Payment
processor internals never enter it.
"""

from __future__ import annotations

import math
from datetime import datetime

import attrs

from svc_core import quota
from svc_core.events import SUBSCRIPTION_STATUSES
from svc_core.instants import utc
from svc_core.plans import Plan

_DAY_SECONDS = 86_400


def _aware(_: object, attribute: attrs.Attribute[datetime], value: datetime) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{attribute.name} must be an aware datetime (UTC)")


@attrs.frozen(kw_only=True)
class TrialState:
    """A consumer's trial: when it ends, and the permanent founding-member marker."""

    trial_ends_at: datetime = attrs.field(validator=_aware)
    founding_member: bool = attrs.field(validator=attrs.validators.instance_of(bool))


@attrs.frozen(kw_only=True)
class TrialSummary:
    """``trial`` of the summary: active while ``trial_ends_at`` is after now."""

    is_active: bool
    trial_ends_at: datetime
    days_remaining: int
    founding_member: bool


@attrs.frozen(kw_only=True)
class Limits:
    monthly_request_quota: int
    rate_limit_per_minute: int


@attrs.frozen(kw_only=True)
class CurrentPeriod:
    """This UTC quota month and the successful live calls counted in it."""

    month: str
    starts_at: datetime
    resets_at: datetime
    requests_used: int
    requests_remaining: int
    percent_used: float


@attrs.frozen(kw_only=True)
class Subscription:
    status: str | None


@attrs.frozen(kw_only=True)
class UsageSummary:
    """The ``data`` of ``GET /api/auth/me/usage`` (attribute order is JSON order; times
    are aware datetimes, written as ISO-8601 at the edge)."""

    plan: str
    limits: Limits
    current_period: CurrentPeriod
    trial: TrialSummary | None
    subscription: Subscription


def trial_summary(trial: TrialState, now: datetime) -> TrialSummary:
    """``trial``: active while ``trial_ends_at`` is after ``now``; days rounded up, 0 after."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime, not a naive one")
    left = (trial.trial_ends_at - now).total_seconds()
    return TrialSummary(
        is_active=left > 0,
        trial_ends_at=utc(trial.trial_ends_at),
        days_remaining=math.ceil(left / _DAY_SECONDS) if left > 0 else 0,
        founding_member=trial.founding_member,
    )


def usage_summary(
    plan: str,
    limits: Plan,
    used: int,
    now: datetime,
    trial: TrialState | None,
    subscription_status: str | None,
) -> UsageSummary:
    """The usage summary; ``used`` counts this month's successful live calls."""
    if type(used) is not int or used < 0:
        raise ValueError(f"used must be an int >= 0: {used!r}")
    if subscription_status is not None and subscription_status not in SUBSCRIPTION_STATUSES:
        raise ValueError(f"unknown subscription status {subscription_status!r}")
    month = quota.quota_month(now)
    limit = limits.monthly_quota
    return UsageSummary(
        plan=plan,
        limits=Limits(
            monthly_request_quota=limit, rate_limit_per_minute=limits.rate_limit_per_minute
        ),
        current_period=CurrentPeriod(
            month=month.month,
            starts_at=month.starts_at,
            resets_at=month.resets_at,
            requests_used=used,
            requests_remaining=quota.remaining(used, limit),
            percent_used=quota.percent_used(used, limit),
        ),
        trial=None if trial is None else trial_summary(trial, now),
        subscription=Subscription(status=subscription_status),
    )
