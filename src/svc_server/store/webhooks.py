"""Webhook persistence: endpoints, the event log, and the delivery outbox and log.

A ``deliveries`` row is both the outbox entry and the log line. Its ``status`` moves
``pending`` -> ``claimed`` (a worker took it) -> ``sending`` (the request is about to go
out) -> ``delivered`` or ``failed``. Every move is a compare-and-set on the old status
and the claiming worker, so two workers never send the same row and a row a crashed
worker left behind can be settled safely: ``claimed`` goes back to ``pending`` (it was
never sent), ``sending`` becomes ``failed`` (it may have been sent; never sent twice).

Long because SQL lives only in the store and every webhook query is here, endpoints,
events, the outbox, the log and the trial notices, next to the claim they share.
"""

from __future__ import annotations

import enum
import heapq
import json
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from svc_server.store.base import (
    Database,
    Row,
    Tx,
    insert_row,
    marks,
    row_as,
    row_or_none,
    update_by_id,
)
from svc_server.store.webhook_rows import (
    Delivery,
    DeliveryCounts,
    DeliveryExchange,
    Endpoint,
    ManualLoad,
    RoutedDelivery,
    TrialDue,
)

IN_FLIGHT = ("claimed", "sending")
_DELIVERY_ROW = (
    "d.id, d.event_type, d.event_id, d.status, d.http_status, d.duration_ms, "
    "d.error_message, d.attempt_count, d.created_at, d.sent_at, d.trigger, d.resend_of"
)
MANUAL_TRIGGERS = ("manual", "resend")
"""Deliveries a person starts from the dashboard or the API: test sends and resends.
They share one per-consumer limit (``test_send_load``)."""


class EndpointStatus(enum.StrEnum):
    """A webhook endpoint's status: receiving, revoked by its owner, or disabled after
    ``consecutive_failures`` passed the limit (``record_failure``) until re-enabled."""

    ACTIVE = "active"
    REVOKED = "revoked"
    DISABLED_AFTER_FAILURE = "disabled_after_failure"


