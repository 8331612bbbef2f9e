"""API key use cases: list, create, patch, rotate (with grace) and revoke a consumer's
keys; the first key of a new consumer. Plaintext keys exist only in the result of the
call that made them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import attrs

from svc_core.accounts import keys, plans
from svc_core.errors import Conflict, InvalidParams, KeyLimitReached, NotFound
from svc_core.instants import utc
from svc_core.webhooks import events as core_events
from svc_server.services import events as event_service
from svc_server.services.membership import account, managed_account, parse_id
from svc_server.store import Store
from svc_server.store.account_rows import ApiKey, Consumer
from svc_server.store.base import Tx


@attrs.frozen(kw_only=True)
class CreatedKey(ApiKey):
    """A key just made, with its plaintext: shown once, never stored."""

    key: str = attrs.field(repr=False)


@attrs.frozen(kw_only=True)
class RetiredKey:
    """The key a rotation replaced: it works until ``grace_until``."""

    id: str
    status: str
    grace_until: datetime


@attrs.frozen(kw_only=True)
class Rotation:
    """What ``rotate_key`` did: the new key (with plaintext) and the one in grace."""

    key: CreatedKey
    previous: RetiredKey


def new_key(
    store: Store,
    tx: Tx,
    consumer_id: str,
    spec: keys.KeyCreate,
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
) -> CreatedKey:
    """Insert a new active key as ``spec`` says; the result carries its plaintext."""
    plaintext = keys.generate_key(spec.mode, entropy)
    key = ApiKey(
        id=ids(),
        consumer_id=consumer_id,
        label=spec.label,
        prefix=keys.key_prefix(plaintext),
        key_hash=keys.hash_key(plaintext),
        mode=spec.mode,
        scope=spec.scope,
        ip_allowlist=spec.ip_allowlist,
        status="active",
        grace_until=None,
        replaced_by=None,
        created_at=int(now),
        last_used_at=None,
        revoked_at=None,
    )
    store.accounts.insert_key(tx, key)
    return CreatedKey(**attrs.asdict(key, recurse=False), key=plaintext)


def first_key(
    store: Store,
    tx: Tx,
    consumer_id: str,
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
) -> CreatedKey:
    """The live admin key every new consumer starts with."""
    spec = keys.KeyCreate(label="default", mode="live", scope="admin")
    return new_key(store, tx, consumer_id, spec, now=now, entropy=entropy, ids=ids)


def in_force(row: ApiKey, now: float) -> ApiKey:
    """A stored key with its status in force at ``now`` (``grace`` ends ``expired``):
    the key as listed."""
    return attrs.evolve(row, status=keys.key_status(row.status, row.grace_until, int(now)))


def list_keys(store: Store, user_id: str, now: float) -> list[ApiKey]:
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.accounts.keys_of_consumer(tx, consumer.id)
    return [in_force(r, now) for r in rows]


def create_key(
    store: Store,
    user_id: str,
    body: dict[str, Any],
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
) -> CreatedKey:
    spec = keys.validate_key_create(body)
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        return _create(store, tx, consumer, spec, now=now, entropy=entropy, ids=ids)


def create_key_for_consumer(
    store: Store,
    consumer_id: str,
    body: dict[str, Any],
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
) -> CreatedKey:
    """A new key for ``consumer_id``, made by an operator (``svc key create``): the same
    rules as ``create_key`` (the body's fields, the plan's key limit), no membership."""
    spec = keys.validate_key_create(body)
    consumer = store.accounts.get_consumer(parse_id(consumer_id, "consumer id"))
    if consumer is None:
        raise NotFound(f"No consumer {consumer_id}.", hint="See svc consumer list.")
    with store.db.transaction() as tx:
        return _create(store, tx, consumer, spec, now=now, entropy=entropy, ids=ids)


def _create(
    store: Store,
    tx: Tx,
    consumer: Consumer,
    spec: keys.KeyCreate,
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
) -> CreatedKey:
    store.db.lock(tx, "consumer:" + consumer.id)  # concurrent creates see each other
    limit = plans.effective_limits(
        consumer.plan, consumer.monthly_quota_override, consumer.rate_limit_override
    ).max_keys
    if store.accounts.count_active_keys(tx, consumer.id) >= limit:
        raise KeyLimitReached(
            f"The {consumer.plan} plan allows {limit} active API key(s).",
            hint="Revoke a key or upgrade the plan.",
        )
    return new_key(store, tx, consumer.id, spec, now=now, entropy=entropy, ids=ids)


def key_id_of(store: Store, ref: str) -> str:
    """The id of the key ``ref`` names, as an operator gives it: its id, or its prefix as
    listed (``svc_pk_live_ab12``). ``NotFound`` when none has it, ``InvalidParams`` when
    several keys share the prefix (then the id tells them apart)."""
    ref = ref.strip()
    try:
        return parse_id(ref, "key id")
    except InvalidParams:
        pass
    with store.db.transaction(write=False) as tx:
        found = store.accounts.keys_by_prefix(tx, ref)
    if not found:
        raise NotFound(f"No API key has the id or prefix {ref!r}.")
    if len(found) > 1:
        ids = ", ".join(str(row.id) for row in found)
        raise InvalidParams(f"{len(found)} keys have the prefix {ref}: give the key's id ({ids})")
    return str(found[0].id)


def _owned_key(store: Store, tx: Tx, consumer_id: str, key_id: str) -> ApiKey:
    row = store.accounts.get_key(tx, parse_id(key_id, "key id"))
    if row is None or row.consumer_id != consumer_id:
        raise NotFound("No such API key.")
    return row


def patch_key(store: Store, user_id: str, key_id: str, body: dict[str, Any], now: float) -> ApiKey:
    patch = keys.validate_key_patch(body)
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        row = _owned_key(store, tx, consumer.id, key_id)
        changes = {"label": patch.label, "ip_allowlist": patch.ip_allowlist}
        fields: dict[str, Any] = {k: v for k, v in changes.items() if v is not None}
        if fields:
            store.accounts.update_key(tx, row.id, fields)
        row = store.accounts.get_key(tx, row.id) or row
    return in_force(row, now)


def rotate_key(
    store: Store,
    user_id: str,
    key_id: str,
    body: dict[str, Any],
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
) -> Rotation:
    """New key now; the old one keeps working until ``grace_until`` (``key.rotated``)."""
    grace = keys.validate_rotate(body)
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        old = _owned_key(store, tx, consumer.id, key_id)
        grace_until = int(now) + grace
        # Only an active key rotates; a concurrent second rotation finds it in grace.
        if not store.accounts.update_key_if(
            tx, old.id, "active", {"status": "grace", "grace_until": grace_until}
        ):
            # Read it again: a concurrent rotation may have changed it since ``old``.
            current = store.accounts.get_key(tx, old.id) or old
            status = keys.key_status(current.status, current.grace_until, now)
            raise Conflict(
                NOT_ROTATABLE.get(status, ALREADY_ROTATED),
                code="KEY_NOT_ACTIVE",
                hint="Rotate the key that replaced it, or create a new key.",
            )
        same = keys.KeyCreate(
            label=old.label, mode=old.mode, scope=old.scope, ip_allowlist=old.ip_allowlist
        )
        new = new_key(store, tx, consumer.id, same, now=now, entropy=entropy, ids=ids)
        store.accounts.update_key(tx, old.id, {"replaced_by": new.id})
        event = core_events.key_rotated(
            key_id=old.id,
            prefix=old.prefix,
            new_key_id=new.id,
            new_key_prefix=new.prefix,
            grace_until=grace_until,
            actor="self",
            now=now,
        )
        event_service.publish(store, tx, consumer.id, event, now)
    # with grace_period_seconds 0 the old key stops working at once: say so
    status = keys.key_status("grace", grace_until, now)
    return Rotation(
        key=new, previous=RetiredKey(id=old.id, status=status, grace_until=utc(grace_until))
    )


ALREADY_ROTATED = (
    "This key was already rotated and works only until its grace period ends; "
    "it cannot be rotated again."
)
NOT_ROTATABLE = {
    "grace": ALREADY_ROTATED,
    "expired": "This key was rotated and its grace period is over; it cannot be rotated.",
    "revoked": "This key is revoked and cannot be rotated.",
}
"""Why a key that is not active cannot rotate, by its status in force."""


def revoke_key(
    store: Store, key_id: str, now: float, *, user_id: str | None = None, actor: str = "self"
) -> None:
    """Revoke a key (owner/admin, or an operator with ``actor='admin'``): ``key.revoked``."""
    with store.db.transaction() as tx:
        if user_id is not None:
            consumer = managed_account(store, tx, user_id)
            row = _owned_key(store, tx, consumer.id, key_id)
        else:
            found = store.accounts.get_key(tx, parse_id(key_id, "key id"))
            if found is None:
                raise NotFound("No such API key.")
            row = found
        # Compare-and-set: of concurrent revokes only one changes the row and emits.
        if row.status == "revoked" or not store.accounts.revoke_key(tx, row.id, int(now)):
            raise NotFound("This API key is already revoked.")
        event = core_events.key_revoked(
            key_id=row.id,
            prefix=row.prefix,
            revoked_at=now,
            actor=actor,
            now=now,
        )
        event_service.publish(store, tx, row.consumer_id, event, now)
