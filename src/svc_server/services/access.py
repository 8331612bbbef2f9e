"""Access to the data API: who is calling, may they call now, and counting what succeeded.

The order for every ``/api/v1/*`` request: authenticate (401, 403 IP), rate limit (429),
hold one unit of monthly quota (402, or 503 while the last units are in flight), run
the handler, then settle: a 2xx turns the hold into a settled unit and counts its UTC day
(firing quota events on the first success at or past a threshold), anything else gives
the hold back. Holding before the handler keeps the quota exact under concurrency: a hold
is taken only while settled + live holds < quota, under the account's lock. Only settled
units make a 402: when the last units are held by calls still in flight, the caller
waits for them to settle (``Hold.wait``) and gets ``503 QUOTA_IN_FLIGHT`` if they do not
in time, never a 402 a failing call could have caused (issue 15, item 8).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import attrs

from svc_core.accounts import quota, ratelimit
from svc_core.caller import Caller
from svc_core.errors import (
    QuotaExceeded,
    QuotaInFlight,
    RateLimited,
    SvcError,
)
from svc_core.instants import iso, utc
from svc_server.services.leases import Ask, LeaseBook, QuotaLease
from svc_server.services.quota_events import fire_thresholds
from svc_server.store import Store
from svc_server.store.holds import HoldState, UsageClaim

WINDOW_SECONDS = 60.0


@attrs.frozen(kw_only=True)
class Hold:
    """How long a call waits for quota units held by calls in flight (``wait_ms``, in
    polls ``poll_ms`` apart), and how long a hold lasts (``seconds``) if its process
    dies before settling it."""

    wait_ms: int = 2000
    poll_ms: int = 50
    seconds: int = 300


@attrs.frozen(kw_only=True)
class Reservation:
    """What a counted call settles: its month, the UTC day it arrived on and its key
    mode and, for a call with a quota, the hold it took (``claim``)."""

    consumer_id: str
    month: str
    day: str
    mode: str
    claim: UsageClaim | None = None
    lease: QuotaLease | None = None
    """The process lease the call's unit came from (settled in memory)."""


@attrs.frozen(kw_only=True)
class Admitted:
    """A request admitted under the rate limit: the caller with ``rate_remaining`` set,
    what it will settle (if counted), or the quota's ``refusal`` (402, or 503 while the
    last units are in flight)."""

    caller: Caller
    reservation: Reservation | None
    refusal: SvcError | None = None


def rate_bucket(caller: Caller) -> str:
    """Cookie callers are limited per user; keys per consumer and mode."""
    if caller.auth_method == "session":
        return f"user:{caller.user_id}"
    return f"consumer:{caller.consumer_id}:{caller.key_mode or 'live'}"


def admit(
    store: Store,
    caller: Caller,
    now: float,
    *,
    counted: bool,
    ids: Callable[[], str],
    hold: Hold = Hold(),
    sleep: Callable[[float], None] = time.sleep,
    book: LeaseBook | None = None,
    leased: Ask | None = None,
) -> Admitted | None:
    """Admit the request under the per-minute limit (429 with Retry-After) and, for a
    ``counted`` route with a quota, hold one unit of the month's quota (a hold's row is
    named by ``ids`` when the call writes one).

    Both happen in one write transaction. Cookie callers have no monthly quota and are
    not counted; test keys are counted under mode ``test`` and never limited. When
    settled calls used the quota up the answer is 402; when calls in flight hold the
    last units, the call polls (``hold``) until one is free (admitted), the settled
    count reaches the quota (402) or the wait ends (503 ``QUOTA_IN_FLIGHT``). A refused
    request still used its rate-limit slot, as before. With a ``book`` the call is
    admitted from this process's leases when they have room (``services.leases``).

    ``leased`` (``app.warm``, which must not wait on I/O): the call's ``leased_ask``,
    made earlier; the call is admitted from ``book``'s leases when they have room, else
    None with nothing taken.
    """
    limit = caller.rate_limit_per_minute
    counts = counted and caller.auth_method == "api_key"
    if leased is not None:
        room = None if book is None else book.try_admit(leased, int(now * 1000))
        return None if room is None else _admitted(caller, now, room[0], counts, room[1])
    claim = _claim(caller, now, counts, hold, "" if book is not None else ids())
    lease = None
    if book is None:
        admission = store.accounts.admit(
            rate_bucket(caller), int(now * 1000), int(WINDOW_SECONDS * 1000), limit, claim
        )
    else:
        granted = book.admit(_ask(caller, now, ids, claim))
        admission, lease, claim = granted.admission, granted.lease, granted.claim
    if not admission.admitted:
        # The blocker is the one stamp that must leave the window for a slot to open.
        blocker = (admission.blocker_ms or 0) / 1000
        decision = ratelimit.decide([blocker], now, 1, WINDOW_SECONDS)
        retry = max(1, decision.retry_after)
        raise RateLimited(
            f"More than {limit} requests per minute.",
            hint=f"Retry after {retry} seconds.",
            headers={
                "Retry-After": str(retry),
                "X-RateLimit-Limit": str(limit),
                "X-RateLimit-Remaining": "0",
            },
        )
    admitted = _admitted(caller, now, admission.in_window, counts, lease)
    reservation = admitted.reservation
    if reservation is None or lease is not None:
        return admitted
    if claim is None or admission.hold is None:
        return admitted
    state = admission.hold
    if not state.taken and not state.exhausted:
        state = _wait_for_unit(store, claim, hold, sleep)
    if state.taken:
        return attrs.evolve(admitted, reservation=attrs.evolve(reservation, claim=claim))
    caller = admitted.caller
    refusal = quota_exceeded(caller) if state.exhausted else quota_in_flight(caller)
    return Admitted(caller=caller, reservation=None, refusal=refusal)


