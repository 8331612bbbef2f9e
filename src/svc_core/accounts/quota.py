"""Quota months and quota decisions.

The monthly quota runs on UTC calendar months: a month starts on the first day at 00:00
UTC and resets at the next month's start (December resets on 1 January of the next
year). The thresholds that fire quota events live in ``svc_core.webhooks.events``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal

import attrs


@attrs.frozen(kw_only=True)
class QuotaMonth:
    """One quota month: label ``YYYY-MM`` and its half-open UTC interval [starts_at, resets_at)."""

    month: str
    starts_at: datetime
    resets_at: datetime


def quota_month(now: datetime) -> QuotaMonth:
    """The quota month containing ``now`` (an aware datetime, any time zone)."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime, not a naive one")
    utc = now.astimezone(UTC)
    starts_at = datetime(utc.year, utc.month, 1, tzinfo=UTC)
    if utc.month == 12:
        resets_at = datetime(utc.year + 1, 1, 1, tzinfo=UTC)
    else:
        resets_at = datetime(utc.year, utc.month + 1, 1, tzinfo=UTC)
    return QuotaMonth(
        month=f"{utc.year:04d}-{utc.month:02d}", starts_at=starts_at, resets_at=resets_at
    )


def remaining(used: int, quota: int) -> int:
    """Calls left this month: quota minus used, never below 0."""
    return max(0, quota - used)


def percent_used(used: int, quota: int) -> float:
    """Share of the quota used, in percent, rounded half-up to 2 decimals, within 0..100.

    A quota of 0 counts as fully used.
    """
    if quota <= 0:
        return 100.0
    exact = Decimal(used) * 100 / Decimal(quota)
    clamped = min(Decimal(100), max(Decimal(0), exact))
    return float(clamped.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
