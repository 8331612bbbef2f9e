"""Admission and settlement: who is calling, may they call now, and what the call held.

``identify`` resolves the caller of a route and ``admit`` applies its limits, each
returning an ``Admission``; neither raises for a refusal, they return it (``refused``),
so the dispatcher shows the whole order: identify, admit, then the handler (or the
refusal), then ``settle``. ``data`` routes (``/api/v1``) take an ``X-API-Key`` header
(which wins over a cookie) or the ``svc_session`` cookie, then the per-minute limit and,
when counted, one held unit of monthly quota (402 once settled calls used it up, 503
``QUOTA_IN_FLIGHT`` while calls in flight hold the last units past the wait).
``account`` routes take the cookie only, plus the CSRF origin check on writes; ``page``
routes (the dashboard) take the cookie when it is there and renew it. ``settle`` turns a
2xx call's hold into a settled unit (or gives it back) and gives the rate-limit and
quota headers; ``renew_session`` renews the session cookie. With ``memory_only``
(``identify``) or a ``leased`` ask (``admit``) a step answers from this process's memory
alone or not at all (the warm lane).
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
from werkzeug.wrappers import Request, Response

from svc_core.accounts.iprules import client_address
from svc_core.caller import Caller
from svc_core.envelope import rate_limit
from svc_core.errors import (
    IpNotAllowed,
    NotSignedIn,
    RateLimited,
    SvcError,
    Unauthorized,
)
from svc_server.config import Config
from svc_server.http import cookies
from svc_server.http.routing import Auth, Route
from svc_server.runtime.deps import Deps
from svc_server.services import access, callers, membership, sessions
from svc_server.services.leases import Ask
from svc_server.store import Store
from svc_server.store.account_rows import KeyGrant

WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
DATA_ERROR_META = {"service": "svc", "api_version": "v1"}


@attrs.frozen(kw_only=True)
class Admission:
    """The outcome of ``admit``: the caller (data routes) or the user and the consumer its
    calls act on (account routes and pages), the session to renew, the quota unit held,
    and the refusal to answer instead, if any, with the ``_meta`` that refusal carries
    (SPEC's 401 body)."""

    caller: Caller | None = None
    user_id: str | None = None
    consumer_id: str | None = None
    session: sessions.ActiveSession | None = None
    held: access.Reservation | None = None
    refused: SvcError | None = None
    refusal_meta: dict[str, Any] | None = None
    key_id: str | None = None
    """The API key the call was made with, once known, also when refused (the request
    log keeps the calls of known keys, ``consumer_id`` naming their account)."""
    grant: KeyGrant | None = None
    """The row of the key ``caller`` was made from (the warm lane judges it again on
    each call it plans from, ``callers.still_admits``)."""


def client_ip(request: Request, config: Config) -> str:
    """The socket peer, or the forwarded client when the peer is a trusted proxy."""
    return client_address(
        request.remote_addr or "0.0.0.0",  # noqa: S104 - an unknown peer, not a bind
        request.environ.get("HTTP_X_FORWARDED_FOR") or None,  # repeats joined by commas
        config.trusted_proxies,
    )


def quota_hold(config: Config) -> access.Hold:
    """How long a call waits for quota units in flight, and how long a hold lasts."""
    return _hold(config.quota_wait_ms, config.quota_hold_seconds)


@functools.lru_cache(maxsize=8)
def _hold(wait_ms: int, seconds: int) -> access.Hold:
    """One ``Hold`` per setting, not one per call (a counted call's admission asks)."""
    return access.Hold(wait_ms=wait_ms, seconds=seconds)


def refusal_meta(caller: Caller | None) -> dict[str, Any]:
    """``_meta`` of a data route's refusal: service, version and, once known, the limit."""
    meta: dict[str, Any] = dict(DATA_ERROR_META)
    if caller is not None:
        meta["rate_limit"] = rate_limit(caller)
    return meta


def identify(
    deps: Deps, route: Route, request: Request, now: float, *, memory_only: bool = False
) -> Admission | None:
    """Who is calling ``route``, or the refusal to answer instead (see the module
    docstring), before any limit is applied (``admit``). ``memory_only`` (``app.warm``,
    which must not wait): only the caller of a data route's one ``X-API-Key`` known
    without a read or a write; None for anything else."""
    if route.auth is Auth.DATA:
        return _data_caller(deps, request, now, memory_only)
    if memory_only:
        return None
    if route.auth is Auth.ACCOUNT:
        try:
            session = _session(deps, request, now, required_error=NotSignedIn)
        except SvcError as err:
            return Admission(refused=err)
        try:
            if request.method in WRITE_METHODS:
                cookies.check_origin(request, deps.config)
        except SvcError as err:
            return Admission(refused=err, session=session)
        return _signed_in(deps, session)
    if route.auth is Auth.PAGE:
        try:
            session = _session(deps, request, now, required_error=NotSignedIn)
        except SvcError:
            return Admission()  # a page for signed-out visitors too (it may redirect)
        return _signed_in(deps, session)
    return Admission()


def _signed_in(deps: Deps, session: sessions.ActiveSession) -> Admission:
    """A cookie caller of an account route or page, with the consumer its calls act on
    (for the access log; None when the user has none)."""
    consumer_id = membership.primary_consumer_id(deps.store, session.user_id)
    return Admission(user_id=session.user_id, consumer_id=consumer_id, session=session)


def _data_caller(deps: Deps, request: Request, now: float, memory_only: bool) -> Admission | None:
    store = deps.store
    caller: Caller | None = None
    grant = None
    session = None
    # Repeated headers reach the environ joined with commas; a key has none.
    api_key: str | None = request.environ.get("HTTP_X_API_KEY")
    try:
        if api_key is not None and "," in api_key:
            raise Unauthorized("Send exactly one X-API-Key header.")
        if api_key is not None:
            ip = client_ip(request, deps.config)
            keyed = callers.authenticate_key(
                store, api_key, client_ip=ip, now=now, memory_only=memory_only
            )
            if keyed is None:
                return None
            caller, grant = keyed
        elif memory_only:
            return None
        else:
            session = _session(deps, request, now, required_error=Unauthorized)
            caller = callers.session_caller(store, session.user_id)
    except SvcError as err:
        if memory_only:
            return None
        owner = _key_owner(store, caller, api_key, err, now)
        return Admission(
            refused=err,
            refusal_meta=refusal_meta(caller),
            session=session,
            consumer_id=owner[0] if owner else None,
            key_id=owner[1] if owner else None,
        )
    return Admission(caller=caller, user_id=caller.user_id, session=session, grant=grant)


def admit(
    deps: Deps, route: Route, identified: Admission, now: float, *, leased: Ask | None = None
) -> Admission | None:
    """``identified`` under the caller's per-minute limit and, on a ``counted`` route,
    holding a unit of its monthly quota (``access.admit``); a call without a caller or
    already refused passes as it is. ``leased`` (``app.warm``, its plan's
    ``access.leased_ask``): admitted from this process's leases alone, else None with
    nothing taken."""
    caller = identified.caller
    if caller is None or identified.refused is not None:
        return identified
    try:
        admitted = access.admit(
            deps.store,
            caller,
            now,
            counted=route.counted,
            ids=deps.ids,
            hold=quota_hold(deps.config),
            book=deps.leases,
            leased=leased,
        )
    except SvcError as err:  # over the limit, or the store busy or gone: answered, not raised
        limited = isinstance(err, RateLimited)
        return Admission(
            refused=err,
            refusal_meta=refusal_meta(
                attrs.evolve(caller, rate_remaining=0) if limited else caller
            ),
            session=identified.session,
            consumer_id=caller.consumer_id,
            key_id=caller.key_id,
        )
    if admitted is None:
        return None
    deps.lease_writer.ensure()
    caller = admitted.caller
    refused = admitted.refusal
    return Admission(
        caller=caller,
        user_id=caller.user_id,
        session=identified.session,
        held=admitted.reservation,
        refused=refused,
        refusal_meta=refusal_meta(caller) if refused else None,
    )


def account_of(deps: Deps, request: Request, now: float) -> str | None:
    """The account (consumer id) a request's credential acts for, as ``admit`` finds it:
    its ``X-API-Key``'s, else the signed-in user's current one; None when it names none.
    (``http.front`` asks it before the first call of a credential, to bound each
    account's calls, ``http.tenants``.)"""
    api_key: str | None = request.environ.get("HTTP_X_API_KEY")
    if api_key is not None:
        owner = None if "," in api_key else callers.key_owner(deps.store, api_key, now)
        return None if owner is None else owner[0]
    cookie = request.cookies.get(cookies.COOKIE_NAME)
    session = None if not cookie else sessions.resume(deps.store, deps.config, cookie, now)
    return None if session is None else membership.primary_consumer_id(deps.store, session.user_id)


def _key_owner(
    store: Store, caller: Caller | None, api_key: str | None, err: SvcError, now: float
) -> tuple[str, str] | None:
    """The account and key of a refused key call: the caller's, or for a key refused
    from its address (403 ``IP_NOT_ALLOWED``) the key's own; None for unknown keys."""
    if caller is not None and caller.key_id is not None:
        return caller.consumer_id, caller.key_id
    if isinstance(err, IpNotAllowed) and api_key is not None:
        return callers.key_owner(store, api_key, now)
    return None


def unrouted_key(deps: Deps, request: Request, now: float) -> tuple[str, str] | None:
    """The account and key of a data call that matched no route (404, 405, 414): such
    calls are logged for the key's account like any other."""
    api_key = request.environ.get("HTTP_X_API_KEY")
    if api_key is None or "," in api_key or not request.path.startswith("/api/v1/"):
        return None
    return callers.key_owner(deps.store, api_key, now)


def settle(
    deps: Deps,
    admission: Admission,
    status: int,
    now: float,
    *,
    sent: bool = True,
    rated: bool = True,
) -> tuple[bool, list[tuple[str, str]]]:
    """Settle what ``admission`` held once its answer's ``status`` is known (errors
    included): whether the call was counted, and the quota and (``rated``) rate-limit
    headers a data call's answer carries. A call counts only when it succeeded and its
    client is still there to be answered (``sent`` false: it closed or half-closed its
    connection, see ``servers.front``)."""
    caller = admission.caller
    if caller is None:
        return False, []
    counted = False
    used = None
    held = admission.held
    if held is not None:
        succeeded = sent and 200 <= status < 300
        count = access.settle(deps.store, held, succeeded, now, deps.leases)
        counted = succeeded and count is not None
        if held.mode == "live":
            used = count
    added = list(access.quota_headers(deps.store, caller, now, used, deps.leases).items())
    if rated:
        added.append(("X-RateLimit-Limit", str(caller.rate_limit_per_minute)))
        added.append(("X-RateLimit-Remaining", str(caller.rate_remaining)))
    return counted, added


def renew_session(deps: Deps, admission: Admission, response: Response, now: float) -> None:
    """Send the session cookie again with its expiry, unless ``response`` sets one."""
    session = admission.session
    if session is not None and not cookies.sets_cookie(response):
        cookies.set_cookie(
            deps.config, response, session.cookie, max(1, session.expires_at - int(now))
        )


def take_back(deps: Deps, admission: Admission) -> None:
    """Uncount a call ``settle`` counted whose answer the server could not send."""
    if admission.held is not None:
        access.unsettle(deps.store, admission.held, deps.leases)


def _session(
    deps: Deps, request: Request, now: float, *, required_error: type[Unauthorized]
) -> sessions.ActiveSession:
    cookie = request.cookies.get(cookies.COOKIE_NAME)
    if not cookie:
        raise required_error()
    session = sessions.resume(deps.store, deps.config, cookie, now)
    if session is None:
        raise required_error("Your session has expired or was signed out; sign in again.")
    return session
