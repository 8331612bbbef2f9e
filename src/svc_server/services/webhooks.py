"""Webhook use cases: endpoints and test sends (the log is ``delivery_log``).

A signed-in user manages the endpoints of their primary consumer (see ``membership``):
owners and admins register, revoke, re-enable and test; members may list endpoints and
read the delivery log. Everything that touches the network (the address check of a new
URL, the test send) is done by ``delivery/``, which this module calls down into.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import attrs

from svc_core.accounts.bodies import WEBHOOK_FIELDS
from svc_core.errors import (
    Conflict,
    EndpointLimitReached,
    EndpointNotActive,
    InvalidBody,
    NotFound,
    RateLimited,
)
from svc_core.fields import read_body
from svc_core.instants import utc
from svc_core.same_named import SameNamed
from svc_core.webhooks import events as core_events
from svc_core.webhooks import signing
from svc_core.webhooks.netguard import ParsedTarget, Resolver, check_webhook_url
from svc_server.delivery import attempt as delivery
from svc_server.delivery.sender import resolve_public
from svc_server.services import events as event_service
from svc_server.services.membership import account, managed_account, parse_id
from svc_server.store import Store
from svc_server.store.base import Tx
from svc_server.store.webhook_rows import Endpoint

MAX_ENDPOINTS = 16
"""Non-revoked endpoints per consumer (DECISIONS)."""
TEST_SENDS_PER_MINUTE = 5
"""Default test sends a consumer may start in any 60 s (``SVC_WEBHOOK_TEST_SENDS_PER_MINUTE``)."""
TEST_SENDS_IN_FLIGHT = 1
"""Test sends of one consumer that may run at once."""
TEST_WINDOW = 60
"""Seconds of the test-send rate window; a ``sending`` test older than this is a leftover
of a stopped process and no longer holds the consumer's slot."""


Clock = Callable[[], float]


@attrs.frozen(kw_only=True)
class ManualSends:
    """How the sends an account asks for (test sends and resends) go out: the clock
    their signatures read, whether private addresses may be reached (development), the
    resolver (None: the system's), and how many of them an account may start in any
    60 s."""

    clock: Clock
    allow_private: bool = False
    resolver: Resolver | None = None
    per_minute: int = TEST_SENDS_PER_MINUTE


# results ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class CreatedEndpoint:
    """A just-registered endpoint with its signing secret, shown only here."""

    id: str
    url: str
    secret_plaintext: str = attrs.field(repr=False)
    description: str | None
    events: tuple[str, ...]
    filters: Mapping[str, tuple[str, ...]]
    status: str
    created_at: datetime


@attrs.frozen(kw_only=True)
class TestDelivery:
    """How a test send or a resend went."""

    status: str
    http_status: int | None
    duration_ms: int
    error: str | None


@attrs.frozen(kw_only=True)
class TestSend:
    """The result of ``send_test``: which event went out and what happened."""

    test: bool = True
    event_id: str
    event_type: str
    delivery: TestDelivery


# endpoints ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class EndpointSpec:
    """A checked registration request."""

    target: ParsedTarget
    description: str | None
    events: tuple[str, ...]
    filters: Mapping[str, tuple[str, ...]]


def validate_endpoint(body: Mapping[str, Any], *, allow_private: bool) -> EndpointSpec:
    """Check a ``POST /webhooks`` body (``svc_core.accounts.bodies.WEBHOOK_FIELDS``); the URL's
    addresses are then checked by ``delivery``."""
    fields = read_body(WEBHOOK_FIELDS, body)
    url = str(fields.get("url", ""))
    if not url:
        raise InvalidBody("url must not be empty.", hint="For example https://example.com/hooks")
    target = check_webhook_url(url, allow_private=allow_private, allow_http=allow_private)
    events = fields.get("events") or tuple(core_events.validate_subscription(None))
    filters = {key: tuple(values) for key, values in (fields.get("filters") or {}).items()}
    return EndpointSpec(
        target=target, description=fields.get("description"), events=events, filters=filters
    )


def owned_endpoint(store: Store, tx: Tx, consumer_id: str, endpoint_id: str) -> Endpoint:
    row = store.webhooks.get_endpoint(tx, parse_id(endpoint_id, "endpoint id"))
    if row is None or row.consumer_id != consumer_id:
        raise NotFound("No such webhook endpoint.")
    return row


