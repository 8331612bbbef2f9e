"""Webhook event payloads (SPEC "Events"): builders, subscriptions, quota thresholds.

An event is the JSON object a receiver gets: ``{id, type, created, data}``. ``id`` is the
idempotency key receivers dedupe by, ``created`` is Unix seconds, and every timestamp
inside ``data`` is ISO-8601 UTC with a ``Z`` (``2026-05-01T00:00:00Z``, whole seconds).
Builders are pure: the clock (``now``) and any generated id are arguments. A time is an
aware ``datetime`` or Unix seconds (``int``/``float``, floored to whole seconds).

``serialize`` gives the exact bytes that are stored, signed and sent.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import urlsplit

from svc_core.errors import InvalidParams
from svc_core.instants import Instant as Instant
from svc_core.instants import iso as iso
from svc_core.instants import iso_or_none
from svc_core.instants import unix as unix

Event = dict[str, Any]

WILDCARD = "*"
EVENT_TYPES: tuple[str, ...] = (
    "subscription.updated",
    "subscription.cancelled",
    "subscription.trial_will_end",
    "quota.warning_80pct",
    "quota.exceeded",
    "key.rotated",
    "key.revoked",
    "webhook.test",
    "data.updated",
)
"""The nine event types svc sends."""
SUBSCRIBABLE: tuple[str, ...] = (WILDCARD, *EVENT_TYPES)
"""What an endpoint's ``events`` list may hold: the types plus ``*`` (all events but the
``NAMED_ONLY`` ones)."""
NAMED_ONLY: frozenset[str] = frozenset({"data.updated"})
"""Event types an endpoint receives only when it names them: ``*`` was every account
event before the data feed existed, and a sync can write hundreds of changes a day, so
an endpoint of ``*`` is not flooded with them unasked."""


QUOTA_KINDS: tuple[str, ...] = ("warning_80pct", "exceeded")
ACTORS: tuple[str, ...] = ("self", "admin")
SUBSCRIPTION_STATUSES: tuple[str, ...] = ("trialing", "active", "past_due", "canceled", "unpaid")
TEST_MESSAGE = "This is a test event from svc. If your endpoint verified it, webhooks work."

_EVENT_ID = re.compile(r"[A-Za-z0-9_.:-]{1,255}")
_ID_PART = re.compile(r"[A-Za-z0-9_-]{1,128}")
_MONTH = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")


def _id_part(value: str, name: str) -> str:
    if not isinstance(value, str) or _ID_PART.fullmatch(value) is None:
        raise ValueError(f"{name} must be 1 to 128 characters of [A-Za-z0-9_-]: {value!r}")
    return value


def _count(value: int, name: str, minimum: int = 0) -> int:
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}: {value!r}")
    return value


def envelope(event_id: str, event_type: str, now: Instant, data: dict[str, Any]) -> Event:
    """The common envelope ``{id, type, created, data}``."""
    if not isinstance(event_id, str) or _EVENT_ID.fullmatch(event_id) is None:
        raise ValueError(f"event id must be 1 to 255 characters of [A-Za-z0-9_.:-]: {event_id!r}")
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    return {"id": event_id, "type": event_type, "created": unix(now, "now"), "data": data}


def head(event: Event) -> tuple[str, str]:
    """An envelope's id and type: what the event log and the outbox key on."""
    return str(event["id"]), str(event["type"])


