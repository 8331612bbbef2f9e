"""The warm lane: a data call answered on the server's event loop when all it needs is
in this process's memory, with the bytes and headers the dispatcher would send.

A call is warm when it is a GET of a route that has a ``warm`` answer (the cached
real-estate figures), with one ``X-API-Key`` and no ``If-None-Match``, and

- its key's row is remembered under the current access stamp and its use was stamped
  within the minute (``callers.known_key``): the key is read or written nothing;
- its answer is kept for the data version this process read within ``VERSION_TTL``
  (``Route.warm``);
- its rate-limit slot and quota unit come from this process's leases
  (``access.admit_leased``), settled in memory like any leased call's.

Such a call reads and writes nothing, so ``http.front`` answers it without handing it
to a request thread (the hop, the WSGI objects and the thread switch were most of a
cached call's cost). Everything else returns None with nothing taken and goes the
dispatcher's way, which answers it as before: a refusal, a miss, a lease to renew, a
cookie, a write, a conditional request. The order is the dispatcher's where it matters:
the answer is looked up before the call is admitted, so a lane that declines has taken
no rate-limit slot or quota unit.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
from werkzeug.wrappers import Request

from svc_core import params
from svc_core.accounts import keys
from svc_core.errors import SvcError
from svc_server.app.admission import client_ip, quota_hold, settled
from svc_server.app.call_log import log_call
from svc_server.app.dispatch import MATCH_KEYS, Matcher
from svc_server.http.answers import Reply, WarmAnswer
from svc_server.http.context import Ctx
from svc_server.http.query import parse_query
from svc_server.runtime.deps import Deps
from svc_server.services import access, callers
from svc_server.services.leases import Ask
from svc_server.store.account_rows import KeyGrant

ANSWER_KEYS = (
    *MATCH_KEYS,
    "QUERY_STRING",
    "REMOTE_ADDR",
    "HTTP_X_FORWARDED_FOR",
    "HTTP_ACCEPT",
    "HTTP_ACCEPT_ENCODING",
)
"""Everything of a GET's environ that its route (``dispatch.MATCH_KEYS``), query,
caller and answer depend on besides the key (the call's ``X-Request-ID`` is its own): requests equal in these and
in their key's digest share a ``_Plan``."""
PLANS = 1024
"""Plans kept at most; past that they are dropped and made again (a crawl of many
distinct queries goes the dispatcher's way meanwhile, as any miss does)."""


@attrs.frozen(kw_only=True)
class _Plan:
    """What the dispatcher's path decides of a warm request before any call-specific
    step: its route and strict-parsed query, its key's caller (before admission) with
    the key's row and the access stamp that row holds under, where its answer is kept
    (``answer``) and what its calls ask of the lease book (``ask``). A plan is used
    only on its UTC day, while that stamp is the current one and while the row still
    admits a call (``callers.still_admits``): a change to the key, its account or its
    plan moves the stamp, and the clock-bound part of the row is judged on every call."""

    ctx: Ctx
    stamp: int
    row: KeyGrant
    day: int
    answer: WarmAnswer
    ask: Ask


class WarmLane:
    """``lane(environ)``: the warm answer of a request, or None (see the module)."""

    def __init__(self, deps: Deps, matcher: Matcher) -> None:
        self.deps = deps
        self.matcher = matcher
        self.hold = quota_hold(deps.config)
        self._plans: dict[tuple[Any, ...], _Plan] = {}

    def __call__(self, environ: dict[str, Any]) -> Reply | None:
        started = time.perf_counter()
        api_key = environ.get("HTTP_X_API_KEY")
        if (
            api_key is None
            or "," in api_key
            or environ["REQUEST_METHOD"] != "GET"
            or "HTTP_IF_NONE_MATCH" in environ
        ):
            return None
        deps = self.deps
        now = deps.clock()
        digest = keys.hash_key(api_key)  # plans never hold a key itself
        found = (digest, *map(environ.get, ANSWER_KEYS))
        plan = self._plans.get(found)
        if (
            plan is None
            or plan.stamp != deps.store.accounts.known_access_stamp()
            or plan.day != int(now // 86400)
            or not callers.still_admits(plan.row, now)
        ):
            plan = self._plan(environ, api_key, now)
            if plan is None:
                return None
            if len(self._plans) >= PLANS:
                self._plans.clear()
            self._plans[found] = plan
        version = deps.store.realestate.known_version()
        rendered = None if version is None else deps.answers.get(version, plan.answer.key)
        if rendered is None:
            return None
        ahead = plan.ctx
        caller = ahead.caller
        assert caller is not None  # a plan is made so
        admitted = access.admit_leased(caller, plan.ask, now, deps.leases)
        if admitted is None:
            return None
        deps.lease_writer.ensure()
        caller = admitted.caller
        request_id = deps.request_id(environ.get("HTTP_X_REQUEST_ID"))
        ctx = Ctx(
            request=ahead.request,  # equal in every environ field read from here on
            request_id=request_id,
            now=now,
            params=ahead.params,
            caller=caller,
            consumer_id=caller.consumer_id,
            csv_only=ahead.csv_only,
            key_id=caller.key_id,
            counted=admitted.reservation is not None,
        )
        reply = plan.answer.reply(rendered, ctx)
        status, headers, _ = reply
        headers.extend(settled(deps, caller, admitted.reservation, status, now, True)[1])
        headers.append(("X-Request-ID", request_id))
        log_call(deps, ctx, status, started)
        return reply

    def _plan(self, environ: dict[str, Any], api_key: str, now: float) -> _Plan | None:
        """The plan of a warm request, or None when it is not one (nothing is taken)."""
        deps = self.deps
        try:  # WSGI's text is bytes as latin-1; anything else is the dispatcher's to refuse
            raw = environ.get("QUERY_STRING", "").encode("latin-1")
        except UnicodeEncodeError:
            return None
        if len(environ.get("PATH_INFO", "")) + len(raw) > deps.config.max_url_bytes:
            return None
        request = Request(dict(environ))  # its own copy: the plan outlives the call
        try:
            route, values = self.matcher(request)
            query = params.strict_query(parse_query(raw), route.accepted)
        except SvcError:
            return None
        if route.warm is None or values:
            return None
        ip = client_ip(request, deps.config)
        known = callers.known_key(deps.store, api_key, client_ip=ip, now=now)
        if known is None:
            return None
        stamp, row, caller = known
        ask = access.leased_ask(caller, now, counted=route.counted, ids=deps.ids, hold=self.hold)
        if ask is None:
            return None
        ctx = Ctx(
            request=request,
            request_id="",  # the call's own, once admitted
            now=now,
            params=query,
            caller=caller,
            consumer_id=caller.consumer_id,
            csv_only=route.csv_only,
            key_id=caller.key_id,
        )
        try:
            answer = route.warm(ctx)
        except SvcError:  # a value the handler refuses (format=xml): its 400 is the dispatcher's
            return None
        return _Plan(ctx=ctx, stamp=stamp, row=row, day=int(now // 86400), answer=answer, ask=ask)