def list_endpoints(store: Store, user_id: str) -> list[Endpoint]:
    """Every endpoint of the user's consumer, revoked ones included, oldest first."""
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        return store.webhooks.endpoints_of_consumer(tx, consumer.id)


def all_endpoints(store: Store, consumer_id: str | None = None) -> list[Endpoint]:
    """Operator view (``svc webhook endpoints``): every endpoint, or one consumer's,
    revoked ones included, oldest first; never a secret."""
    wanted = parse_id(consumer_id, "consumer id") if consumer_id is not None else None
    with store.db.transaction(write=False) as tx:
        return store.webhooks.all_endpoints(tx, wanted)


_CREATED_ENDPOINT = SameNamed(CreatedEndpoint, Endpoint)


def create_endpoint(
    store: Store,
    user_id: str,
    body: Mapping[str, Any],
    now: float,
    entropy: bytes,
    *,
    ids: Callable[[], str],
    allow_private: bool = False,
    resolver: Resolver | None = None,
) -> CreatedEndpoint:
    """Register an endpoint; the response carries the secret, shown only here.

    The URL is stored normalised (host lower-cased and IDNA-encoded, fragment dropped).
    Order of checks: body (400), role (403), addresses (400), the limit (402).
    """
    spec = validate_endpoint(body, allow_private=allow_private)
    with store.db.transaction(write=False) as tx:
        managed_account(store, tx, user_id)
    resolve_public(spec.target, allow_private=allow_private, resolver=resolver)
    secret = signing.generate_secret(entropy)
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        store.db.lock(tx, f"svc:webhooks:{consumer.id}")
        if store.webhooks.count_live_endpoints(tx, consumer.id) >= MAX_ENDPOINTS:
            raise EndpointLimitReached(
                f"An account can have at most {MAX_ENDPOINTS} webhook endpoints.",
                hint="Delete an endpoint you no longer use.",
            )
        row = Endpoint(
            id=ids(),
            consumer_id=consumer.id,
            url=spec.target.url,
            description=spec.description,
            events=tuple(spec.events),
            secret=secret,
            status="active",
            consecutive_failures=0,
            disabled_at=None,
            revoked_at=None,
            created_at=int(now),
            filters=spec.filters,
        )
        store.webhooks.insert_endpoint(tx, row)
    return _CREATED_ENDPOINT(row, secret_plaintext=secret, created_at=utc(row.created_at))


def revoke_endpoint(store: Store, user_id: str, endpoint_id: str, now: float) -> None:
    """Soft revoke: the row stays for the log; queued deliveries are settled unsent."""
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        row = owned_endpoint(store, tx, consumer.id, endpoint_id)
        if row.status == "revoked" or not store.webhooks.update_endpoint_if(
            tx, row.id, row.status, {"status": "revoked", "revoked_at": int(now)}
        ):
            raise NotFound("This webhook endpoint is already revoked.")
        store.webhooks.fail_pending(tx, row.id, delivery.NOT_SENT_REVOKED, int(now))


def enable_endpoint(store: Store, user_id: str, endpoint_id: str, now: float) -> Endpoint:
    """``disabled_after_failure`` -> ``active`` with the failure count reset."""
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        row = owned_endpoint(store, tx, consumer.id, endpoint_id)
        fields = {"status": "active", "consecutive_failures": 0, "disabled_at": None}
        if row.status != "disabled_after_failure" or not store.webhooks.update_endpoint_if(
            tx, row.id, "disabled_after_failure", fields
        ):
            hint = (
                "A revoked endpoint cannot come back; register a new one."
                if row.status == "revoked"
                else "Only an endpoint disabled after failures can be re-enabled."
            )
            raise Conflict(
                f"This webhook endpoint is {row.status}, not disabled_after_failure.",
                hint=hint,
                code="ENDPOINT_NOT_DISABLED",
            )
        return store.webhooks.get_endpoint(tx, row.id) or row


# the test send ------------------------------------------------------------------------


