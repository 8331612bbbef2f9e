"""Access to the data API: who is calling, may they call now, and counting what succeeded.

The order for every ``/api/v1/*`` request: authenticate (401, 403 IP), rate limit (429),
reserve one unit of monthly quota (402), run the handler, then keep the reservation on a
2xx (firing quota events on the first success at or past a threshold) or refund it.
Reserving before the handler is what makes the quota exact under concurrency: the
reservation is one atomic ``UPDATE ... WHERE count < quota RETURNING count``. The same
transaction counts the call on its UTC day, and a refund takes the day back with the
unit, so the days of a month always add up to its count.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from svc_core import events as core_events
from svc_core import keys, plans, quota, ratelimit
from svc_core.caller import Caller
from svc_core.errors import IpNotAllowed, QuotaExceeded, RateLimited, Unauthorized
from svc_core.instants import iso, utc
from svc_core.iprules import ip_allowed, parse_allowlist
from svc_server.services import events as event_service
from svc_server.store import Store
from svc_server.store.accounts import UsageClaim

COOKIE_RATE_LIMIT = 60
TEST_KEY_RATE_LIMIT = 60
WINDOW_SECONDS = 60.0
TOUCH_SECONDS = 60


@attrs.frozen(kw_only=True)
class Reservation:
    """One unit of monthly quota held for a request in flight, and its UTC day."""

    consumer_id: str
    month: str
    day: str
    mode: str
    count: int
    limit: int | None


@attrs.frozen(kw_only=True)
class Admitted:
    """A request admitted under the rate limit: the caller with ``rate_remaining`` set,
    the quota unit held for it (if counted), or ``exhausted`` when the quota refused."""

    caller: Caller
    reservation: Reservation | None
    exhausted: bool = False


def authenticate_key(store: Store, plaintext: str, *, client_ip: str, now: float) -> Caller:
    """Resolve an ``X-API-Key`` to its caller, or raise 401/403."""
    parsed = keys.parse_key(plaintext)  # malformed keys never reach the database
    # Remembered per process while the access stamp holds (seen within KEY_STAMP_TTL).
    row = store.accounts.cached_key_by_hash(keys.hash_key(plaintext))
    if row is None or row["consumer_status"] != "active":
        raise Unauthorized("Unknown or revoked API key.")
    status = keys.key_status(row["status"], row["grace_until"], int(now))
    if status not in ("active", "grace"):
        raise Unauthorized(f"This API key is {status}.", hint="Create or rotate a key.")
    if row["ip_allowlist"] and not ip_allowed(parse_allowlist(row["ip_allowlist"]), client_ip):
        raise IpNotAllowed(
            f"This API key may not be used from {client_ip}.",
            hint="Add the address to the key's ip_allowlist.",
        )
    limits = plans.effective_limits(
        row["plan"], row["monthly_quota_override"], row["rate_limit_override"]
    )
    test_mode = parsed.mode == "test"
    last_used = row["last_used_at"]
    if last_used is None or last_used < int(now) - TOUCH_SECONDS:
        store.accounts.touch_key(row["id"], int(now))  # at most once a minute per key
    return Caller(
        consumer_id=row["consumer_id"],
        plan=row["plan"],
        auth_method="api_key",
        rate_limit_per_minute=TEST_KEY_RATE_LIMIT if test_mode else limits.rate_limit_per_minute,
        monthly_quota=None if test_mode else limits.monthly_quota,
        key_id=row["id"],
        key_mode=parsed.mode,
    )


def session_caller(store: Store, user_id: str) -> Caller:
    """A signed-in user calling the data API acts as their highest-plan consumer."""
    with store.db.transaction(write=False) as tx:
        consumers = store.accounts.active_consumers_of_user(tx, user_id)
    if not consumers:
        raise Unauthorized("Your account has no active consumer.")
    best = plans.highest_plan([c["plan"] for c in consumers])
    consumer = next(c for c in consumers if c["plan"] == best)
    return Caller(
        consumer_id=consumer["id"],
        plan=best,
        auth_method="session",
        rate_limit_per_minute=COOKIE_RATE_LIMIT,
        monthly_quota=None,
        user_id=user_id,
    )


def rate_bucket(caller: Caller) -> str:
    """Cookie callers are limited per user; keys per consumer and mode."""
    if caller.auth_method == "session":
        return f"user:{caller.user_id}"
    return f"consumer:{caller.consumer_id}:{caller.key_mode or 'live'}"


def admit(store: Store, caller: Caller, now: float, *, counted: bool) -> Admitted:
    """Admit the request under the per-minute limit (429 with Retry-After) and, for a
    ``counted`` route, hold one unit of the month's quota (402 once it is used up).

    Both happen in one write transaction. Cookie callers have no monthly quota and are
    not counted; test keys are counted under mode ``test`` and never limited. A request
    refused with 402 still used its rate-limit slot, as before the merge.
    """
    limit = caller.rate_limit_per_minute
    claim = None
    if counted and caller.auth_method == "api_key":
        at = utc(now)
        claim = UsageClaim(
            consumer_id=caller.consumer_id,
            month=quota.quota_month(at).month,
            day=at.date().isoformat(),
            mode=caller.key_mode or "live",
            limit=caller.monthly_quota,
        )
    admission = store.accounts.admit(
        rate_bucket(caller), int(now * 1000), int(WINDOW_SECONDS * 1000), limit, claim
    )
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
    admitted = attrs.evolve(caller, rate_remaining=max(0, limit - admission.in_window - 1))
    if claim is None:
        return Admitted(caller=admitted, reservation=None)
    if admission.usage_count is None:
        return Admitted(caller=admitted, reservation=None, exhausted=True)
    reservation = Reservation(
        consumer_id=claim.consumer_id,
        month=claim.month,
        day=claim.day,
        mode=claim.mode,
        count=admission.usage_count,
        limit=claim.limit,
    )
    return Admitted(caller=admitted, reservation=reservation)


def quota_exceeded(caller: Caller) -> QuotaExceeded:
    """The 402 for a caller whose month's quota is used up."""
    return QuotaExceeded(
        f"The monthly quota of {caller.monthly_quota} requests is used up.",
        hint="The quota resets at the start of next month (UTC); upgrade for more.",
    )


