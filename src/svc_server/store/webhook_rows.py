"""The rows of the webhook tables as typed values: what ``WebhooksRepo`` returns to the
services, so they read fields, never strings (issue 26, item 4).

One class per row shape, named for the noun; a joined read adds its columns in a
subclass. Times are unix seconds as stored.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from svc_core.convert import HIDDEN, INSTANT


@attrs.frozen(kw_only=True)
class Endpoint:
    """A webhook endpoint (``webhook_endpoints``), its subscribed event types and its
    ``data.updated`` filters (``svc_core.webhooks.events.validate_filters``) decoded. Served (the
    account API, ``svc webhook endpoints``) without its secret, consumer and revocation
    time, its fields in this order."""

    id: str
    consumer_id: str = attrs.field(metadata=HIDDEN)
    url: str
    description: str | None
    events: tuple[str, ...]
    filters: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    secret: str = attrs.field(metadata=HIDDEN)
    status: str
    created_at: int = attrs.field(metadata=INSTANT)
    consecutive_failures: int
    disabled_at: int | None = attrs.field(metadata=INSTANT)
    revoked_at: int | None = attrs.field(metadata=HIDDEN)


@attrs.frozen(kw_only=True)
class Delivery:
    """A line of the delivery log (``deliveries``): never the payload. Served (the
    account API's log) as its fields in this order, up to ``created_at``."""

    id: str
    event_type: str
    event_id: str
    status: str
    http_status: int | None
    duration_ms: int | None
    error_message: str | None
    attempt_count: int
    created_at: int = attrs.field(metadata=INSTANT)
    sent_at: int | None = attrs.field(metadata=HIDDEN)
    trigger: str = attrs.field(metadata=HIDDEN)
    resend_of: str | None = attrs.field(metadata=HIDDEN)


@attrs.frozen(kw_only=True)
class DeliveryExchange(Delivery):
    """A delivery with what went out and came back: the event's payload, the receiver's
    reply, and the endpoint's url, status and secret."""

    endpoint_id: str
    response_excerpt: str | None
    url: str
    endpoint_status: str
    secret: str = attrs.field(metadata=HIDDEN)
    payload: str


@attrs.frozen(kw_only=True)
class RoutedDelivery(Delivery):
    """A delivery with where it goes: its endpoint, that endpoint's consumer and url
    (served after the log line's fields)."""

    endpoint_id: str
    consumer_id: str
    url: str


@attrs.frozen(kw_only=True)
class DeliveryCounts:
    """Finished deliveries of an endpoint: all, and those delivered or failed since a
    time (the log's 24-hour summary)."""

    total_count: int
    delivered_24h: int
    failed_24h: int


@attrs.frozen(kw_only=True)
class ManualLoad:
    """A consumer's recent test sends and resends: how many (``recent``) and when the
    first was made (``oldest``); how many are still going out (``in_flight``) and when the
    newest of those began (``last_started``)."""

    recent: int
    oldest: int | None
    in_flight: int
    last_started: int | None


@attrs.frozen(kw_only=True)
class TrialDue:
    """A consumer whose trial ends soon and has not been told: what the notice says."""

    id: str
    trial_ends_at: int
    subscription_id: str | None
    subscription_status: str | None
    subscription_period_end: int | None
