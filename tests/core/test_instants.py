"""svc_core.instants: one ISO-8601 format, Unix seconds and aware datetimes agree."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core import instants

MAX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z
SECONDS = st.integers(0, MAX_SECONDS)
ZONES = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(SECONDS)
def test_iso_then_parse_gives_back_the_same_second(seconds: int) -> None:
    text = instants.iso(seconds)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text)
    assert instants.unix(instants.parse_iso(text)) == seconds
    assert instants.iso(instants.parse_iso(text)) == text


@given(SECONDS, st.floats(0, 0.99), ZONES)
def test_every_form_of_one_instant_formats_alike(seconds: int, frac: float, zone: Any) -> None:
    """Unix int, float with a fraction and an aware datetime in any zone: one text."""
    text = instants.iso(seconds)
    moment = datetime.fromtimestamp(seconds, UTC)
    try:
        local = moment.astimezone(zone)
    except OverflowError:  # the zone would leave year 1..9999
        local = moment
    assert instants.iso(local) == text
    assert instants.iso(float(seconds) + frac) == text
    assert instants.unix(local) == seconds
    assert instants.utc(seconds).tzinfo is UTC


def test_fractions_are_floored_not_rounded() -> None:
    assert instants.iso(1_778_751_000.999) == "2026-05-14T09:30:00Z"
    assert (
        instants.unix(
            datetime(2026, 5, 14, 18, 30, 0, 999_999, tzinfo=timezone(timedelta(hours=9)))
        )
        == 1_778_751_000
    )


def test_none_passes_through_the_optional_forms() -> None:
    assert instants.iso_or_none(None) is None
    assert instants.utc_or_none(None) is None
    assert instants.iso_or_none(0) == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize(
    "bad",
    [datetime(2026, 5, 1), float("nan"), float("inf"), True, 1e20, "2026", None],
)
def test_naive_impossible_or_wrongly_typed_times_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError):
        instants.iso(bad)


def test_parse_refuses_text_without_a_zone_distinctly() -> None:
    with pytest.raises(instants.MissingZone):
        instants.parse_iso("2026-05-01T00:00:00")
    with pytest.raises(ValueError) as info:
        instants.parse_iso("first of May")
    assert not isinstance(info.value, instants.MissingZone)
    with pytest.raises(ValueError):
        instants.parse_iso("0001-01-01T00:00:00+01:00")  # before year 1 in UTC
    assert instants.parse_iso(" 2026-05-01T09:00:00+09:00 ") == datetime(2026, 5, 1, tzinfo=UTC)


@given(st.floats(0, MAX_SECONDS - 1, allow_nan=False))
def test_exact_keeps_the_fraction_of_a_second(seconds: float) -> None:
    exact = instants.utc_exact(seconds)
    assert exact.tzinfo is UTC
    # the fraction is kept to the microsecond (rounded, so at most up to the next second)
    assert 0 <= (exact - instants.utc(seconds)).total_seconds() <= 1
    assert abs(exact.timestamp() - seconds) < 1e-3 * max(1.0, seconds / 1e9)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), True, 1e20, "1"])
def test_exact_refuses_what_utc_refuses(bad: Any) -> None:
    with pytest.raises(ValueError):
        instants.utc_exact(bad)
