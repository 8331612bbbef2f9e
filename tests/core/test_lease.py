"""Lease sizing (``svc_core.accounts.lease``): a lease never holds the unit that reaches the cap
or a quota event's threshold, takes at most 1/64 of the room, and small room is never
leased."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from svc_core.accounts.lease import (
    LEASE_FLOOR,
    LEASE_MOST,
    LEASE_SHARE,
    RATE_LEASE_SECONDS,
    lease_size,
    quota_room,
    refill_due,
)
from svc_core.webhooks.events import QUOTA_KINDS, quota_threshold

rooms = st.integers(min_value=-10, max_value=10**9)


@given(rooms)
def test_a_lease_fits_its_room_and_takes_a_small_share(room: int) -> None:
    size = lease_size(room)
    if room <= 0:
        assert size == 0
    elif room < LEASE_FLOOR:
        assert size == 1  # the call's own unit: as without leases
    else:
        assert 1 < size <= min(LEASE_MOST, room // LEASE_SHARE)
        assert size * LEASE_SHARE <= room


@given(st.integers(min_value=1, max_value=10**9), st.data())
def test_leased_units_stop_one_short_of_the_next_threshold(limit: int, data: st.DataObject) -> None:
    committed = data.draw(st.integers(min_value=0, max_value=limit + 5))
    room = quota_room(committed, limit)
    thresholds = [quota_threshold(k, limit) for k in QUOTA_KINDS]
    if committed >= limit:
        assert room == 0
        return
    nearest = min(t for t in thresholds if t > committed)
    # every unit committed + 1 .. committed + room stays below it; the next one reaches it
    assert committed + room + 1 == nearest
    assert all(not committed < t <= committed + room for t in thresholds)


def test_plans_of_a_thousand_a_minute_never_lease() -> None:
    assert lease_size(1000) == 1 and lease_size(LEASE_FLOOR - 1) == 1
    assert lease_size(10**8) == LEASE_MOST


@given(
    st.integers(min_value=0, max_value=10**5),
    st.data(),
    st.none() | st.integers(min_value=-5000, max_value=5000),
)
def test_a_lease_asks_for_the_next_block_with_a_quarter_left(
    units: int, data: st.DataObject, ms_left: int | None
) -> None:
    """The next block is asked for once a quarter or less of the units (or of a rate
    lease's second) is left, never earlier, and never for a call's own single unit."""
    left = data.draw(st.integers(min_value=0, max_value=units))
    due = refill_due(units, left, ms_left)
    if units < 2:
        assert not due
        return
    short_of_units = 4 * left <= units
    short_of_time = ms_left is not None and 4 * ms_left <= RATE_LEASE_SECONDS * 1000
    assert due == (short_of_units or short_of_time)
    assert refill_due(units, 0, ms_left)  # a used-up lease always asks
    assert not refill_due(units, units, None) or units < 2  # a fresh one never does
