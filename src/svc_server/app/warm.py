"""The warm lane: a data call answered on the server's event loop when all it needs is
in this process's memory, with the bytes and headers the dispatcher would send.

A call is warm when it is a GET of a route that has a ``warm`` answer (the cached
real-estate figures), with one ``X-API-Key`` and no ``If-None-Match``, and

- the dispatcher's own planning step finds its route, query and caller from memory
  (``dispatch.plan`` with ``memory_only``): its key's row is remembered under the
  current access stamp and its use was stamped within the minute, so the key is read
  or written nothing;
- its answer is kept for the data version this process read within ``VERSION_TTL``
  with no load of its own since (``services.versioned``; ``Route.warm``);
- its rate-limit slot and quota unit come from this process's leases (``admission.
  admit`` with the ``access.leased_ask`` its plan holds), settled in memory like any
  leased call's.

Such a call reads and writes nothing, so ``servers.front`` answers it without handing it
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

from svc_core.accounts import keys
from svc_core.errors import SvcError
from svc_server.app.admission import Admission, admit, quota_hold, settle
from svc_server.app.call_log import log_call
from svc_server.app.dispatch import MATCH_KEYS, Matcher, admitted_ctx, plan
from svc_server.http.answers import CachedAnswer, Reply
from svc_server.http.routing import Route
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
caller and answer depend on besides the key (the call's ``X-Request-ID`` is its own):
requests equal in these and in their key's digest share a ``_Plan``."""
PLANS = 1024
"""Plans kept at most; past that they are dropped and made again (a crawl of many
distinct queries goes the dispatcher's way meanwhile, as any miss does)."""


@attrs.frozen(kw_only=True)
class _Plan:
    """What the dispatcher's path decides of a warm request before any call-specific
    step (``dispatch.plan``, from memory): its route, strict-parsed query and key's
    caller (before admission), with the key's row and the access stamp that row holds
    under, and where its answer is kept (``answer``). A plan is used only on its UTC
    day, while that stamp is the current one and while the row still admits a call
    (``callers.still_admits``): a change to the key, its account or its plan moves the
    stamp, and the clock-bound part of the row is judged on every call."""

    request: Request
    route: Route
    query: dict[str, str]
    identified: Admission
    stamp: int
    row: KeyGrant
    day: int
    answer: CachedAnswer
    ask: Ask | None
    """What the call asks the leases (``access.leased_ask``), or None when its calls
    cannot be admitted from them (declined, as the dispatcher's to answer)."""


class WarmLane:
    """``lane(environ)``: the warm answer of a request, or None (see the module)."""

    def __init__(self, deps: Deps, matcher: Matcher) -> None:
        self.deps = deps
        self.matcher = matcher
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
            plan = self._plan(environ, now)
            if plan is None:
                return None
            if len(self._plans) >= PLANS:
                self._plans.clear()
            self._plans[found] = plan
        version = deps.versions.known_version(deps.store)
        rendered = None if version is None else deps.answers.get(version, plan.answer.key)
        if rendered is None:
            return None
        if plan.ask is None:
            return None
        admitted = admit(deps, plan.route, plan.identified, now, leased=plan.ask)
        if admitted is None:
            return None
        request_id = deps.request_id(environ.get("HTTP_X_REQUEST_ID"))
        # plan.request is equal to this call's in every environ field read from here on
        ctx = admitted_ctx(plan.request, request_id, now, plan.route, plan.query, admitted)
        answer = plan.answer
        reply = rendered.reply(answer.environ, answer.values(ctx), answer.header_value)
        assert reply is not None  # no If-None-Match: never a 304
        status, headers, _ = reply
        headers.extend(settle(deps, admitted, status, now)[1])
        headers.append(("X-Request-ID", request_id))
        log_call(deps, ctx, status, started)
        return reply

    def _plan(self, environ: dict[str, Any], now: float) -> _Plan | None:
        """The plan of a warm request, or None when it is not one (nothing is taken)."""
        deps = self.deps
        try:  # WSGI's text is bytes as latin-1; anything else is the dispatcher's to refuse
            environ.get("QUERY_STRING", "").encode("latin-1")
        except UnicodeEncodeError:
            return None
        stamp = deps.store.accounts.known_access_stamp()  # the key's row holds under it
        if stamp is None:
            return None
        request = Request(dict(environ))  # its own copy: the plan outlives the call
        planned = plan(deps, self.matcher, request, now, memory_only=True)
        if planned is None:
            return None
        route = planned.route
        identified = planned.admission
        row = identified.grant
        row_caller = identified.caller
        if route.warm is None or planned.values or row is None or row_caller is None:
            return None
        ctx = admitted_ctx(request, "", now, route, planned.query, identified)  # no id yet
        try:
            answer = route.warm(ctx)
        except SvcError:  # a value the handler refuses (format=xml): its 400 is the dispatcher's
            return None
        return _Plan(
            request=request,
            route=route,
            query=planned.query,
            identified=identified,
            stamp=stamp,
            row=row,
            day=int(now // 86400),
            answer=answer,
            ask=access.leased_ask(
                row_caller, now, counted=route.counted, ids=deps.ids, hold=quota_hold(deps.config)
            ),
        )
