"""Webhook endpoints of the account API: ``/api/auth/me/webhooks*`` (cookie only)."""

from __future__ import annotations

from werkzeug.wrappers import Response

from svc_server.http.context import Ctx
from svc_server.runtime.deps import Deps
from svc_server.runtime.replies import account_reply, json_body, user_of
from svc_server.services import delivery_log, endpoint_settings, resend, webhooks


def list_endpoints(ctx: Ctx, deps: Deps) -> Response:
    return account_reply(ctx, {"data": webhooks.list_endpoints(deps.store, user_of(ctx))})


def create_endpoint(ctx: Ctx, deps: Deps) -> Response:
    body = json_body(ctx, deps)
    row = webhooks.create_endpoint(
        deps.store,
        user_of(ctx),
        body,
        ctx.now,
        deps.entropy(32),
        ids=deps.ids,
        allow_private=deps.config.webhook_allow_private,
    )
    return account_reply(ctx, {"data": row})


def update_endpoint(ctx: Ctx, deps: Deps, endpoint_id: str) -> Response:
    body = json_body(ctx, deps)
    row = endpoint_settings.update_endpoint(deps.store, user_of(ctx), endpoint_id, body)
    return account_reply(ctx, {"data": row})


def revoke_endpoint(ctx: Ctx, deps: Deps, endpoint_id: str) -> Response:
    webhooks.revoke_endpoint(deps.store, user_of(ctx), endpoint_id, ctx.now)
    return account_reply(ctx, {"revoked": True})


def enable_endpoint(ctx: Ctx, deps: Deps, endpoint_id: str) -> Response:
    row = webhooks.enable_endpoint(deps.store, user_of(ctx), endpoint_id, ctx.now)
    return account_reply(ctx, {"data": row})


def manual_sends(deps: Deps) -> webhooks.ManualSends:
    """How this deployment's test sends and resends go out."""
    return webhooks.ManualSends(
        clock=deps.clock,
        allow_private=deps.config.webhook_allow_private,
        per_minute=deps.config.webhook_test_sends_per_minute,
    )


def send_test(ctx: Ctx, deps: Deps, endpoint_id: str) -> Response:
    out = webhooks.send_test(
        deps.store,
        user_of(ctx),
        endpoint_id,
        now=ctx.now,
        entropy=deps.entropy(16),
        docs_url=f"{deps.config.public_url}/docs#/Webhooks",  # the Swagger UI tag
        ids=deps.ids,
        sends=manual_sends(deps),
    )
    return account_reply(ctx, {"data": out})


def list_deliveries(ctx: Ctx, deps: Deps, endpoint_id: str) -> Response:
    out = delivery_log.deliveries(deps.store, user_of(ctx), endpoint_id, ctx.params, ctx.now)
    return account_reply(ctx, {"data": out})


def get_delivery(ctx: Ctx, deps: Deps, endpoint_id: str, delivery_id: str) -> Response:
    row = delivery_log.delivery_detail(deps.store, user_of(ctx), endpoint_id, delivery_id)
    return account_reply(ctx, {"data": row})


def resend_delivery(ctx: Ctx, deps: Deps, endpoint_id: str, delivery_id: str) -> Response:
    out = resend.resend(
        deps.store,
        user_of(ctx),
        endpoint_id,
        delivery_id,
        now=ctx.now,
        ids=deps.ids,
        sends=manual_sends(deps),
    )
    return account_reply(ctx, {"data": out})
