"""``svc mcp`` and ``/mcp`` driven by the MCP SDK's own client: over streamable HTTP
against a real ``svc serve``, and over stdio with a real ``svc mcp`` subprocess (on the
local store, and with ``--url`` against the same server), on the real MOLIT samples.

What a tool answers is compared with what the HTTP API answers for the same query with
the same key; what it costs is read from the API's own ``X-Quota-Used``.

The tests that only ask ``svc mcp`` something share one process per stdio transport and
backend (``stdio``, kept open for the module, with a key of its own); the tests of what
the process does when it ends, is stopped or cannot start start their own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.from_thread
import httpx
import httpx2  # the SDK's HTTP client, installed with it (svc[mcp], in svc[dev])
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from werkzeug.test import Client

from svc_core.realestate.query import PROPERTY_TYPE
from svc_server import cli
from svc_server.mcp import server as mcp_server
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import Store
from tests.conftest import TEST_SECRET, Accounts, LiveServer
from tests.http import multihost_support as mh
from tests.http.realestate_support import RE, load, open_molit_store
from tests.http.test_realestate_land import INDU, LAND
from tests.svc_cli import run_svc

T = TypeVar("T")
Session = Callable[[ClientSession], Awaitable[T]]
PULSE = {"sigungu_code": "11680", "period": "2025-06"}
TOOLS = {
    "find_district",
    "market_pulse",
    "market_series",
    "compare_districts",
    "coverage",
    "dimensions",
    "indices",
    "list_deals",
}


class World:
    """The samples' database, a live server on it and three accounts' keys."""

    def __init__(
        self,
        db_url: str,
        server: LiveServer,
        keys: dict[str, str],
        cookie: str,
        http: httpx.Client,
    ) -> None:
        self.db_url = db_url
        self.server = server
        self.keys = keys
        self.cookie = cookie
        """Signed in as the owner of ``keys["logged"]``."""
        self.http = http
        """The tests' plain HTTP client (one for the module: making one costs 40 ms)."""

    def api(self, endpoint: str, params: dict[str, str], key: str) -> httpx.Response:
        return self.http.get(
            f"{self.server.url}{RE}/{endpoint}", params=params, headers={"X-API-Key": key}
        )

    def quota_used(self, key: str) -> int:
        """The key's ``X-Quota-Used`` after one more counted call (a pulse)."""
        response = self.api("pulse", PULSE, key)
        assert response.status_code == 200, response.text
        return int(response.headers["X-Quota-Used"])

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "SVC_DATABASE_URL": self.db_url,
                "SVC_SECRET_KEY": TEST_SECRET,
                "SVC_LOG_LEVEL": "WARNING",
                # links in answers (transactions_url) name the configured public address
                "SVC_PUBLIC_URL": self.server.url,
            }
        )
        env.pop("SVC_API_KEY", None)
        return env


def _key(store: Store, plan: str) -> str:
    out = consumers.create_consumer(
        store, plan=plan, now=time.time(), entropy=os.urandom(16), ids=new_id
    )
    return str(out.api_key)


@pytest.fixture(scope="module")
def world(module_db_url: str) -> Iterator[World]:
    """On each backend: the live server and ``svc mcp`` share the store."""
    db_url = module_db_url
    with open_molit_store(db_url) as store:
        for path in LAND.values():
            load(store, "rtms-land", path)
        load(store, "rtms-industrial", INDU)
        keys = {name: _key(store, plan) for name, plan in PLANS.items()}
        _, keys["logged"] = mh.consumer(store, LOGGED, monthly_quota=100, rate_limit=1000)
        cookie = mh.session_cookie(store, LOGGED)
    server = LiveServer(db_url, env={"SVC_SITE_ORIGINS": mh.ORIGIN})
    try:
        with httpx.Client(timeout=30) as http:
            yield World(db_url, server, keys, cookie, http)
    finally:
        server.stop()


LOGGED = "mcp-log@example.com"
PLANS = {
    "pro": "pro",
    "starter": "starter",
    "http_meter": "pro",
    "stdio_meter": "pro",
    "stdio_shared": "pro",  # the module's shared ``svc mcp`` processes (``stdio``)
}