def settle(store: Store, reservation: Reservation, succeeded: bool, now: float) -> None:
    """Keep a successful call's unit (and fire thresholds) or refund a failed one, with
    its day, in one transaction.

    A success below every threshold (the common case) writes nothing at all.
    """
    if not succeeded:
        with store.db.transaction() as tx:
            store.accounts.refund_usage(
                tx, reservation.consumer_id, reservation.month, reservation.day, reservation.mode
            )
        return
    limit = reservation.limit
    if limit is None or reservation.mode != "live":
        return
    names = reached(reservation.count, limit)
    if not names:
        return
    with store.db.transaction() as tx:
        for name in names:
            if store.accounts.mark_quota_event(
                tx, reservation.consumer_id, reservation.month, name, int(now)
            ):
                event_service.publish_quota(
                    store,
                    tx,
                    kind=name,
                    consumer_id=reservation.consumer_id,
                    month=reservation.month,
                    current=reservation.count,
                    limit=limit,
                    now=now,
                )


def reached(count: int, limit: int) -> Sequence[str]:
    """Quota kinds whose threshold is at or below ``count``; the marker row decides which
    of them fire (only the first success at or past a threshold inserts it)."""
    if limit <= 0:
        return []
    return [k for k in core_events.QUOTA_KINDS if count >= core_events.quota_threshold(k, limit)]


def quota_headers(
    store: Store, caller: Caller, now: float, used: int | None = None
) -> dict[str, str]:
    """``X-Quota-*`` headers for quota-bound callers (live API keys).

    ``used`` is the count this request's own reservation left behind (so no read is
    needed); without it the counter is read.
    """
    if caller.monthly_quota is None:
        return {}
    month = quota.quota_month(utc(now))
    if used is None:
        used = store.accounts.usage(caller.consumer_id, month.month, caller.key_mode or "live")
    return {
        "X-Quota-Limit": str(caller.monthly_quota),
        "X-Quota-Used": str(used),
        "X-Quota-Resets-At": iso(month.resets_at),
    }
