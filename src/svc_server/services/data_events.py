"""Publishing ``data.updated``: every change record (``store.change_records``) becomes
one event per consumer, delivered to each of its active endpoints that names the event
and whose filters keep the change (``svc_core.events.filter_keeps``).

One event per change, not one per load: the payload is exactly the record ``GET
/changes`` serves (a receiver handles both the same way), its id is stable (publishing
again is a no-op, a receiver dedupes by it), filters apply to it whole, and a load that
touched fifty districts sends a customer who follows one of them one event, not a batch
to sift. A sync writes a change per month it changed, so a busy day is tens of events
per endpoint, each small.

The change records live in the data store and the events in the accounts' (separate
SQLite files), so the two are not one transaction: how far records were published is
kept beside the events (``change_publishing``) and advanced in the transaction that
publishes them, under a lock, so two publishers never publish a record twice and a
publisher that stops loses nothing (the next one starts where it ended). Loads publish
when they finish (``svc ingest``, ``svc sync``, ``svc demo-data``) and every webhook
worker publishes what is left at each sweep.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from svc_core import events as core_events
from svc_core.event_filters import filter_keeps
from svc_core.realestate.changes import record_json
from svc_server.services.events import publish_to
from svc_server.store import Store
from svc_server.store.webhook_rows import Endpoint

EVENT = "data.updated"
BATCH = 200
"""Change records published per transaction."""
_LOCK = "svc:data-events"
log = logging.getLogger("svc.events")


def publish_changes(store: Store, now: float, *, base: str) -> int:
    """Publish every change record not yet published; return the deliveries queued.
    ``base`` is the public URL the records' links start with."""
    queued = 0
    while True:
        with store.db.transaction(write=False) as tx:
            after = store.webhooks.published_change(tx, EVENT)
        records = store.realestate.records_after(after, BATCH)
        if not records:
            return queued
        with store.db.transaction() as tx:
            store.db.lock(tx, _LOCK)
            if store.webhooks.published_change(tx, EVENT) != after:
                continue  # another publisher took these: read again from where it ended
            subscribers = store.webhooks.subscribers(tx, EVENT)
            for record in records:
                change = record_json(record, base)
                for consumer_id, endpoints in _kept_by(subscribers, change).items():
                    event = core_events.data_updated(
                        change=change, consumer_id=consumer_id, now=now
                    )
                    queued += publish_to(store, tx, consumer_id, event, endpoints, now)
            store.webhooks.set_published_change(tx, EVENT, records[-1].id)


def publisher(base: str) -> Callable[[Store, float], int]:
    """``publish_changes`` with its public URL, as the webhook worker runs it."""
    return functools.partial(publish_changes, base=base)


def publish_after_load(store: Store, now: float, *, base: str) -> str | None:
    """``publish_changes`` at the end of a load command: None when done, else a line
    saying why not (the load is committed whatever happens here; a worker's sweep
    publishes what is left)."""
    try:
        publish_changes(store, now, base=base)
    except Exception as exc:  # the load is committed: never fail it for its events
        log.warning("publishing data.updated failed", exc_info=True)
        return (
            f"svc: warning: data.updated events not published yet ({type(exc).__name__}); "
            "the webhook worker publishes them at its next sweep"
        )
    return None


def _kept_by(endpoints: list[Endpoint], change: dict[str, object]) -> dict[str, list[Endpoint]]:
    """The endpoints whose filters keep ``change``, per consumer."""
    out: dict[str, list[Endpoint]] = {}
    for endpoint in endpoints:
        if filter_keeps(endpoint.filters, change):
            out.setdefault(endpoint.consumer_id, []).append(endpoint)
    return out
