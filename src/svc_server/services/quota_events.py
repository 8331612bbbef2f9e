"""Quota events: ``quota.warning_80pct`` and ``quota.exceeded``, each once a month.

Fired by whichever write moves a month's settled count to or past a threshold: a call
settling its own unit (``access.settle``) or a process writing back a lease
(``leases``); the marker row decides which of concurrent writers publishes.
"""

from __future__ import annotations

from collections.abc import Sequence

from svc_core.webhooks import events as core_events
from svc_server.services import events as event_service
from svc_server.store import Store
from svc_server.store.base import Tx
from svc_server.store.holds import UsageClaim


def fire_thresholds(store: Store, tx: Tx, claim: UsageClaim, count: int, now: float) -> None:
    """Publish the quota events whose threshold ``count`` reached, each once a month
    (the marker row decides which caller publishes)."""
    for name in reached(count, claim.limit):
        if store.accounts.mark_quota_event(tx, claim.consumer_id, claim.month, name, int(now)):
            event_service.publish_quota(
                store,
                tx,
                kind=name,
                consumer_id=claim.consumer_id,
                month=claim.month,
                current=count,
                limit=claim.limit,
                now=now,
            )


def reached(count: int, limit: int) -> Sequence[str]:
    """Quota kinds whose threshold is at or below ``count``; the marker row decides which
    of them fire (only the first success at or past a threshold inserts it)."""
    if limit <= 0:
        return []
    return [k for k in core_events.QUOTA_KINDS if count >= core_events.quota_threshold(k, limit)]
