"""``svc mcp``: svc's tools for a desktop AI assistant, over stdio (see docs/mcp.md).

With ``--api-key KEY`` (or ``SVC_API_KEY``) the tools call the local store's API in this
process, as that key; with ``--url`` they call the svc at that address instead, one HTTP
request per tool call, bounded as the sync's calls are (``backends.Remote``: the whole
call within ``--timeout``, the answer at most 16 MiB decompressed). The key travels in
every call, so ``--url`` is https, or http to this machine only. Either way each tool
call is one metered call of the API. stdout carries the MCP messages only: errors
before serving are one ``svc: error`` line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
from typing import Any
from urllib.parse import urlsplit

from svc_core.errors import SvcError
from svc_core.redact import redact_url
from svc_core.webhooks.netguard import is_loopback_host
from svc_server.app import create_app
from svc_server.commands.base import command_parser, config_from_args
from svc_server.mcp import server
from svc_server.mcp.backends import REMOTE_TIMEOUT, InProcess, Remote
from svc_server.services import callers

KEY_VARIABLE = "SVC_API_KEY"
URL_VARIABLE = "SVC_MCP_URL"


class McpSetupError(SvcError):
    status = 400
    code = "MCP_SETUP"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(sub, common, "mcp", cmd_mcp)
    p.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"the API key the tools call with (default: ${KEY_VARIABLE})",
    )
    p.add_argument(
        "--url",
        metavar="URL",
        help="call the svc at URL (https://...; http:// only to this machine) instead of "
        f"the local store (default: ${URL_VARIABLE})",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=REMOTE_TIMEOUT,
        metavar="SECONDS",
        help="with --url: each tool call as a whole, from connecting to the last byte "
        f"({REMOTE_TIMEOUT:g})",
    )


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve svc's real-estate tools to an AI assistant (Model Context Protocol, stdio).
    Each tool call is one call of the API with your key, counted like any other. Needs
    the svc[mcp] extra."""
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
        _check_url(url)
        if not 0 < args.timeout < float("inf"):
            raise McpSetupError("--timeout must be a positive number of seconds.")
        remote = Remote(url, key, timeout=args.timeout)
        try:
            server.serve_stdio(remote)
        finally:
            remote.close()
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


def _check_url(url: str) -> None:
    """``--url`` is https, or http to this machine: the API key travels in every call,
    readable to anyone on the path of a plain-http one."""
    shown = redact_url(url)[:80]
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        raise McpSetupError(f"--url is not a URL: {shown!r}.") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise McpSetupError(f"--url must be https://HOST..., not {shown!r}.")
    if scheme == "http" and not is_loopback_host(host):
        raise McpSetupError(
            f"--url {shown!r} is plain http to another machine: the API key would cross "
            "the network readable; use https:// (http:// is accepted for this machine "
            "only: localhost, 127.0.0.1, [::1])."
        )
