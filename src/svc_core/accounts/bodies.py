"""The JSON bodies of the account endpoints besides keys (``svc_core.accounts.keys``), declared
once: each ``Field`` validates the body and is what the API reference shows."""

from __future__ import annotations

import unicodedata

import attrs

from svc_core.accounts.emails import MAX_EMAIL, normalize_email
from svc_core.errors import InvalidBody, JwtInvalid
from svc_core.fields import Field
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.webhooks import event_filters, events

ROLES: tuple[str, ...] = ("owner", "admin", "member")
INVITE_ROLES: tuple[str, ...] = ("member", "admin")
MAX_WEBHOOK_URL = 2048
MAX_WEBHOOK_DESCRIPTION = 500


def _description(value: str) -> str:
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise InvalidBody("description must not contain control characters.")
    return value


def _events(value: list[object]) -> tuple[str, ...]:
    return tuple(events.validate_subscription(value))


_FILTERS_DOC = {
    "type": "object",
    "properties": {
        "sigungu_codes": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[0-9]{5}$"},
            "minItems": 1,
            "maxItems": event_filters.MAX_FILTER_VALUES,
        },
        "property_types": {
            "type": "array",
            "items": {"type": "string", "enum": list(PROPERTY_TYPES)},
            "minItems": 1,
        },
        "transaction_types": {
            "type": "array",
            "items": {"type": "string", "enum": list(TRANSACTION_TYPES)},
            "minItems": 1,
        },
    },
    "additionalProperties": False,
    "default": {},
}


EMAIL = Field(
    name="email",
    description="An email address; compared after lower-casing ASCII letters only.",
    required=True,
    max_length=MAX_EMAIL,
    check=normalize_email,
    doc={"format": "email"},
)
INVITE_FIELDS: tuple[Field, ...] = (
    EMAIL,
    Field(
        name="role",
        description="The role the invitee gets on accepting.",
        kind="enum",
        choices=INVITE_ROLES,
        default="member",
    ),
)
"""``POST /api/auth/me/team``."""

WEBHOOK_FIELDS: tuple[Field, ...] = (
    Field(
        name="url",
        description="HTTPS URL whose host resolves only to public addresses.",
        required=True,
        max_length=MAX_WEBHOOK_URL,
        hint="For example https://example.com/hooks",
        doc={"format": "uri", "pattern": "^https://"},
    ),
    Field(
        name="description",
        description="Your note about the endpoint.",
        max_length=MAX_WEBHOOK_DESCRIPTION,
        nullable=True,
        check=_description,
    ),
    Field(
        name="events",
        description="Event types, or * for all.",
        kind="array",
        nullable=True,
        check=_events,
        doc={
            "items": {"type": "string", "enum": list(events.SUBSCRIBABLE)},
            "minItems": 1,
            "default": ["*"],
        },
    ),
    Field(
        name="filters",
        description="data.updated only: send only the changes of these districts "
        "(sigungu_codes), property types and transaction types; a key left out keeps "
        "every value, {} or null every change.",
        kind="any",
        nullable=True,
        check=event_filters.validate_filters,
        doc=_FILTERS_DOC,
    ),
)
"""``POST /api/auth/me/webhooks`` (the URL's addresses are checked by the service)."""
WEBHOOK_PATCH_FIELDS: tuple[Field, ...] = tuple(
    f for f in WEBHOOK_FIELDS if f.name in ("description", "events", "filters")
)
"""``PATCH /api/auth/me/webhooks/{endpoint_id}``: what an endpoint may change (its URL
and secret stay: register a new endpoint for another address)."""


def _token(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise JwtInvalid('Send the identity provider\'s token as {"jwt": "..."}.')
    return value


SESSION_FIELDS: tuple[Field, ...] = (
    Field(
        name="jwt",
        description="The identity provider's token (RS256, ES256 or HS256).",
        kind="any",
        required=True,
        check=_token,
        doc={"type": "string", "minLength": 1},
    ),
)
"""``POST /api/auth/session``."""

DEV_SESSION_FIELDS: tuple[Field, ...] = (
    attrs.evolve(EMAIL, description="Who to sign in (development sign-in only)."),
)
"""``POST /api/auth/dev-session``."""
