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

from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from svc_server.http.tenants import MCP_PATH, Tenants
from svc_server.mcp.endpoint import presented_key

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


@given(session=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=16))
def test_a_credential_is_the_same_however_the_cookie_header_is_spelled(session: str) -> None:
    plain = Tenants.credential([("cookie", f"svc_session={session}")])
    spelled = Tenants.credential([("cookie", f"theme=dark; svc_session={session}; lang=ko")])
    assert plain is not None and plain == spelled
    assert Tenants.credential([("cookie", "theme=dark")]) is None
    key = Tenants.credential([("x-api-key", session), ("cookie", f"svc_session={session}")])
    assert key is not None and key != plain  # a key names its own tenant
    assert session not in key  # never the credential itself


def test_a_learned_account_joins_every_credential_of_it() -> None:
    tenants = Tenants(2, wait=1)
    one = Tenants.credential([("x-api-key", "svc_pk_live_" + "1" * 32)])
    two = Tenants.credential([("x-api-key", "svc_pk_live_" + "2" * 32)])
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
    request = Request(EnvironBuilder(path=MCP_PATH, headers=headers).get_environ())
    key = presented_key(request)  # /mcp: X-API-Key, else a Bearer key
    expected = None if key is None else Tenants.credential([("x-api-key", key)])
    assert Tenants.credential(headers, MCP_PATH) == expected
    # elsewhere the API takes no Bearer key, and the front counts none
    bearer_only = [(n, v) for n, v in headers if n == "authorization"]
    assert Tenants.credential(bearer_only, "/api/v1/real-estate/pulse") is None
