"""Public system endpoints."""

from __future__ import annotations

from werkzeug.wrappers import Response

from svc_server.http.context import Ctx
from svc_server.http.responses import json_response
from svc_server.services import status


def get_status(ctx: Ctx) -> Response:
    """GET /api/status: 200 when every probe answers, 503 otherwise."""
    healthy, body = status.check(ctx.app.store, ctx.now)
    return json_response(
        body,
        status=200 if healthy else 503,
        headers={"Cache-Control": "public, s-maxage=10, stale-while-revalidate=30"},
    )
