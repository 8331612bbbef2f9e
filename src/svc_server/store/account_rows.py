"""The rows of the accounts tables as typed values: what ``AccountsRepo`` (and its API-key
half) returns, so services read fields, never strings (issue 26, item 4).

One class per row shape, named for the noun; a joined read adds its columns in a
subclass (``KeyGrant`` is a key with its account's limits). Times are unix seconds as
stored; services turn them into instants where they show them.
"""

from __future__ import annotations

import attrs

from svc_core.convert import HIDDEN, INSTANT


@attrs.frozen(kw_only=True)
class Consumer:
    """An account (``consumers``): its plan, limits and billing state."""

    id: str
    plan: str
    company_name: str | None
    monthly_quota_override: int | None
    rate_limit_override: int | None
    subscription_status: str | None
    trial_ends_at: int | None
    founding_member: int
    trial_will_end_sent_for: int | None
    status: str
    created_at: int
    subscription_id: str | None = None
    subscription_period_end: int | None = None


@attrs.frozen(kw_only=True)
class ListedConsumer(Consumer):
    """An account as the operator lists it: its owner's email and how many keys work."""

    active_keys: int
    owner_email: str | None


@attrs.frozen(kw_only=True)
class MemberConsumer(Consumer):
    """An account a user is an active member of: their ``role`` in it, whether it is the
    one they switched to (``chosen``) and its owner's email."""

    role: str
    chosen: int
    owner_email: str | None


@attrs.frozen(kw_only=True)
class User:
    """A person who signs in (``users``)."""

    id: str
    subject: str | None
    email: str
    created_at: int
    current_consumer_id: str | None = None


@attrs.frozen(kw_only=True)
class Membership:
    """A member of an account, or an invitation (a pending membership)."""

    id: str
    consumer_id: str
    user_id: str | None
    email: str
    role: str
    status: str
    invited_at: int
    joined_at: int | None
    expires_at: int | None
    removed_at: int | None


@attrs.frozen(kw_only=True)
class Invite(Membership):
    """A pending membership with the name of the account it invites to and its owner's
    email (what the invitee knows the account by when it has no company name)."""

    company_name: str | None
    owner_email: str | None


@attrs.frozen(kw_only=True)
class Session:
    """A signed-in session (``sessions``)."""

    id: str
    user_id: str
    created_at: int
    expires_at: int
    revoked_at: int | None


@attrs.frozen(kw_only=True)
class ApiKey:
    """An API key as stored (``api_keys``): the hash, never the plaintext. Served (the
    account API, ``svc key list``) without its hash and bookkeeping, its fields in this
    order, with ``status`` in force (``services.keys.in_force``)."""

    id: str
    consumer_id: str = attrs.field(metadata=HIDDEN)
    label: str
    prefix: str
    key_hash: str = attrs.field(metadata=HIDDEN)
    mode: str
    scope: str
    ip_allowlist: tuple[str, ...]
    status: str
    """As stored (``svc_core.accounts.keys.STATUSES``); ``services.keys.in_force`` sets the one
    in force at a time."""
    created_at: int = attrs.field(metadata=INSTANT)
    grace_until: int | None = attrs.field(metadata=INSTANT)
    last_used_at: int | None = attrs.field(metadata=INSTANT)
    replaced_by: str | None = attrs.field(metadata=HIDDEN)
    revoked_at: int | None = attrs.field(metadata=HIDDEN)


@attrs.frozen(kw_only=True)
class KeyGrant(ApiKey):
    """A key with what its account lets it do: the account's plan, status and limit
    overrides (what admission reads on every call)."""

    plan: str
    consumer_status: str
    monthly_quota_override: int | None
    rate_limit_override: int | None


@attrs.frozen(kw_only=True)
class KeyCalls:
    """A key of an account with its successful counted calls in one month."""

    id: str
    prefix: str
    label: str
    mode: str
    status: str
    grace_until: int | None
    calls: int
