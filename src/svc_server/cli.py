"""The ``svc`` command: administration, ingestion, the server and the worker.

Every setting can be given as an ``SVC_*`` environment variable or as the matching
flag after the subcommand (``svc init --database-url sqlite:///x.db``). A bad setting
or input ends the command with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from svc_core.errors import SvcError
from svc_server.commands import index

CONFIGURATION = (
    "Every command also takes the configuration as SVC_* variables or the matching flags "
    "(flags win; see docs/configuration.md): "
)


def version() -> str:
    """The installed package's version (``unknown`` when run from an uninstalled tree)."""
    from importlib import metadata

    try:
        return metadata.version("svc")
    except metadata.PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"svc {version()}")
        parser.exit()


class _TopParser(argparse.ArgumentParser):
    """``svc``'s own parser: the list of settings under its help is made when the help
    is shown (``svc --version`` never reads the configuration's definitions)."""

    def format_help(self) -> str:
        if self.epilog is None:
            from svc_server.config import SETTINGS, env_name, flag_name

            listed = ", ".join(f"{flag_name(s)} ({env_name(s)})" for s in SETTINGS)
            self.epilog = CONFIGURATION + listed
        return super().format_help()


def build_parser(command: str | None = "") -> argparse.ArgumentParser:
    """The ``svc`` parser. Every command is defined in full by its module unless
    ``command`` is given: then only the module defining that command is imported (none
    for ``None`` or a name that is no command) and the other commands are listed by
    their summaries alone, as ``svc --help`` shows them (``commands.index``)."""
    parser = _TopParser(prog="svc", description="svc: Korean real-estate and marketplace data API.")
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=argparse.ArgumentParser
    )
    sub.required = True
    chosen = dict((name, module) for name, module, _ in index.COMMANDS).get(command or "")
    common: argparse.ArgumentParser | None = None
    for module_name in index.MODULES:
        if command == "" or module_name == chosen:
            from svc_server.commands.base import settings_parser

            common = common or settings_parser()
            module = importlib.import_module(f"svc_server.commands.{module_name}")
            module.register(sub, common)
            continue
        for name, home, summary in index.COMMANDS:
            if home == module_name:
                sub.add_parser(name, help=summary, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # the first word that is not an option names the command (svc's own options take
    # no value); only its module is imported
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command)
    args, extra = parser.parse_known_args(argv)
    if extra:
        # ``svc ingest [KIND] PATH...`` takes paths after options too (argparse stops a
        # variable-length positional at the first option).
        if not hasattr(args, "items") or any(e.startswith("-") for e in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.items = [*args.items, *extra]
    from svc_server.commands.base import Terminated  # the command's module imported it

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
