"""The per-request values handed to handlers: plain values, no globals, no app."""

from __future__ import annotations

import attrs
from werkzeug.wrappers import Request

from svc_core.caller import Caller

CLIENT_GONE = "svc.client_gone"
"""The environ key of a callable the server may set (``http.front`` does): whether the
client has gone, closed or half-closed; the app charges no call it cannot answer."""
TAKE_BACK = "svc.take_back"
"""The environ key of a callable the app sets when it counted a call: the server calls
it (off its event loop) when the answer turned out never sent, so the call is uncounted."""
ACCOUNT = "svc.account"
"""The environ key the app sets to the account (consumer id) a call acted for, so the
server can bound each account's share of it (``http.tenants``)."""


@attrs.frozen(kw_only=True)
class Ctx:
    """One admitted request: the raw request, its id and clock reading, its strict-parsed
    query, and who is calling (``caller`` on data routes, ``user_id`` on account routes and
    pages, with ``consumer_id``, the consumer their calls act on)."""

    request: Request
    request_id: str
    now: float
    params: dict[str, str] = attrs.field(factory=dict)
    caller: Caller | None = None
    user_id: str | None = None
    consumer_id: str | None = None
    session_id: str | None = None
    operation: str = ""
    """The route's operation id (``Route.operation_id``): what its answers are kept
    under in the answer cache."""
    csv_only: bool = False
    """The route is the ``.csv`` form of a CSV-capable one: answer CSV, negotiate nothing."""
    key_id: str | None = None
    """The API key the call was made with, when known, also when it was refused (the
    request log keeps these calls, under ``consumer_id``)."""
    counted: bool = False
    """The call held a unit of the month's quota (it is counted when it succeeds)."""
    error_code: str | None = None
    """The error body's ``code`` of a failed call of a key (for the request log)."""
