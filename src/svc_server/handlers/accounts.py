"""Account endpoints: sign-in, and ``/api/auth/me/*`` (cookie only)."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Response

from svc_core.errors import InvalidBody, JwtInvalid, SvcError, UsageFailed
from svc_server.http import auth
from svc_server.http.body import read_json_object
from svc_server.http.context import Ctx
from svc_server.http.responses import json_response
from svc_server.services import accounts, sessions
from svc_server.services.accounts import iso

NO_STORE = {"Cache-Control": "private, no-store"}


def _reply(ctx: Ctx, body: dict[str, Any], status: int = 200) -> Response:
    """SPEC bodies as shown, plus ``meta: {request_id, timestamp}``."""
    body = dict(body)
    body["meta"] = {"request_id": ctx.request_id, "timestamp": iso(ctx.now)}
    return json_response(body, status=status, headers=NO_STORE)


def _body(ctx: Ctx, *, optional: bool = False) -> dict[str, Any]:
    return read_json_object(ctx.request, max_bytes=ctx.app.config.max_body_bytes, optional=optional)


def _user(ctx: Ctx) -> str:
    assert ctx.user_id is not None  # the route's auth policy guarantees it
    return ctx.user_id


def post_session(ctx: Ctx) -> Response:
    if ctx.request.headers.get("Origin") not in (None, ""):
        auth.check_origin(ctx)  # a browser on another site may not sign anyone in here
    body = _body(ctx)
    unknown = sorted(set(body) - {"jwt"})
    if unknown:
        raise InvalidBody(f"Unknown field {unknown[0]!r}.", hint='Send {"jwt": "<token>"}.')
    token = body.get("jwt")
    if not isinstance(token, str) or not token:
        raise JwtInvalid('Send the identity provider\'s token as {"jwt": "..."}.')
    identity = ctx.app.jwt_verifier().verify(token, now=ctx.now)
    data = sessions.sign_in(ctx.app.store, ctx.app.config, identity, ctx.now, ctx.app.entropy(16))
    cookie = data.pop("_cookie")
    response = _reply(ctx, {"data": data})
    auth.set_cookie(ctx, response, cookie)
    ctx.user_id = data["user"]["id"]
    return response


def delete_session(ctx: Ctx) -> Response:
    assert ctx.session_id is not None
    sessions.sign_out(ctx.app.store, ctx.session_id, ctx.now)
    ctx.after.clear()  # do not re-send the cookie we are clearing
    response = _reply(ctx, {"signed_out": True})
    auth.clear_cookie(ctx, response)
    return response


def get_usage(ctx: Ctx) -> Response:
    try:
        data = accounts.usage_summary(ctx.app.store, _user(ctx), ctx.now)
    except SvcError:
        raise
    except Exception as exc:  # SPEC: a failed usage read is 500 USAGE_FAILED (app logs it)
        raise UsageFailed() from exc
    return _reply(ctx, {"data": data})


def list_keys(ctx: Ctx) -> Response:
    return _reply(ctx, {"data": accounts.list_keys(ctx.app.store, _user(ctx), ctx.now)})


def create_key(ctx: Ctx) -> Response:
    body = _body(ctx)
    row = accounts.create_key(ctx.app.store, _user(ctx), body, ctx.now, ctx.app.entropy(16))
    return _reply(ctx, {"data": row})


def patch_key(ctx: Ctx, key_id: str) -> Response:
    body = _body(ctx)
    return _reply(
        ctx, {"data": accounts.patch_key(ctx.app.store, _user(ctx), key_id, body, ctx.now)}
    )


def rotate_key(ctx: Ctx, key_id: str) -> Response:
    body = _body(ctx, optional=True)
    out = accounts.rotate_key(ctx.app.store, _user(ctx), key_id, body, ctx.now, ctx.app.entropy(16))
    return _reply(ctx, out)


def revoke_key(ctx: Ctx, key_id: str) -> Response:
    accounts.revoke_key(ctx.app.store, key_id, ctx.now, user_id=_user(ctx))
    return _reply(ctx, {"revoked": True})


def get_team(ctx: Ctx) -> Response:
    return _reply(ctx, accounts.team(ctx.app.store, _user(ctx), ctx.now))


def post_team(ctx: Ctx) -> Response:
    body = _body(ctx)
    return _reply(ctx, {"data": accounts.invite(ctx.app.store, _user(ctx), body, ctx.now)})


def delete_member(ctx: Ctx, member_id: str) -> Response:
    accounts.remove_member(ctx.app.store, _user(ctx), member_id, ctx.now)
    return _reply(ctx, {"removed": True})


def get_invites(ctx: Ctx) -> Response:
    return _reply(ctx, {"invites": accounts.my_invites(ctx.app.store, _user(ctx), ctx.now)})


def accept_invite(ctx: Ctx, invite_id: str) -> Response:
    accounts.accept_invite(ctx.app.store, _user(ctx), invite_id, ctx.now)
    return _reply(ctx, {"accepted": True})
