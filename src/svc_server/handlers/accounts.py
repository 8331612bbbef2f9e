"""Account endpoints: sign-in, and ``/api/auth/me/*`` (cookie only)."""

from __future__ import annotations

from werkzeug.wrappers import Response

from svc_core.accounts import requestlog
from svc_core.accounts.bodies import SESSION_FIELDS
from svc_core.convert import to_json
from svc_core.errors import JwtInvalid, SvcError, UsageFailed
from svc_core.fields import read_body
from svc_server.http import cookies
from svc_server.http.context import Ctx
from svc_server.runtime.deps import Deps
from svc_server.runtime.replies import account_reply, json_body, user_of
from svc_server.services import keys, membership, request_log, sessions, team, usage


def post_session(ctx: Ctx, deps: Deps) -> Response:
    if ctx.request.headers.get("Origin") not in (None, ""):
        cookies.check_origin(ctx.request, deps.config, signing_in=True)  # not from another site
    body = json_body(ctx, deps)
    if not body:  # a sign-in without a token is a refused token (401); unknown fields are 400
        raise JwtInvalid('Send the identity provider\'s token as {"jwt": "..."}.')
    token = read_body(SESSION_FIELDS, body)["jwt"]
    identity = deps.verifier().verify(token, now=ctx.now)
    data = sessions.sign_in(
        deps.store, deps.config, identity, now=ctx.now, entropy=deps.entropy(16), ids=deps.ids
    )
    cookie, lifetime = data.pop("_cookie"), data.pop("_cookie_seconds")
    response = account_reply(ctx, {"data": data})
    cookies.set_cookie(deps.config, response, cookie, lifetime)
    return response


def delete_session(ctx: Ctx, deps: Deps) -> Response:
    assert ctx.session_id is not None
    sessions.sign_out(deps.store, ctx.session_id, ctx.now)
    response = account_reply(ctx, {"signed_out": True})
    cookies.clear_cookie(deps.config, response)  # settlement then does not renew it
    return response


def get_usage(ctx: Ctx, deps: Deps) -> Response:
    try:
        deps.leases.write_back()  # this process's own calls count at once
        deps.request_log.flush_quietly()  # and its calls per key
        data = usage.usage_summary(deps.store, user_of(ctx), ctx.now)
    except SvcError:
        raise
    except Exception as exc:  # SPEC: a failed usage read is 500 USAGE_FAILED (app logs it)
        raise UsageFailed() from exc
    return account_reply(ctx, {"data": data})


def list_keys(ctx: Ctx, deps: Deps) -> Response:
    return account_reply(ctx, {"data": keys.list_keys(deps.store, user_of(ctx), ctx.now)})


def create_key(ctx: Ctx, deps: Deps) -> Response:
    body = json_body(ctx, deps)
    row = keys.create_key(
        deps.store, user_of(ctx), body, now=ctx.now, entropy=deps.entropy(16), ids=deps.ids
    )
    return account_reply(ctx, {"data": row})


def patch_key(ctx: Ctx, deps: Deps, key_id: str) -> Response:
    body = json_body(ctx, deps)
    return account_reply(
        ctx, {"data": keys.patch_key(deps.store, user_of(ctx), key_id, body, ctx.now)}
    )


def rotate_key(ctx: Ctx, deps: Deps, key_id: str) -> Response:
    body = json_body(ctx, deps, optional=True)
    out = keys.rotate_key(
        deps.store, user_of(ctx), key_id, body, now=ctx.now, entropy=deps.entropy(16), ids=deps.ids
    )
    return account_reply(ctx, {"data": out.key, "previous": out.previous})


def revoke_key(ctx: Ctx, deps: Deps, key_id: str) -> Response:
    keys.revoke_key(deps.store, key_id, ctx.now, user_id=user_of(ctx))
    return account_reply(ctx, {"revoked": True})


def get_team(ctx: Ctx, deps: Deps) -> Response:
    return account_reply(ctx, to_json(team.team(deps.store, user_of(ctx), ctx.now)))


def post_team(ctx: Ctx, deps: Deps) -> Response:
    body = json_body(ctx, deps)
    return account_reply(
        ctx, {"data": team.invite(deps.store, user_of(ctx), body, now=ctx.now, ids=deps.ids)}
    )


def delete_member(ctx: Ctx, deps: Deps, member_id: str) -> Response:
    team.remove_member(deps.store, user_of(ctx), member_id, ctx.now)
    return account_reply(ctx, {"removed": True})


def get_invites(ctx: Ctx, deps: Deps) -> Response:
    return account_reply(ctx, {"invites": team.my_invites(deps.store, user_of(ctx), ctx.now)})


def accept_invite(ctx: Ctx, deps: Deps, invite_id: str) -> Response:
    team.accept_invite(deps.store, user_of(ctx), invite_id, ctx.now)
    return account_reply(ctx, {"accepted": True})


def get_requests(ctx: Ctx, deps: Deps) -> Response:
    """GET /api/auth/me/requests: the account's request log, newest first."""
    query = requestlog.read_query(ctx.params)
    deps.request_log.flush_quietly()  # this process's own calls show at once
    return account_reply(
        ctx, {"data": request_log.recent_calls(deps.store, user_of(ctx), query, ctx.now)}
    )


def list_accounts(ctx: Ctx, deps: Deps) -> Response:
    return account_reply(ctx, {"data": membership.accounts_of(deps.store, user_of(ctx))})


def switch_account(ctx: Ctx, deps: Deps, consumer_id: str) -> Response:
    row = membership.switch_account(deps.store, user_of(ctx), consumer_id)
    return account_reply(ctx, {"data": row})
