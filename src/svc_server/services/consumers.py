"""Consumer use cases: the operator's ``svc consumer create``, and the user (with a
starter consumer and its first key) that a first sign-in creates."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from svc_core import plans
from svc_core.errors import InvalidParams
from svc_server.identity import Identity
from svc_server.services.keys import first_key
from svc_server.services.membership import normalize_email
from svc_server.store import Store
from svc_server.store.base import Row, Tx


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
        {
            "id": ids(),
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
    ids: Callable[[], str],
    email: str | None = None,
    company: str | None = None,
    monthly_quota: int | None = None,
    rate_limit: int | None = None,
) -> CreatedConsumer:
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
            ids=ids,
            company=company,
            monthly_quota=monthly_quota,
            rate_limit=rate_limit,
        )
        if email is not None:
            email = normalize_email(email)
            user = store.accounts.get_user_by_email(tx, email)
            if user is None:
                user = {"id": ids()}
                store.accounts.insert_user(tx, user["id"], None, email, int(now))
            _owner(store, tx, consumer_id, user["id"], email, now=now, ids=ids)
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
) -> tuple[Row, str | None]:
    """Find or create the user of a verified identity; returns a new key's plaintext
    when this sign-in created the user's first consumer (on ``plan``: SPEC's starter
    unless the deployment sets ``SVC_SIGNUP_PLAN``).

    The subject is the identity; the email only binds. A known subject is its user,
    whatever email it brings now. A new subject claims the user reserved for its email
    (by ``svc consumer create --email``) when no subject holds it yet; an email that
    another subject already holds, or none (absent or unverified), gets the subject a
    user of its own at the placeholder ``<sub>@users.invalid``. No email can be in the
    ``.invalid`` domain (``svc_core.emails``) and subjects are unique, so a placeholder
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
        if user is not None and user["subject"] is None:
            store.accounts.set_user_subject(tx, user["id"], identity.sub)
        elif user is None:
            user_id = ids()
            store.accounts.insert_user(tx, user_id, identity.sub, email, int(now))
            user = {"id": user_id, "email": email, "subject": identity.sub}
        else:  # the email belongs to another subject: keep them apart
            user_id = ids()
            store.accounts.insert_user(tx, user_id, identity.sub, placeholder, int(now))
            user = {"id": user_id, "email": placeholder, "subject": identity.sub}
    if store.accounts.active_consumers_of_user(tx, user["id"]):
        return user, None
    consumer_id = _new_consumer(store, tx, plan=plan, now=now, ids=ids)
    _owner(store, tx, consumer_id, user["id"], user["email"], now=now, ids=ids)
    return user, first_key(store, tx, consumer_id, now=now, entropy=entropy, ids=ids).key
