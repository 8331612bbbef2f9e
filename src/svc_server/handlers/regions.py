"""``GET /api/v1/real-estate/regions``: find a district, a legal dong or an R-ONE market
area by name or code.

Unpacks the query, delegates to ``svc_server.services.regions`` (the bundled tables and
the market areas loaded) and packs ``{data, _meta}``. The route is a data route that is
not counted against the quota (``counted=False`` in ``svc_server.app.routes``): an API
key is needed and the rate limit applies. The tables change only with a release and the
market areas with an R-ONE load, so a caller's own cache may keep an answer for an hour
(``private``: ``_meta`` names the caller's auth method and rate limit).
"""

from __future__ import annotations

from datetime import UTC, datetime

from werkzeug.wrappers import Response

from svc_core.envelope import rate_limit
from svc_server.http.context import Ctx
from svc_server.http.responses import json_response
from svc_server.runtime.deps import Deps
from svc_server.services import regions as region_service

CACHE_HEADERS = {"Cache-Control": "private, max-age=3600", "Vary": "X-API-Key, Cookie"}


def search(ctx: Ctx, deps: Deps) -> Response:
    caller = ctx.caller
    assert caller is not None  # the data auth policy guarantees it
    data, meta = region_service.regions(
        deps.store,
        ctx.params,
        generated_at=datetime.fromtimestamp(ctx.now, UTC),
        auth_method=caller.auth_method,
        rate_limit=rate_limit(caller),
        request_id=ctx.request_id,
    )
    return json_response({"data": data, "_meta": meta}, headers=CACHE_HEADERS)