class WebhooksRepo:
    """Every webhook query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # endpoints ---------------------------------------------------------------------------

    def insert_endpoint(self, tx: Tx, endpoint: Endpoint) -> None:
        values = attrs.asdict(endpoint, recurse=False)
        values["events"] = json.dumps(list(endpoint.events))
        values["filters"] = encode_filters(endpoint.filters)
        insert_row(tx, "webhook_endpoints", values)

    def get_endpoint(self, tx: Tx, endpoint_id: str) -> Endpoint | None:
        row = tx.fetchone("SELECT * FROM webhook_endpoints WHERE id = ?", (endpoint_id,))
        return decode_endpoint(row) if row is not None else None

    def endpoints_of_consumer(self, tx: Tx, consumer_id: str) -> list[Endpoint]:
        rows = tx.fetchall(
            "SELECT * FROM webhook_endpoints WHERE consumer_id = ? ORDER BY created_at, id",
            (consumer_id,),
        )
        return [decode_endpoint(r) for r in rows]

    def active_endpoints(self, tx: Tx, consumer_id: str) -> list[Endpoint]:
        rows = tx.fetchall(
            "SELECT * FROM webhook_endpoints WHERE consumer_id = ? AND status = 'active' "
            "ORDER BY created_at, id",
            (consumer_id,),
        )
        return [decode_endpoint(r) for r in rows]

    def subscribers(self, tx: Tx, event_type: str) -> list[Endpoint]:
        """The active endpoints of every consumer that name ``event_type`` (a
        ``svc_core.webhooks.events.NAMED_ONLY`` type: ``*`` does not cover it), oldest first."""
        rows = tx.fetchall(
            "SELECT * FROM webhook_endpoints WHERE status = 'active' AND events LIKE ? "
            "ORDER BY consumer_id, created_at, id",
            (f'%"{event_type}"%',),
        )
        return [e for e in (decode_endpoint(r) for r in rows) if event_type in e.events]

    def published_change(self, tx: Tx, name: str) -> int:
        """The last change record published as ``name`` events (0: none yet)."""
        row = tx.fetchone("SELECT last_change FROM change_publishing WHERE name = ?", (name,))
        return int(row["last_change"]) if row else 0

    def set_published_change(self, tx: Tx, name: str, last: int) -> None:
        tx.execute(
            "INSERT INTO change_publishing (name, last_change) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET last_change = excluded.last_change",
            (name, last),
        )

    def deployment(self, tx: Tx) -> dict[str, str]:
        """What ``svc serve`` recorded about the deployment at its start (``public_url``,
        ``listen_host``); empty before any server has started on this database."""
        return {str(r["name"]): str(r["value"]) for r in tx.fetchall("SELECT * FROM deployment")}

    def record_deployment(self, tx: Tx, values: dict[str, str], now: int) -> None:
        for name, value in values.items():
            tx.execute(
                "INSERT INTO deployment (name, value, recorded_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value, "
                "recorded_at = excluded.recorded_at",
                (name, value, now),
            )

    def count_live_endpoints(self, tx: Tx, consumer_id: str) -> int:
        """Endpoints that count toward the limit: every one not revoked."""
        row = tx.fetchone(
            "SELECT COUNT(*) AS n FROM webhook_endpoints "
            "WHERE consumer_id = ? AND status <> 'revoked'",
            (consumer_id,),
        )
        return int(row["n"]) if row else 0

    def update_endpoint_if(
        self, tx: Tx, endpoint_id: str, status: str, fields: dict[str, Any]
    ) -> bool:
        """Change an endpoint only while it is in ``status``; False when it was not."""
        return update_by_id(tx, "webhook_endpoints", endpoint_id, fields, status=status) == 1

    def record_success(self, tx: Tx, endpoint_id: str) -> None:
        tx.execute(
            "UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = ?", (endpoint_id,)
        )

    def record_failure(self, tx: Tx, endpoint_id: str, now: int, max_failures: int) -> bool:
        """Count one failure; disable an active endpoint past ``max_failures``.

        Returns True when this failure disabled the endpoint. The first statement locks
        the endpoint row, so concurrent recorders count one after the other.
        """
        tx.execute(
            "UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1 "
            "WHERE id = ?",
            (endpoint_id,),
        )
        return (
            tx.execute(
                "UPDATE webhook_endpoints SET status = 'disabled_after_failure', disabled_at = ? "
                "WHERE id = ? AND status = 'active' AND consecutive_failures > ?",
                (now, endpoint_id, max_failures),
            )
            == 1
        )

    # events and the outbox -----------------------------------------------------------------

    def insert_event(
        self, tx: Tx, event_id: str, consumer_id: str, event_type: str, payload: bytes, now: int
    ) -> bool:
        """Record an event once; False when its id was already recorded."""
        return (
            tx.execute(
                "INSERT INTO events (id, consumer_id, type, payload, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (event_id, consumer_id, event_type, payload.decode("utf-8"), now),
            )
            == 1
        )

    def enqueue(self, tx: Tx, row: dict[str, Any]) -> bool:
        """Queue a delivery; the unique (endpoint, event id) index of every row but
        resends (``resend_of`` set) makes it idempotent."""
        return insert_row(tx, "deliveries", row, conflict="ON CONFLICT DO NOTHING") == 1

    def fail_pending(self, tx: Tx, endpoint_id: str, message: str, now: int) -> int:
        """Settle an endpoint's queued deliveries as failed without sending them."""
        return tx.execute(
            "UPDATE deliveries SET status = 'failed', error_message = ?, sent_at = ? "
            "WHERE endpoint_id = ? AND status = 'pending'",
            (message, now, endpoint_id),
        )

    def fail_orphans(self, tx: Tx, endpoint_status: str, message: str, now: int) -> int:
        """Settle queued deliveries of endpoints in ``endpoint_status`` (a delivery queued
        while its endpoint was being revoked or disabled) as failed, unsent."""
        return tx.execute(
            "UPDATE deliveries SET status = 'failed', error_message = ?, sent_at = ? "
            "WHERE status = 'pending' AND endpoint_id IN "
            "(SELECT id FROM webhook_endpoints WHERE status = ?)",
            (message, now, endpoint_status),
        )

    def test_send_load(self, tx: Tx, consumer_id: str, since: int) -> ManualLoad:
        """The consumer's test sends and resends (``MANUAL_TRIGGERS``, on any of its
        endpoints, revoked ones included) created after ``since``: ``recent`` (how many) and
        ``oldest`` (when the first was made); ``in_flight`` (still ``sending``) and
        ``last_started`` (when the newest of those began)."""
        row = tx.fetchone(
            "SELECT COUNT(*) AS recent, MIN(d.created_at) AS oldest,"
            " SUM(CASE WHEN d.status = 'sending' THEN 1 ELSE 0 END) AS in_flight,"
            " MAX(CASE WHEN d.status = 'sending' THEN d.claimed_at END) AS last_started"
            " FROM deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " WHERE e.consumer_id = ? AND d.trigger IN ('manual', 'resend') AND d.created_at > ?",
            (consumer_id, since),
        )
        row = row or {}
        return ManualLoad(
            recent=int(row.get("recent") or 0),
            oldest=row.get("oldest"),
            in_flight=int(row.get("in_flight") or 0),
            last_started=row.get("last_started"),
        )

    def has_pending(self) -> bool:
        """A cheap read: is there anything for a worker to claim?"""
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT id FROM deliveries WHERE status = 'pending' LIMIT 1")
        return row is not None

    def claim(
        self, tx: Tx, worker_id: str, now: int, limit: int, per_consumer: int | None = None
    ) -> list[Row]:
        """Claim up to ``limit`` deliveries, fairly across consumers (``fair_pick``): only
        the oldest pending one of an active endpoint with nothing in flight, and none for
        a consumer that already has ``per_consumer`` in flight with this worker. Returns
        them with the endpoint's url and secret and the event's payload, oldest first."""
        self.db.lock(tx, "svc:deliveries:claim")
        candidates = tx.fetchall(
            "SELECT d.id, d.seq, e.consumer_id FROM deliveries d"
            " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " WHERE d.status = 'pending' AND e.status = 'active'"
            " AND d.seq = (SELECT MIN(p.seq) FROM deliveries p"
            "  WHERE p.endpoint_id = d.endpoint_id AND p.status = 'pending')"
            " AND NOT EXISTS (SELECT 1 FROM deliveries b"
            "  WHERE b.endpoint_id = d.endpoint_id AND b.status IN ('claimed', 'sending'))"
            " ORDER BY d.seq LIMIT ?",
            (CLAIM_CANDIDATES,),
        )
        if not candidates:
            return []
        busy = tx.fetchall(
            "SELECT e.consumer_id, COUNT(*) AS in_flight,"
            " SUM(CASE WHEN d.claimed_by = ? THEN 1 ELSE 0 END) AS mine"
            " FROM deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " WHERE d.status IN ('claimed', 'sending') GROUP BY e.consumer_id",
            (worker_id,),
        )
        chosen = fair_pick(candidates, busy, limit, per_consumer)
        if not chosen:
            return []
        claimed = tx.fetchall(
            "UPDATE deliveries SET status = 'claimed', claimed_by = ?, claimed_at = ? "
            f"WHERE status = 'pending' AND id IN ({marks(len(chosen))}) RETURNING id",
            (worker_id, now, *chosen),
        )
        return self.jobs(tx, [r["id"] for r in claimed])

    def jobs(self, tx: Tx, delivery_ids: Sequence[str]) -> list[Row]:
        """Deliveries with what sending them needs: url, secret and payload."""
        if not delivery_ids:
            return []
        return tx.fetchall(
            "SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.seq, d.claimed_by,"
            " e.url, e.secret, ev.payload"
            " FROM deliveries d"
            " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " JOIN events ev ON ev.id = d.event_id"
            f" WHERE d.id IN ({marks(len(delivery_ids))}) ORDER BY d.seq",
            tuple(delivery_ids),
        )

    def mark_sending(self, tx: Tx, delivery_id: str, worker_id: str, now: int) -> bool:
        """``claimed`` -> ``sending`` for the worker holding the claim."""
        return (
            tx.execute(
                "UPDATE deliveries SET status = 'sending', claimed_at = ? "
                "WHERE id = ? AND status = 'claimed' AND claimed_by = ?",
                (now, delivery_id, worker_id),
            )
            == 1
        )

    def finish(self, tx: Tx, delivery_id: str, worker_id: str, fields: dict[str, Any]) -> bool:
        """``sending`` -> delivered/failed, only for the sender that holds the row."""
        return (
            update_by_id(
                tx, "deliveries", delivery_id, fields, status="sending", claimed_by=worker_id
            )
            == 1
        )

    def release_stale_claims(self, tx: Tx, claimed_before: int) -> int:
        """Claims never started (their worker stopped): back to ``pending``."""
        return tx.execute(
            "UPDATE deliveries SET status = 'pending', claimed_by = NULL, claimed_at = NULL "
            "WHERE status = 'claimed' AND claimed_at < ?",
            (claimed_before,),
        )

    def fail_stale_sends(self, tx: Tx, started_before: int, message: str, now: int) -> int:
        """Sends whose sender vanished: ``failed``, never sent again."""
        return tx.execute(
            "UPDATE deliveries SET status = 'failed', error_message = ?, attempt_count = 1, "
            "sent_at = ? WHERE status = 'sending' AND claimed_at < ?",
            (message, now, started_before),
        )

    def delivery_detail(
        self, tx: Tx, consumer_id: str, delivery_id: str
    ) -> DeliveryExchange | None:
        """One delivery of an endpoint the consumer owns, with the receiver's reply, the
        event's payload and the endpoint's url, status and secret; None when there is
        no such delivery or another consumer owns it."""
        row = tx.fetchone(
            f"SELECT {_DELIVERY_ROW}, d.endpoint_id, d.response_excerpt, e.url,"
            " e.status AS endpoint_status, e.secret, ev.payload"
            " FROM deliveries d"
            " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " JOIN events ev ON ev.id = d.event_id"
            " WHERE d.id = ? AND e.consumer_id = ?",
            (delivery_id, consumer_id),
        )
        return row_or_none(DeliveryExchange, row)

    # the delivery log ---------------------------------------------------------------------

    def list_deliveries(
        self, tx: Tx, consumer_id: str, endpoint_id: str, limit: int, offset: int
    ) -> list[Delivery]:
        """Finished deliveries of an endpoint the consumer owns, newest first."""
        rows = tx.fetchall(
            f"SELECT {_DELIVERY_ROW} FROM deliveries d"
            " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " WHERE d.endpoint_id = ? AND e.consumer_id = ?"
            " AND d.status IN ('delivered', 'failed')"
            " ORDER BY d.created_at DESC, d.seq DESC, d.id DESC LIMIT ? OFFSET ?",
            (endpoint_id, consumer_id, limit, offset),
        )
        return [row_as(Delivery, r) for r in rows]

    def delivery_summary(
        self, tx: Tx, consumer_id: str, endpoint_id: str, since: int
    ) -> DeliveryCounts:
        """``total_count`` of finished deliveries, and those finished since ``since``."""
        row = tx.fetchone(
            "SELECT COUNT(*) AS total_count,"
            " SUM(CASE WHEN d.status = 'delivered' AND d.sent_at >= ? THEN 1 ELSE 0 END)"
            "  AS delivered_24h,"
            " SUM(CASE WHEN d.status = 'failed' AND d.sent_at >= ? THEN 1 ELSE 0 END)"
            "  AS failed_24h"
            " FROM deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            " WHERE d.endpoint_id = ? AND e.consumer_id = ?"
            " AND d.status IN ('delivered', 'failed')",
            (since, since, endpoint_id, consumer_id),
        )
        row = row or {}
        return DeliveryCounts(**{name: int(row.get(name) or 0) for name in FIELDS_SUMMARY})

    # operators' listings (``svc webhook ...``) ------------------------------------------------

    def all_endpoints(self, tx: Tx, consumer_id: str | None = None) -> list[Endpoint]:
        """Every endpoint, or those of one consumer, oldest first."""
        where, args = ("WHERE consumer_id = ? ", (consumer_id,)) if consumer_id else ("", ())
        rows = tx.fetchall(
            f"SELECT * FROM webhook_endpoints {where}ORDER BY created_at, id",
            args,
        )
        return [decode_endpoint(r) for r in rows]

    def recent_deliveries(
        self,
        tx: Tx,
        *,
        consumer_id: str | None = None,
        endpoint_id: str | None = None,
        status: str | None = None,
        limit: int = 50,
    ) -> list[RoutedDelivery]:
        """Deliveries in any state, newest first, filtered by consumer, endpoint and
        status when given; each with its endpoint's consumer and URL."""
        filters = {"e.consumer_id": consumer_id, "d.endpoint_id": endpoint_id, "d.status": status}
        used = {column: value for column, value in filters.items() if value is not None}
        where = " AND ".join(f"{column} = ?" for column in used)
        rows = tx.fetchall(
            f"SELECT {_DELIVERY_ROW}, d.endpoint_id, e.consumer_id, e.url FROM deliveries d"
            " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            + (f" WHERE {where}" if where else "")
            + " ORDER BY d.created_at DESC, d.seq DESC, d.id DESC LIMIT ?",
            (*used.values(), limit),
        )
        return [row_as(RoutedDelivery, r) for r in rows]

    # trials ---------------------------------------------------------------------------------

    def trial_candidates(self, tx: Tx, now: int, horizon: int) -> list[TrialDue]:
        """Active consumers in a trial that ends within ``(now, horizon]`` and whose
        notice for that trial end has not been sent."""
        rows = tx.fetchall(
            "SELECT id, trial_ends_at, subscription_id, subscription_status,"
            " subscription_period_end FROM consumers"
            " WHERE status = 'active' AND trial_ends_at IS NOT NULL"
            " AND trial_ends_at > ? AND trial_ends_at <= ?"
            " AND (trial_will_end_sent_for IS NULL OR trial_will_end_sent_for <> trial_ends_at)"
            " AND (subscription_status IS NULL OR subscription_status = 'trialing')"
            " ORDER BY trial_ends_at, id",
            (now, horizon),
        )
        return [row_as(TrialDue, r) for r in rows]

    def mark_trial_notice(self, tx: Tx, consumer_id: str, trial_ends_at: int) -> bool:
        """Take the once-per-trial marker; False when another process took it first."""
        return (
            tx.execute(
                "UPDATE consumers SET trial_will_end_sent_for = ? WHERE id = ?"
                " AND trial_ends_at = ?"
                " AND (trial_will_end_sent_for IS NULL OR trial_will_end_sent_for <> ?)",
                (trial_ends_at, consumer_id, trial_ends_at, trial_ends_at),
            )
            == 1
        )


