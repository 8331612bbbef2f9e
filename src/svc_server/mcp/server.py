"""svc's tools on the official MCP SDK (``mcp``, the optional extra ``svc[mcp]``): the
SDK's low-level ``Server`` lists ``svc_server.mcp.tools`` and runs their calls, over
stdio (``serve_stdio``) or one streamable-HTTP exchange at a time (``http_exchange``).

The low-level server, not ``MCPServer``: the tools' input schemas come from svc's own
parameter declarations (one declaration per parameter), which the low-level server
takes as they are. The SDK is imported inside the functions that use it, so the app
(which mounts ``/mcp``) loads without the extra and answers 501 when it is missing.

HTTP runs the SDK's own transport (``StreamableHTTPSessionManager``, stateless, JSON
answers) for one request on an event loop of the request's thread: the bundled server
runs each request on a thread of its own, and a stateless exchange needs nothing to
outlive it, so nothing of the SDK's runs between requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from svc_server.mcp import tools
from svc_server.mcp.backends import Backend

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

NAME = "svc"
INSTRUCTIONS = (
    "svc serves cleaned Korean commercial real-estate figures from MOLIT's official "
    "transaction reports (RTMS) and the R-ONE survey. Find a district's 5-digit code "
    "with find_district, see what data exists with coverage or dimensions, then ask "
    "market_pulse or market_series; list_deals shows the deals behind a figure. Amounts "
    "are whole won: read the text part, which spells them in 억원/만원. Every tool call "
    "is one metered call of the svc API with your key."
)
Headers = list[tuple[str, str]]


def version() -> str:
    try:
        return metadata.version("svc")
    except metadata.PackageNotFoundError:
        return "0"


def available() -> bool:
    """Whether the MCP SDK (``svc[mcp]``) is installed."""
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        return False
    return True


def build(backend: Backend) -> Server[Any]:
    """The MCP server whose tools call ``backend``."""
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    annotations = types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    listed = [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema(),
            annotations=annotations,
        )
        for t in tools.TOOLS
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        answer = await anyio.to_thread.run_sync(
            tools.call, backend, params.name, dict(params.arguments or {})
        )
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)],
            structured_content=answer.structured,
            is_error=answer.is_error,
        )

    return Server(
        NAME,
        version=version(),
        title="svc: Korean commercial real-estate figures",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(backend: Backend) -> None:
    """Serve the tools over stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = build(backend)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


EXCHANGE_SECONDS = 300.0
"""The longest one ``/mcp`` request may take (a tool call is one API call): a thread
is never held longer, whatever a client sends."""


def http_exchange(
    backend: Backend,
    *,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    client: tuple[str, int] | None = None,
    server: tuple[str, int] | None = None,
) -> tuple[int, Headers, bytes]:
    """One streamable-HTTP POST to ``/mcp`` answered by the SDK's transport
    (stateless, JSON answers): status, headers and body."""
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": client,
        "server": server,
        "state": {},
    }
    return anyio.run(_exchange, backend, scope, body)


async def _exchange(
    backend: Backend, scope: Mapping[str, Any], body: bytes
) -> tuple[int, Headers, bytes]:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=build(backend), json_response=True, stateless=True)
    sent = {"body": False}
    status = 500
    out_headers: Headers = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if not sent["body"]:
            sent["body"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            out_headers.extend(
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in _pairs(message)
            )
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    with anyio.fail_after(EXCHANGE_SECONDS):
        async with manager.run():
            await manager.handle_request(dict(scope), receive, send)
    return status, out_headers, b"".join(chunks)


def _pairs(message: Mapping[str, Any]) -> Sequence[tuple[bytes, bytes]]:
    return list(message.get("headers", []))
