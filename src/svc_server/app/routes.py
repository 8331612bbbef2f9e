"""The routing table: every path, its methods, handler, auth policy, parameters and text.

One ``Route`` per operation (``svc_server.http.routing``): the dispatcher reads its auth
policy, parameter declarations and flags, the OpenAPI builder the same fields plus the
``Operation`` text in ``doc``. ``auth`` is ``public``, ``data`` (API key or cookie;
rate-limited; quota-counted when ``counted``), ``account`` (cookie only) or ``page`` (a
browser page: the session is read when the cookie is valid, and a signed-out visitor is
served too, so the page may redirect).
"""

from __future__ import annotations

from typing import TypedDict, Unpack

from svc_core.accounts.requestlog import LOG_PARAMS
from svc_core.markets import MARKET_PARAMS
from svc_core.paging import PAGE_PARAMS
from svc_core.params import Param
from svc_core.realestate import change_feed
from svc_core.realestate import compare as re_compare
from svc_core.realestate import listing as re_listing
from svc_core.realestate import query as re_query
from svc_core.realestate.regions_answer import REGIONS_PARAMS
from svc_server.handlers import accounts, markets, realestate, regions, system, webhooks
from svc_server.handlers import openapi as openapi_handler
from svc_server.http.routing import Auth, Handler, Operation, Route, Warm, with_csv_forms
from svc_server.openapi import account_ops as acc
from svc_server.openapi import data_ops as ops
from svc_server.openapi import web_ops as pages
from svc_server.web import pages as web
from svc_server.web import public

ME = "/api/auth/me"
RE = "/api/v1/real-estate"
GET, POST, PATCH, DELETE = ("GET",), ("POST",), ("PATCH",), ("DELETE",)


class RouteFlags(TypedDict, total=False):
    """The optional fields of a ``Route`` that a row of the table below may set."""

    params: tuple[Param, ...]
    warm: Warm | None
    csv: bool
    ndjson: bool


def data(
    path: str,
    handler: Handler,
    doc: Operation,
    *,
    counted: bool = True,
    **flags: Unpack[RouteFlags],
) -> Route:
    """A data route: a GET with an API key or the cookie, rate-limited and counted
    against the quota unless ``counted`` is False."""
    return Route(
        path=path, methods=GET, handler=handler, doc=doc, auth=Auth.DATA, counted=counted, **flags
    )


def account(
    methods: tuple[str, ...],
    path: str,
    handler: Handler,
    doc: Operation,
    params: tuple[Param, ...] = (),
) -> Route:
    """An account route: the signed-in user's session cookie only, never counted."""
    return Route(
        path=path, methods=methods, handler=handler, doc=doc, auth=Auth.ACCOUNT, params=params
    )