@asynccontextmanager
async def over_http(world: World, key: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=60) as http,
        streamable_http_client(world.server.url + "/mcp", http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def over_stdio(world: World, *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "svc_server", "mcp", *args], env=world.env()
    )
    async with (
        stdio_client(params) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def run(opened: Any, body: Session[T]) -> T:
    """Run ``body`` with the session ``opened`` (an async context manager) opens."""

    async def main() -> T:
        async with opened as session:
            return await body(session)

    return anyio.run(main)


TRANSPORTS = ("http", "stdio", "stdio-url")


def session_for(world: World, transport: str, key: str) -> Any:
    """A new session of ``transport`` calling with ``key`` (a new ``svc mcp`` process
    over stdio), for a ``run``; ``ask`` shares the module's processes instead."""
    if transport == "http":
        return over_http(world, key)
    if transport == "stdio":
        return over_stdio(world, "--api-key", key)
    return over_stdio(world, "--api-key", key, "--url", world.server.url)


class StdioSessions:
    """The module's ``svc mcp`` processes, one per stdio transport (``stdio`` on the
    local store, ``stdio-url`` against the live server), each started on first use with
    ``world.keys["stdio_shared"]`` and kept open on the portal's event loop."""

    def __init__(
        self,
        world: World,
        portal: anyio.from_thread.BlockingPortal,
        stack: contextlib.ExitStack,
    ) -> None:
        self.world = world
        self.portal = portal
        self.stack = stack
        self.sessions: dict[str, ClientSession] = {}

    def run(self, transport: str, body: Session[T]) -> T:
        if transport not in self.sessions:
            args = ["--api-key", self.world.keys["stdio_shared"]]
            if transport == "stdio-url":
                args += ["--url", self.world.server.url]
            opened = self.portal.wrap_async_context_manager(over_stdio(self.world, *args))
            self.sessions[transport] = self.stack.enter_context(opened)
        return self.portal.call(body, self.sessions[transport])


@pytest.fixture(scope="module")
def stdio(world: World) -> Iterator[StdioSessions]:
    with anyio.from_thread.start_blocking_portal() as portal, contextlib.ExitStack() as stack:
        yield StdioSessions(world, portal, stack)


def key_of(world: World, transport: str) -> str:
    """The key a transport's session calls with."""
    return world.keys["pro"] if transport == "http" else world.keys["stdio_shared"]


def ask(world: World, stdio: StdioSessions, transport: str, body: Session[T]) -> T:
    """``body`` on a session of ``transport`` with ``key_of(world, transport)``: a new
    one over HTTP, the module's ``svc mcp`` process over stdio."""
    if transport == "http":
        return run(over_http(world, key_of(world, transport)), body)
    return stdio.run(transport, body)


async def call(session: ClientSession, name: str, **arguments: Any) -> Any:
    return await session.call_tool(name, arguments)


# tools and schemas ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_tools_are_listed_read_only_with_schemas(
    world: World, stdio: StdioSessions, transport: str
) -> None:
    listed = ask(world, stdio, transport, lambda s: s.list_tools())
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
    pulse = tools["market_pulse"].input_schema["properties"]
    assert pulse["property_type"]["enum"] == list(PROPERTY_TYPE.choices)
    assert tools["market_pulse"].input_schema["required"] == ["sigungu_code"]
    assert tools["list_deals"].input_schema["properties"]["limit"]["maximum"] == 50
    assert tools["find_district"].input_schema["required"] == ["query"]


