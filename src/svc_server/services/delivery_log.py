"""The delivery log of a webhook endpoint: finished deliveries, newest first, a page at
a time, with a 24-hour summary (``GET /api/auth/me/webhooks/{id}/deliveries``); one
delivery with its payload and the receiver's reply (``.../deliveries/{delivery_id}``);
and the operator's view of every delivery in any state (``svc webhook deliveries``)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime

import attrs

from svc_core.errors import InvalidParams, NotFound
from svc_core.instants import utc, utc_or_none
from svc_core.paging import PAGE_DEFAULT, PAGE_MAX, read_page
from svc_core.same_named import SameNamed
from svc_server.services.membership import account, parse_id
from svc_server.store import Store
from svc_server.store.base import Tx
from svc_server.store.webhook_rows import (
    Delivery,
    DeliveryCounts,
    DeliveryExchange,
    RoutedDelivery,
)

LOG_WINDOW = 24 * 3600


@attrs.frozen(kw_only=True)
class Pagination:
    limit: int
    offset: int
    returned: int


@attrs.frozen(kw_only=True)
class DeliveryLog:
    """One page of an endpoint's delivery log, newest first."""

    rows: tuple[Delivery, ...]
    pagination: Pagination
    summary: DeliveryCounts
    """All finished deliveries of the endpoint, and those of the last 24 hours."""


def deliveries(
    store: Store, user_id: str, endpoint_id: str, params: Mapping[str, str], now: float
) -> DeliveryLog:
    """Finished deliveries of an endpoint, newest first, with a 24-hour summary.

    Queued and in-flight deliveries are not listed (a row is ``delivered`` or
    ``failed``). An endpoint the caller's consumer does not own (or that does not exist)
    gives empty rows and a zero summary, never a 404, so ids cannot be probed.
    """
    endpoint_id = parse_id(endpoint_id, "endpoint id")
    page = read_page(params)
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.webhooks.list_deliveries(tx, consumer.id, endpoint_id, page.limit, page.offset)
        summary = store.webhooks.delivery_summary(
            tx, consumer.id, endpoint_id, int(now) - LOG_WINDOW
        )
    return DeliveryLog(
        rows=tuple(rows),
        pagination=Pagination(limit=page.limit, offset=page.offset, returned=len(rows)),
        summary=summary,
    )


@attrs.frozen(kw_only=True)
class DeliveryDetail:
    """A delivery with what was sent (the event payload, byte for byte as signed) and
    what the receiver answered (status and the start of its body)."""

    id: str
    endpoint_id: str
    url: str
    event_id: str
    event_type: str
    trigger: str
    resend_of: str | None
    status: str
    http_status: int | None
    duration_ms: int | None
    error_message: str | None
    response_excerpt: str | None
    created_at: datetime
    sent_at: datetime | None
    payload: str


def delivery_of(
    store: Store, tx: Tx, consumer_id: str, endpoint_id: str, delivery_id: str
) -> DeliveryExchange:
    """A delivery to an endpoint the consumer owns, else 404 (the same for a delivery
    that does not exist and one of another account, so ids cannot be probed)."""
    endpoint_id = parse_id(endpoint_id, "endpoint id")
    row = store.webhooks.delivery_detail(tx, consumer_id, parse_id(delivery_id, "delivery id"))
    if row is None or row.endpoint_id != endpoint_id:
        raise NotFound("No such delivery of this webhook endpoint.")
    return row


_DELIVERY_DETAIL = SameNamed(DeliveryDetail, DeliveryExchange)


def delivery_detail(
    store: Store, user_id: str, endpoint_id: str, delivery_id: str
) -> DeliveryDetail:
    """One delivery of the account's endpoint with its payload and the reply; members
    may read it like the log."""
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        row = delivery_of(store, tx, consumer.id, endpoint_id, delivery_id)
    return _DELIVERY_DETAIL(
        row,
        created_at=utc(row.created_at),
        sent_at=utc_or_none(row.sent_at),
        payload=str(row.payload),
    )


class DeliveryStatus(enum.StrEnum):
    """A delivery's states: queued, taken by a worker, going out, and the two outcomes."""

    PENDING = "pending"
    CLAIMED = "claimed"
    SENDING = "sending"
    DELIVERED = "delivered"
    FAILED = "failed"


DELIVERY_OUTCOMES = (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED)
"""How a delivery ends (the status of a test send's result)."""
DELIVERY_STATUSES = tuple(DeliveryStatus)
"""Every state, in order (for choices and messages)."""


def recent_deliveries(
    store: Store,
    *,
    consumer_id: str | None = None,
    endpoint_id: str | None = None,
    status: str | None = None,
    limit: int = PAGE_DEFAULT,
) -> list[RoutedDelivery]:
    """Operator view: deliveries in any state (queued ones too), newest first, filtered
    by consumer, endpoint and status when given; never a payload or a secret."""
    if status is not None and status not in DELIVERY_STATUSES:
        raise InvalidParams(
            f"Unknown delivery status {status!r}; choose one of {', '.join(DELIVERY_STATUSES)}."
        )
    if not 1 <= limit <= PAGE_MAX:
        raise InvalidParams(f"The limit must be from 1 to {PAGE_MAX}.")
    with store.db.transaction(write=False) as tx:
        return store.webhooks.recent_deliveries(
            tx,
            consumer_id=parse_id(consumer_id, "consumer id") if consumer_id else None,
            endpoint_id=parse_id(endpoint_id, "endpoint id") if endpoint_id else None,
            status=status,
            limit=limit,
        )
