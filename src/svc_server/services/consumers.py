"""Consumer use cases: the operator's ``svc consumer create``, ``list`` and ``show``, and
the user (with a starter consumer and its first key) that a first sign-in creates."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs

from svc_core.accounts import plans, quota
from svc_core.errors import Conflict, InvalidParams, NotFound
from svc_core.instants import utc, utc_exact, utc_or_none
from svc_core.same_named import SameNamed
from svc_server.identity import Identity
from svc_server.services.keys import first_key, in_force
from svc_server.services.membership import normalize_email, parse_id
from svc_server.services.team import MemberRow, member_row
from svc_server.store import Store
from svc_server.store.account_rows import ApiKey, ListedConsumer, Membership, User
from svc_server.store.base import Tx


@attrs.frozen(kw_only=True)
class CreatedConsumer:
    """A consumer made by an operator, with the plaintext of its first key (shown once)."""

    consumer_id: str
    plan: str
    api_key: str = attrs.field(repr=False)


def _new_consumer(
    store: Store,
    tx: Tx,
    *,
    plan: str,
    now: float,
    ids: Callable[[], str],
    company: str | None = None,
    monthly_quota: int | None = None,
    rate_limit: int | None = None,
) -> str:
    consumer_id = ids()
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


def _owner(
    store: Store,
    tx: Tx,
    consumer_id: str,
    user_id: str | None,
    email: str,
    *,
    now: float,
    ids: Callable[[], str],
) -> None:
    store.accounts.insert_membership(
        tx,
        Membership(
            id=ids(),
            consumer_id=consumer_id,
            user_id=user_id,
            email=email,
            role="owner",
            status="active",
            invited_at=int(now),
            joined_at=int(now),
            expires_at=None,
            removed_at=None,
        ),
    )


def create_consumer(
    store: Store,
    *,
    plan: str,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
    email: str | None = None,
    company: str | None = None,
    monthly_quota: int | None = None,
    rate_limit: int | None = None,
    allow_duplicate_owner: bool = False,
) -> CreatedConsumer:
    """Operator path (``svc consumer create``): a consumer with one live key.

    With ``email``, the user with that email (existing, or created now and claimed at
    first sign-in) becomes the owner. An email that already owns an active consumer is
    refused (409) unless ``allow_duplicate_owner``: a rerun of a set-up script must not
    make a second account the owner then has to tell apart.
    """
    if plan not in plans.DEFAULT_PLANS:
        raise InvalidParams(
            f"Unknown plan {plan!r}; choose one of {', '.join(plans.DEFAULT_PLANS)}."
        )
    with store.db.transaction() as tx:
        if email is not None and not allow_duplicate_owner:
            email = normalize_email(email)
            store.db.lock(tx, "email:" + email)  # two creates at once: one wins
            user = store.accounts.get_user_by_email(tx, email)
            mine = store.accounts.active_consumers_of_user(tx, user.id) if user else []
            owned = [c for c in mine if c.role == "owner"]
            if owned:
                raise Conflict(
                    f"{email} already owns consumer {owned[0].id} "
                    f"(plan {owned[0].plan}); nothing was created. Use that one, or "
                    "give --allow-duplicate-owner to make another for the same owner.",
                    hint=f"svc consumer show {owned[0].id} shows its keys and members.",
                )
        consumer_id = _new_consumer(
            store,
            tx,
            plan=plan,
            now=now,
            ids=ids,
            company=company,
            monthly_quota=monthly_quota,
            rate_limit=rate_limit,
        )
        if email is not None:
            email = normalize_email(email)
            owner = store.accounts.get_user_by_email(tx, email)
            owner_id = ids() if owner is None else owner.id
            if owner is None:
                store.accounts.insert_user(tx, owner_id, None, email, int(now))
            _owner(store, tx, consumer_id, owner_id, email, now=now, ids=ids)
        key = first_key(store, tx, consumer_id, now=now, entropy=entropy, ids=ids)
    return CreatedConsumer(consumer_id=consumer_id, plan=plan, api_key=key.key)


def ensure_user(
    store: Store,
    tx: Tx,
    identity: Identity,
    *,
    now: float,
    entropy: bytes,
    ids: Callable[[], str],
    plan: str = "starter",
) -> tuple[User, str | None]:
    """Find or create the user of a verified identity; returns a new key's plaintext
    when this sign-in created the user's first consumer (on ``plan``: SPEC's starter
    unless the deployment sets ``SVC_SIGNUP_PLAN``).

    The subject is the identity; the email only binds. A known subject is its user,
    whatever email it brings now. A new subject claims the user reserved for its email
    (by ``svc consumer create --email``) when no subject holds it yet; an email that
    another subject already holds, or none (absent or unverified), gets the subject a
    user of its own at the placeholder ``<sub>@users.invalid``. No email can be in the
    ``.invalid`` domain (``svc_core.accounts.emails``) and subjects are unique, so a placeholder
    is never taken and one subject's claim can never block another's sign-in.
    """
    placeholder = f"{identity.sub}@users.invalid"
    email = normalize_email(identity.email) if identity.email else placeholder
    # Two first sign-ins of one person at once must not both create the user.
    store.db.lock(tx, "subject:" + identity.sub)
    store.db.lock(tx, "email:" + email)
    user = store.accounts.get_user_by_subject(tx, identity.sub)
    if user is None:
        user = store.accounts.get_user_by_email(tx, email)
        if user is not None and user.subject is None:
            store.accounts.set_user_subject(tx, user.id, identity.sub)
        elif user is None:
            user = User(id=ids(), subject=identity.sub, email=email, created_at=int(now))
            store.accounts.insert_user(tx, user.id, identity.sub, email, int(now))
        else:  # the email belongs to another subject: keep them apart
            user = User(id=ids(), subject=identity.sub, email=placeholder, created_at=int(now))
            store.accounts.insert_user(tx, user.id, identity.sub, placeholder, int(now))
    if store.accounts.active_consumers_of_user(tx, user.id):
        return user, None
    consumer_id = _new_consumer(store, tx, plan=plan, now=now, ids=ids)
    _owner(store, tx, consumer_id, user.id, user.email, now=now, ids=ids)
    return user, first_key(store, tx, consumer_id, now=now, entropy=entropy, ids=ids).key


# operators' views (``svc consumer list`` and ``show``) ------------------------------------------


@attrs.frozen(kw_only=True)
class ConsumerLine:
    """A consumer as ``svc consumer list`` shows it (attribute order is JSON order)."""

    id: str
    plan: str
    status: str
    owner_email: str | None
    company_name: str | None
    active_keys: int
    """Keys that work now: active ones and rotated ones still in their grace period (not
    expired, not revoked)."""
    created_at: datetime


@attrs.frozen(kw_only=True)
class MonthCalls:
    """A consumer's calls in one UTC month: live ones against its quota, and test ones."""

    month: str
    live: int
    test: int
    monthly_quota: int


