"""Webhook use cases: endpoints, test sends, the delivery log, and one delivery attempt.

A signed-in user manages the endpoints of their primary consumer (see ``accounts``):
owners and admins register, revoke, re-enable and test; members may list endpoints and
read the delivery log. ``attempt`` is the one path that sends a delivery and records its
outcome; the worker and test sends both use it, so a failed test send counts toward
disabling like any other failure (SPEC "Delivery rules").
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from svc_core import events as core_events
from svc_core import signing
from svc_core.errors import (
    Conflict,
    EndpointLimitReached,
    EndpointNotActive,
    InvalidBody,
    InvalidParams,
    NotFound,
)
from svc_core.instants import iso_or_none
from svc_core.netguard import ParsedTarget, Resolver, check_webhook_url, literal_address
from svc_core.netguard import resolve_and_check as netguard_resolve_and_check
from svc_server.delivery import sender
from svc_server.services import events as event_service
from svc_server.services.membership import account, parse_id, require_manager
from svc_server.store import Store
from svc_server.store.base import Row, Tx

MAX_ENDPOINTS = 16
"""Non-revoked endpoints per consumer (DECISIONS)."""
MAX_CONSECUTIVE_FAILURES = 10
"""An endpoint is disabled when its consecutive failures exceed this (SPEC)."""
DELIVERY_TIMEOUT = 5.0
MAX_DESCRIPTION = 500
ERROR_EXCERPT = 500
"""Characters of a failing receiver's reply kept in ``error_message``."""
PAGE_DEFAULT = 50
PAGE_MAX = 200
OFFSET_MAX = 2**31 - 1
LOG_WINDOW = 24 * 3600
ENDPOINT_FIELDS = (
    "id",
    "url",
    "description",
    "events",
    "status",
    "created_at",
    "consecutive_failures",
    "disabled_at",
)
CREATED_FIELDS = ("id", "url", "secret_plaintext", "description", "events", "status", "created_at")
DELIVERY_FIELDS = (
    "id",
    "event_type",
    "event_id",
    "status",
    "http_status",
    "duration_ms",
    "error_message",
    "attempt_count",
    "created_at",
)
BODY_FIELDS = ("url", "description", "events")
NOT_SENT_REVOKED = "not sent: the endpoint was revoked"
NOT_SENT_DISABLED = "not sent: the endpoint was disabled after repeated failures"

_PAGE_NUMBER = re.compile(r"[0-9]{1,10}")

