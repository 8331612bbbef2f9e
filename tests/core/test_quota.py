"""Quota months (UTC calendar months) and quota decisions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.accounts.quota import (
    QuotaMonth,
    percent_used,
    quota_month,
    remaining,
)

instants = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 11, 30), timezones=st.just(UTC)
)
zones = st.integers(min_value=-14 * 60, max_value=14 * 60).map(
    lambda m: timezone(timedelta(minutes=m))
)


def test_quota_month_example() -> None:
    month = quota_month(datetime(2026, 5, 17, 13, 45, tzinfo=UTC))
    assert month.month == "2026-05"
    assert month.starts_at == datetime(2026, 5, 1, tzinfo=UTC)
    assert month.resets_at == datetime(2026, 6, 1, tzinfo=UTC)


def test_december_resets_in_january() -> None:
    month = quota_month(datetime(2025, 12, 31, 23, 59, 59, 999999, tzinfo=UTC))
    assert month == QuotaMonth(
        month="2025-12",
        starts_at=datetime(2025, 12, 1, tzinfo=UTC),
        resets_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert quota_month(datetime(2026, 1, 1, tzinfo=UTC)).month == "2026-01"


def test_month_is_taken_in_utc_whatever_the_zone() -> None:
    seoul = timezone(timedelta(hours=9))
    # 08:00 on 1 January in Seoul is still 31 December in UTC.
    assert quota_month(datetime(2026, 1, 1, 8, 0, tzinfo=seoul)).month == "2025-12"
    assert quota_month(datetime(2026, 1, 1, 9, 0, tzinfo=seoul)).month == "2026-01"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        quota_month(datetime(2026, 1, 1))


@given(instants, zones)
def test_window_contains_now_and_resets_at_the_next_month_start(
    now: datetime, zone: timezone
) -> None:
    local = now.astimezone(zone)
    month = quota_month(local)
    assert month.starts_at <= now < month.resets_at
    assert month.starts_at.tzinfo is UTC and month.resets_at.tzinfo is UTC
    assert (month.starts_at.day, month.starts_at.hour, month.starts_at.minute) == (1, 0, 0)
    assert month.resets_at.day == 1 and month.resets_at.time() == datetime.min.time()
    assert month.month == month.starts_at.strftime("%Y-%m")
    # The next month begins exactly at resets_at, and its start is the previous reset.
    following = quota_month(month.resets_at)
    assert following.starts_at == month.resets_at
    assert quota_month(month.resets_at - timedelta(microseconds=1)) == month
    assert 28 <= (month.resets_at - month.starts_at).days <= 31


def test_remaining_and_exhaustion() -> None:
    assert remaining(0, 1000) == 1000
    assert remaining(999, 1000) == 1
    assert remaining(1000, 1000) == 0
    assert remaining(1500, 1000) == 0


@pytest.mark.parametrize(
    ("used", "quota", "percent"),
    [
        (0, 1000, 0.0),
        (1, 3, 33.33),
        (2, 3, 66.67),
        (1, 8, 12.5),
        (800, 1000, 80.0),
        (1000, 1000, 100.0),
        (5000, 1000, 100.0),
        (1, 3_000_000, 0.0),
        (5, 0, 100.0),
        (0, 0, 100.0),
    ],
)
def test_percent_used(used: int, quota: int, percent: float) -> None:
    assert percent_used(used, quota) == percent


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=10**9))
def test_percent_is_two_decimals_in_range_and_monotone(used: int, quota: int) -> None:
    p = percent_used(used, quota)
    assert 0.0 <= p <= 100.0
    assert round(p, 2) == p
    assert abs(p - min(100.0, used * 100 / quota)) <= 0.005 + 1e-9
    assert percent_used(used + 1, quota) >= p
    assert remaining(used, quota) + min(used, quota) == quota
