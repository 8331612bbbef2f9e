"""Account use cases: consumers, users, API keys, usage and teams.

A signed-in user manages their *primary* consumer: the one with the highest plan among
their active memberships (enterprise, team, pro, internal, starter), the same consumer
the usage endpoint reports. Owners and admins may write; members may read.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from svc_core import events as core_events
from svc_core import keys, plans, quota, usage
from svc_core.errors import (
    AlreadyInvited,
    Conflict,
    Forbidden,
    InvalidBody,
    InvalidParams,
    KeyLimitReached,
    NoConsumer,
    NotFound,
    SeatLimitReached,
)
from svc_server.identity import Identity
from svc_server.services import events as event_service
from svc_server.store import Store
from svc_server.store.base import Row, Tx

INVITE_SECONDS = 7 * 24 * 3600
MANAGER_ROLES = frozenset({"owner", "admin"})
KEY_ROW_FIELDS = (
    "id",
    "label",
    "prefix",
    "mode",
    "scope",
    "ip_allowlist",
    "status",
    "created_at",
    "grace_until",
    "last_used_at",
)


def iso(ts: int | float | None) -> str | None:
    """Unix seconds to ISO-8601 UTC with ``Z``; None stays None."""
    if ts is None:
        return None
    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_id(value: str, what: str = "id") -> str:
    """A path id must be a UUID; anything else is 400, never a lookup."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise InvalidParams(f"The {what} must be a UUID.", hint=f"Got {value[:64]!r}.") from None


def primary_consumer(consumers: Sequence[Row]) -> Row | None:
    """The highest-plan consumer among a user's memberships."""
    if not consumers:
        return None
    best = plans.highest_plan([c["plan"] for c in consumers])
    return next(c for c in consumers if c["plan"] == best)


def plan_of(consumer: Row) -> plans.Plan:
    return plans.DEFAULT_PLANS[consumer["plan"]]


# users and consumers -------------------------------------------------------------------


def _new_consumer(
    store: Store,
    tx: Tx,
    *,
    plan: str,
    now: float,
    company: str | None = None,
    monthly_quota: int | None = None,
    rate_limit: int | None = None,
) -> str:
    consumer_id = str(uuid.uuid4())
    store.accounts.create_consumer(
        tx,
        {
            "id": consumer_id,
            "plan": plan,
            "company_name": company,
            "monthly_quota_override": monthly_quota,
            "rate_limit_override": rate_limit,
            "subscription_status": None,
            "status": "active",
            "created_at": int(now),
        },
    )
    return consumer_id


def _new_key(
    store: Store,
    tx: Tx,
    consumer_id: str,
    *,
    label: str,
    mode: str,
    scope: str,
    ip_allowlist: Sequence[str],
    now: float,
    entropy: bytes,
) -> tuple[str, Row]:
    plaintext = keys.generate_key(mode, entropy)
    row: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "consumer_id": consumer_id,
        "label": label,
        "prefix": keys.key_prefix(plaintext),
        "key_hash": keys.hash_key(plaintext),
        "mode": mode,
        "scope": scope,
        "ip_allowlist": list(ip_allowlist),
        "status": "active",
        "created_at": int(now),
    }
    store.accounts.insert_key(tx, row)
    return plaintext, row


def _owner(
    store: Store, tx: Tx, consumer_id: str, user_id: str | None, email: str, now: float
) -> None:
    store.accounts.insert_membership(
        tx,
        {
            "id": str(uuid.uuid4()),
            "consumer_id": consumer_id,
            "user_id": user_id,
            "email": email,
            "role": "owner",
            "status": "active",
            "invited_at": int(now),
            "joined_at": int(now),
        },
    )


def create_consumer(
    store: Store,
    *,
    plan: str,
    now: float,
    entropy: bytes,
    email: str | None = None,
    company: str | None = None,
    monthly_quota: int | None = None,
    rate_limit: int | None = None,
) -> dict[str, Any]:
    """Operator path (``svc consumer create``): a consumer with one live key.

    With ``email``, the user with that email (existing, or created now and claimed at
    first sign-in) becomes the owner.
    """
    if plan not in plans.DEFAULT_PLANS:
        raise InvalidParams(
            f"Unknown plan {plan!r}; choose one of {', '.join(plans.DEFAULT_PLANS)}."
        )
    with store.db.transaction() as tx:
        consumer_id = _new_consumer(
            store,
            tx,
            plan=plan,
            now=now,
            company=company,
            monthly_quota=monthly_quota,
            rate_limit=rate_limit,
        )
        if email is not None:
            email = normalize_email(email)
            user = store.accounts.get_user_by_email(tx, email)
            if user is None:
                user = {"id": str(uuid.uuid4())}
                store.accounts.insert_user(tx, user["id"], None, email, int(now))
            _owner(store, tx, consumer_id, user["id"], email, now)
        plaintext = _first_key(store, tx, consumer_id, now, entropy)
    return {"consumer_id": consumer_id, "plan": plan, "api_key": plaintext}