Clock = Callable[[], float]


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
    return DeliveryJob(
        id=row["id"],
        endpoint_id=row["endpoint_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
        url=row["url"],
        secret=row["secret"],
        payload=str(row["payload"]).encode("utf-8"),
    )


# rows -------------------------------------------------------------------------------------


def endpoint_row(row: Row) -> dict[str, Any]:
    """An endpoint as listed: never the secret."""
    out = {name: row.get(name) for name in ENDPOINT_FIELDS}
    out["created_at"] = iso_or_none(out["created_at"])
    out["disabled_at"] = iso_or_none(out["disabled_at"])
    out["consecutive_failures"] = int(out["consecutive_failures"] or 0)
    return out


def delivery_row(row: Row) -> dict[str, Any]:
    """A delivery log line: never the payload."""
    out = {name: row.get(name) for name in DELIVERY_FIELDS}
    out["created_at"] = iso_or_none(out["created_at"])
    return out


def error_text(result: sender.SendResult) -> str | None:
    """``error_message`` of an attempt: the reason plus an excerpt of the reply body."""
    if result.ok:
        return None
    text = _printable(result.error or "failed")[:ERROR_EXCERPT]
    excerpt = _printable(result.response_excerpt or "")
    if excerpt:
        text = f"{text}: {excerpt[:ERROR_EXCERPT]}"
    return text


def _printable(text: str) -> str:
    """One line of printable text: control characters and runs of spaces become a space."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


# endpoints ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class EndpointSpec:
    """A checked registration request."""

    target: ParsedTarget
    description: str | None
    events: tuple[str, ...]


def validate_endpoint(body: Mapping[str, Any], *, allow_private: bool) -> EndpointSpec:
    """Check a ``POST /webhooks`` body (form only; addresses are checked by ``resolve``)."""
    unknown = sorted(set(body) - set(BODY_FIELDS))
    if unknown:
        raise InvalidBody(
            f"Unknown field {unknown[0][:64]!r}.", hint=f"Allowed fields: {', '.join(BODY_FIELDS)}."
        )
    url = body.get("url")
    if not isinstance(url, str) or not url:
        raise InvalidBody(
            "'url' is required and must be a string.", hint="For example https://example.com/hooks"
        )
    target = check_webhook_url(url, allow_private=allow_private, allow_http=allow_private)
    description = body.get("description")
    if description is not None:
        if not isinstance(description, str):
            raise InvalidBody("'description' must be a string.")
        if len(description) > MAX_DESCRIPTION:
            raise InvalidBody(f"'description' is longer than {MAX_DESCRIPTION} characters.")
        if any(unicodedata.category(c) == "Cc" for c in description):
            raise InvalidBody("'description' must not contain control characters.")
    events = core_events.validate_subscription(body.get("events"))
    return EndpointSpec(target=target, description=description, events=tuple(events))


def resolve(
    target: ParsedTarget,
    *,
    allow_private: bool,
    resolver: Resolver | None = None,
    timeout: float = DELIVERY_TIMEOUT,
) -> list[str]:
    """The target's addresses, refusing non-public ones (``InvalidParams``).

    The lookup gets ``timeout`` seconds; ``getaddrinfo`` has no timeout of its own, so a
    lookup still running then is abandoned in its daemon thread.
    """
    lookup = resolver or sender.system_resolver
    if literal_address(target.host) is not None:  # judged without a lookup
        return netguard_resolve_and_check(target.host, target.port, lookup, allow_private)
    outcome: list[list[str] | Exception] = []

    def run() -> None:
        try:
            outcome.append(list(lookup(target.host, target.port)))
        except Exception as exc:  # handed to resolve_and_check below
            outcome.append(exc)

    worker = threading.Thread(target=run, name="svc-webhook-register-resolve", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        raise InvalidParams(
            f"The webhook url's host {target.host!r} did not resolve within {timeout:g} s."
        )
    answer = outcome[0]

    def answered(_host: str, _port: int) -> list[str]:
        if isinstance(answer, Exception):
            raise answer
        return answer

    return netguard_resolve_and_check(target.host, target.port, answered, allow_private)


def _owned_endpoint(store: Store, tx: Tx, consumer_id: str, endpoint_id: str) -> Row:
    row = store.webhooks.get_endpoint(tx, parse_id(endpoint_id, "endpoint id"))
    if row is None or row["consumer_id"] != consumer_id:
        raise NotFound("No such webhook endpoint.")
    return row


def list_endpoints(store: Store, user_id: str) -> list[dict[str, Any]]:
    """Every endpoint of the user's consumer, revoked ones included, oldest first."""
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.webhooks.endpoints_of_consumer(tx, consumer["id"])
    return [endpoint_row(r) for r in rows]


def create_endpoint(
    store: Store,
    user_id: str,
    body: Mapping[str, Any],
    now: float,
    entropy: bytes,
    *,
    allow_private: bool = False,
    resolver: Resolver | None = None,
) -> dict[str, Any]:
    """Register an endpoint; the response carries the secret, shown only here.

    The URL is stored normalised (host lower-cased and IDNA-encoded, fragment dropped).
    Order of checks: body (400), role (403), addresses (400), the limit (402).
    """
    spec = validate_endpoint(body, allow_private=allow_private)
    with store.db.transaction(write=False) as tx:
        _, role = account(store, tx, user_id)
    require_manager(role)
    resolve(spec.target, allow_private=allow_private, resolver=resolver)
    secret = signing.generate_secret(entropy)
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        store.db.lock(tx, f"svc:webhooks:{consumer['id']}")
        if store.webhooks.count_live_endpoints(tx, consumer["id"]) >= MAX_ENDPOINTS:
            raise EndpointLimitReached(
                f"An account can have at most {MAX_ENDPOINTS} webhook endpoints.",
                hint="Delete an endpoint you no longer use.",
            )
        row: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "consumer_id": consumer["id"],
            "url": spec.target.url,
            "description": spec.description,
            "events": list(spec.events),
            "secret": secret,
            "status": "active",
            "consecutive_failures": 0,
            "created_at": int(now),
        }
        store.webhooks.insert_endpoint(tx, row)
    out = endpoint_row(row | {"disabled_at": None}) | {"secret_plaintext": secret}
    return {name: out[name] for name in CREATED_FIELDS}


def revoke_endpoint(store: Store, user_id: str, endpoint_id: str, now: float) -> None:
    """Soft revoke: the row stays for the log; queued deliveries are settled unsent."""
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        row = _owned_endpoint(store, tx, consumer["id"], endpoint_id)
        if row["status"] == "revoked" or not store.webhooks.update_endpoint_if(
            tx, row["id"], row["status"], {"status": "revoked", "revoked_at": int(now)}
        ):
            raise NotFound("This webhook endpoint is already revoked.")
        store.webhooks.fail_pending(tx, row["id"], NOT_SENT_REVOKED, int(now))


def enable_endpoint(store: Store, user_id: str, endpoint_id: str, now: float) -> dict[str, Any]:
    """``disabled_after_failure`` -> ``active`` with the failure count reset."""
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        row = _owned_endpoint(store, tx, consumer["id"], endpoint_id)
        fields = {"status": "active", "consecutive_failures": 0, "disabled_at": None}
        if row["status"] != "disabled_after_failure" or not store.webhooks.update_endpoint_if(
            tx, row["id"], "disabled_after_failure", fields
        ):
            hint = (
                "A revoked endpoint cannot come back; register a new one."
                if row["status"] == "revoked"
                else "Only an endpoint disabled after failures can be re-enabled."
            )
            raise Conflict(
                f"This webhook endpoint is {row['status']}, not disabled_after_failure.",
                hint=hint,
                code="ENDPOINT_NOT_DISABLED",
            )
        updated = store.webhooks.get_endpoint(tx, row["id"]) or row
    return endpoint_row(updated)


