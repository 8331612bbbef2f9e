"""The routing table: every path, its methods, handler, auth policy, parameters and text.

One ``Route`` per operation (``svc_server.http.routing``): the dispatcher reads its auth
policy, parameter declarations and flags, the OpenAPI builder the same fields plus the
``Operation`` text in ``doc``. ``auth`` is ``public``, ``data`` (API key or cookie;
rate-limited; quota-counted when ``counted``), ``account`` (cookie only) or ``page`` (a
browser page: the session is read when the cookie is valid, and a signed-out visitor is
served too, so the page may redirect).
"""

from __future__ import annotations

from svc_core.accounts.requestlog import LOG_PARAMS
from svc_core.markets import MARKET_PARAMS
from svc_core.paging import PAGE_PARAMS
from svc_core.realestate import change_feed
from svc_core.realestate import compare as re_compare
from svc_core.realestate import listing as re_listing
from svc_core.realestate import query as re_query
from svc_core.realestate.regions_answer import REGIONS_PARAMS
from svc_server.handlers import accounts, markets, realestate, regions, system, webhooks
from svc_server.handlers import openapi as openapi_handler
from svc_server.http.routing import Auth, Route, with_csv_forms
from svc_server.openapi import account_ops as acc
from svc_server.openapi import data_ops as ops
from svc_server.openapi import web_ops as pages
from svc_server.web import pages as web
from svc_server.web import public