# the same figures as the API -----------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_market_pulse_is_the_data_of_the_http_pulse(
    world: World, stdio: StdioSessions, transport: str
) -> None:
    expected = world.api("pulse", PULSE, key_of(world, transport)).json()
    result = ask(world, stdio, transport, lambda s: call(s, "market_pulse", **PULSE))
    assert result.is_error is False
    structured = result.structured_content
    assert structured["data"] == expected["data"]
    assert len(structured["data"]) == 7
    meta = structured["meta"]
    for field in ("data_sources", "incomplete_periods", "data_as_of", "known_limitations"):
        assert meta[field] == expected["_meta"][field]
    text = result.content[0].text
    office = next(r for r in expected["data"] if r["property_type"] == "office")
    assert "25억 5,000만원 (₩2,550,000,000)" in text  # the office median, spelled out
    assert office["median_price"] == 2_550_000_000
    assert "WIDE DISPERSION" in text  # its p75 is over 100 times its p25
    assert "1 bulk contract(s)" in text and "12 units" in text
    assert "Month: 2025-06." in text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_market_pulse_answers_for_land_and_factories_in_words(
    world: World, stdio: StdioSessions, transport: str
) -> None:
    """Issue 45: a land row is priced per m² of land and names its land categories and
    zones; a factory/warehouse row names its use mix and both per-area prices."""
    asked = {"sigungu_code": "41830", "period": "2024-08"}

    async def both(session: ClientSession) -> list[Any]:
        return [
            await call(session, "market_pulse", property_type=ptype, **asked)
            for ptype in ("land", "industrial")
        ]

    land, industrial = ask(world, stdio, transport, both)
    for result, ptype in ((land, "land"), (industrial, "industrial")):
        expected = world.api("pulse", {**asked, "property_type": ptype}, key_of(world, transport))
        assert result.structured_content["data"] == expected.json()["data"]
    [row] = land.structured_content["data"]
    text = land.content[0].text
    assert "양평군 [41830] land sale 2024-08: 234 deals in 158 contracts" in text
    assert (
        f"median price per m² of land 약 {round(row['median_price_per_m2'] / 10_000)}만원/m²"
        in text
    )
    assert "per area" not in text and "building" not in text
    assert "deals per land category (지목): 임야 72, 답 61, 전 60" in text
    assert "deals per zone (용도지역): 보전관리지역 100, 계획관리지역 73" in text
    assert "(several lots sold together, the largest of 7 lots)" in text
    [row] = industrial.structured_content["data"]
    text = industrial.content[0].text
    assert "deals per use (factory, warehouse, other): factory 5, warehouse 5, other 2" in text
    assert (
        f"median price per m² of building 약 {round(row['median_price_per_m2'] / 10_000)}만원"
        in text
    )
    land_price = round(row["median_land_price_per_m2"] / 10_000)
    assert f"median price of the whole buildings per m² of their land 약 {land_price}만원" in text
    factories = ask(
        world,
        stdio,
        transport,
        lambda s: call(
            s, "market_pulse", property_type="industrial", industrial_use="factory", **asked
        ),
    )
    assert "industrial sale (factory) 2024-08: 5 deals in 4 contracts" in factories.content[0].text


@pytest.mark.parametrize("transport", ("http", "stdio"))
def test_compare_districts_is_the_data_of_the_http_compare(
    world: World, stdio: StdioSessions, transport: str
) -> None:
    """Gangnam ranked, Jongno (its month not loaded in June) and Songpa listed with
    their reason; market_pulse states its changes, here unknown for want of data."""
    asked = {
        "sigungu_codes": "11680,11110,11710",
        "property_type": "office",
        "transaction_type": "sale",
        "period": "2025-06",
    }
    expected = world.api("compare", asked, key_of(world, transport)).json()

    async def both(session: ClientSession) -> tuple[Any, Any]:
        return await call(session, "compare_districts", **asked), await call(
            session, "market_pulse", **PULSE
        )

    compared, pulse = ask(world, stdio, transport, both)
    assert compared.is_error is False, compared.content[0].text
    assert compared.structured_content["data"] == expected["data"]
    text = compared.content[0].text
    assert "3 districts compared, 1 ranked by median_per_m2 (desc)" in text
    assert "#1 강남구 [11680]: median_per_m2 약 1,169만원 (₩11,685,045)" in text
    assert "종로구 [11110]: no figures (not_loaded)" in text
    assert "median change on 2024-06 unknown: that period was never loaded" in text
    assert "median price change on 2025-05 unknown: that period was never loaded" in (
        pulse.content[0].text
    )


@pytest.mark.parametrize("transport", ("http", "stdio"))
def test_list_deals_pages_through_exactly_the_sample_count(
    world: World, stdio: StdioSessions, transport: str
) -> None:
    rows = world.api("pulse", PULSE, key_of(world, transport)).json()["data"]
    row = next(r for r in rows if r["property_type"] == "office")
    query = dict(parse_qsl(urlsplit(row["transactions_url"]).query))

    async def pages(session: ClientSession) -> tuple[list[dict[str, Any]], int]:
        seen: list[dict[str, Any]] = []
        cursor: str | None = None
        calls = 0
        while True:
            args = {**query, "limit": 10, **({"cursor": cursor} if cursor else {})}
            result = await call(session, "list_deals", **args)
            assert result.is_error is False, result.content[0].text
            calls += 1
            seen += result.structured_content["data"]
            cursor = result.structured_content["meta"].get("next_cursor")
            if not cursor:
                assert "This is the last page." in result.content[0].text
                return seen, calls
            assert f"cursor={cursor}" in result.content[0].text

    seen, calls = ask(world, stdio, transport, pages)
    assert len(seen) == row["sample_count"] == 24
    assert len({d["natural_key"] for d in seen}) == 24
    assert calls == 3


