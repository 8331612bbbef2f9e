"""``http.tenants``: the bound on one tenant's calls in progress, on an event loop.

Whatever the order of arrivals and endings, no tenant ever has more than ``limit``
calls in progress, waiting calls get their turns in arrival order, a call that waited
too long (or was cancelled) is refused without keeping a turn, and a credential names
the same tenant however its cookie header is spelled, and the front reads the same key
from a request's headers as ``/mcp`` does. (The bound through a real server:
``test_tenant_share.py``.)
"""

from __future__ import annotations

import asyncio
import hashlib
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.wrappers import Request

from svc_server.mcp.endpoint import presented_key
from svc_server.servers.front import build_environ
from svc_server.servers.tenants import MCP_PATH, Tenants

PULSE = "/api/v1/real-estate/pulse"
# a step: a new call of tenant "a" or "b", or the end of the oldest running call of one
STEPS = st.lists(st.sampled_from(["a", "b", "end a", "end b"]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(limit=st.integers(1, 3), steps=STEPS)
def test_no_tenant_exceeds_its_limit_and_turns_go_in_order(limit: int, steps: list[str]) -> None:
    async def run() -> None:
        tenants = Tenants(limit, wait=60)
        running: dict[str, list[int]] = {"a": [], "b": []}
        arrived: dict[str, list[int]] = {"a": [], "b": []}
        started: dict[str, list[int]] = {"a": [], "b": []}
        calls = []

        async def call(tenant: str, n: int) -> None:
            assert await tenants.enter(tenant)
            running[tenant].append(n)
            started[tenant].append(n)
            assert len(running[tenant]) <= limit

        for n, step in enumerate(steps):
            if step.startswith("end"):
                tenant = step[-1]
                if running[tenant]:
                    running[tenant].pop(0)
                    tenants.leave(tenant)
            else:
                arrived[step].append(n)
                calls.append(asyncio.create_task(call(step, n)))
            for _ in range(3):
                await asyncio.sleep(0)
        for tenant in "ab":
            assert started[tenant] == arrived[tenant][: len(started[tenant])]  # in order
            waiting = len(arrived[tenant]) - len(started[tenant])
            assert waiting == 0 or len(running[tenant]) == limit  # no turn left unused
        for task in calls:
            task.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

    asyncio.run(run())


def test_a_call_that_waits_too_long_is_refused_and_keeps_no_turn() -> None:
    async def run() -> None:
        tenants = Tenants(1, wait=0.05)
        assert await tenants.enter("a")
        assert not await tenants.enter("a")  # no turn within the wait
        assert await tenants.enter("b")  # another tenant is not held up
        tenants.leave("a")
        assert await tenants.enter("a")  # the refused call left nothing behind
        assert tenants.running == {"a": 1, "b": 1} and not tenants.waiting

    asyncio.run(run())


def test_a_cancelled_waiting_call_keeps_no_turn() -> None:
    async def run() -> None:
        tenants = Tenants(1, wait=60)
        assert await tenants.enter("a")
        waiting = asyncio.create_task(tenants.enter("a"))
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        tenants.leave("a")
        assert tenants.running == {} and not tenants.waiting

    asyncio.run(run())


def front_environ(headers: list[tuple[str, str]], path: str = PULSE) -> dict[str, Any]:
    """The environ the front builds for a GET of ``path`` with ``headers`` (as granian
    hands them: lower-case names, repeats kept)."""
    scope = SimpleNamespace(
        method="GET",
        path=path,
        query_string="",
        server="127.0.0.1:8000",
        http_version="1.1",
        client="127.0.0.1:50000",
        scheme="http",
    )
    return build_environ(scope, headers, b"")


def credential(headers: list[tuple[str, str]], path: str = PULSE) -> str | None:
    return Tenants.credential(front_environ(headers, path))


def session_digest(session: str) -> str:
    return "session:" + hashlib.sha256(session.encode()).hexdigest()


@given(session=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=16))
def test_a_credential_is_the_same_however_the_cookie_header_is_spelled(session: str) -> None:
    plain = credential([("cookie", f"svc_session={session}")])
    spelled = credential([("cookie", f"theme=dark; svc_session={session}; lang=ko")])
    assert plain is not None and plain == spelled
    assert credential([("cookie", "theme=dark")]) is None
    key = credential([("x-api-key", session), ("cookie", f"svc_session={session}")])
    assert key is not None and key != plain  # a key names its own tenant
    assert session not in key  # never the credential itself


COOKIE_TEXT = st.text(st.sampled_from(list('ab= ;,"\\[]()$\x7f\xe9')), max_size=8)


@given(cookies=st.lists(st.tuples(COOKIE_TEXT, st.booleans(), COOKIE_TEXT), min_size=1, max_size=3))
def test_the_front_sees_the_session_the_app_takes_however_cookies_are_spelled(
    cookies: list[tuple[str, bool, str]],
) -> None:
    """Junk before the session cookie, repeated names, several Cookie headers: whatever
    session the app reads (werkzeug), the front counts the call under it."""
    headers = [
        ("cookie", before + ("svc_session=s3ss10n" if session else "") + after)
        for before, session, after in cookies
    ]
    environ = front_environ(headers)
    try:
        taken = Request(environ).cookies.get("svc_session")
    except UnicodeError:  # the app fails on such a header, finding no session
        taken = None
    assert Tenants.credential(environ) == (session_digest(taken) if taken else None)


def test_a_learned_account_joins_every_credential_of_it() -> None:
    tenants = Tenants(2, wait=1)
    one = credential([("x-api-key", "svc_pk_live_" + "1" * 32)])
    two = credential([("x-api-key", "svc_pk_live_" + "2" * 32)])
    assert one is not None and two is not None
    assert tenants.tenant(one) != tenants.tenant(two)
    tenants.learn(one, "acct")
    tenants.learn(two, "acct")
    assert tenants.tenant(one) == tenants.tenant(two) == "account:acct"


KEYISH = st.text(st.sampled_from(" kK1_,"), max_size=6)
SCHEMES = st.sampled_from(["Bearer ", "bearer ", "BEARER  ", "Bearer", "Basic ", ""])


@given(
    api_key=st.none() | KEYISH,
    authorization=st.none() | st.builds(str.__add__, SCHEMES, KEYISH),
)
def test_the_credential_is_the_key_the_app_takes(
    api_key: str | None, authorization: str | None
) -> None:
    headers = [("x-api-key", api_key)] if api_key is not None else []
    if authorization is not None:
        headers.append(("authorization", authorization))
    environ = front_environ(headers, MCP_PATH)
    key = presented_key(Request(environ))  # /mcp: X-API-Key, else a Bearer key
    expected = None if key is None else credential([("x-api-key", key)])
    assert Tenants.credential(environ) == expected
    # elsewhere the API takes no Bearer key, and the front counts none
    bearer_only = [(n, v) for n, v in headers if n == "authorization"]
    assert credential(bearer_only) is None
