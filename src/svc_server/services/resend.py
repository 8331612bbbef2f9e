"""Resending a past webhook delivery: a new delivery of the same event (same event id
and body, so receivers dedupe it), signed afresh and sent at once through
``delivery.attempt``, like a test send, whose limit it shares."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from svc_core.errors import Conflict, EndpointNotActive
from svc_server.services.delivery_log import delivery_of
from svc_server.services.membership import managed_account
from svc_server.services.webhooks import (
    ManualSends,
    TestDelivery,
    admit_test_send,
    queue_manual,
    send_manual,
)
from svc_server.store import Store


@attrs.frozen(kw_only=True)
class Resend:
    """The result of ``resend``: the new delivery of the same event and how it went."""

    id: str
    resend_of: str
    event_id: str
    event_type: str
    delivery: TestDelivery


def resend(
    store: Store,
    user_id: str,
    endpoint_id: str,
    delivery_id: str,
    *,
    now: float,
    ids: Callable[[], str],
    sends: ManualSends,
) -> Resend:
    """Send a finished delivery's event to its endpoint again, now: a new delivery of the
    same event (same event id and body, so receivers dedupe it), signed afresh with the
    endpoint's secret and the current time, logged with ``trigger`` ``resend`` and
    ``resend_of`` the delivery it repeats.

    Owners and admins only; the endpoint must be active; it shares the test sends' limit
    (one at a time and ``sends.per_minute`` in any 60 s per account, else 429), and its
    outcome counts toward disabling the endpoint like any delivery.
    """
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        row = delivery_of(store, tx, consumer.id, endpoint_id, delivery_id)
        if row.status not in ("delivered", "failed"):
            raise Conflict(
                f"This delivery is {row.status}; only a finished delivery can be resent.",
                hint="Wait until it is delivered or failed, then resend it.",
                code="DELIVERY_NOT_FINISHED",
            )
        endpoint = store.webhooks.get_endpoint(tx, row.endpoint_id)
        if endpoint is None or endpoint.status != "active":
            status = endpoint.status if endpoint else "gone"
            raise EndpointNotActive(
                f"This webhook endpoint is {status}; deliveries go only to active endpoints.",
                hint="Re-enable a disabled endpoint first; a revoked one cannot be used.",
            )
        admit_test_send(store, tx, consumer.id, int(now), sends.per_minute)
        job, holder = queue_manual(
            store,
            tx,
            endpoint,
            row.event_id,
            row.event_type,
            str(row.payload).encode("utf-8"),
            now,
            ids,
            "resend",
            resend_of=row.id,
        )
    return Resend(
        id=job.id,
        resend_of=row.id,
        event_id=job.event_id,
        event_type=job.event_type,
        delivery=send_manual(store, job, holder, sends),
    )
