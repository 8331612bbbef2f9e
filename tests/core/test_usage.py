"""The usage summary object of GET /api/auth/me/usage, as served (through to_json)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.accounts.plans import DEFAULT_PLANS, effective_limits
from svc_core.accounts.usage import DayUsage, KeyUsage, TrialState, daily_usage
from svc_core.accounts.usage import trial_summary as typed_trial_summary
from svc_core.accounts.usage import usage_summary as typed_usage_summary
from svc_core.convert import to_json

NOW = datetime(2026, 5, 17, 12, 30, 5, tzinfo=UTC)


def test_full_summary_shape_and_values() -> None:
    trial = TrialState(trial_ends_at=NOW + timedelta(days=2, hours=1), founding_member=True)
    data = to_json(
        typed_usage_summary(
            plan="pro",
            limits=effective_limits("pro", None, None),
            used=80_000,
            now=NOW,
            trial=trial,
            subscription_status="trialing",
            role="admin",
            daily=daily_usage({("2026-05-02", "live"): 7}, NOW),
            keys=(
                KeyUsage(
                    key_id="k1",
                    prefix="svc_pk_live_ab12",
                    label="server",
                    mode="live",
                    status="active",
                    calls=5,
                ),
            ),
        )
    )
    assert data.pop("keys") == [
        {
            "key_id": "k1",
            "prefix": "svc_pk_live_ab12",
            "label": "server",
            "mode": "live",
            "status": "active",
            "calls": 5,
        }
    ]
    days = data.pop("daily")
    assert len(days) == 17 and days[0] == {"date": "2026-05-01", "calls": 0, "test_calls": 0}
    assert days[1] == {"date": "2026-05-02", "calls": 7, "test_calls": 0}
    assert data == {
        "plan": "pro",
        "limits": {"monthly_request_quota": 100_000, "rate_limit_per_minute": 120},
        "current_period": {
            "month": "2026-05",
            "starts_at": "2026-05-01T00:00:00Z",
            "resets_at": "2026-06-01T00:00:00Z",
            "requests_used": 80_000,
            "requests_remaining": 20_000,
            "percent_used": 80.0,
        },
        "trial": {
            "is_active": True,
            "trial_ends_at": "2026-05-19T13:30:05Z",
            "days_remaining": 3,
            "founding_member": True,
        },
        "subscription": {"status": "trialing"},
        "role": "admin",
    }


def test_starter_without_trial_or_subscription() -> None:
    data = to_json(usage_summary("starter", DEFAULT_PLANS["starter"], 0, NOW, None, None))
    assert data["trial"] is None
    assert data["subscription"] == {"status": None}
    assert data["current_period"]["requests_remaining"] == 1000
    assert data["current_period"]["percent_used"] == 0.0


def test_overrides_show_in_limits() -> None:
    limits = effective_limits("team", 500_000, 250)
    data = to_json(usage_summary("team", limits, 600_000, NOW, None, "active"))
    assert data["limits"] == {"monthly_request_quota": 500_000, "rate_limit_per_minute": 250}
    assert data["current_period"]["requests_remaining"] == 0
    assert data["current_period"]["percent_used"] == 100.0


def test_december_period_resets_in_january() -> None:
    at = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)
    period = to_json(usage_summary("pro", DEFAULT_PLANS["pro"], 1, at, None, None))[
        "current_period"
    ]
    assert (period["month"], period["resets_at"]) == ("2026-12", "2027-01-01T00:00:00Z")


@pytest.mark.parametrize(
    ("left", "active", "days"),
    [
        (timedelta(days=14), True, 14),
        (timedelta(days=13, seconds=1), True, 14),
        (timedelta(seconds=1), True, 1),
        (timedelta(0), False, 0),
        (timedelta(seconds=-1), False, 0),
        (timedelta(days=-30), False, 0),
    ],
)
def test_trial_days_round_up_and_stop_at_expiry(left: timedelta, active: bool, days: int) -> None:
    trial = TrialState(trial_ends_at=NOW + left, founding_member=False)
    summary = trial_summary(trial, NOW)
    assert summary["is_active"] is active
    assert summary["days_remaining"] == days
    assert summary["founding_member"] is False


@given(st.integers(min_value=-(10**8), max_value=10**8), st.booleans())
def test_trial_properties(seconds_left: int, founding: bool) -> None:
    ends = NOW + timedelta(seconds=seconds_left)
    trial = TrialState(trial_ends_at=ends, founding_member=founding)
    summary = trial_summary(trial, NOW)
    assert summary["is_active"] is (seconds_left > 0)
    assert summary["days_remaining"] >= 0
    if seconds_left > 0:
        assert (summary["days_remaining"] - 1) * 86_400 < seconds_left
        assert seconds_left <= summary["days_remaining"] * 86_400
    else:
        assert summary["days_remaining"] == 0
    assert summary["founding_member"] is founding
    assert summary["trial_ends_at"].endswith("Z")


@given(st.integers(min_value=0, max_value=10**9))
def test_used_and_remaining_add_up(used: int) -> None:
    period = to_json(usage_summary("pro", DEFAULT_PLANS["pro"], used, NOW, None, None))[
        "current_period"
    ]
    assert period["requests_used"] == used
    assert period["requests_remaining"] == max(0, 100_000 - used)
    assert 0 <= period["percent_used"] <= 100


def test_bad_inputs_are_programming_errors() -> None:
    with pytest.raises(ValueError, match="used"):
        usage_summary("pro", DEFAULT_PLANS["pro"], -1, NOW, None, None)
    with pytest.raises(ValueError, match="subscription"):
        usage_summary("pro", DEFAULT_PLANS["pro"], 0, NOW, None, "paused")
    with pytest.raises(ValueError, match="aware"):
        usage_summary("pro", DEFAULT_PLANS["pro"], 0, NOW.replace(tzinfo=None), None, None)
    with pytest.raises(ValueError, match="aware"):
        TrialState(trial_ends_at=NOW.replace(tzinfo=None), founding_member=False)
    with pytest.raises(ValueError, match="role"):
        usage_summary("pro", DEFAULT_PLANS["pro"], 0, NOW, None, None, role="viewer")
    with pytest.raises(ValueError, match="negative"):
        daily_usage({("2026-05-03", "test"): -1}, NOW)


def test_daily_runs_from_the_first_through_today_with_both_modes() -> None:
    counts = {
        ("2026-05-01", "live"): 3,
        ("2026-05-01", "test"): 2,
        ("2026-05-17", "test"): 1,
        ("2026-04-30", "live"): 9,  # another month: ignored
        ("2026-05-18", "live"): 9,  # after today: cannot exist yet, ignored
    }
    days = daily_usage(counts, NOW)
    assert [d.date for d in days] == [f"2026-05-{n:02d}" for n in range(1, 18)]
    assert days[0] == DayUsage(date="2026-05-01", calls=3, test_calls=2)
    assert days[-1] == DayUsage(date="2026-05-17", calls=0, test_calls=1)
    assert sum(d.calls for d in days) == 3 and sum(d.test_calls for d in days) == 3


def test_daily_on_the_first_and_last_day_of_a_month() -> None:
    assert [d.date for d in daily_usage({}, datetime(2026, 3, 1, 0, 0, tzinfo=UTC))] == [
        "2026-03-01"
    ]
    late = datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert len(daily_usage({}, late)) == 31
    # An aware time in another zone is read in UTC: 1 March 08:00 in Seoul is 28 February.
    seoul = datetime(2026, 3, 1, 8, 0, tzinfo=UTC) + timedelta(hours=-9)
    assert daily_usage({}, seoul.astimezone(timezone(timedelta(hours=9))))[-1].date == (
        "2026-02-28"
    )


def usage_summary(*args: Any, role: str = "owner") -> Any:
    """The summary with the additions to SPEC (role, daily) that these tests do not vary."""
    return typed_usage_summary(*args, role=role, daily=())


def trial_summary(trial: TrialState, now: datetime) -> Any:
    """The trial object as served."""
    return to_json(typed_trial_summary(trial, now))
