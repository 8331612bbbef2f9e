"""The ``webhooks`` section of the OpenAPI document: the events svc POSTs to endpoints."""

from __future__ import annotations

from svc_core.json_schema import obj, ref
from svc_core.webhooks.events import EVENT_TYPES
from svc_server.openapi.operations import Json
from svc_server.openapi.schemas import event_envelope

EVENT_DATA: dict[str, Json] = {
    "subscription.updated": obj({"subscription": ref("Subscription")}),
    "subscription.cancelled": obj({"subscription": ref("Subscription")}),
    "subscription.trial_will_end": obj({"subscription": ref("Subscription")}),
    "quota.warning_80pct": ref("QuotaEventData"),
    "quota.exceeded": ref("QuotaEventData"),
    "key.rotated": ref("KeyEventData"),
    "key.revoked": ref("KeyEventData"),
    "webhook.test": ref("TestEventData"),
    "data.updated": obj({"change": ref("ChangeRecord")}),
}
EVENT_SUMMARY: dict[str, str] = {
    "subscription.updated": "A subscription was created or changed",
    "subscription.cancelled": "A subscription was cancelled",
    "subscription.trial_will_end": "A trial ends in 3 days",
    "quota.warning_80pct": "Monthly usage reached 80% of the quota",
    "quota.exceeded": "Monthly usage reached the quota; data calls now get 402",
    "key.rotated": "An API key was rotated",
    "key.revoked": "An API key was revoked",
    "webhook.test": "A test send from POST /api/auth/me/webhooks/{endpoint_id}/test",
    "data.updated": "A load changed the deals of a district's month (one change record; "
    "only to endpoints that name the event, filtered by their filters)",
}
DELIVERY_HEADERS: tuple[Json, ...] = (
    {"name": "X-Svc-Event", "in": "header", "required": True, "schema": {"type": "string"}},
    {"name": "X-Svc-Event-Id", "in": "header", "required": True, "schema": {"type": "string"}},
    {
        "name": "X-Svc-Signature",
        "in": "header",
        "required": True,
        "description": "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>'>, keyed with "
        "the hex-decoded part of the secret after whsec_. Reject timestamps more than 300 s "
        "from your clock. Not verifiable with Stripe's libraries.",
        "schema": {"type": "string", "pattern": "^t=[0-9]+(,v1=[0-9a-f]{64})+$"},
    },
    {
        "name": "User-Agent",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "const": "Svc-Webhooks/1.0"},
    },
)


def webhooks_section() -> Json:
    """One ``post`` per event type, with its payload schema and delivery headers."""
    out: Json = {}
    for event_type in EVENT_TYPES:
        out[event_type] = {
            "post": {
                "tags": ["Webhook events"],
                "operationId": "event_" + event_type.replace(".", "_"),
                "summary": EVENT_SUMMARY.get(event_type, event_type),
                "parameters": [dict(p) for p in DELIVERY_HEADERS],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": event_envelope(
                                event_type, EVENT_DATA.get(event_type, {"type": "object"})
                            )
                        }
                    },
                },
                "responses": {
                    "2XX": {
                        "description": "Delivered. Anything else (3xx included), or no "
                        "answer within 5 s, is a failure; there are no retries."
                    }
                },
            }
        }
    return out
