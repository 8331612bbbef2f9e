"""Publishing events: record once, queue one delivery per subscribed active endpoint.

Event sources live here too: quota thresholds (called by ``access.settle``), subscription
changes relayed from the payment processor (``relay_subscription``), and the periodic
``subscription.trial_will_end`` job (``notify_trials_ending``, run by the worker). Key
events are published by the account service. Everything is published inside the caller's
transaction, so an event exists exactly when the change that caused it was committed.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from svc_core import instants
from svc_core.errors import InvalidParams, NotFound
from svc_core.webhooks import events as core_events
from svc_server.store import Store
from svc_server.store.base import Tx
from svc_server.store.webhook_rows import Endpoint

TRIAL_NOTICE_SECONDS = 3 * 24 * 3600
"""``subscription.trial_will_end`` goes out this long before the trial ends."""
RELAY_KINDS = ("updated", "cancelled")

_seq_lock = threading.Lock()
_last_seq = 0


def next_seq() -> int:
    """An ordering key for deliveries: wall-clock nanoseconds, strictly increasing within
    a process. Across processes and hosts the order is as good as their clocks (SPEC:
    best effort)."""
    global _last_seq
    with _seq_lock:
        _last_seq = max(_last_seq + 1, time.time_ns())
        return _last_seq


def publish(store: Store, tx: Tx, consumer_id: str, event: dict[str, Any], now: float) -> int:
    """Store ``event`` for ``consumer_id`` and queue its deliveries; return how many.

    Idempotent by event id: publishing the same id again queues nothing.
    """
    _, event_type = core_events.head(event)
    endpoints = [
        endpoint
        for endpoint in store.webhooks.active_endpoints(tx, consumer_id)
        if core_events.matches(endpoint.events, event_type)
    ]
    return publish_to(store, tx, consumer_id, event, endpoints, now)


def publish_to(
    store: Store,
    tx: Tx,
    consumer_id: str,
    event: dict[str, Any],
    endpoints: Sequence[Endpoint],
    now: float,
) -> int:
    """Store ``event`` for ``consumer_id`` and queue one delivery to each of
    ``endpoints`` (the caller chose them); how many. Nothing when the id was published."""
    body = core_events.serialize(event)
    event_id, event_type = core_events.head(event)
    if not store.webhooks.insert_event(tx, event_id, consumer_id, event_type, body, int(now)):
        return 0
    queued = 0
    for endpoint in endpoints:
        queued += store.webhooks.enqueue(
            tx,
            {
                "id": str(uuid.uuid4()),
                "endpoint_id": endpoint.id,
                "event_id": event_id,
                "event_type": event_type,
                "status": "pending",
                "trigger": "scheduled",
                "attempt_count": 0,
                "created_at": int(now),
                "seq": next_seq(),
            },
        )
    return queued


def publish_quota(
    store: Store,
    tx: Tx,
    *,
    kind: str,
    consumer_id: str,
    month: str,
    current: int,
    limit: int,
    now: float,
) -> int:
    """Publish ``quota.warning_80pct`` or ``quota.exceeded`` for a month."""
    year, mon = (int(part) for part in month.split("-"))
    starts_at = datetime(year, mon, 1, tzinfo=UTC)  # the month the usage was counted in
    event = core_events.quota_event(
        kind=kind,
        consumer_id=consumer_id,
        period_month=month,
        current=current,
        limit=limit,
        period_starts_at=starts_at,
        now=now,
    )
    return publish(store, tx, consumer_id, event, now)


# subscriptions ----------------------------------------------------------------------------


def _instant(value: object, name: str) -> int | None:
    """A relayed time: Unix seconds (number or digit string), ISO-8601 with an offset or
    ``Z``, or None. Returned as whole Unix seconds."""
    if value is None:
        return None
    if isinstance(value, str) and (digits := value.strip()).isascii() and digits.isdigit():
        value = int(digits)  # isdigit alone accepts '²', which int() refuses
    if isinstance(value, bool):
        raise InvalidParams(f"subscription {name} must be a time, not a boolean.")
    if isinstance(value, int | float):
        if not math.isfinite(value) or not 0 <= value < 253402300800:
            raise InvalidParams(f"subscription {name} is out of range: {value!r}.")
        return math.floor(value)
    if isinstance(value, str):
        try:
            return instants.unix(instants.parse_iso(value, name))
        except instants.MissingZone:
            raise InvalidParams(f"subscription {name} needs a time zone (Z or +09:00).") from None
        except ValueError:
            raise InvalidParams(
                f"subscription {name} is not a time: {value[:64]!r}.",
                hint="Use Unix seconds or ISO-8601 such as 2026-06-01T00:00:00Z.",
            ) from None
    raise InvalidParams(f"subscription {name} must be Unix seconds or an ISO-8601 string.")


def relay_subscription(
    store: Store,
    consumer_id: str,
    kind: str,
    subscription: Mapping[str, Any],
    now: float,
    *,
    event_id: str | None = None,
) -> dict[str, Any]:
    """Apply a subscription change from the payment processor and publish it.

    ``kind`` is ``updated`` or ``cancelled``. ``subscription`` holds ``id``, ``status``
    (``trialing``, ``active``, ``past_due``, ``canceled``, ``unpaid``),
    ``current_period_end`` and ``trial_end`` (times or None), and for ``cancelled``
    ``canceled_at`` (default ``now``) and ``cancel_at_period_end`` (default False);
    other keys are ignored, so a processor's subscription object can be passed as is.
    Pass the processor's ``event_id`` so that relaying the same change twice publishes
    it once. The consumer's ``subscription_status`` becomes ``status``; a non-null
    ``trial_end`` becomes its ``trial_ends_at``. Returns ``{event_id, event_type, queued}``.
    """
    if kind not in RELAY_KINDS:
        raise InvalidParams(f"kind must be one of {', '.join(RELAY_KINDS)}, not {kind!r}.")
    if not isinstance(subscription, Mapping):
        raise InvalidParams("subscription must be an object.")
    sub_id = subscription.get("id")
    status = subscription.get("status")
    if not isinstance(sub_id, str) or not isinstance(status, str):
        raise InvalidParams(
            "subscription needs a string id and a string status.",
            hint=f"status is one of {', '.join(core_events.SUBSCRIPTION_STATUSES)}.",
        )
    period_end = _instant(subscription.get("current_period_end"), "current_period_end")
    trial_end = _instant(subscription.get("trial_end"), "trial_end")
    # what both events say of the subscription
    stated: dict[str, Any] = {
        "subscription_id": sub_id,
        "status": status,
        "current_period_end": period_end,
        "trial_end": trial_end,
        "now": now,
        "event_id": event_id,
    }
    try:
        if kind == "updated":
            event = core_events.subscription_updated(**stated)
        else:
            canceled_at = _instant(subscription.get("canceled_at"), "canceled_at")
            event = core_events.subscription_cancelled(
                **stated,
                canceled_at=canceled_at if canceled_at is not None else now,
                cancel_at_period_end=subscription.get("cancel_at_period_end", False),
            )
    except InvalidParams:
        raise
    except ValueError as exc:
        raise InvalidParams(f"Invalid subscription: {exc}") from None
    fields: dict[str, Any] = {
        "subscription_status": status,
        "subscription_id": sub_id,
        "subscription_period_end": period_end,
        **({} if trial_end is None else {"trial_ends_at": trial_end}),
    }
    with store.db.transaction() as tx:
        if not store.accounts.update_consumer(tx, consumer_id, fields):
            raise NotFound(f"No consumer {consumer_id[:64]!r}.")
        queued = publish(store, tx, consumer_id, event, now)
    published, event_type = core_events.head(event)
    return {"event_id": published, "event_type": event_type, "queued": queued}


def notify_trials_ending(store: Store, now: float) -> int:
    """Publish ``subscription.trial_will_end`` for trials ending within 3 days; return
    how many were published.

    Once per trial: a marker (``consumers.trial_will_end_sent_for``) is taken with a
    compare-and-set in the same transaction, so concurrent workers publish it once; a new
    ``trial_ends_at`` is a new trial. Only consumers without a subscription status or
    ``trialing`` qualify. Without a relayed subscription id the consumer id stands in.
    """
    published = 0
    with store.db.transaction() as tx:
        rows = store.webhooks.trial_candidates(tx, int(now), int(now) + TRIAL_NOTICE_SECONDS)
        for row in rows:
            trial_end = int(row.trial_ends_at)
            if not store.webhooks.mark_trial_notice(tx, row.id, trial_end):
                continue
            event = core_events.subscription_trial_will_end(
                subscription_id=row.subscription_id or row.id,
                status=row.subscription_status or "trialing",
                current_period_end=row.subscription_period_end or trial_end,
                trial_end=trial_end,
                now=now,
            )
            publish(store, tx, row.id, event, now)
            published += 1
    return published
