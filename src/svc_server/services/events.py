"""Publishing events: record once, queue one delivery per subscribed active endpoint."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from svc_core import events as core_events
from svc_server.store import Store
from svc_server.store.base import Tx


def publish(store: Store, tx: Tx, consumer_id: str, event: dict[str, Any], now: float) -> int:
    """Store ``event`` for ``consumer_id`` and queue its deliveries; return how many.

    Idempotent by event id: publishing the same id again queues nothing.
    """
    body = core_events.serialize(event)
    if not store.webhooks.insert_event(tx, event["id"], consumer_id, event["type"], body, int(now)):
        return 0
    queued = 0
    for endpoint in store.webhooks.active_endpoints(tx, consumer_id):
        if not core_events.matches(endpoint["events"], event["type"]):
            continue
        queued += store.webhooks.enqueue(
            tx,
            {
                "id": str(uuid.uuid4()),
                "endpoint_id": endpoint["id"],
                "event_id": event["id"],
                "event_type": event["type"],
                "status": "pending",
                "trigger": "scheduled",
                "attempt_count": 0,
                "created_at": int(now),
                "seq": time.monotonic_ns(),
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
