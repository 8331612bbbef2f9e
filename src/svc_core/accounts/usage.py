"""The usage summary (SPEC "Usage summary"): the ``data`` of ``GET /api/auth/me/usage``.

Built from plain values: the plan and its effective limits, this month's count of
successful calls and its counts per day, the caller's role, the clock, and the
consumer's trial and subscription state. Payment processor internals never enter it.
``role``, ``daily`` and ``keys`` (calls per API key) are additions to SPEC's fields
(the dashboard's needs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import attrs

from svc_core.accounts import quota
from svc_core.accounts.bodies import ROLES
from svc_core.accounts.plans import Plan
from svc_core.instants import utc
from svc_core.webhooks.events import SUBSCRIPTION_STATUSES

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
class DayUsage:
    """One UTC day of the month: successful counted calls of live keys and of test keys."""

    date: str
    calls: int
    test_calls: int


@attrs.frozen(kw_only=True)
class KeyUsage:
    """One API key's successful counted calls this month, with what names it."""

    key_id: str
    prefix: str
    label: str
    mode: str
    status: str
    calls: int


@attrs.frozen(kw_only=True)
class UsageSummary:
    """The ``data`` of ``GET /api/auth/me/usage`` (attribute order is JSON order; times
    are aware datetimes, written as ISO-8601 at the edge)."""

    plan: str
    limits: Limits
    current_period: CurrentPeriod
    trial: TrialSummary | None
    subscription: Subscription
    role: str
    daily: tuple[DayUsage, ...]
    keys: tuple[KeyUsage, ...] = ()


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


def daily_usage(counts: Mapping[tuple[str, str], int], now: datetime) -> tuple[DayUsage, ...]:
    """Every UTC day of ``now``'s month from the 1st through today, oldest first.

    ``counts`` maps (``YYYY-MM-DD``, mode) to successful calls; a day without calls is
    zeros, and counts of other days or months are ignored.
    """
    month = quota.quota_month(now)
    today = now.astimezone(UTC).date()
    days = []
    day = month.starts_at.date()
    while day <= today:
        date = day.isoformat()
        calls, test_calls = counts.get((date, "live"), 0), counts.get((date, "test"), 0)
        if min(calls, test_calls) < 0:
            raise ValueError(f"negative count on {date}")
        days.append(DayUsage(date=date, calls=calls, test_calls=test_calls))
        day += timedelta(days=1)
    return tuple(days)


def usage_summary(
    plan: str,
    limits: Plan,
    used: int,
    now: datetime,
    trial: TrialState | None,
    subscription_status: str | None,
    *,
    role: str,
    daily: tuple[DayUsage, ...],
    keys: tuple[KeyUsage, ...] = (),
) -> UsageSummary:
    """The usage summary; ``used`` counts this month's successful live calls, ``role``
    is the caller's in the consumer and ``daily`` its calls per day (``daily_usage``)."""
    if type(used) is not int or used < 0:
        raise ValueError(f"used must be an int >= 0: {used!r}")
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
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
        role=role,
        daily=daily,
        keys=keys,
    )
