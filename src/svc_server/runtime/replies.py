"""Reply helpers shared by the account handlers: SPEC bodies (typed service results
turned to JSON by ``convert.to_json``) with ``meta``, JSON bodies read under the
configured limit, and the signed-in user of an account route."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from werkzeug.wrappers import Response

from svc_core.convert import to_json
from svc_core.instants import iso
from svc_server.http.body import read_json_object
from svc_server.http.context import Ctx
from svc_server.http.responses import json_response
from svc_server.runtime.deps import Deps

NO_STORE = {"Cache-Control": "private, no-store"}


def account_reply(ctx: Ctx, body: Mapping[str, Any], status: int = 200) -> Response:
    """SPEC bodies as shown, plus ``meta: {request_id, timestamp}``; never cached.

    ``body`` may hold typed results (attrs values, datetimes): they become JSON here.
    """
    out: dict[str, Any] = to_json(dict(body))
    out["meta"] = {"request_id": ctx.request_id, "timestamp": iso(ctx.now)}
    return json_response(out, status=status, headers=NO_STORE)


def json_body(ctx: Ctx, deps: Deps, *, optional: bool = False) -> dict[str, Any]:
    """The request's JSON object body (``{}`` for none when ``optional``)."""
    return read_json_object(ctx.request, max_bytes=deps.config.max_body_bytes, optional=optional)


def user_of(ctx: Ctx) -> str:
    """The signed-in user of an account route (its auth policy guarantees one)."""
    assert ctx.user_id is not None
    return ctx.user_id
