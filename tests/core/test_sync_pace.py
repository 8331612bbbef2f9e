"""Pacing of a sync's calls and the reading of per-second refusals (``svc_core.sync.rtms``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.sync.pace import SLOWEST_INTERVAL, Pace
from svc_core.sync.rtms import PER_SECOND_MARKERS, classify_gateway

PER_SECOND = "LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR"


@pytest.mark.parametrize(
    ("code", "auth", "err"),
    [
        ("23", PER_SECOND, "SERVICE ERROR"),
        ("22", PER_SECOND, "SERVICE ERROR"),
        ("99", "초당 서비스 요청제한 횟수 초과", PER_SECOND),
        ("030", "", PER_SECOND),
        ("34", "TOO_MANY_REQUEST_ERROR", ""),
    ],
)
def test_a_per_second_refusal_is_read_from_the_message_before_the_code(
    code: str, auth: str, err: str
) -> None:
    assert classify_gateway(code, auth, err) == "pace"


def test_the_daily_limit_and_a_disabled_key_keep_their_verdicts() -> None:
    assert classify_gateway("22", "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR") == "limit"
    assert classify_gateway("22", "", "SERVICE ERROR") == "limit"
    assert classify_gateway("21", "TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR") == "suspended"
    assert classify_gateway("", "TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR") == "suspended"
    assert classify_gateway("23") == "pace"
    assert classify_gateway("99", "UNKNOWN_ERROR", "SERVICE ERROR") == "fail"


@given(
    code=st.text(max_size=4),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
    marker=st.sampled_from(PER_SECOND_MARKERS),
    where=st.booleans(),
)
def test_any_message_with_a_per_second_marker_paces(
    code: str, before: str, after: str, marker: str, where: bool
) -> None:
    text = before + marker + after
    assert classify_gateway(code, *((text, "") if where else ("", text))) == "pace"


@given(
    rate=st.floats(0.1, 1000),
    gaps=st.lists(st.floats(0, 3), min_size=1, max_size=30),
    refusals=st.lists(st.booleans(), min_size=1, max_size=30),
)
def test_paced_calls_are_never_closer_than_the_interval(
    rate: float, gaps: list[float], refusals: list[bool]
) -> None:
    pace = Pace.of_rate(rate)
    now, made = 0.0, []
    for gap, refused in zip(gaps, refusals, strict=False):
        now += gap  # the caller's own work between calls
        wait = pace.wait(now)
        assert wait >= 0
        now += wait
        if made:
            assert now - made[-1] >= pace.interval - 1e-9
        made.append(now)
        pace = pace.called(now)
        before = pace.interval
        if refused:
            pace = pace.slower()
            assert before <= pace.interval <= max(before, SLOWEST_INTERVAL)


def test_a_rate_must_be_positive_and_finite() -> None:
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            Pace.of_rate(bad)
    assert Pace.of_rate(4).interval == 0.25
    assert Pace(0.25).wait(100.0) == 0.0
