"""Who may do what in an account: the signed-in user's primary consumer and role.

A signed-in user acts on their *current* consumer: the account they last switched to
(``switch_account``, or by accepting an invitation) while they are still an active member
of it, else the one with the highest plan among their active memberships (enterprise,
team, pro, internal, starter). The usage endpoint, the dashboard and the data API called
with the session cookie all use it. Owners and admins may write; members may read.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import attrs

from svc_core.accounts import emails, plans
from svc_core.errors import Forbidden, InvalidParams, NoConsumer, NotFound
from svc_server.store import Store
from svc_server.store.account_rows import Invite, MemberConsumer
from svc_server.store.base import Tx

MANAGER_ROLES = frozenset({"owner", "admin"})


def parse_id(value: str, what: str = "id") -> str:
    """A path id must be a UUID in ASCII; anything else is 400, never a lookup
    (``uuid.UUID`` alone reads fullwidth and other Unicode digits)."""
    try:
        if not value.isascii():
            raise ValueError(value)
        return str(uuid.UUID(value))
    except ValueError:
        raise InvalidParams(f"The {what} must be a UUID.", hint=f"Got {value[:64]!r}.") from None


def primary_consumer(consumers: Sequence[MemberConsumer]) -> MemberConsumer | None:
    """The consumer a user acts on among their memberships
    (``AccountsRepo.active_consumers_of_user``): the one they chose, else the highest
    plan's. A choice is only ever a flag on a membership row, so an account the user
    left or was removed from can never be chosen."""
    if not consumers:
        return None
    chosen = next((c for c in consumers if c.chosen), None)
    if chosen is not None:
        return chosen
    best = plans.highest_plan([c.plan for c in consumers])
    return next(c for c in consumers if c.plan == best)


def normalize_email(email: str) -> str:
    """The one email rule (``svc_core.accounts.emails``): ASCII lower-casing only, nothing
    invisible; a Unicode look-alike of an address is a different address."""
    return emails.normalize_email(email)


def primary_consumer_id(store: Store, user_id: str) -> str | None:
    """The id of the consumer a signed-in user's account calls act on, or None."""
    with store.db.transaction(write=False) as tx:
        consumer = primary_consumer(store.accounts.active_consumers_of_user(tx, user_id))
    return None if consumer is None else str(consumer.id)


def account(store: Store, tx: Tx, user_id: str) -> tuple[MemberConsumer, str]:
    """The user's primary consumer and their role in it, or 404 ``NO_CONSUMER``."""
    consumer = primary_consumer(store.accounts.active_consumers_of_user(tx, user_id))
    if consumer is None:
        raise NoConsumer()
    return consumer, str(consumer.role)


def managed_account(store: Store, tx: Tx, user_id: str) -> MemberConsumer:
    """The user's primary consumer when they may change it: 404 ``NO_CONSUMER`` without
    one, 403 unless they are its owner or an admin."""
    consumer, role = account(store, tx, user_id)
    if role not in MANAGER_ROLES:
        raise Forbidden(
            "Only the owner or an admin of this account can do this.",
            hint="Ask an owner or admin to change your role.",
        )
    return consumer


@attrs.frozen(kw_only=True)
class AccountChoice:
    """An account the signed-in user belongs to, as the account switcher lists it."""

    id: str
    name: str
    plan: str
    role: str
    current: bool


def account_name(consumer: MemberConsumer | Invite) -> str:
    """What a person calls an account: its company name, else its owner's email."""
    return consumer.company_name or consumer.owner_email or "your account"


def accounts_of(store: Store, user_id: str) -> list[AccountChoice]:
    """Every account the user is an active member of, oldest first, the current one
    marked."""
    with store.db.transaction(write=False) as tx:
        consumers = store.accounts.active_consumers_of_user(tx, user_id)
    current = primary_consumer(consumers)
    return [
        AccountChoice(
            id=str(c.id),
            name=account_name(c),
            plan=str(c.plan),
            role=str(c.role),
            current=current is not None and c.id == current.id,
        )
        for c in consumers
    ]


def switch_account(store: Store, user_id: str, consumer_id: str) -> AccountChoice:
    """Act on another account the user is an active member of from now on (every
    session of theirs). Any other id, an account that does not exist or one they are not
    in, is the same 404, so ids cannot be probed."""
    wanted = parse_id(consumer_id, "account id")
    with store.db.transaction() as tx:
        consumers = store.accounts.active_consumers_of_user(tx, user_id)
        target = next((c for c in consumers if c.id == wanted), None)
        if target is None:
            raise NotFound(
                "You are not a member of this account.",
                hint="GET /api/auth/me/accounts lists the accounts you can switch to.",
            )
        store.accounts.set_current_consumer(tx, user_id, wanted)
    return AccountChoice(
        id=wanted,
        name=account_name(target),
        plan=str(target.plan),
        role=str(target.role),
        current=True,
    )