ME = "/api/auth/me"
RE = "/api/v1/real-estate"
GET, POST, PATCH, DELETE = ("GET",), ("POST",), ("PATCH",), ("DELETE",)

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
        path="/disclosure", methods=GET, handler=system.get_disclosure, doc=ops.GET_DISCLOSURE_PAGE
    ),
    Route(path="/", methods=GET, handler=public.home, doc=pages.GET_HOME_PAGE),
    Route(path="/pricing", methods=GET, handler=public.pricing, doc=ops.GET_PRICING_PAGE),
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
    Route(
        path=f"{RE}/pulse",
        methods=GET,
        handler=realestate.pulse,
        warm=realestate.warm_pulse,
        doc=ops.GET_REAL_ESTATE_PULSE,
        auth=Auth.DATA,
        params=re_query.PULSE_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/pulse/series",
        methods=GET,
        handler=realestate.series,
        warm=realestate.warm_series,
        doc=ops.GET_REAL_ESTATE_PULSE_SERIES,
        auth=Auth.DATA,
        params=re_query.SERIES_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/compare",
        methods=GET,
        handler=realestate.compare,
        warm=realestate.warm_compare,
        doc=ops.GET_REAL_ESTATE_COMPARE,
        auth=Auth.DATA,
        params=re_compare.COMPARE_PARAMS,
        counted=True,  # one call whatever the number of districts
        csv=True,
        ndjson=True,
    ),
    Route(
        path=f"{RE}/coverage",
        methods=GET,
        handler=realestate.coverage,
        warm=realestate.warm_coverage,
        doc=ops.GET_REAL_ESTATE_COVERAGE,
        auth=Auth.DATA,
        params=re_query.COVERAGE_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/indices",
        methods=GET,
        handler=realestate.indices,
        warm=realestate.warm_indices,
        doc=ops.GET_REAL_ESTATE_INDICES,
        auth=Auth.DATA,
        params=re_query.INDICES_PARAMS,
        counted=True,
        csv=True,
    ),
    Route(
        path=f"{RE}/transactions",
        methods=GET,
        handler=realestate.transactions,
        doc=ops.GET_REAL_ESTATE_TRANSACTIONS,
        auth=Auth.DATA,
        params=re_listing.TRANSACTIONS_PARAMS,
        counted=True,
        csv=True,
        ndjson=True,
    ),
    Route(
        path=f"{RE}/changes",
        methods=GET,
        handler=realestate.changes,
        doc=ops.GET_REAL_ESTATE_CHANGES,
        auth=Auth.DATA,
        params=change_feed.CHANGES_PARAMS,
        counted=True,
    ),
    Route(
        path=f"{RE}/dimensions",
        methods=GET,
        handler=realestate.dimensions,
        warm=realestate.warm_dimensions,
        doc=ops.GET_REAL_ESTATE_DIMENSIONS,
        auth=Auth.DATA,
        params=re_query.DIMENSIONS_PARAMS,
        counted=True,
    ),
    Route(  # a look-up of the bundled code table: a key is needed, no quota is used
        path=f"{RE}/regions",
        methods=GET,
        handler=regions.search,
        doc=ops.GET_REAL_ESTATE_REGIONS,
        auth=Auth.DATA,
        params=REGIONS_PARAMS,
        counted=False,
    ),
    # marketplace vertical
    Route(
        path="/api/v1/markets/pulse",
        methods=GET,
        handler=markets.pulse,
        doc=ops.GET_MARKETS_PULSE,
        auth=Auth.DATA,
        params=MARKET_PARAMS,
        counted=True,
    ),
    Route(
        path="/api/v1/markets/dimensions",
        methods=GET,
        handler=markets.dimensions,
        doc=ops.GET_MARKETS_DIMENSIONS,
        auth=Auth.DATA,
        counted=True,
    ),
    # sessions and accounts
    Route(
        path="/api/auth/session",
        methods=POST,
        handler=accounts.post_session,
        doc=acc.CREATE_SESSION,
    ),
    Route(
        path="/api/auth/session",
        methods=DELETE,
        handler=accounts.delete_session,
        doc=acc.DELETE_SESSION,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/usage",
        methods=GET,
        handler=accounts.get_usage,
        doc=acc.GET_USAGE,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/requests",
        methods=GET,
        handler=accounts.get_requests,
        doc=acc.LIST_REQUESTS,
        auth=Auth.ACCOUNT,
        params=LOG_PARAMS,
    ),
    Route(
        path=f"{ME}/keys",
        methods=GET,
        handler=accounts.list_keys,
        doc=acc.LIST_API_KEYS,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/keys",
        methods=POST,
        handler=accounts.create_key,
        doc=acc.CREATE_API_KEY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/keys/<key_id>",
        methods=PATCH,
        handler=accounts.patch_key,
        doc=acc.UPDATE_API_KEY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/keys/<key_id>",
        methods=DELETE,
        handler=accounts.revoke_key,
        doc=acc.DELETE_API_KEY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/keys/<key_id>/rotate",
        methods=POST,
        handler=accounts.rotate_key,
        doc=acc.ROTATE_API_KEY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/keys/<key_id>/revoke",
        methods=POST,
        handler=accounts.revoke_key,
        doc=acc.REVOKE_API_KEY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/team",
        methods=GET,
        handler=accounts.get_team,
        doc=acc.GET_TEAM,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/team",
        methods=POST,
        handler=accounts.post_team,
        doc=acc.INVITE_TEAM_MEMBER,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/team/<member_id>",
        methods=DELETE,
        handler=accounts.delete_member,
        doc=acc.REMOVE_TEAM_MEMBER,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks",
        methods=GET,
        handler=webhooks.list_endpoints,
        doc=acc.LIST_WEBHOOK_ENDPOINTS,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks",
        methods=POST,
        handler=webhooks.create_endpoint,
        doc=acc.CREATE_WEBHOOK_ENDPOINT,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>",
        methods=PATCH,
        handler=webhooks.update_endpoint,
        doc=acc.UPDATE_WEBHOOK_ENDPOINT,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>",
        methods=DELETE,
        handler=webhooks.revoke_endpoint,
        doc=acc.DELETE_WEBHOOK_ENDPOINT,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/enable",
        methods=POST,
        handler=webhooks.enable_endpoint,
        doc=acc.ENABLE_WEBHOOK_ENDPOINT,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/test",
        methods=POST,
        handler=webhooks.send_test,
        doc=acc.TEST_WEBHOOK_ENDPOINT,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/deliveries",
        methods=GET,
        handler=webhooks.list_deliveries,
        doc=acc.LIST_WEBHOOK_DELIVERIES,
        auth=Auth.ACCOUNT,
        params=PAGE_PARAMS,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/deliveries/<delivery_id>",
        methods=GET,
        handler=webhooks.get_delivery,
        doc=acc.GET_WEBHOOK_DELIVERY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/webhooks/<endpoint_id>/deliveries/<delivery_id>/resend",
        methods=POST,
        handler=webhooks.resend_delivery,
        doc=acc.RESEND_WEBHOOK_DELIVERY,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/accounts",
        methods=GET,
        handler=accounts.list_accounts,
        doc=acc.LIST_MY_ACCOUNTS,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/accounts/<consumer_id>/switch",
        methods=POST,
        handler=accounts.switch_account,
        doc=acc.SWITCH_ACCOUNT,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/invites",
        methods=GET,
        handler=accounts.get_invites,
        doc=acc.LIST_MY_INVITATIONS,
        auth=Auth.ACCOUNT,
    ),
    Route(
        path=f"{ME}/invites/<invite_id>/accept",
        methods=POST,
        handler=accounts.accept_invite,
        doc=acc.ACCEPT_INVITATION,
        auth=Auth.ACCOUNT,
    ),
)

ROUTES = with_csv_forms(ROUTES)
"""Every CSV-capable route also answers, always as CSV, at its path plus ``.csv``."""