@pytest.mark.parametrize("transport", ("http", "stdio"))
def test_find_district_answers_candidates_with_codes(
    world: World, stdio: StdioSessions, transport: str
) -> None:
    async def four(session: ClientSession) -> tuple[Any, ...]:
        return (
            await call(session, "find_district", query="부천"),
            await call(session, "find_district", query="Gangnam", kind="district"),
            await call(session, "find_district", query="역삼동"),
            await call(session, "find_district", query="도심", kind="market_area"),
        )

    bucheon, gangnam, yeoksam, dosim = ask(world, stdio, transport, four)
    codes = {r["sigungu_code"] for r in bucheon.structured_content["data"]}
    assert codes == {"41190", "41192", "41194", "41196"}
    assert "4 candidates" in bucheon.content[0].text
    assert "code 41190, retired: valid 1988-04-23 to 2024-01-01" in bucheon.content[0].text
    assert [r["sigungu_code"] for r in gangnam.structured_content["data"]] == ["11680"]
    assert "code 11680" in gangnam.content[0].text
    (dong,) = yeoksam.structured_content["data"]
    assert (dong["kind"], dong["sigungu_code"], dong["dong"]["dong_code"]) == (
        "dong",
        "11680",
        "1168010100",
    )
    assert "Legal dong 역삼동" in yeoksam.content[0].text
    assert "Next: market_pulse with sigungu_code=11680, geo_precision=dong, dong=역삼동" in (
        yeoksam.content[0].text
    )
    (area,) = dosim.structured_content["data"]
    assert (area["full_name"], area["districts"]) == ("서울>도심", ["11110", "11140"])
    assert "R-ONE market area 서울>도심" in dosim.content[0].text


# counted as the API counts -------------------------------------------------------------------


def test_a_tool_call_moves_the_quota_by_one_and_a_failing_one_does_not(world: World) -> None:
    key = world.keys["http_meter"]

    async def good(session: ClientSession) -> Any:
        return await call(session, "market_pulse", **PULSE)

    async def bad(session: ClientSession) -> Any:
        return await call(session, "market_pulse", sigungu_code="11680", period="2025-13")

    before = world.quota_used(key)
    result = run(over_http(world, key), good)
    assert result.is_error is False
    assert int(result.structured_content["usage"]["quota_used"]) == before + 1
    assert world.quota_used(key) == before + 2  # the tool call, then this read
    failed = run(over_http(world, key), bad)
    assert failed.is_error is True
    assert failed.structured_content["error"]["code"] == "INVALID_PARAMS"
    assert "month 13" in failed.content[0].text
    assert world.quota_used(key) == before + 3  # only this read

    async def refused_here(session: ClientSession) -> list[Any]:
        return [
            await call(session, "list_deals", sigungu_code="11680", period="2025-06", limit=51),
            await call(session, "market_pulse", sigungu="강남구"),
            await call(session, "no_such_tool"),
        ]

    for refused in run(over_http(world, key), refused_here):
        assert refused.is_error is True
        assert refused.structured_content["error"]["code"] in ("INVALID_PARAMS", "NOT_FOUND")
        assert "request_id" not in refused.structured_content["error"]  # no API call made
    assert world.quota_used(key) == before + 4


def test_over_stdio_each_call_is_one_unit_and_a_failing_one_none(world: World) -> None:
    async def calls(session: ClientSession) -> list[Any]:
        return [
            await call(session, "market_pulse", **PULSE),
            await call(session, "market_pulse", sigungu_code="11680", period="2025-13"),
            await call(session, "market_pulse", sigungu_code="11680", period="2020-01"),
            await call(session, "coverage", sigungu_code="11680"),
        ]

    first, failed, empty, second = run(
        over_stdio(world, "--api-key", world.keys["stdio_meter"]), calls
    )
    assert failed.is_error is True and "usage" not in failed.structured_content
    assert empty.structured_content["empty"]["reason"] == "not_loaded"
    used = [int(r.structured_content["usage"]["quota_used"]) for r in (first, second)]
    assert used[1] == used[0] + 1
    # svc mcp wrote its counts back when the client closed it: the server sees both
    assert world.quota_used(world.keys["stdio_meter"]) == used[1] + 1