def _first_key(store: Store, tx: Tx, consumer_id: str, now: float, entropy: bytes) -> str:
    """The live admin key every new consumer starts with; returns its plaintext."""
    plaintext, _ = _new_key(
        store,
        tx,
        consumer_id,
        label="default",
        mode="live",
        scope="admin",
        ip_allowlist=(),
        now=now,
        entropy=entropy,
    )
    return plaintext


def normalize_email(email: str) -> str:
    """Emails compare case-insensitively; store them lower-cased and trimmed."""
    return email.strip().lower()


def ensure_user(
    store: Store, tx: Tx, identity: Identity, now: float, entropy: bytes
) -> tuple[Row, str | None]:
    """Find or create the user of a verified identity; returns a new key's plaintext
    when this sign-in created the user's first (starter) consumer."""
    email = normalize_email(identity.email) if identity.email else f"{identity.sub}@users.invalid"
    # Two first sign-ins of one person at once must not both create the user.
    store.db.lock(tx, "subject:" + identity.sub)
    store.db.lock(tx, "email:" + email)
    user = store.accounts.get_user_by_subject(tx, identity.sub)
    if user is None:
        user = store.accounts.get_user_by_email(tx, email)
        if user is not None and user["subject"] is None:
            store.accounts.set_user_subject(tx, user["id"], identity.sub)
        elif user is None:
            user_id = str(uuid.uuid4())
            store.accounts.insert_user(tx, user_id, identity.sub, email, int(now))
            user = {"id": user_id, "email": email, "subject": identity.sub}
        else:
            # The email belongs to another identity: keep them apart.
            user_id = str(uuid.uuid4())
            alt = f"{identity.sub}@users.invalid"
            store.accounts.insert_user(tx, user_id, identity.sub, alt, int(now))
            user = {"id": user_id, "email": alt, "subject": identity.sub}
    if store.accounts.active_consumers_of_user(tx, user["id"]):
        return user, None
    consumer_id = _new_consumer(store, tx, plan="starter", now=now)
    _owner(store, tx, consumer_id, user["id"], user["email"], now)
    plaintext = _first_key(store, tx, consumer_id, now, entropy)
    return user, plaintext


def account(store: Store, tx: Tx, user_id: str) -> tuple[Row, str]:
    """The user's primary consumer and their role in it, or 404 ``NO_CONSUMER``."""
    consumer = primary_consumer(store.accounts.active_consumers_of_user(tx, user_id))
    if consumer is None:
        raise NoConsumer()
    return consumer, str(consumer["role"])


def require_manager(role: str) -> None:
    if role not in MANAGER_ROLES:
        raise Forbidden(
            "Only the owner or an admin of this account can do this.",
            hint="Ask an owner or admin to change your role.",
        )


# API keys -----------------------------------------------------------------------------


def key_row(row: Row, now: float) -> dict[str, Any]:
    """A key as listed: never the hash, never the plaintext."""
    out = {name: row.get(name) for name in KEY_ROW_FIELDS}
    out["status"] = keys.key_status(row["status"], row["grace_until"], int(now))
    for name in ("created_at", "grace_until", "last_used_at"):
        out[name] = iso(out[name])
    return out


def list_keys(store: Store, user_id: str, now: float) -> list[dict[str, Any]]:
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.accounts.keys_of_consumer(tx, consumer["id"])
    return [key_row(r, now) for r in rows]


def create_key(
    store: Store, user_id: str, body: dict[str, Any], now: float, entropy: bytes
) -> dict[str, Any]:
    spec = keys.validate_key_create(body)
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        store.db.lock(tx, "consumer:" + consumer["id"])  # concurrent creates see each other
        limit = plans.effective_limits(
            consumer["plan"], consumer["monthly_quota_override"], consumer["rate_limit_override"]
        ).max_keys
        if store.accounts.count_active_keys(tx, consumer["id"]) >= limit:
            raise KeyLimitReached(
                f"The {consumer['plan']} plan allows {limit} active API key(s).",
                hint="Revoke a key or upgrade the plan.",
            )
        plaintext, row = _new_key(
            store,
            tx,
            consumer["id"],
            label=spec.label,
            mode=spec.mode,
            scope=spec.scope,
            ip_allowlist=spec.ip_allowlist,
            now=now,
            entropy=entropy,
        )
    out = key_row(row | {"grace_until": None, "last_used_at": None}, now)
    out["key"] = plaintext
    return out


def _owned_key(store: Store, tx: Tx, consumer_id: str, key_id: str) -> Row:
    row = store.accounts.get_key(tx, parse_id(key_id, "key id"))
    if row is None or row["consumer_id"] != consumer_id:
        raise NotFound("No such API key.")
    return row