@attrs.frozen(kw_only=True)
class ConsumerDetail:
    """Everything an operator asks about one consumer (``svc consumer show``)."""

    id: str
    plan: str
    status: str
    owner_email: str | None
    company_name: str | None
    created_at: datetime
    subscription_status: str | None
    trial_ends_at: datetime | None
    rate_limit_per_minute: int
    usage: MonthCalls
    keys: tuple[ApiKey, ...]
    members: tuple[MemberRow, ...]


_CONSUMER_LINE = SameNamed(ConsumerLine, ListedConsumer)


def list_consumers(store: Store, now: float) -> list[ConsumerLine]:
    """Every consumer, oldest first, with the keys that work at ``now``."""
    return [
        _CONSUMER_LINE(row, active_keys=int(row.active_keys), created_at=utc(row.created_at))
        for row in store.accounts.list_consumers(int(now))
    ]


def consumer_detail(store: Store, consumer_id: str, now: float) -> ConsumerDetail:
    """One consumer: plan and limits, owner, keys with their status as of ``now``,
    members and pending invitations, and this month's calls; 404 when unknown."""
    consumer_id = parse_id(consumer_id, "consumer id")
    month = quota.quota_month(utc_exact(now)).month
    row = store.accounts.get_consumer(consumer_id)
    if row is None:
        raise NotFound(f"No consumer {consumer_id}.", hint="See svc consumer list.")
    with store.db.transaction(write=False) as tx:
        key_rows = store.accounts.keys_of_consumer(tx, consumer_id)
        members = store.accounts.memberships_of_consumer(tx, consumer_id)
        counted = store.accounts.month_usage(tx, consumer_id, month)
    limits = plans.effective_limits(row.plan, row.monthly_quota_override, row.rate_limit_override)
    owners = sorted(m.email for m in members if m.role == "owner" and m.status == "active")
    return ConsumerDetail(
        id=row.id,
        plan=row.plan,
        status=row.status,
        owner_email=owners[0] if owners else None,
        company_name=row.company_name,
        created_at=utc(row.created_at),
        subscription_status=row.subscription_status,
        trial_ends_at=utc_or_none(row.trial_ends_at),
        rate_limit_per_minute=limits.rate_limit_per_minute,
        usage=MonthCalls(
            month=month,
            live=counted.by_mode.get("live", 0),
            test=counted.by_mode.get("test", 0),
            monthly_quota=limits.monthly_quota,
        ),
        keys=tuple(in_force(k, now) for k in key_rows),
        members=tuple(member_row(m) for m in members if m.status != "removed"),
    )
