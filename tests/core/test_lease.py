"""Lease sizing (``svc_core.lease``): a lease never holds the unit that reaches the cap
or a quota event's threshold, takes at most 1/64 of the room, and small room is never
leased."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from svc_core.events import QUOTA_KINDS, quota_threshold
from svc_core.lease import LEASE_FLOOR, LEASE_MOST, LEASE_SHARE, lease_size, quota_room

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