ROUTES: tuple[Route, ...] = (
    # system and pages
    Route(path="/api/status", methods=GET, handler=system.get_status, doc=ops.GET_STATUS),
    Route(
        path="/api/v1/openapi.json",
        methods=GET,
        handler=openapi_handler.get_document,
        doc=ops.GET_OPEN_API_DOCUMENT,
    ),
    Route(
        path="/disclosure",
        methods=GET,
        handler=system.get_disclosure,
        doc=pages.GET_DISCLOSURE_PAGE,
    ),
    Route(path="/", methods=GET, handler=public.home, doc=pages.GET_HOME_PAGE),
    Route(path="/pricing", methods=GET, handler=public.pricing, doc=pages.GET_PRICING_PAGE),
    # browser pages (svc_server.web): dashboard, sign-in, API reference, their assets
    Route(
        path="/dashboard",
        methods=GET,
        handler=web.dashboard,
        doc=pages.GET_DASHBOARD_PAGE,
        auth=Auth.PAGE,
    ),
    Route(
        path="/dashboard/<section>",
        methods=GET,
        handler=web.dashboard_section,
        doc=pages.GET_DASHBOARD_SECTION,
        auth=Auth.PAGE,
        params=web.SECTION_PARAMS,
    ),
    Route(
        path="/signin",
        methods=GET,
        handler=web.signin,
        doc=pages.GET_SIGN_IN_PAGE,
        auth=Auth.PAGE,
        params=web.SIGNIN_PARAMS,
    ),
    Route(
        path="/api/auth/dev-session",
        methods=POST,
        handler=web.dev_session,
        doc=pages.CREATE_DEV_SESSION,
    ),
    Route(path="/docs", methods=GET, handler=web.docs, doc=pages.GET_API_REFERENCE_PAGE),
    Route(path="/static/<path:name>", methods=GET, handler=web.asset, doc=pages.GET_STATIC_FILE),
    Route(path="/favicon.ico", methods=GET, handler=web.favicon, doc=pages.GET_FAVICON),
    # real-estate vertical
    data(
        f"{RE}/pulse",
        realestate.pulse,
        ops.GET_REAL_ESTATE_PULSE,
        params=re_query.PULSE_PARAMS,
        warm=realestate.warm_pulse,
        csv=True,
    ),
    data(
        f"{RE}/pulse/series",
        realestate.series,
        ops.GET_REAL_ESTATE_PULSE_SERIES,
        params=re_query.SERIES_PARAMS,
        warm=realestate.warm_series,
        csv=True,
    ),
    # one counted call whatever the number of districts
    data(
        f"{RE}/compare",
        realestate.compare,
        ops.GET_REAL_ESTATE_COMPARE,
        params=re_compare.COMPARE_PARAMS,
        warm=realestate.warm_compare,
        csv=True,
        ndjson=True,
    ),
    data(
        f"{RE}/coverage",
        realestate.coverage,
        ops.GET_REAL_ESTATE_COVERAGE,
        params=re_query.COVERAGE_PARAMS,
        warm=realestate.warm_coverage,
        csv=True,
    ),
    data(
        f"{RE}/indices",
        realestate.indices,
        ops.GET_REAL_ESTATE_INDICES,
        params=re_query.INDICES_PARAMS,
        warm=realestate.warm_indices,
        csv=True,
    ),
    data(
        f"{RE}/transactions",
        realestate.transactions,
        ops.GET_REAL_ESTATE_TRANSACTIONS,
        params=re_listing.TRANSACTIONS_PARAMS,
        csv=True,
        ndjson=True,
    ),
    data(
        f"{RE}/changes",
        realestate.changes,
        ops.GET_REAL_ESTATE_CHANGES,
        params=change_feed.CHANGES_PARAMS,
    ),
    data(
        f"{RE}/dimensions",
        realestate.dimensions,
        ops.GET_REAL_ESTATE_DIMENSIONS,
        params=re_query.DIMENSIONS_PARAMS,
        warm=realestate.warm_dimensions,
    ),
    # a look-up of the bundled code table: a key is needed, no quota is used
    data(
        f"{RE}/regions",
        regions.search,
        ops.GET_REAL_ESTATE_REGIONS,
        params=REGIONS_PARAMS,
        counted=False,
    ),
    # marketplace vertical
    data("/api/v1/markets/pulse", markets.pulse, ops.GET_MARKETS_PULSE, params=MARKET_PARAMS),
    data("/api/v1/markets/dimensions", markets.dimensions, ops.GET_MARKETS_DIMENSIONS),
    # sessions and accounts
    Route(
        path="/api/auth/session",
        methods=POST,
        handler=accounts.post_session,
        doc=acc.CREATE_SESSION,
    ),
    account(DELETE, "/api/auth/session", accounts.delete_session, acc.DELETE_SESSION),
    account(GET, f"{ME}/usage", accounts.get_usage, acc.GET_USAGE),
    account(GET, f"{ME}/requests", accounts.get_requests, acc.LIST_REQUESTS, LOG_PARAMS),
    account(GET, f"{ME}/keys", accounts.list_keys, acc.LIST_API_KEYS),
    account(POST, f"{ME}/keys", accounts.create_key, acc.CREATE_API_KEY),
    account(PATCH, f"{ME}/keys/<key_id>", accounts.patch_key, acc.UPDATE_API_KEY),
    account(DELETE, f"{ME}/keys/<key_id>", accounts.revoke_key, acc.DELETE_API_KEY),
    account(POST, f"{ME}/keys/<key_id>/rotate", accounts.rotate_key, acc.ROTATE_API_KEY),
    account(POST, f"{ME}/keys/<key_id>/revoke", accounts.revoke_key, acc.REVOKE_API_KEY),
    account(GET, f"{ME}/team", accounts.get_team, acc.GET_TEAM),
    account(POST, f"{ME}/team", accounts.post_team, acc.INVITE_TEAM_MEMBER),
    account(DELETE, f"{ME}/team/<member_id>", accounts.delete_member, acc.REMOVE_TEAM_MEMBER),
    account(GET, f"{ME}/webhooks", webhooks.list_endpoints, acc.LIST_WEBHOOK_ENDPOINTS),
    account(POST, f"{ME}/webhooks", webhooks.create_endpoint, acc.CREATE_WEBHOOK_ENDPOINT),
    account(
        PATCH, f"{ME}/webhooks/<endpoint_id>", webhooks.update_endpoint, acc.UPDATE_WEBHOOK_ENDPOINT
    ),
    account(
        DELETE,
        f"{ME}/webhooks/<endpoint_id>",
        webhooks.revoke_endpoint,
        acc.DELETE_WEBHOOK_ENDPOINT,
    ),
    account(
        POST,
        f"{ME}/webhooks/<endpoint_id>/enable",
        webhooks.enable_endpoint,
        acc.ENABLE_WEBHOOK_ENDPOINT,
    ),
    account(
        POST, f"{ME}/webhooks/<endpoint_id>/test", webhooks.send_test, acc.TEST_WEBHOOK_ENDPOINT
    ),
    account(
        GET,
        f"{ME}/webhooks/<endpoint_id>/deliveries",
        webhooks.list_deliveries,
        acc.LIST_WEBHOOK_DELIVERIES,
        PAGE_PARAMS,
    ),
    account(
        GET,
        f"{ME}/webhooks/<endpoint_id>/deliveries/<delivery_id>",
        webhooks.get_delivery,
        acc.GET_WEBHOOK_DELIVERY,
    ),
    account(
        POST,
        f"{ME}/webhooks/<endpoint_id>/deliveries/<delivery_id>/resend",
        webhooks.resend_delivery,
        acc.RESEND_WEBHOOK_DELIVERY,
    ),
    account(GET, f"{ME}/accounts", accounts.list_accounts, acc.LIST_MY_ACCOUNTS),
    account(
        POST, f"{ME}/accounts/<consumer_id>/switch", accounts.switch_account, acc.SWITCH_ACCOUNT
    ),
    account(GET, f"{ME}/invites", accounts.get_invites, acc.LIST_MY_INVITATIONS),
    account(
        POST, f"{ME}/invites/<invite_id>/accept", accounts.accept_invite, acc.ACCEPT_INVITATION
    ),
)

ROUTES = with_csv_forms(ROUTES)
"""Every CSV-capable route also answers, always as CSV, at its path plus ``.csv``."""
