"""One delivery attempt: sign, send, and record the outcome (SPEC "Delivery rules").

``attempt`` is the one path that sends a delivery; the worker and the test send of
``services.webhooks`` both use it, so a failed test send counts toward disabling the
endpoint like any other failure. It talks to the network only through ``sender`` and to
the database only through the store.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from svc_core.webhooks import signing
from svc_core.webhooks.netguard import Resolver
from svc_server.delivery import sender
from svc_server.store import Store
from svc_server.store.base import Row

MAX_CONSECUTIVE_FAILURES = 10
"""An endpoint is disabled when its consecutive failures exceed this (SPEC)."""
DELIVERY_TIMEOUT = 5.0
"""Seconds one delivery request may take in all (SPEC), unless a caller gives another."""
ERROR_EXCERPT = 500
"""Characters of a failing receiver's reply kept in ``error_message``."""
RESPONSE_EXCERPT = 2000
"""Characters of every receiver's reply body kept in ``response_excerpt`` (the dashboard
shows it beside the payload)."""
NOT_SENT_REVOKED = "not sent: the endpoint was revoked"
NOT_SENT_DISABLED = "not sent: the endpoint was disabled after repeated failures"


@attrs.frozen(kw_only=True)
class DeliveryJob:
    """One delivery ready to send: where to, with which secret, and the exact body."""

    id: str
    endpoint_id: str
    event_id: str
    event_type: str
    url: str
    secret: str = attrs.field(repr=False)
    payload: bytes


def job_from_row(row: Row) -> DeliveryJob:
    """A claimed delivery as the store reads it: its fields are the row's columns of the
    same names, the payload encoded as the bytes signed and sent."""
    columns = {f.name: row[f.name] for f in attrs.fields(DeliveryJob) if f.name != "payload"}
    return DeliveryJob(**columns, payload=str(row["payload"]).encode("utf-8"))


def error_text(result: sender.SendResult) -> str | None:
    """``error_message`` of an attempt: the reason plus an excerpt of the reply body."""
    if result.ok:
        return None
    text = _printable(result.error or "failed")[:ERROR_EXCERPT]
    excerpt = _printable(result.response_excerpt or "")
    if excerpt:
        text = f"{text}: {excerpt[:ERROR_EXCERPT]}"
    return text


def reply_excerpt(result: sender.SendResult) -> str | None:
    """``response_excerpt`` of an attempt: the start of the reply body as received, with
    NUL (which PostgreSQL text cannot hold) shown as U+FFFD; None for an empty body."""
    text = (result.response_excerpt or "")[:RESPONSE_EXCERPT].replace("\x00", "\ufffd")
    return text or None


def _printable(text: str) -> str:
    """One line of printable text: control characters and runs of spaces become a space."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def attempt(
    store: Store,
    job: DeliveryJob,
    holder: str,
    *,
    clock: Callable[[], float],
    allow_private: bool = False,
    resolver: Resolver | None = None,
    timeout: float = DELIVERY_TIMEOUT,
) -> sender.SendResult:
    """Send a delivery that ``holder`` has in ``sending`` and record the outcome.

    The request may take ``timeout`` seconds in all. The signature's timestamp is taken
    now, at send time. The body is the stored event
    payload, byte for byte. The outcome, the endpoint's failure count and (past
    ``MAX_CONSECUTIVE_FAILURES``) its disabling are written in one transaction.
    """
    signature = signing.sign(job.payload, job.secret, int(clock()))
    headers = sender.build_headers(job.event_type, job.event_id, signature)
    result = sender.send(
        job.url,
        job.payload,
        headers,
        timeout=timeout,
        allow_private=allow_private,
        allow_http=allow_private,
        resolver=resolver,
    )
    record(store, job, holder, result, int(clock()))
    return result


def record(
    store: Store, job: DeliveryJob, holder: str, result: sender.SendResult, now: int
) -> bool:
    """Write an attempt's outcome; False when ``holder`` no longer held the delivery (a
    sweep settled it), in which case nothing changes."""
    fields = {
        "status": "delivered" if result.ok else "failed",
        "http_status": result.http_status,
        "duration_ms": result.duration_ms,
        "error_message": error_text(result),
        "response_excerpt": reply_excerpt(result),
        "attempt_count": 1,
        "sent_at": now,
    }
    with store.db.transaction() as tx:
        if not store.webhooks.finish(tx, job.id, holder, fields):
            return False
        if result.ok:
            store.webhooks.record_success(tx, job.endpoint_id)
        elif store.webhooks.record_failure(tx, job.endpoint_id, now, MAX_CONSECUTIVE_FAILURES):
            store.webhooks.fail_pending(tx, job.endpoint_id, NOT_SENT_DISABLED, now)
    return True