def test_a_starter_key_asking_for_dongs_gets_the_tier_error(world: World) -> None:
    result = run(
        over_http(world, world.keys["starter"]),
        lambda s: call(s, "market_pulse", geo_precision="dong", **PULSE),
    )
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "TIER_RESTRICTED"
    assert error["required_tier"] == "pro"
    assert result.content[0].text.startswith("Error TIER_RESTRICTED (HTTP 403)")
    assert "Hint: Upgrade" in result.content[0].text


# refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"X-API-Key": "svc_pk_live_" + "0" * 32}, {"Authorization": "Bearer nonsense"}],
)
def test_mcp_over_http_without_a_working_key_is_a_401(
    world: World, headers: dict[str, str]
) -> None:
    response = world.http.post(
        world.server.url + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream", **headers},
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert "X-API-Key" in response.json()["error"]["hint"]


def test_mcp_over_http_is_stateless_post_only_and_refuses_malformed_json(world: World) -> None:
    key = {"X-API-Key": world.keys["pro"], "Accept": "application/json, text/event-stream"}
    for method in ("GET", "DELETE"):
        response = world.http.request(method, world.server.url + "/mcp", headers=key)
        assert response.status_code == 405
        assert response.headers["Allow"] == "POST"
        assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    response = world.http.post(
        world.server.url + "/mcp",
        content=b'{"jsonrpc": "2.0", "id": 1, "method": ',
        headers={**key, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700  # JSON-RPC's parse error


def test_mcp_answers_no_page_of_an_origin_not_configured(world: World) -> None:
    """The MCP transport: servers validate Origin (against DNS rebinding). A page of
    another site, an opaque origin and a rebinding name are refused before anything is
    run or counted; MCP clients (no Origin) and the site's own pages are answered."""
    key = world.keys["pro"]
    port = world.server.port
    pulse = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "market_pulse", "arguments": PULSE},
    }

    def post(headers: dict[str, str]) -> httpx.Response:
        return world.http.post(
            world.server.url + "/mcp",
            json=pulse,
            headers={"Accept": "application/json, text/event-stream", **headers},
        )

    refused = [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": f"http://127.0.0.1.nip.io:{port}", "Host": f"127.0.0.1.nip.io:{port}"},
        {"Origin": f"http://evil.example:{port}", "Host": f"evil.example:{port}"},
        {"Origin": mh.ORIGIN + ".evil.example"},
    ]
    for headers in refused:
        before = world.quota_used(key)
        for credential in ({"X-API-Key": key}, {"Authorization": f"Bearer {key}"}):
            response = post({**headers, **credential})
            assert response.status_code == 403, (headers, response.text)
            assert response.json()["error"]["code"] == "CSRF_REJECTED"
            assert "SVC_SITE_ORIGINS" in response.json()["error"]["hint"]
        assert world.quota_used(key) == before + 1, headers  # the pulse's own unit only
    for headers in ({}, {"Origin": mh.ORIGIN}, {"Origin": mh.ORIGIN.upper() + "/"}):
        before = world.quota_used(key)
        response = post({**headers, "X-API-Key": key})
        assert response.status_code == 200, (headers, response.text)
        assert response.json()["result"]["isError"] is False
        assert world.quota_used(key) == before + 2, headers  # the tool call counted


def test_a_bearer_key_works_over_http(world: World) -> None:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {world.keys['pro']}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(world.server.url + "/mcp", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            return await call(session, "dimensions")

    result = anyio.run(main)
    assert result.is_error is False
    assert {d["code"] for d in result.structured_content["data"]["sigungus"]} == {
        "11680",
        "11110",
    }


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "svc mcp needs an API key: pass --api-key KEY or set SVC_API_KEY"),
        (("--api-key", "svc_pk_live_" + "0" * 32), "The API key is not valid for this store"),
    ],
)
def test_svc_mcp_without_a_working_key_stops_with_one_line(
    world: World, args: tuple[str, ...], said: str
) -> None:
    """The command's refusal, run in this process (it stops before serving)."""
    done = run_svc("mcp", *args, env=world.env())
    assert done.returncode != 0
    assert done.stdout == ""
    assert done.stderr.startswith("svc: error: ") and said in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