def patch_key(
    store: Store, user_id: str, key_id: str, body: dict[str, Any], now: float
) -> dict[str, Any]:
    patch = keys.validate_key_patch(body)
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        row = _owned_key(store, tx, consumer["id"], key_id)
        fields: dict[str, Any] = {}
        if patch.label is not None:
            fields["label"] = patch.label
        if patch.ip_allowlist is not None:
            fields["ip_allowlist"] = list(patch.ip_allowlist)
        if fields:
            store.accounts.update_key(tx, row["id"], fields)
        row = store.accounts.get_key(tx, row["id"]) or row
    return key_row(row, now)


def rotate_key(
    store: Store,
    user_id: str,
    key_id: str,
    body: dict[str, Any],
    now: float,
    entropy: bytes,
) -> dict[str, Any]:
    """New key now; the old one keeps working until ``grace_until`` (``key.rotated``)."""
    grace = keys.validate_rotate(body)
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        old = _owned_key(store, tx, consumer["id"], key_id)
        grace_until = int(now) + grace
        # Only an active key rotates; a concurrent second rotation finds it in grace.
        if not store.accounts.update_key_if(
            tx, old["id"], "active", {"status": "grace", "grace_until": grace_until}
        ):
            raise Conflict(
                f"This key is {keys.key_status(old['status'], old['grace_until'], int(now))} "
                "and cannot be rotated.",
                code="KEY_NOT_ACTIVE",
            )
        plaintext, new = _new_key(
            store,
            tx,
            consumer["id"],
            label=old["label"],
            mode=old["mode"],
            scope=old["scope"],
            ip_allowlist=old["ip_allowlist"],
            now=now,
            entropy=entropy,
        )
        store.accounts.update_key(tx, old["id"], {"replaced_by": new["id"]})
        event = core_events.key_rotated(
            key_id=old["id"],
            prefix=old["prefix"],
            new_key_id=new["id"],
            new_key_prefix=new["prefix"],
            grace_until=datetime.fromtimestamp(grace_until, UTC),
            actor="self",
            now=now,
        )
        event_service.publish(store, tx, consumer["id"], event, now)
    data = key_row(new | {"grace_until": None, "last_used_at": None}, now)
    data["key"] = plaintext
    return {
        "data": data,
        "previous": {"id": old["id"], "status": "grace", "grace_until": iso(grace_until)},
    }


def revoke_key(
    store: Store, key_id: str, now: float, *, user_id: str | None = None, actor: str = "self"
) -> None:
    """Revoke a key (owner/admin, or an operator with ``actor='admin'``): ``key.revoked``."""
    with store.db.transaction() as tx:
        if user_id is not None:
            consumer, role = account(store, tx, user_id)
            require_manager(role)
            row = _owned_key(store, tx, consumer["id"], key_id)
        else:
            found = store.accounts.get_key(tx, parse_id(key_id, "key id"))
            if found is None:
                raise NotFound("No such API key.")
            row = found
        if row["status"] == "revoked":
            raise NotFound("This API key is already revoked.")
        store.accounts.update_key(tx, row["id"], {"status": "revoked", "revoked_at": int(now)})
        event = core_events.key_revoked(
            key_id=row["id"],
            prefix=row["prefix"],
            revoked_at=datetime.fromtimestamp(int(now), UTC),
            actor=actor,
            now=now,
        )
        event_service.publish(store, tx, row["consumer_id"], event, now)


# usage ------------------------------------------------------------------------------------


def usage_summary(store: Store, user_id: str, now: float) -> dict[str, Any]:
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
    limits = plans.effective_limits(
        consumer["plan"], consumer["monthly_quota_override"], consumer["rate_limit_override"]
    )
    month = quota.quota_month(datetime.fromtimestamp(now, UTC)).month
    used = store.accounts.usage(consumer["id"], month, "live")
    trial = None
    if consumer["trial_ends_at"] is not None:
        trial = usage.TrialState(
            trial_ends_at=datetime.fromtimestamp(consumer["trial_ends_at"], UTC),
            founding_member=bool(consumer["founding_member"]),
        )
    return usage.usage_summary(
        plan=consumer["plan"],
        limits=limits,
        used=used,
        now=datetime.fromtimestamp(now, UTC),
        trial=trial,
        subscription_status=consumer["subscription_status"],
    )


# team ---------------------------------------------------------------------------------------


def _member_row(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "user_id": row["user_id"],
        "email": row["email"],
        "role": row["role"],
        "status": row["status"],
        "invited_at": iso(row["invited_at"]),
        "joined_at": iso(row["joined_at"]),
    }


