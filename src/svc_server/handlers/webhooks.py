"""Webhook endpoints of the account API: ``/api/auth/me/webhooks*`` (cookie only)."""

from __future__ import annotations

from werkzeug.wrappers import Response

from svc_server.handlers.accounts import _body, _reply, _user
from svc_server.http.context import Ctx
from svc_server.services import webhooks

DELIVERY_PARAMS = frozenset({"limit", "offset"})


def list_endpoints(ctx: Ctx) -> Response:
    return _reply(ctx, {"data": webhooks.list_endpoints(ctx.app.store, _user(ctx))})


def create_endpoint(ctx: Ctx) -> Response:
    body = _body(ctx)
    row = webhooks.create_endpoint(
        ctx.app.store,
        _user(ctx),
        body,
        ctx.now,
        ctx.app.entropy(32),
        allow_private=ctx.app.config.webhook_allow_private,
    )
    return _reply(ctx, {"data": row})


def revoke_endpoint(ctx: Ctx, endpoint_id: str) -> Response:
    webhooks.revoke_endpoint(ctx.app.store, _user(ctx), endpoint_id, ctx.now)
    return _reply(ctx, {"revoked": True})


def enable_endpoint(ctx: Ctx, endpoint_id: str) -> Response:
    row = webhooks.enable_endpoint(ctx.app.store, _user(ctx), endpoint_id, ctx.now)
    return _reply(ctx, {"data": row})


def send_test(ctx: Ctx, endpoint_id: str) -> Response:
    out = webhooks.send_test(
        ctx.app.store,
        _user(ctx),
        endpoint_id,
        now=ctx.now,
        entropy=ctx.app.entropy(16),
        docs_url=f"{ctx.app.config.public_url}/docs/webhooks",
        clock=ctx.app.clock,
        allow_private=ctx.app.config.webhook_allow_private,
    )
    return _reply(ctx, {"data": out})


def list_deliveries(ctx: Ctx, endpoint_id: str) -> Response:
    out = webhooks.deliveries(ctx.app.store, _user(ctx), endpoint_id, ctx.params, ctx.now)
    return _reply(ctx, {"data": out})