# sending --------------------------------------------------------------------------------


def attempt(
    store: Store,
    job: DeliveryJob,
    holder: str,
    *,
    clock: Clock = time.time,
    allow_private: bool = False,
    resolver: Resolver | None = None,
) -> sender.SendResult:
    """Send a delivery that ``holder`` has in ``sending`` and record the outcome.

    The signature's timestamp is taken now, at send time. The body is the stored event
    payload, byte for byte. The outcome, the endpoint's failure count and (past
    ``MAX_CONSECUTIVE_FAILURES``) its disabling are written in one transaction.
    """
    signature = signing.sign(job.payload, job.secret, int(clock()))
    headers = sender.build_headers(job.event_type, job.event_id, signature)
    result = sender.send(
        job.url,
        job.payload,
        headers,
        timeout=DELIVERY_TIMEOUT,
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


def send_test(
    store: Store,
    user_id: str,
    endpoint_id: str,
    *,
    now: float,
    entropy: bytes,
    docs_url: str,
    clock: Clock = time.time,
    allow_private: bool = False,
    resolver: Resolver | None = None,
) -> dict[str, Any]:
    """Send ``webhook.test`` to one active endpoint now, whatever its event filter; the
    attempt is logged and counts toward disabling like any delivery."""
    with store.db.transaction() as tx:
        consumer, role = account(store, tx, user_id)
        require_manager(role)
        endpoint = _owned_endpoint(store, tx, consumer["id"], endpoint_id)
        if endpoint["status"] != "active":
            raise EndpointNotActive(
                f"This webhook endpoint is {endpoint['status']}; only active endpoints "
                "can be tested.",
                hint="Re-enable a disabled endpoint first; a revoked one cannot be used.",
            )
        event = core_events.webhook_test(
            event_id=core_events.webhook_test_id(entropy), now=now, docs_url=docs_url
        )
        payload = core_events.serialize(event)
        store.webhooks.insert_event(
            tx, event["id"], consumer["id"], event["type"], payload, int(now)
        )
        holder = f"test:{uuid.uuid4().hex}"
        job = DeliveryJob(
            id=str(uuid.uuid4()),
            endpoint_id=endpoint["id"],
            event_id=event["id"],
            event_type=event["type"],
            url=endpoint["url"],
            secret=endpoint["secret"],
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
                "trigger": "manual",
                "attempt_count": 0,
                "claimed_by": holder,
                "claimed_at": int(now),
                "created_at": int(now),
                "seq": event_service.next_seq(),
            },
        )
    result = attempt(
        store, job, holder, clock=clock, allow_private=allow_private, resolver=resolver
    )
    return {
        "test": True,
        "event_id": event["id"],
        "event_type": event["type"],
        "delivery": {
            "status": "delivered" if result.ok else "failed",
            "http_status": result.http_status,
            "duration_ms": result.duration_ms,
            "error": error_text(result),
        },
    }


# the delivery log ---------------------------------------------------------------------------


def _page_number(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if _PAGE_NUMBER.fullmatch(raw) is None or not low <= int(raw) <= high:
        raise InvalidParams(
            f"Query parameter {name!r} must be a whole number from {low} to {high}.",
            hint=f"Got {raw[:32]!r}; {name} defaults to {default}.",
        )
    return int(raw)


def page(params: Mapping[str, str]) -> tuple[int, int]:
    """``limit`` (1 to 200, default 50) and ``offset`` (0 or more, default 0)."""
    limit = _page_number(params, "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    offset = _page_number(params, "offset", 0, 0, OFFSET_MAX)
    return limit, offset


def deliveries(
    store: Store, user_id: str, endpoint_id: str, params: Mapping[str, str], now: float
) -> dict[str, Any]:
    """Finished deliveries of an endpoint, newest first, with a 24-hour summary.

    Queued and in-flight deliveries are not listed (a row is ``delivered`` or
    ``failed``). An endpoint the caller's consumer does not own (or that does not exist)
    gives empty rows and a zero summary, never a 404, so ids cannot be probed.
    """
    endpoint_id = parse_id(endpoint_id, "endpoint id")
    limit, offset = page(params)
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.webhooks.list_deliveries(tx, consumer["id"], endpoint_id, limit, offset)
        summary = store.webhooks.delivery_summary(
            tx, consumer["id"], endpoint_id, int(now) - LOG_WINDOW
        )
    return {
        "rows": [delivery_row(r) for r in rows],
        "pagination": {"limit": limit, "offset": offset, "returned": len(rows)},
        "summary": summary,
    }