def leased_ask(
    caller: Caller, now: float, *, counted: bool, ids: Callable[[], str], hold: Hold = Hold()
) -> Ask | None:
    """What ``admit`` asks the leases for a call of ``caller`` on a ``counted`` route,
    made once and used for every such call of the same UTC day (``admit``'s ``leased``:
    its own time is used only by writes, which take the clock's); None when such a call
    cannot be admitted from leases alone (a counted call without a quota, a test key's,
    writes its own count when it settles)."""
    counts = counted and caller.auth_method == "api_key"
    if counts and caller.monthly_quota is None:
        return None
    return _ask(caller, now, ids, _claim(caller, now, counts, hold, ""))


def _claim(caller: Caller, now: float, counts: bool, hold: Hold, hold_id: str) -> UsageClaim | None:
    """The quota unit a counted call with a quota holds (None without either)."""
    if not counts or caller.monthly_quota is None:
        return None
    return UsageClaim(
        consumer_id=caller.consumer_id,
        month=_calendar(int(now // 86400))[0],
        mode=caller.key_mode or "live",
        limit=caller.monthly_quota,
        hold_id=hold_id,  # "": the book names it if it writes
        now=int(now),
        expires_at=int(now) + hold.seconds,
    )


def _ask(caller: Caller, now: float, ids: Callable[[], str], claim: UsageClaim | None) -> Ask:
    return Ask(
        ids=ids,
        bucket=rate_bucket(caller),
        now_ms=int(now * 1000),
        window_ms=int(WINDOW_SECONDS * 1000),
        limit=caller.rate_limit_per_minute,
        claim=claim,
    )


def _admitted(
    caller: Caller, now: float, in_window: int, counts: bool, lease: QuotaLease | None
) -> Admitted:
    """An admitted call (``in_window`` calls before it in the rate window): its caller
    with ``rate_remaining`` and, when ``counts``, what it settles (its quota unit from
    ``lease``, or the hold ``admit`` adds)."""
    remaining = max(0, caller.rate_limit_per_minute - in_window - 1)
    admitted = attrs.evolve(caller, rate_remaining=remaining)
    if not counts:
        return Admitted(caller=admitted, reservation=None)
    month, day, _ = _calendar(int(now // 86400))
    reservation = Reservation(
        consumer_id=caller.consumer_id,
        month=month,
        day=day,
        mode=caller.key_mode or "live",
        lease=lease,
    )
    return Admitted(caller=admitted, reservation=reservation)


@functools.lru_cache(maxsize=4)
def _calendar(day_number: int) -> tuple[str, str, str]:
    """The quota month (``YYYY-MM``), the UTC day (``YYYY-MM-DD``) and when the month's
    quota resets (ISO) of a Unix day (seconds // 86400): worked out once a day, not per
    call."""
    at = utc(day_number * 86400)
    month = quota.quota_month(at)
    return month.month, at.date().isoformat(), iso(month.resets_at)


def _wait_for_unit(
    store: Store, claim: UsageClaim, hold: Hold, sleep: Callable[[float], None]
) -> HoldState:
    """Poll while calls in flight hold the last units: a read first, a write only when a
    unit looks free. Ends holding a unit, exhausted, or undecided when the wait is over."""
    state = HoldState(settled=0, held=claim.limit, limit=claim.limit, taken=False)
    for _ in range(max(0, hold.wait_ms // max(1, hold.poll_ms))):
        sleep(hold.poll_ms / 1000)
        state = store.holds.peek_hold(claim)
        if state.exhausted:
            return state
        if state.settled + state.held < claim.limit:
            state = store.holds.try_hold(claim)
            if state.taken or state.exhausted:
                return state
    return state


def quota_exceeded(caller: Caller) -> QuotaExceeded:
    """The 402 for a caller whose month's quota is used up by settled calls."""
    return QuotaExceeded(
        f"The monthly quota of {caller.monthly_quota} requests is used up.",
        hint="The quota resets at the start of next month (UTC); upgrade for more.",
    )


def quota_in_flight(caller: Caller) -> QuotaInFlight:
    """The 503 for a caller whose quota's last units are held by calls still running."""
    return QuotaInFlight(
        f"The last of the monthly quota of {caller.monthly_quota} requests is held by "
        "calls still in flight; a unit comes back if one of them fails.",
        hint=f"Retry after {QuotaInFlight.retry_after} second(s).",
    )


def settle(
    store: Store,
    reservation: Reservation,
    succeeded: bool,
    now: float,
    book: LeaseBook | None = None,
) -> int | None:
    """Settle a counted call in one write transaction; return the month's settled count
    when known (None for a failed call without a quota, which writes nothing).

    A success turns the hold into a settled unit, counts its day (the day it arrived)
    and fires the thresholds it reaches; a failure gives the hold back. Calls without a
    quota (test keys) are counted on success only. A call admitted from a lease is
    settled in memory by ``book`` and written back with its lease.
    """
    if reservation.lease is not None:
        assert book is not None  # only a book hands out leases
        return book.settle(reservation.lease, succeeded, reservation.day)
    claim = reservation.claim
    if not succeeded:
        if claim is None:
            return None
        with store.db.transaction() as tx:
            return store.holds.release_hold(tx, claim)
    with store.db.transaction() as tx:
        if claim is None:
            return store.accounts.count_success(
                tx, reservation.consumer_id, reservation.month, reservation.day, reservation.mode
            )
        count = store.holds.keep_hold(tx, claim, reservation.day, int(now))
        if count is None:
            return None  # a lapsed hold whose unit went to another call: not counted
        if reservation.mode == "live":
            fire_thresholds(store, tx, claim, count, now)
        return count


def unsettle(store: Store, reservation: Reservation, book: LeaseBook | None = None) -> None:
    """Take back a call ``settle`` counted whose answer was never sent (its client had
    half-closed its connection, ``http.front``): the month and the day no longer count
    it, so its quota unit is free again. Threshold events it fired stay sent."""
    lease = reservation.lease
    if lease is not None and book is not None and book.unsettle(lease, reservation.day):
        return
    with store.db.transaction() as tx:
        store.accounts.uncount_success(
            tx, reservation.consumer_id, reservation.month, reservation.day, reservation.mode
        )


def quota_headers(
    store: Store,
    caller: Caller,
    now: float,
    used: int | None = None,
    book: LeaseBook | None = None,
) -> dict[str, str]:
    """``X-Quota-*`` headers for quota-bound callers (live API keys).

    ``used`` is the settled count this request's settle left behind (so no read is
    needed); without it, the count this process's lease knows, else the counter's.
    """
    if caller.monthly_quota is None:
        return {}
    month, _, resets_at = _calendar(int(now // 86400))
    mode = caller.key_mode or "live"
    if used is None and book is not None:
        used = book.used(caller.consumer_id, month, mode)
    if used is None:
        used = store.accounts.usage(caller.consumer_id, month, mode)
    return {
        "X-Quota-Limit": str(caller.monthly_quota),
        "X-Quota-Used": str(used),
        "X-Quota-Resets-At": resets_at,
    }
