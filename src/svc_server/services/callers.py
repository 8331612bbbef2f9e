"""Who is calling the data API: an ``X-API-Key`` resolved to its caller (401 for an
unknown, revoked or expired key, 403 for one used from outside its allowlist), or a
signed-in user acting as their current consumer.

A key's row is remembered per process under the access stamp (``store.keycache``);
``authenticate_key`` with ``memory_only`` and ``still_admits`` make the same decisions
from memory alone, for the warm lane (``app.warm``), which must not wait on the database.
"""

from __future__ import annotations

import functools

from svc_core.accounts import keys, plans
from svc_core.accounts.iprules import ip_allowed, parse_allowlist
from svc_core.caller import Caller
from svc_core.errors import IpNotAllowed, SvcError, Unauthorized
from svc_server.services import membership
from svc_server.store import Store
from svc_server.store.account_rows import KeyGrant

COOKIE_RATE_LIMIT = 60
TEST_KEY_RATE_LIMIT = 60
TOUCH_SECONDS = 60


def authenticate_key(
    store: Store, plaintext: str, *, client_ip: str, now: float, memory_only: bool = False
) -> tuple[Caller, KeyGrant] | None:
    """Resolve an ``X-API-Key`` to its caller and its key's row, or raise 401/403.

    ``memory_only`` (``app.warm``, which must not wait): only a key whose row is
    remembered under the current access stamp and whose use was stamped within the
    minute (``still_admits``), so nothing is read or written; None for any other key,
    a refusal too, left to the call made without the switch."""
    try:
        parsed = keys.parse_key(plaintext)  # malformed keys never reach the database
        digest = keys.hash_key(plaintext)
        if memory_only:
            known = store.accounts.known_key_by_hash(digest)
            row = known[1] if known is not None and still_admits(known[1], now) else None
        else:
            # Remembered per process while the access stamp holds (KEY_STAMP_TTL).
            row = store.accounts.cached_key_by_hash(digest)
        caller = key_caller(row, parsed, client_ip=client_ip, now=now)
    except SvcError:
        if memory_only:
            return None
        raise
    assert row is not None  # key_caller refuses an unknown key
    if _touch_due(row, now):  # never from memory (``still_admits``)
        store.accounts.touch_key(row.id, int(now))  # at most once a minute per key
    return caller, row


def still_admits(row: KeyGrant, now: float) -> bool:
    """Whether the key of ``row`` (read under the current access stamp) admits a call at
    ``now`` whose caller ``authenticate_key`` made earlier: its grace not over, and no
    use to stamp (``authenticate_key`` without ``memory_only`` writes that)."""
    status = keys.key_status(row.status, row.grace_until, int(now))
    return status in keys.WORKING and not _touch_due(row, now)


def _touch_due(row: KeyGrant, now: float) -> bool:
    last_used = row.last_used_at
    return last_used is None or last_used < int(now) - TOUCH_SECONDS


def key_caller(
    row: KeyGrant | None, parsed: keys.ParsedKey, *, client_ip: str, now: float
) -> Caller:
    """The caller of a key whose row is ``row`` (None: unknown), or raise 401/403."""
    if row is None or row.consumer_status != "active":
        raise Unauthorized("Unknown or revoked API key.")
    status = keys.key_status(row.status, row.grace_until, int(now))
    if status not in keys.WORKING:
        raise Unauthorized(f"This API key is {status}.", hint="Create or rotate a key.")
    if row.ip_allowlist and not ip_allowed(parse_allowlist(row.ip_allowlist), client_ip):
        raise IpNotAllowed(
            f"This API key may not be used from {client_ip}.",
            hint="Add the address to the key's ip_allowlist.",
        )
    limits = _limits(row.plan, row.monthly_quota_override, row.rate_limit_override)
    test_mode = parsed.mode == "test"
    return Caller(
        consumer_id=row.consumer_id,
        plan=row.plan,
        auth_method="api_key",
        rate_limit_per_minute=TEST_KEY_RATE_LIMIT if test_mode else limits.rate_limit_per_minute,
        monthly_quota=None if test_mode else limits.monthly_quota,
        key_id=row.id,
        key_mode=parsed.mode,
    )


def key_owner(store: Store, plaintext: str, now: float) -> tuple[str, str] | None:
    """The account and id of a working key whose call was refused before or after
    ``authenticate_key`` (an unknown path, a refused address), from the process's key
    cache; None for a malformed, unknown, revoked or expired key."""
    try:
        keys.parse_key(plaintext)
    except SvcError:
        return None
    row = store.accounts.cached_key_by_hash(keys.hash_key(plaintext))
    if row is None or row.consumer_status != "active":
        return None
    if keys.key_status(row.status, row.grace_until, now) not in keys.WORKING:
        return None
    return str(row.consumer_id), str(row.id)


@functools.lru_cache(maxsize=1024)
def _limits(plan: str, monthly_quota: int | None, rate_limit: int | None) -> plans.Plan:
    """``plans.effective_limits``, remembered: a plan is a constant, so every call of a key
    gets the same limits from the same three values."""
    return plans.effective_limits(plan, monthly_quota, rate_limit)


def session_caller(store: Store, user_id: str) -> Caller:
    """A signed-in user calling the data API acts as their current consumer
    (``membership.primary_consumer``: the one they switched to, else the highest plan's)."""
    with store.db.transaction(write=False) as tx:
        consumers = store.accounts.active_consumers_of_user(tx, user_id)
    consumer = membership.primary_consumer(consumers)
    if consumer is None:
        raise Unauthorized("Your account has no active consumer.")
    return Caller(
        consumer_id=consumer.id,
        plan=consumer.plan,
        auth_method="session",
        rate_limit_per_minute=COOKIE_RATE_LIMIT,
        monthly_quota=None,
        user_id=user_id,
    )