FIELDS_SUMMARY = ("total_count", "delivered_24h", "failed_24h")
CLAIM_CANDIDATES = 1000
"""Endpoint heads (oldest first) a claim chooses among."""


def fair_pick(
    candidates: Sequence[Row], busy: Sequence[Row], limit: int, per_consumer: int | None
) -> list[str]:
    """The ids to claim, round-robin across consumers.

    ``candidates``: ``id, seq, consumer_id`` of the claimable deliveries; ``busy``:
    ``consumer_id, in_flight, mine`` (deliveries in flight everywhere, and with this
    worker). The consumer with the fewest in flight goes next (ties: the oldest waiting
    delivery), so one consumer's slow endpoints take turns with everyone else's; a
    consumer with ``per_consumer`` in flight with this worker gets no more.
    """
    load = {r["consumer_id"]: int(r["in_flight"]) for r in busy}
    mine = {r["consumer_id"]: int(r["mine"] or 0) for r in busy}
    queues: dict[str, deque[Row]] = {}
    for row in sorted(candidates, key=lambda r: int(r["seq"])):
        queues.setdefault(row["consumer_id"], deque()).append(row)
    turns = [(load.get(c, 0), int(q[0]["seq"]), c) for c, q in queues.items()]
    heapq.heapify(turns)
    chosen: list[str] = []
    while turns and len(chosen) < limit:
        in_flight, _, consumer = heapq.heappop(turns)
        if per_consumer is not None and mine.get(consumer, 0) >= per_consumer:
            continue
        queue = queues[consumer]
        chosen.append(queue.popleft()["id"])
        mine[consumer] = mine.get(consumer, 0) + 1
        if queue:
            heapq.heappush(turns, (in_flight + 1, int(queue[0]["seq"]), consumer))
    return chosen


def encode_filters(filters: Mapping[str, Sequence[str]]) -> str:
    """An endpoint's filters as stored (JSON; ``{}`` keeps every change)."""
    return json.dumps({key: list(values) for key, values in filters.items()}, sort_keys=True)


def decode_endpoint(row: Row) -> Endpoint:
    """A stored endpoint row, its JSON list of event types and its filters decoded."""
    filters = json.loads(row.get("filters") or "{}")
    return row_as(
        Endpoint,
        {
            **row,
            "events": tuple(json.loads(row["events"])),
            "filters": {key: tuple(values) for key, values in filters.items()},
        },
    )
