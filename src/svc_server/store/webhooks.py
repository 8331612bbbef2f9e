"""Webhook persistence: endpoints, the event log and the delivery outbox/log."""

from __future__ import annotations

import json
from typing import Any

from svc_server.store.base import Database, Row, Tx


class WebhooksRepo:
    """Every webhook query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def active_endpoints(self, tx: Tx, consumer_id: str) -> list[Row]:
        rows = tx.fetchall(
            "SELECT * FROM webhook_endpoints WHERE consumer_id = ? AND status = 'active' "
            "ORDER BY created_at, id",
            (consumer_id,),
        )
        return [decode_endpoint(r) for r in rows]

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
        """Queue a delivery; the (endpoint, event id) constraint makes it idempotent."""
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        return (
            tx.execute(
                f"INSERT INTO deliveries ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING",
                tuple(row.values()),
            )
            == 1
        )


def decode_endpoint(row: Row) -> Row:
    row = dict(row)
    row["events"] = json.loads(row["events"])
    return row
