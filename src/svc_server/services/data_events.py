"""Publishing ``data.updated``: every change record (``store.change_records``) becomes
one event per consumer, delivered to each of its active endpoints that names the event
and whose filters keep the change (``svc_core.webhooks.events.filter_keeps``).

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

The links in a record start with the deployment's public address, which ``svc serve``
records in the store as it starts (``record_address``): a load command or a worker run
with another environment (a cron line, a container without ``SVC_PUBLIC_URL``) still
links where the server serves ``/changes``. Until a server has recorded it, or while it
is a loopback address of a server listening elsewhere, nothing is published and the
records wait.
"""

from __future__ import annotations

import logging

from svc_core.realestate.changes import record_json
from svc_core.webhooks import events as core_events
from svc_core.webhooks.event_filters import filter_keeps
from svc_server.services.events import publish_to
from svc_server.store import Store
from svc_server.store.webhook_rows import Endpoint

EVENT = "data.updated"
BATCH = 200
"""Change records published per transaction."""
_LOCK = "svc:data-events"
log = logging.getLogger("svc.events")


def record_address(store: Store, *, public_url: str, listen_host: str, now: float) -> str | None:
    """Record the deployment's public address as ``svc serve`` starts (the base of the
    links every ``data.updated`` event carries, whichever command or worker publishes
    it); a line saying why events are held when they would link to loopback from a
    server that is not on it (``svc_core.webhooks.events.loopback_links``), else None."""
    with store.db.transaction() as tx:
        store.webhooks.record_deployment(
            tx, {"public_url": public_url, "listen_host": listen_host}, int(now)
        )
    refusal = core_events.loopback_links(public_url, listen_host)
    return None if refusal is None else f"data.updated events are held: {refusal}"


def event_base(store: Store) -> tuple[str | None, str]:
    """The public URL the events' links start with, as the server recorded it, or None
    with the reason events are not published now."""
    with store.db.transaction(write=False) as tx:
        recorded = store.webhooks.deployment(tx)
    base = recorded.get("public_url")
    if base is None:
        return None, (
            "no svc serve has started on this database yet, so the address its links "
            "start with is not known; the server's webhook worker publishes them"
        )
    refusal = core_events.loopback_links(base, recorded.get("listen_host", ""))
    if refusal is not None:
        return None, refusal
    return base, ""


def publish_changes(store: Store, now: float) -> int:
    """Publish every change record not yet published; return the deliveries queued.
    The records' links start with the public URL ``svc serve`` recorded
    (``record_address``): the address ``GET /changes`` serves them with. Nothing is
    published while it is unknown or refused (the records wait: none is lost)."""
    base, why = event_base(store)
    if base is None:
        _held(why)
        return 0
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


_told: set[str] = set()


def _held(why: str) -> None:
    """Log why events are held, once per reason and process (a worker sweeps often)."""
    if why not in _told:
        _told.add(why)
        log.warning("data.updated events not published: %s", why)


def publish_after_load(store: Store, now: float) -> str | None:
    """``publish_changes`` at the end of a load command: None when done, else a line
    saying why not (the load is committed whatever happens here; a worker's sweep
    publishes what is left)."""
    try:
        base, why = event_base(store)
        if base is None:
            with store.db.transaction(write=False) as tx:
                if not store.webhooks.subscribers(tx, EVENT):
                    return None  # nobody to tell: the records wait all the same
            return f"svc: data.updated events not published yet: {why}"
        publish_changes(store, now)
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
