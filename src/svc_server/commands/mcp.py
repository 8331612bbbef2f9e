"""``svc mcp``: svc's tools for a desktop AI assistant, over stdio (see docs/mcp.md).

With ``--api-key KEY`` (or ``SVC_API_KEY``) the tools call the local store's API in this
process, as that key; with ``--url`` they call the svc at that address instead, one HTTP
request per tool call. Either way each tool call is one metered call of the API. stdout
carries the MCP messages only: errors before serving are one ``svc: error`` line on
stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from svc_core.errors import SvcError
from svc_server.app import create_app
from svc_server.commands.base import config_from_args
from svc_server.commands.index import SUMMARY
from svc_server.mcp import server
from svc_server.mcp.backends import InProcess, Remote
from svc_server.services import callers

KEY_VARIABLE = "SVC_API_KEY"
URL_VARIABLE = "SVC_MCP_URL"


class McpSetupError(SvcError):
    status = 400
    code = "MCP_SETUP"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help=SUMMARY["mcp"],
        description=(
            "Serve svc's real-estate tools to an AI assistant (Model Context Protocol, "
            "stdio). Each tool call is one call of the API with your key, counted like "
            "any other. Needs the svc[mcp] extra."
        ),
    )
    p.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"the API key the tools call with (default: ${KEY_VARIABLE})",
    )
    p.add_argument(
        "--url",
        metavar="URL",
        help="call the svc at URL (https://...) instead of the local store "
        f"(default: ${URL_VARIABLE})",
    )
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    key = (args.api_key or os.environ.get(KEY_VARIABLE) or "").strip()
    url = (args.url or os.environ.get(URL_VARIABLE) or "").strip()
    if not key:
        raise McpSetupError(
            f"svc mcp needs an API key: pass --api-key KEY or set {KEY_VARIABLE} "
            "(create one in the dashboard, or with svc key create)."
        )
    if not server.available():
        raise McpSetupError("svc mcp needs the MCP SDK: pip install 'svc[mcp]'.")
    if url:
        if not url.startswith(("http://", "https://")):
            raise McpSetupError(f"--url must start with http:// or https://, not {url[:60]!r}.")
        server.serve_stdio(Remote(url, key))
        return 0
    app = create_app(config_from_args(args))
    try:
        if callers.key_owner(app.store, key, app.clock()) is None:
            raise McpSetupError(
                "The API key is not valid for this store (unknown, revoked or expired); "
                "check --api-key or SVC_API_KEY and --database-url."
            )
        server.serve_stdio(InProcess(app, key))
    finally:
        app.close()
        app.store.close()
    return 0
