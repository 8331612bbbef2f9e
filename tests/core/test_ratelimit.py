"""Sliding-log rate limiting on an injected clock."""

from __future__ import annotations

import bisect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.accounts.ratelimit import Decision, decide, in_window


class Limiter:
    """The store's job in miniature: log admitted requests, ask decide() for each one."""

    def __init__(self, limit: int, window: float = 60.0) -> None:
        self.limit, self.window = limit, window
        self.log: list[float] = []

    def hit(self, now: float) -> Decision:
        live = [t for t in self.log if in_window(t, now, self.window)]
        decision = decide(live, now, self.limit, self.window)
        if decision.allowed:
            self.log.append(now)
        return decision


def test_boundary_at_59_61_and_after() -> None:
    limiter = Limiter(5)
    for _ in range(5):
        assert limiter.hit(59.0).allowed
    sixth = limiter.hit(59.0)
    assert not sixth.allowed
    assert sixth.remaining == 0
    assert sixth.retry_after == 60
    assert sixth.reset_at == 119.0
    # A fixed window would have reset at 60 s; the sliding log still refuses.
    at_61 = limiter.hit(61.0)
    assert not at_61.allowed
    assert at_61.retry_after == 58
    assert not limiter.hit(118.999).allowed
    # The five stamps at 59 leave the window at exactly 119.
    again = limiter.hit(119.0)
    assert again.allowed
    assert again.remaining == 4


def test_remaining_counts_down_and_never_goes_negative() -> None:
    limiter = Limiter(3)
    seen = [limiter.hit(10.0 + i * 0.1) for i in range(6)]
    assert [d.allowed for d in seen] == [True, True, True, False, False, False]
    assert [d.remaining for d in seen] == [2, 1, 0, 0, 0, 0]
    assert all(d.retry_after == 0 for d in seen[:3])
    assert all(d.retry_after >= 1 for d in seen[3:])


def test_spread_requests_slide_out_one_by_one() -> None:
    limiter = Limiter(2)
    assert limiter.hit(0.0).allowed
    assert limiter.hit(30.0).allowed
    refused = limiter.hit(45.0)
    assert not refused.allowed
    assert refused.retry_after == 15  # the stamp at 0 leaves at 60
    assert limiter.hit(60.0).allowed
    assert not limiter.hit(89.5).allowed
    assert limiter.hit(90.0).allowed


def test_retry_after_rounds_up_to_whole_seconds() -> None:
    d = decide([0.25], 10.0, 1)
    assert not d.allowed
    assert d.retry_after == 51  # 50.25 s -> 51
    assert d.reset_at == 60.25


def test_a_lowered_limit_waits_for_enough_stamps_to_leave() -> None:
    stamps = [0.0, 10.0, 20.0, 30.0]
    d = decide(stamps, 40.0, 2)
    assert not d.allowed
    # Three must leave so that fewer than two remain: the stamp at 20 leaves at 80.
    assert d.retry_after == 40
    assert decide([t for t in stamps if in_window(t, 80.0)], 80.0, 2).allowed


def test_stale_stamps_are_ignored_and_future_ones_count() -> None:
    assert decide([0.0] * 10, 60.0, 1).allowed
    assert not decide([61.0], 60.0, 1).allowed  # another process's clock runs ahead


def test_allowed_decision_reports_when_the_next_slot_frees() -> None:
    d = decide([5.0, 20.0], 30.0, 10)
    assert d.allowed
    assert d.remaining == 7
    assert d.reset_at == 65.0
    assert decide([], 30.0, 10).reset_at == 90.0


def test_window_helpers() -> None:
    assert in_window(90.001, 100.0, 10.0)
    assert not in_window(90.0, 100.0, 10.0)
    assert in_window(40.001, 100.0)
    assert not in_window(40.0, 100.0)


@pytest.mark.parametrize("limit", [0, -1, True, 1.5])
def test_limit_must_be_a_positive_int(limit: object) -> None:
    with pytest.raises(ValueError, match="limit"):
        decide([], 0.0, limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("window", [0.0, -1.0, float("inf"), float("nan")])
def test_window_must_be_positive_and_finite(window: float) -> None:
    with pytest.raises(ValueError, match="window"):
        decide([], 0.0, 1, window)


arrivals = st.lists(st.integers(min_value=0, max_value=300_000), max_size=120).map(
    lambda ms: sorted(m / 1000 for m in ms)
)


@settings(max_examples=200)
@given(arrivals, st.integers(min_value=1, max_value=8), st.sampled_from([1.0, 10.0, 60.0]))
def test_replay_never_admits_more_than_limit_in_any_window(
    times: list[float], limit: int, window: float
) -> None:
    limiter = Limiter(limit, window)
    for now in times:
        live = [t for t in limiter.log if in_window(t, now, window)]
        decision = limiter.hit(now)
        # Exact: admitted precisely when fewer than ``limit`` are in the window.
        assert decision.allowed is (len(live) < limit)
        assert 0 <= decision.remaining < limit
        assert (decision.retry_after == 0) is decision.allowed
    admitted = limiter.log
    for i, t in enumerate(admitted):
        # admitted requests in (t - window, t]
        lo = bisect.bisect_right(admitted, t - window)
        assert i + 1 - lo <= limit


@settings(max_examples=200)
@given(arrivals, st.integers(min_value=1, max_value=5))
def test_retry_after_is_enough_and_not_more_than_needed(times: list[float], limit: int) -> None:
    limiter = Limiter(limit)
    for now in times:
        decision = limiter.hit(now)
        if decision.allowed:
            continue
        live = [t for t in limiter.log if in_window(t, now)]
        later = [t for t in live if in_window(t, now + decision.retry_after)]
        assert decide(later, now + decision.retry_after, limit).allowed
        if decision.retry_after > 1:
            sooner = now + decision.retry_after - 1
            assert not decide([t for t in live if in_window(t, sooner)], sooner, limit).allowed