def _seats_taken(rows: Sequence[Row], now: float) -> int:
    return sum(
        1
        for r in rows
        if r["status"] == "active"
        or (r["status"] == "pending" and (r["expires_at"] is None or r["expires_at"] > now))
    )


def team(store: Store, user_id: str, now: float) -> dict[str, Any]:
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.accounts.memberships_of_consumer(tx, consumer["id"])
    seats = plans.effective_limits(consumer["plan"], None, None).seats
    visible = [
        r
        for r in rows
        if r["status"] != "pending" or r["expires_at"] is None or r["expires_at"] > now
    ]
    return {
        "members": [_member_row(r) for r in visible],
        "seat_limit": seats,
        "plan": consumer["plan"],
    }


def invite(store: Store, user_id: str, body: dict[str, Any], now: float) -> dict[str, Any]:
    email, role = validate_invite(body)
    with store.db.transaction() as tx:
        consumer, my_role = account(store, tx, user_id)
        require_manager(my_role)
        store.db.lock(tx, "consumer:" + consumer["id"])  # concurrent invites see each other
        rows = store.accounts.memberships_of_consumer(tx, consumer["id"])
        for r in rows:
            live_pending = r["status"] == "pending" and (r["expires_at"] or 0) > now
            if r["email"] == email and (r["status"] == "active" or live_pending):
                raise AlreadyInvited(f"{email} is already a member or invited.")
        seats = plans.effective_limits(consumer["plan"], None, None).seats
        if _seats_taken(rows, now) >= seats:
            raise SeatLimitReached(
                f"The {consumer['plan']} plan has {seats} seat(s), all taken or invited.",
                hint="Remove a member or upgrade the plan.",
            )
        row = {
            "id": str(uuid.uuid4()),
            "consumer_id": consumer["id"],
            "user_id": None,
            "email": email,
            "role": role,
            "status": "pending",
            "invited_at": int(now),
            "expires_at": int(now) + INVITE_SECONDS,
        }
        store.accounts.insert_membership(tx, row)
    out = _member_row(row | {"joined_at": None})
    out["expires_at"] = iso(row["expires_at"])
    return out


def validate_invite(body: dict[str, Any]) -> tuple[str, str]:
    unknown = sorted(set(body) - {"email", "role"})
    if unknown:
        raise InvalidBody(f"Unknown field {unknown[0]!r}.", hint="Allowed fields: email, role.")
    email = body.get("email")
    if not isinstance(email, str) or not _looks_like_email(email):
        raise InvalidBody("'email' must be an email address such as ana@example.com.")
    role = body.get("role", "member")
    if role not in ("member", "admin"):
        raise InvalidBody("'role' must be member or admin.")
    return normalize_email(email), str(role)


def _looks_like_email(value: str) -> bool:
    if len(value) > 254 or any(c.isspace() or ord(c) < 32 for c in value):
        return False
    local, _, domain = value.partition("@")
    return bool(local) and "." in domain and not domain.startswith(".") and "@" not in domain


def remove_member(store: Store, user_id: str, member_id: str, now: float) -> None:
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        row = store.accounts.get_membership(tx, parse_id(member_id, "member id"))
        if row is None or row["consumer_id"] != consumer["id"] or row["status"] == "removed":
            raise NotFound("No such team member or invitation.")
        if row["role"] == "owner":
            raise Forbidden("The owner cannot be removed.")
        store.accounts.update_membership(
            tx, row["id"], {"status": "removed", "removed_at": int(now)}
        )


def my_invites(store: Store, user_id: str, now: float) -> list[dict[str, Any]]:
    user = store.accounts.get_user(user_id)
    if user is None:
        return []
    with store.db.transaction(write=False) as tx:
        rows = store.accounts.pending_invites_for_email(tx, user["email"], int(now))
    return [
        {
            "id": r["id"],
            "consumer_id": r["consumer_id"],
            "company_name": r["company_name"],
            "role": r["role"],
            "invited_at": iso(r["invited_at"]),
        }
        for r in rows
    ]


def accept_invite(store: Store, user_id: str, invite_id: str, now: float) -> None:
    invite_id = parse_id(invite_id, "invite id")
    with store.db.transaction() as tx:
        user = store.accounts.get_user_by_id(tx, user_id)
        row = store.accounts.get_membership(tx, invite_id)
        if (
            user is None
            or row is None
            or row["status"] != "pending"
            or (row["expires_at"] is not None and row["expires_at"] <= now)
            or row["email"] != user["email"]
        ):
            raise NotFound("No such invitation for you, or it has expired.")
        # Compare-and-set: of two concurrent accepts only one finds the invite pending.
        if not store.accounts.update_membership_if(
            tx,
            invite_id,
            "pending",
            {"status": "active", "user_id": user_id, "joined_at": int(now)},
        ):
            raise NotFound("No such invitation for you, or it has expired.")
