"""GET /api/v1/openapi.json: the OpenAPI document, built once per server.

Public and cacheable: the body is fixed for a running server, so it carries a strong
ETag and a conditional request with a matching ``If-None-Match`` gets a 304.
"""

from __future__ import annotations

from werkzeug.wrappers import Response

from svc_server.http.context import Ctx
from svc_server.http.responses import JSON_TYPE
from svc_server.runtime.deps import Deps

CACHE_CONTROL = "public, max-age=300"


def get_document(ctx: Ctx, deps: Deps) -> Response:
    body, etag = deps.document()
    response = Response(body, mimetype=JSON_TYPE)
    response.set_etag(etag)
    response.headers["Cache-Control"] = CACHE_CONTROL
    return response.make_conditional(ctx.request)
