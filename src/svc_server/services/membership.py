"""Who may do what in an account: the signed-in user's primary consumer and role.

A signed-in user manages their *primary* consumer: the one with the highest plan among
their active memberships (enterprise, team, pro, internal, starter), the same consumer
the usage endpoint reports. Owners and admins may write; members may read.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from svc_core import emails, plans
from svc_core.errors import Forbidden, InvalidParams, NoConsumer
from svc_server.store import Store
from svc_server.store.base import Row, Tx

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


def primary_consumer(consumers: Sequence[Row]) -> Row | None:
    """The highest-plan consumer among a user's memberships."""
    if not consumers:
        return None
    best = plans.highest_plan([c["plan"] for c in consumers])
    return next(c for c in consumers if c["plan"] == best)


def normalize_email(email: str) -> str:
    """The one email rule (``svc_core.emails``): ASCII lower-casing only, nothing
    invisible; a Unicode look-alike of an address is a different address."""
    return emails.normalize_email(email)


def primary_consumer_id(store: Store, user_id: str) -> str | None:
    """The id of the consumer a signed-in user's account calls act on, or None."""
    with store.db.transaction(write=False) as tx:
        consumer = primary_consumer(store.accounts.active_consumers_of_user(tx, user_id))
    return None if consumer is None else str(consumer["id"])


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
