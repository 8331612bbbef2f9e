"""Marketplace endpoints: JSON only, ``{data, _meta}`` on success.

Successful answers may be reused for 6 hours by the caller's own cache only
(``private``): ``_meta`` carries the caller's auth method and rate limit. The access
pipeline adds the ``X-RateLimit-*`` and, for live API keys, ``X-Quota-*`` headers.
"""

from __future__ import annotations

from werkzeug.wrappers import Response

from svc_core.convert import to_json
from svc_server.http.context import Ctx
from svc_server.http.deps import Deps
from svc_server.http.responses import json_response
from svc_server.services import markets as service

CACHE_HEADERS = {
    "Cache-Control": f"private, max-age={service.CACHE_SECONDS}",
    "Vary": "X-API-Key, Cookie",
}


def pulse(ctx: Ctx, deps: Deps) -> Response:
    assert ctx.caller is not None  # the data auth policy guarantees it
    answer = service.pulse(
        deps.store, ctx.caller, ctx.params, request_id=ctx.request_id, now=ctx.now
    )
    return json_response(
        {"data": to_json(answer.data), "_meta": answer.meta}, headers=CACHE_HEADERS
    )


def dimensions(ctx: Ctx, deps: Deps) -> Response:
    assert ctx.caller is not None  # the data auth policy guarantees it
    answer = service.dimensions(
        deps.store, ctx.caller, ctx.params, request_id=ctx.request_id, now=ctx.now
    )
    return json_response({"data": answer.data, "_meta": answer.meta}, headers=CACHE_HEADERS)
