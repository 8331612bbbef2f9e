"""What every command needs: its config and an open, migrated store."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from svc_server.config import SETTINGS, Config, flag_name, load_config
from svc_server.store import Store, open_store


def settings_parser(shown: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """The configuration flags every subcommand accepts. Those in ``shown`` (setting ->
    one-line help) appear in the command's ``--help``; the rest stay out of it (``svc
    --help`` and docs/configuration.md list them all)."""
    shown = shown or {}
    parser = argparse.ArgumentParser(add_help=False)
    for setting in SETTINGS:
        parser.add_argument(
            flag_name(setting),
            dest=setting,
            default=argparse.SUPPRESS,
            metavar=setting.upper(),
            help=shown.get(setting, argparse.SUPPRESS),
        )
    return parser


def config_from_args(args: argparse.Namespace) -> Config:
    """Config from ``SVC_*`` variables and the flags given on the command line."""
    overrides: dict[str, Any] = {s: getattr(args, s) for s in SETTINGS if hasattr(args, s)}
    return load_config(os.environ, overrides)


def store_from_args(args: argparse.Namespace, *, migrate: bool = True) -> Store:
    """The store named by the configuration, schema brought up to date."""
    config = config_from_args(args)
    store = open_store(
        config.database_url,
        pool_size=config.db_pool_size,
        busy_timeout_ms=config.db_busy_timeout_ms,
    )
    if migrate:
        store.migrate()
    return store


def print_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Rows under a header line, each column as wide as its widest cell; None is ``-``.
    An empty table still prints its header, so a reader sees the columns."""
    cells = [[str(h) for h in headers]]
    cells += [["-" if value is None else str(value) for value in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def counted(n: int, one: str, many: str) -> str:
    """``1 delivery``, ``3 deliveries``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many}"
