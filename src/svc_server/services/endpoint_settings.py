"""Changing a webhook endpoint in place: ``PATCH /api/auth/me/webhooks/{endpoint_id}``.

What an endpoint receives may change (``events``, the ``data.updated`` ``filters``) and
its note (``description``); its URL and secret may not (register a new endpoint for
another address). Owners and admins only; a revoked endpoint cannot change. The new
settings apply to events published from then on: deliveries already queued stay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from svc_core.accounts.bodies import WEBHOOK_PATCH_FIELDS
from svc_core.errors import InvalidBody, NotFound
from svc_core.fields import read_body
from svc_server.services.membership import managed_account
from svc_server.services.webhooks import owned_endpoint
from svc_server.store import Store
from svc_server.store.webhook_rows import Endpoint
from svc_server.store.webhooks import encode_filters

_STORED: dict[str, Callable[[Any], Any]] = {
    "description": lambda value: value,
    "events": lambda value: json.dumps(list(value or ("*",))),
    "filters": lambda value: encode_filters(value or {}),
}
"""How each field a PATCH may set is stored (null events: ``*``; null filters: none)."""


def update_endpoint(
    store: Store, user_id: str, endpoint_id: str, body: Mapping[str, Any]
) -> Endpoint:
    """Apply a ``PATCH`` body (at least one of ``WEBHOOK_PATCH_FIELDS``); the endpoint
    as it is now. Order of checks: body (400), role (403), the endpoint (404)."""
    fields = read_body(WEBHOOK_PATCH_FIELDS, body, read_only=("url", "secret"))
    if not fields:
        raise InvalidBody(
            "Send at least one of: description, events, filters.",
            hint='For example {"filters": {"sigungu_codes": ["11680"]}}.',
        )
    columns = {name: encode(fields.get(name)) for name, encode in _STORED.items() if name in fields}
    with store.db.transaction() as tx:
        consumer = managed_account(store, tx, user_id)
        row = owned_endpoint(store, tx, consumer.id, endpoint_id)
        if row.status == "revoked" or not store.webhooks.update_endpoint_if(
            tx, row.id, row.status, columns
        ):
            raise NotFound("This webhook endpoint is revoked; register a new one.")
        return store.webhooks.get_endpoint(tx, row.id) or row