def serialize(event: Event) -> bytes:
    """Canonical compact JSON (sorted keys, UTF-8, no NaN): the raw body that is signed."""
    return json.dumps(
        event, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


# subscriptions ------------------------------------------------------------------------


def matches(subscribed: Sequence[str], event_type: str) -> bool:
    """True when an endpoint subscribed to ``subscribed`` receives ``event_type``
    (``*`` covers every type but the ``NAMED_ONLY`` ones)."""
    if isinstance(subscribed, str):
        raise TypeError("subscribed must be a sequence of event types, not one string")
    if event_type in subscribed:
        return True
    return WILDCARD in subscribed and event_type not in NAMED_ONLY


def validate_subscription(events: object) -> list[str]:
    """An endpoint's ``events`` field from a request body, checked and de-duplicated.

    Absent (``None``) means ``["*"]``. An empty list is refused: such an endpoint could
    only ever receive test events. Order is kept; repeats are dropped.
    """
    if events is None:
        return [WILDCARD]
    allowed = ", ".join(SUBSCRIBABLE)
    if not isinstance(events, list):
        raise InvalidParams("events must be an array of event types.", hint=f"Use {allowed}.")
    if not events:
        raise InvalidParams(
            "events must name at least one event type.", hint='Send ["*"] for every event.'
        )
    out: list[str] = []
    for item in events:
        if not isinstance(item, str) or item not in SUBSCRIBABLE:
            shown = item[:64] if isinstance(item, str) else type(item).__name__
            raise InvalidParams(f"Unknown event type {shown!r}.", hint=f"Allowed: {allowed}.")
        if item not in out:
            out.append(item)
    return out


# quota ---------------------------------------------------------------------------------


def quota_threshold(kind: str, limit: int) -> int:
    """The usage count at which a quota event fires: ceil(80% of limit), or the limit."""
    _count(limit, "limit", minimum=1)
    if kind == "warning_80pct":
        return -(-4 * limit // 5)
    if kind == "exceeded":
        return limit
    raise ValueError(f"quota event kind must be one of {QUOTA_KINDS}: {kind!r}")


def _percent(current: int, limit: int) -> float:
    exact = Decimal(current) * 100 / Decimal(limit)
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def quota_event(
    *,
    kind: str,
    consumer_id: str,
    period_month: str,
    current: int,
    limit: int,
    period_starts_at: Instant,
    now: Instant,
) -> Event:
    """``quota.warning_80pct`` or ``quota.exceeded`` for one consumer and UTC month.

    The id ``evt_quota_<kind>_<consumer>_<YYYY-MM>`` is the same for every emission in the
    month, so a second emission is a duplicate wherever ids are unique.
    """
    if kind not in QUOTA_KINDS:
        raise ValueError(f"quota event kind must be one of {QUOTA_KINDS}: {kind!r}")
    if not isinstance(period_month, str) or _MONTH.fullmatch(period_month) is None:
        raise ValueError(f"period_month must be YYYY-MM: {period_month!r}")
    _id_part(consumer_id, "consumer_id")
    _count(current, "current")
    _count(limit, "limit", minimum=1)
    usage = {
        "current": current,
        "limit": limit,
        "percent": _percent(current, limit),
        "period_starts_at": iso(period_starts_at, "period_starts_at"),
    }
    event_id = f"evt_quota_{kind}_{consumer_id}_{period_month}"
    return envelope(event_id, f"quota.{kind}", now, {"usage": usage})


# keys ----------------------------------------------------------------------------------


def _key_data(key_id: str, prefix: str | None, actor: str, now: Instant) -> dict[str, Any]:
    _id_part(key_id, "key_id")
    if prefix is not None and not isinstance(prefix, str):
        raise ValueError("prefix must be a string or None")
    if actor not in ACTORS:
        raise ValueError(f"actor must be one of {ACTORS}: {actor!r}")
    return {"key": {"id": key_id, "prefix": prefix}, "actor": actor, "event_at": iso(now, "now")}


def key_rotated(
    *,
    key_id: str,
    prefix: str | None,
    new_key_id: str,
    new_key_prefix: str | None,
    grace_until: Instant,
    actor: str,
    now: Instant,
) -> Event:
    """``key.rotated`` about the old key; it keeps working until ``grace_until``."""
    data = _key_data(key_id, prefix, actor, now)
    data["new_key_id"] = _id_part(new_key_id, "new_key_id")
    data["new_key_prefix"] = new_key_prefix
    data["grace_until"] = iso(grace_until, "grace_until")
    return envelope(f"evt_key_rotated_{key_id}_{unix(now, 'now')}", "key.rotated", now, data)


def key_revoked(
    *, key_id: str, prefix: str | None, revoked_at: Instant, actor: str, now: Instant
) -> Event:
    """``key.revoked``: from ``revoked_at`` on the key is rejected with 401."""
    data = _key_data(key_id, prefix, actor, now)
    data["revoked_at"] = iso(revoked_at, "revoked_at")
    return envelope(f"evt_key_revoked_{key_id}_{unix(now, 'now')}", "key.revoked", now, data)


# subscriptions (relayed from the payment processor) --------------------------------------


def _subscription(
    subscription_id: str,
    status: str,
    current_period_end: Instant | None,
    trial_end: Instant | None,
) -> dict[str, Any]:
    _id_part(subscription_id, "subscription_id")
    if status not in SUBSCRIPTION_STATUSES:
        raise ValueError(f"subscription status must be one of {SUBSCRIPTION_STATUSES}: {status!r}")
    return {
        "id": subscription_id,
        "status": status,
        "current_period_end": iso_or_none(current_period_end, "current_period_end"),
        "trial_end": iso_or_none(trial_end, "trial_end"),
    }


def subscription_updated(
    *,
    subscription_id: str,
    status: str,
    current_period_end: Instant | None,
    trial_end: Instant | None,
    now: Instant,
    event_id: str | None = None,
) -> Event:
    """``subscription.updated`` (created or changed).

    ``event_id`` should be the processor's event id so a re-relay is a duplicate; without
    it the id is ``evt_subscription_updated_<subscription>_<now>``.
    """
    sub = _subscription(subscription_id, status, current_period_end, trial_end)
    eid = event_id or f"evt_subscription_updated_{subscription_id}_{unix(now, 'now')}"
    return envelope(eid, "subscription.updated", now, {"subscription": sub})


def subscription_cancelled(
    *,
    subscription_id: str,
    status: str,
    current_period_end: Instant | None,
    trial_end: Instant | None,
    canceled_at: Instant,
    cancel_at_period_end: bool,
    now: Instant,
    event_id: str | None = None,
) -> Event:
    """``subscription.cancelled``; the default id uses ``canceled_at``, so it is stable."""
    if type(cancel_at_period_end) is not bool:
        raise ValueError("cancel_at_period_end must be a bool")
    sub = _subscription(subscription_id, status, current_period_end, trial_end)
    sub["canceled_at"] = iso(canceled_at, "canceled_at")
    sub["cancel_at_period_end"] = cancel_at_period_end
    eid = event_id or (
        f"evt_subscription_cancelled_{subscription_id}_{unix(canceled_at, 'canceled_at')}"
    )
    return envelope(eid, "subscription.cancelled", now, {"subscription": sub})


def subscription_trial_will_end(
    *,
    subscription_id: str,
    status: str,
    current_period_end: Instant | None,
    trial_end: Instant,
    now: Instant,
    event_id: str | None = None,
) -> Event:
    """``subscription.trial_will_end`` (3 days before ``trial_end``).

    The default id uses ``trial_end``, so the event is emitted once per trial.
    """
    if trial_end is None:
        raise ValueError("trial_will_end needs a trial_end")
    sub = _subscription(subscription_id, status, current_period_end, trial_end)
    eid = event_id or (
        f"evt_subscription_trial_will_end_{subscription_id}_{unix(trial_end, 'trial_end')}"
    )
    return envelope(eid, "subscription.trial_will_end", now, {"subscription": sub})


# test sends ----------------------------------------------------------------------------


def webhook_test_id(entropy: bytes) -> str:
    """A fresh id for a test send: ``evt_webhook_test_`` + 32 hex from 16 bytes."""
    if len(entropy) != 16:
        raise ValueError("a test event id needs exactly 16 bytes of entropy")
    return "evt_webhook_test_" + entropy.hex()


def data_updated(*, change: dict[str, Any], consumer_id: str, now: Instant) -> Event:
    """``data.updated``: one change record (``svc_core.realestate.changes.record_json``)
    for one consumer. The id ``evt_data_updated_<change id>_<consumer>`` is the same for
    every publication of the change, so publishing it again is a duplicate."""
    change_id = _count(change["id"], "change id", minimum=1)
    _id_part(consumer_id, "consumer_id")
    event_id = f"evt_data_updated_{change_id}_{consumer_id}"
    return envelope(event_id, "data.updated", now, {"change": change})


def webhook_test(*, event_id: str, now: Instant, docs_url: str) -> Event:
    """``webhook.test``: same envelope, signature and headers as a real event."""
    data = {"test": True, "message": TEST_MESSAGE, "sent_at": iso(now, "now"), "docs_url": docs_url}
    return envelope(event_id, "webhook.test", now, data)


def _loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is this
    machine only: ``localhost`` (RFC 6761 6.3), 127.0.0.0/8, ``::1``."""
    host = host.strip().strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def loopback_links(public_url: str, listen_host: str) -> str | None:
    """Why events must not carry links to ``public_url`` when the server serving them
    listens on ``listen_host``, or None when they may.

    A server that listens on loopback only is reached at a loopback address, so links
    there are right (a development machine); one that listens anywhere else is reached
    by other machines, and a loopback link in an event sent to them points at the
    receiver's own machine, never at the server."""
    if _loopback_host(listen_host):
        return None
    host = urlsplit(public_url).hostname or ""
    if not _loopback_host(host):
        return None
    return (
        f"the events' links would point at {public_url}, a loopback address, while the "
        f"server listens on {listen_host or 'every interface'}: set SVC_PUBLIC_URL to the "
        "address clients reach the server at"
    )
