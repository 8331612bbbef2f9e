"""GET /api/v1/openapi.json: the OpenAPI document, built once per server address.

Public and cacheable: the body is fixed for a running server, so it carries a strong
ETag and a conditional request with a matching ``If-None-Match`` gets a 304.
"""

from __future__ import annotations

import functools
import hashlib

from werkzeug.wrappers import Response

from svc_server.http.context import Ctx
from svc_server.http.responses import JSON_TYPE, dumps
from svc_server.openapi import build_document

CACHE_CONTROL = "public, max-age=300"


@functools.lru_cache(maxsize=8)
def _rendered(server_url: str, max_body_bytes: int, max_url_bytes: int) -> tuple[bytes, str]:
    from svc_server import routes  # the table imports this module; resolve it at call time

    body = dumps(
        build_document(
            routes.ROUTES,
            server_url=server_url,
            max_body_bytes=max_body_bytes,
            max_url_bytes=max_url_bytes,
        )
    )
    return body, hashlib.sha256(body).hexdigest()[:32]


def get_document(ctx: Ctx) -> Response:
    config = ctx.app.config
    body, etag = _rendered(config.public_url, config.max_body_bytes, config.max_url_bytes)
    response = Response(body, mimetype=JSON_TYPE)
    response.set_etag(etag)
    response.headers["Cache-Control"] = CACHE_CONTROL
    return response.make_conditional(ctx.request)
