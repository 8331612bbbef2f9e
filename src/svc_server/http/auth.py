"""Authentication of requests: who is calling, and may they call now.

``authenticate_data`` guards ``/api/v1/*`` (API key or session cookie);
``authenticate_account`` guards ``/api/auth/me/*`` (session cookie only).
Both raise an ``SvcError`` (401/402/403/429) or set the caller on the context.
"""

from __future__ import annotations

from svc_core.errors import NotSignedIn, Unauthorized
from svc_server.http.context import Ctx


def authenticate_data(ctx: Ctx) -> None:
    """Resolve the caller of a data endpoint; no credential store exists yet."""
    raise Unauthorized("Send an API key in the X-API-Key header or sign in.")


def authenticate_account(ctx: Ctx) -> None:
    """Resolve the signed-in user of an account endpoint."""
    raise NotSignedIn()
