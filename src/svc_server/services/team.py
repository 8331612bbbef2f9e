"""Team use cases: members and invitations of the primary consumer, seats per plan, and
the invitations waiting for the signed-in user."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

import attrs

from svc_core.accounts import plans
from svc_core.accounts.bodies import INVITE_FIELDS
from svc_core.errors import AlreadyInvited, Forbidden, NotFound, SeatLimitReached
from svc_core.fields import read_body
from svc_core.instants import utc, utc_or_none
from svc_core.same_named import SameNamed
from svc_server.services.membership import account, account_name, managed_account, parse_id
from svc_server.store import Store
from svc_server.store.account_rows import Invite, Membership

INVITE_SECONDS = 7 * 24 * 3600


class MemberStatus(enum.StrEnum):
    """A membership's status: invited, joined, or removed from the team."""

    PENDING = "pending"
    ACTIVE = "active"
    REMOVED = "removed"


@attrs.frozen(kw_only=True)
class MemberRow:
    """A member or a pending invitation of the team (attribute order is JSON order)."""

    id: str
    user_id: str | None
    email: str
    role: str
    status: str
    invited_at: datetime | None
    joined_at: datetime | None


@attrs.frozen(kw_only=True)
class InvitedMember:
    """A new invitation: SPEC's pending invite row (``id``, ``consumer_id``,
    ``company_name``, ``account_name``, ``role``, ``invited_at``), then the member fields
    and when it lapses."""

    id: str
    consumer_id: str
    company_name: str | None
    account_name: str
    role: str
    invited_at: datetime
    user_id: str | None
    email: str
    status: str
    joined_at: datetime | None
    expires_at: datetime


@attrs.frozen(kw_only=True)
class Team:
    """The team of the primary consumer: visible members and its seats."""

    members: tuple[MemberRow, ...]
    seat_limit: int
    plan: str


@attrs.frozen(kw_only=True)
class InviteRow:
    """An invitation waiting for the signed-in user."""

    id: str
    consumer_id: str
    company_name: str | None
    account_name: str
    role: str
    invited_at: datetime | None


_MEMBER_ROW = SameNamed(MemberRow, Membership)


def member_row(row: Membership) -> MemberRow:
    return _MEMBER_ROW(
        row,
        invited_at=utc_or_none(row.invited_at),
        joined_at=utc_or_none(row.joined_at),
    )


def _seats_taken(rows: Sequence[Membership], now: float) -> int:
    return sum(
        1
        for r in rows
        if r.status == MemberStatus.ACTIVE
        or (r.status == MemberStatus.PENDING and (r.expires_at is None or r.expires_at > now))
    )


def team(store: Store, user_id: str, now: float) -> Team:
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.accounts.memberships_of_consumer(tx, consumer.id)
    seats = plans.effective_limits(consumer.plan, None, None).seats
    visible = [
        r
        for r in rows
        if r.status != MemberStatus.PENDING or r.expires_at is None or r.expires_at > now
    ]
    return Team(members=tuple(member_row(r) for r in visible), seat_limit=seats, plan=consumer.plan)


_INVITED_MEMBER = SameNamed(InvitedMember, Membership)


def invite(
    store: Store, user_id: str, body: dict[str, Any], *, now: float, ids: Callable[[], str]
) -> InvitedMember:
    email, role = validate_invite(body)
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        store.db.lock(tx, "consumer:" + consumer.id)  # concurrent invites see each other
        rows = store.accounts.memberships_of_consumer(tx, consumer.id)
        for r in rows:
            live_pending = r.status == MemberStatus.PENDING and (r.expires_at or 0) > now
            if r.email == email and (r.status == MemberStatus.ACTIVE or live_pending):
                raise AlreadyInvited(f"{email} is already a member or invited.")
        seats = plans.effective_limits(consumer.plan, None, None).seats
        if _seats_taken(rows, now) >= seats:
            raise SeatLimitReached(
                f"The {consumer.plan} plan has {seats} seat(s), all taken or invited.",
                hint="Remove a member or upgrade the plan.",
            )
        row = Membership(
            id=ids(),
            consumer_id=consumer.id,
            user_id=None,
            email=email,
            role=role,
            status="pending",
            invited_at=int(now),
            joined_at=None,
            expires_at=int(now) + INVITE_SECONDS,
            removed_at=None,
        )
        store.accounts.insert_membership(tx, row)
    owner = min(
        (r.email for r in rows if r.role == "owner" and r.status == MemberStatus.ACTIVE),
        default=None,
    )
    return _INVITED_MEMBER(
        row,
        company_name=consumer.company_name,
        account_name=consumer.company_name or owner or "your account",
        invited_at=utc(row.invited_at),
        joined_at=None,
        expires_at=utc(int(now) + INVITE_SECONDS),
    )


def validate_invite(body: dict[str, Any]) -> tuple[str, str]:
    """The invitee's normalised email and role (``svc_core.accounts.bodies.INVITE_FIELDS``)."""
    email, role = itemgetter("email", "role")(read_body(INVITE_FIELDS, body))
    return str(email), str(role)


def remove_member(store: Store, user_id: str, member_id: str, now: float) -> None:
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        row = store.accounts.get_membership(tx, parse_id(member_id, "member id"))
        if row is None or row.consumer_id != consumer.id or row.status == MemberStatus.REMOVED:
            raise NotFound("No such team member or invitation.")
        if row.role == "owner":
            raise Forbidden("The owner cannot be removed.")
        # Compare-and-set: of concurrent removals only one changes the row.
        if not store.accounts.remove_membership(tx, row.id, int(now)):
            raise NotFound("No such team member or invitation.")


_INVITE_ROW = SameNamed(InviteRow, Invite)


def my_invites(store: Store, user_id: str, now: float) -> list[InviteRow]:
    user = store.accounts.get_user(user_id)
    if user is None:
        return []
    with store.db.transaction(write=False) as tx:
        rows = store.accounts.pending_invites_for_email(tx, user.email, int(now))
    return [
        _INVITE_ROW(r, account_name=account_name(r), invited_at=utc_or_none(r.invited_at))
        for r in rows
    ]


def accept_invite(store: Store, user_id: str, invite_id: str, now: float) -> None:
    """Join the inviting account with the invited role and switch to it."""
    invite_id = parse_id(invite_id, "invite id")
    with store.db.transaction() as tx:
        user = store.accounts.get_user_by_id(tx, user_id)
        row = store.accounts.get_membership(tx, invite_id)
        if (
            user is None
            or row is None
            or row.status != MemberStatus.PENDING
            or (row.expires_at is not None and row.expires_at <= now)
            or row.email != user.email
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
        # The invitee lands in the account that invited them (``membership``).
        store.accounts.set_current_consumer(tx, user_id, row.consumer_id)
