"""The ``svc`` command: administration, ingestion, the server and the worker.

Every setting can be given as an ``SVC_*`` environment variable or as the matching
flag after the subcommand (``svc init --database-url sqlite:///x.db``). A bad setting
or input ends the command with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import metadata

from svc_core.errors import SvcError
from svc_server.commands import accounts, core, data, mcp, openapi, sync, webhooks
from svc_server.commands.base import Terminated, settings_parser
from svc_server.config import SETTINGS, env_name, flag_name

COMMAND_MODULES = [core, data, sync, accounts, webhooks, openapi, mcp]


CONFIGURATION = (
    "Every command also takes the configuration as SVC_* variables or the matching flags "
    "(flags win; see docs/configuration.md): "
)


def version() -> str:
    """The installed package's version (``unknown`` when run from an uninstalled tree)."""
    try:
        return metadata.version("svc")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="svc",
        description="svc: Korean real-estate and marketplace data API.",
        epilog=CONFIGURATION + ", ".join(f"{flag_name(s)} ({env_name(s)})" for s in SETTINGS),
    )
    parser.add_argument(
        "--version", action="version", version=f"svc {version()}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    common = settings_parser()
    for module in COMMAND_MODULES:
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # ``svc ingest [KIND] PATH...`` takes paths after options too (argparse stops a
        # variable-length positional at the first option).
        if not hasattr(args, "items") or any(e.startswith("-") for e in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.items = [*args.items, *extra]
    try:
        return int(args.func(args))
    except SvcError as err:
        print(f"svc: error: {err.message}", file=sys.stderr)
        return 2
    except Terminated:
        return 143  # 128 + SIGTERM
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``svc ingest ... | head``): stop quietly, as Unix tools
        # do, and keep Python from reporting the pipe again when it flushes at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, the status of a tool the signal ended


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