def admit_test_send(store: Store, tx: Tx, consumer_id: str, now: int, per_minute: int) -> None:
    """Take the account's test-send lock, then refuse a test send or a resend (429 with
    ``Retry-After``) when the consumer already has one in flight or has started
    ``per_minute`` in the window (``WebhooksRepo.test_send_load``)."""
    store.db.lock(tx, f"svc:webhooks:test:{consumer_id}")
    load = store.webhooks.test_send_load(tx, consumer_id, now - TEST_WINDOW)
    if load.in_flight >= TEST_SENDS_IN_FLIGHT:
        started = int(load.last_started or now)
        retry = max(1, started + math.ceil(delivery.DELIVERY_TIMEOUT) + 1 - now)
        raise RateLimited(
            "A test send of this account is still running; one runs at a time.",
            hint=f"Retry after {retry} seconds.",
            headers={"Retry-After": str(retry)},
        )
    if load.recent >= per_minute:
        retry = max(1, int(load.oldest or now) + TEST_WINDOW - now)
        raise RateLimited(
            f"At most {per_minute} test sends per minute per account.",
            hint=f"Retry after {retry} seconds.",
            headers={"Retry-After": str(retry)},
        )


def queue_manual(
    store: Store,
    tx: Tx,
    endpoint: Endpoint,
    event_id: str,
    event_type: str,
    payload: bytes,
    now: float,
    ids: Callable[[], str],
    trigger: str,
    resend_of: str | None = None,
) -> tuple[delivery.DeliveryJob, str]:
    """Log a delivery a person started (a test send or a resend) as ``sending``, held by
    this request, so ``delivery.attempt`` sends it at once; the job and its holder."""
    holder = f"{trigger}:{ids()}"
    job = delivery.DeliveryJob(
        id=ids(),
        endpoint_id=endpoint.id,
        event_id=event_id,
        event_type=event_type,
        url=endpoint.url,
        secret=endpoint.secret,
        payload=payload,
    )
    store.webhooks.enqueue(
        tx,
        {
            "id": job.id,
            "endpoint_id": job.endpoint_id,
            "event_id": job.event_id,
            "event_type": job.event_type,
            "status": "sending",
            "trigger": trigger,
            "attempt_count": 0,
            "claimed_by": holder,
            "claimed_at": int(now),
            "created_at": int(now),
            "seq": event_service.next_seq(),
            "resend_of": resend_of,
        },
    )
    return job, holder


def send_manual(
    store: Store, job: delivery.DeliveryJob, holder: str, sends: ManualSends
) -> TestDelivery:
    """Send a delivery ``queue_manual`` logged, at once, and say how it went."""
    result = delivery.attempt(
        store,
        job,
        holder,
        clock=sends.clock,
        allow_private=sends.allow_private,
        resolver=sends.resolver,
    )
    return TestDelivery(
        status="delivered" if result.ok else "failed",
        http_status=result.http_status,
        duration_ms=result.duration_ms,
        error=delivery.error_text(result),
    )


def send_test(
    store: Store,
    user_id: str,
    endpoint_id: str,
    *,
    now: float,
    entropy: bytes,
    docs_url: str,
    ids: Callable[[], str],
    sends: ManualSends,
) -> TestSend:
    """Send ``webhook.test`` to one active endpoint now, whatever its event filter; the
    attempt is logged and counts toward disabling like any delivery.

    Per consumer, across its endpoints and every server process (the limits read the
    delivery log under a per-consumer lock): one test send at a time and ``per_minute``
    started in any 60 s (``sends.per_minute``), else 429 ``RATE_LIMITED`` with
    ``Retry-After``. Revoking,
    disabling or re-enabling an endpoint resets neither.
    """
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        endpoint = owned_endpoint(store, tx, consumer.id, endpoint_id)
        if endpoint.status != "active":
            raise EndpointNotActive(
                f"This webhook endpoint is {endpoint.status}; only active endpoints can be tested.",
                hint="Re-enable a disabled endpoint first; a revoked one cannot be used.",
            )
        admit_test_send(store, tx, consumer.id, int(now), sends.per_minute)
        event = core_events.webhook_test(
            event_id=core_events.webhook_test_id(entropy), now=now, docs_url=docs_url
        )
        payload = core_events.serialize(event)
        event_id, event_type = core_events.head(event)
        store.webhooks.insert_event(tx, event_id, consumer.id, event_type, payload, int(now))
        job, holder = queue_manual(
            store, tx, endpoint, event_id, event_type, payload, now, ids, "manual"
        )
    return TestSend(
        event_id=event_id,
        event_type=event_type,
        delivery=send_manual(store, job, holder, sends),
    )
