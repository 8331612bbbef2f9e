"""Marketplace endpoints: JSON only, ``{data, _meta}`` on success.

Successful answers may be reused for 6 hours by the caller's own cache only
(``private``): ``_meta`` carries the caller's auth method and rate limit. Each answer
has a weak ``ETag`` (``If-None-Match`` with it gives a 304) and is gzip-coded on
``Accept-Encoding: gzip`` (``Rendered.respond``). The access
pipeline adds the ``X-RateLimit-*`` and, for live API keys, ``X-Quota-*`` headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from werkzeug.wrappers import Response

from svc_core.convert import to_json
from svc_server.http.answers import per_call_values, rendered_json
from svc_server.http.context import Ctx
from svc_server.http.responses import JSON_TYPE
from svc_server.runtime.deps import Deps
from svc_server.services import markets as service

HEADERS = (
    ("Content-Type", JSON_TYPE),
    ("Cache-Control", f"private, max-age={service.CACHE_SECONDS}"),
    ("Vary", "X-API-Key, Cookie, Accept-Encoding"),
)


def _reply(ctx: Ctx, data: Any, meta: Mapping[str, Any]) -> Response:
    """The answer, gzip-coded when asked for, with its ETag (a digest of everything but
    the per-call ``_meta`` fields); 304 when ``If-None-Match`` holds that tag."""
    rendered = rendered_json({"data": data, "_meta": meta}, HEADERS)
    return rendered.respond(ctx.request.environ, per_call_values(meta))


def _asked(ctx: Ctx) -> service.Asked:
    assert ctx.caller is not None  # the data auth policy guarantees it
    return service.Asked(
        caller=ctx.caller, params=ctx.params, request_id=ctx.request_id, now=ctx.now
    )


def pulse(ctx: Ctx, deps: Deps) -> Response:
    answer = service.pulse(deps.store, _asked(ctx))
    return _reply(ctx, to_json(answer.data), answer.meta)


def dimensions(ctx: Ctx, deps: Deps) -> Response:
    answer = service.dimensions(deps.store, _asked(ctx))
    return _reply(ctx, answer.data, answer.meta)
