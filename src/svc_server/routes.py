"""The routing table: every path, its methods, handler, auth policy and parameters.

One werkzeug ``Map`` built from ``ROUTES``; the app looks the matched endpoint up here.
``auth`` is ``public``, ``data`` (API key or cookie; rate-limited; quota-counted when
``counted``) or ``account`` (cookie only).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Response

from svc_server.handlers import accounts, markets, realestate, system, webhooks
from svc_server.handlers import openapi as openapi_handler
from svc_server.services import realestate as re_service
from svc_server.web import pages as web

Handler = Callable[..., Response]


@attrs.frozen(kw_only=True)
class Route:
    path: str
    methods: tuple[str, ...]
    handler: Handler
    auth: str = "public"
    params: frozenset[str] = frozenset()
    counted: bool = False
    csv: bool = False

    @property
    def endpoint(self) -> str:
        return f"{self.methods[0]} {self.path}"


ME = "/api/auth/me"
RE = "/api/v1/real-estate"
ROUTES: tuple[Route, ...] = (
    Route(path="/api/status", methods=("GET",), handler=system.get_status),
    Route(path="/api/v1/openapi.json", methods=("GET",), handler=openapi_handler.get_document),
    Route(path="/disclosure", methods=("GET",), handler=system.get_disclosure),
    Route(path="/pricing", methods=("GET",), handler=system.get_pricing),
    # browser pages (svc_server.web): dashboard, sign-in, API reference, their assets
    Route(path="/dashboard", methods=("GET",), handler=web.dashboard),
    Route(path="/dashboard/<section>", methods=("GET",), handler=web.dashboard_section),
    Route(path="/signin", methods=("GET",), handler=web.signin),
    Route(path="/api/auth/dev-session", methods=("POST",), handler=web.dev_session),
    Route(path="/docs", methods=("GET",), handler=web.docs),
    Route(path="/static/<path:name>", methods=("GET",), handler=web.asset),
    # real-estate vertical
    Route(
        path=f"{RE}/pulse",
        methods=("GET",),
        handler=realestate.pulse,
        auth="data",
        params=re_service.PULSE_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/pulse/series",
        methods=("GET",),
        handler=realestate.series,
        auth="data",
        params=re_service.SERIES_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/coverage",
        methods=("GET",),
        handler=realestate.coverage,
        auth="data",
        params=re_service.COVERAGE_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/indices",
        methods=("GET",),
        handler=realestate.indices,
        auth="data",
        params=re_service.INDICES_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/dimensions",
        methods=("GET",),
        handler=realestate.dimensions,
        auth="data",
        params=re_service.DIMENSIONS_PARAMS,
        counted=True,
    ),
    # marketplace vertical
    Route(
        path="/api/v1/markets/pulse",
        methods=("GET",),
        handler=markets.pulse,
        auth="data",
        params=frozenset({"region", "category", "period", "product_type"}),
        counted=True,
    ),
    Route(
        path="/api/v1/markets/dimensions",
        methods=("GET",),
        handler=markets.dimensions,
        auth="data",
        counted=True,
    ),
    # sessions and accounts
    Route(path="/api/auth/session", methods=("POST",), handler=accounts.post_session),
    Route(
        path="/api/auth/session",
        methods=("DELETE",),
        handler=accounts.delete_session,
        auth="account",
    ),
    Route(path=f"{ME}/usage", methods=("GET",), handler=accounts.get_usage, auth="account"),
    Route(path=f"{ME}/keys", methods=("GET",), handler=accounts.list_keys, auth="account"),
    Route(path=f"{ME}/keys", methods=("POST",), handler=accounts.create_key, auth="account"),
    Route(
        path=f"{ME}/keys/<key_id>", methods=("PATCH",), handler=accounts.patch_key, auth="account"
    ),
    Route(
        path=f"{ME}/keys/<key_id>",
        methods=("DELETE",),
        handler=accounts.revoke_key,
        auth="account",
    ),
    Route(
        path=f"{ME}/keys/<key_id>/rotate",
        methods=("POST",),
        handler=accounts.rotate_key,
        auth="account",
    ),
    Route(
        path=f"{ME}/keys/<key_id>/revoke",
        methods=("POST",),
        handler=accounts.revoke_key,
        auth="account",
    ),
    Route(path=f"{ME}/team", methods=("GET",), handler=accounts.get_team, auth="account"),
    Route(path=f"{ME}/team", methods=("POST",), handler=accounts.post_team, auth="account"),
    Route(
        path=f"{ME}/team/<member_id>",
        methods=("DELETE",),
        handler=accounts.delete_member,
        auth="account",
    ),
    Route(path=f"{ME}/webhooks", methods=("GET",), handler=webhooks.list_endpoints, auth="account"),
    Route(
        path=f"{ME}/webhooks", methods=("POST",), handler=webhooks.create_endpoint, auth="account"
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>",
        methods=("DELETE",),
        handler=webhooks.revoke_endpoint,
        auth="account",
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/enable",
        methods=("POST",),
        handler=webhooks.enable_endpoint,
        auth="account",
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/test",
        methods=("POST",),
        handler=webhooks.send_test,
        auth="account",
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/deliveries",
        methods=("GET",),
        handler=webhooks.list_deliveries,
        auth="account",
        params=webhooks.DELIVERY_PARAMS,
    ),
    Route(path=f"{ME}/invites", methods=("GET",), handler=accounts.get_invites, auth="account"),
    Route(
        path=f"{ME}/invites/<invite_id>/accept",
        methods=("POST",),
        handler=accounts.accept_invite,
        auth="account",
    ),
)


def build_map(routes: tuple[Route, ...] = ROUTES) -> Map:
    """A werkzeug Map whose endpoints are the Route objects' ``endpoint`` names."""
    return Map(
        [Rule(r.path, methods=list(r.methods), endpoint=r.endpoint) for r in routes],
        strict_slashes=False,
        merge_slashes=False,
    )


BY_ENDPOINT: dict[str, Route] = {r.endpoint: r for r in ROUTES}