# empty answers -------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ("http", "stdio"))
def test_empty_answers_say_why(world: World, stdio: StdioSessions, transport: str) -> None:
    async def three(session: ClientSession) -> list[Any]:
        return [
            await call(session, "market_pulse", sigungu_code="99999", period="2025-06"),
            await call(session, "market_pulse", sigungu_code="11680", period="2020-01"),
            await call(session, "market_pulse", buyer_type="other", **PULSE),
        ]

    answers = ask(world, stdio, transport, three)
    reasons = [a.structured_content["empty"]["reason"] for a in answers]
    assert reasons == ["not_found", "not_loaded", "too_few"]
    for answer, reason in zip(answers, reasons, strict=True):
        assert answer.is_error is False
        assert answer.structured_content["data"] == []
        assert answer.content[0].text.startswith(f"No data (reason: {reason})")
        assert "Searched: " in answer.content[0].text and "sigungu_code=" in answer.content[0].text
    assert "No district has the code 99999" in answers[0].content[0].text
    assert "buyer_type=other" in answers[2].content[0].text


def test_tool_calls_are_in_the_request_log_and_usage_as_their_endpoints(world: World) -> None:
    """Each tool call is logged for the key's account as a call of its endpoint, with
    the request id its answer carries, failed ones with their error code; the MCP
    exchanges around them are not API calls and are not logged."""

    async def calls(session: ClientSession) -> list[Any]:
        return [
            await call(session, "market_pulse", **PULSE),
            await call(session, "market_pulse", sigungu_code="11680", period="2025-13"),
            await call(session, "find_district", query="Gangnam"),
        ]

    pulse, failed, district = run(over_http(world, world.keys["logged"]), calls)
    ids = {
        pulse.structured_content["meta"]["request_id"]: ("/pulse", 200, None),
        failed.structured_content["error"]["request_id"]: ("/pulse", 400, "INVALID_PARAMS"),
        district.structured_content["meta"]["request_id"]: ("/regions", 200, None),
    }
    deadline = time.monotonic() + 15
    while True:
        status, body = mh.call(world.server, "GET", "/api/auth/me/requests", world.cookie)
        assert status == 200, body
        rows = body["data"]["rows"]
        if len(rows) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(rows) == 3
    for row in rows:
        suffix, code, error = ids[row["request_id"]]
        assert row["path"].startswith(f"{RE}{suffix}?")
        assert (row["status"], row["error_code"]) == (code, error)
    status, usage = mh.call(world.server, "GET", "/api/auth/me/usage", world.cookie)
    assert status == 200
    assert [k["calls"] for k in usage["data"]["keys"]] == [1]  # the pulse; regions is free


def test_a_terminated_svc_mcp_writes_its_counts_back(world: World) -> None:
    """An assistant may stop ``svc mcp`` with SIGTERM (the SDK's client does when closing
    stdin is not enough): the calls it made stay counted, exactly."""
    key = world.keys["stdio_meter"]
    before = world.quota_used(key)
    proc = subprocess.Popen(
        [sys.executable, "-m", "svc_server", "mcp", "--api-key", key],
        env=world.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "market_pulse", "arguments": PULSE},
        },
    ]
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert answers[1]["id"] == 2
        assert answers[1]["result"]["isError"] is False
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert world.quota_used(key) == before + 2  # the tool call, then this read


def test_without_the_sdk_mcp_is_a_501_and_svc_mcp_says_what_to_install(
    client: Client,
    accounts: Accounts,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, key = accounts.consumer()
    monkeypatch.setattr(mcp_server, "available", lambda: False)
    response = client.post("/mcp", json={}, headers={"X-API-Key": key})
    assert response.status_code == 501
    assert response.get_json()["error"]["code"] == "MCP_UNAVAILABLE"
    assert "svc[mcp]" in response.get_json()["error"]["hint"]
    assert cli.main(["mcp", "--api-key", key]) == 2
    assert (
        capsys.readouterr().err
        == "svc: error: svc mcp needs the MCP SDK: pip install 'svc[mcp]'.\n"
    )
