"""Quota holds in the store (``store/holds.py``), on both backends: the cap is exact
whatever order calls hold, settle, fail and lapse in, and a hold that lapsed before its
call settled never lets settled units pass the quota."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc_server.store import Store
from svc_server.store.holds import HoldState, UsageClaim

MONTH, DAY = "2026-09", "2026-09-21"
T0 = 1_790_000_000


def claim(consumer_id: str, hold_id: str, limit: int, now: int, seconds: int = 10) -> UsageClaim:
    return UsageClaim(
        consumer_id=consumer_id,
        month=MONTH,
        mode="live",
        limit=limit,
        hold_id=hold_id,
        now=now,
        expires_at=now + seconds,
    )


def take(store: Store, c: UsageClaim) -> HoldState:
    return store.holds.try_hold(c)


def keep(store: Store, c: UsageClaim, now: int) -> int | None:
    with store.db.transaction() as tx:
        return store.holds.keep_hold(tx, c, DAY, now)


def release(store: Store, c: UsageClaim) -> int:
    with store.db.transaction() as tx:
        return store.holds.release_hold(tx, c)


def test_a_lapsed_hold_whose_unit_went_to_another_call_is_not_counted(store: Store) -> None:
    first = claim("c1", "first", 1, T0)
    assert take(store, first).taken
    assert not take(store, claim("c1", "early", 1, T0 + 5)).taken  # still held
    second = claim("c1", "second", 1, T0 + 11)  # the first hold lapsed at T0 + 10
    assert take(store, second).taken
    assert keep(store, first, T0 + 12) is None  # the unit is the second call's now
    assert keep(store, second, T0 + 12) == 1
    assert store.accounts.usage("c1", MONTH) == 1
    assert take(store, claim("c1", "third", 1, T0 + 13)).exhausted


def test_a_lapsed_hold_keeps_its_unit_while_one_is_free(store: Store) -> None:
    first = claim("c2", "first", 2, T0)
    assert take(store, first).taken
    assert keep(store, first, T0 + 30) == 1  # lapsed, but nobody needed the unit
    assert store.holds.peek_hold(claim("c2", "x", 2, T0 + 30)) == HoldState(
        settled=1, held=0, limit=2, taken=False
    )


def test_release_gives_the_unit_back_and_reports_the_settled_count(store: Store) -> None:
    a, b = claim("c3", "a", 1, T0), claim("c3", "b", 1, T0)
    assert take(store, a).taken
    state = take(store, b)
    assert (state.taken, state.exhausted, state.held) == (False, False, 1)
    assert release(store, a) == 0
    assert take(store, b).taken


# a model of the rule ------------------------------------------------------------------------

OPS = st.lists(
    st.tuples(st.sampled_from(["take", "keep", "release", "wait"]), st.integers(0, 5)),
    max_size=40,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(0, 3), ops=OPS)
def test_holds_follow_the_rule_in_any_order(
    store: Store, limit: int, ops: list[tuple[str, int]]
) -> None:
    """Against a plain model: a hold is taken iff settled + live holds < quota; 402
    (exhausted) iff settled >= quota; settled never passes the quota; a success whose
    hold lapsed and was given away is not counted."""
    consumer = uuid.uuid4().hex
    now = T0
    running: dict[str, UsageClaim] = {}  # calls that took a hold and have not settled
    settled = 0
    for op, n in ops:
        live = {h for h, c in running.items() if c.expires_at > now}
        if op == "wait":
            now += n * 3  # holds last 10 s
            continue
        if op == "take":
            c = claim(consumer, uuid.uuid4().hex, limit, now)
            state = take(store, c)
            assert (state.settled, state.held - state.taken) == (settled, len(live))
            assert state.taken == (settled + len(live) < limit)
            assert state.exhausted == (not state.taken and settled >= limit)
            if state.taken:
                running[c.hold_id] = c
            continue
        if not running:
            continue
        c = running.pop(sorted(running)[n % len(running)])
        if op == "release":
            assert release(store, c) == settled
            continue
        others = len(live - {c.hold_id})
        counted = keep(store, c, now)
        if c.expires_at > now or settled + others < limit:
            settled += 1
            assert counted == settled
        else:
            assert counted is None  # its unit went to another call
        assert settled <= limit
    state = store.holds.peek_hold(claim(consumer, "peek", limit, now))
    assert (state.settled, state.held) == (
        settled,
        len([c for c in running.values() if c.expires_at > now]),
    )
