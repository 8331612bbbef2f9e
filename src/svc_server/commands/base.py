"""What every command needs: its config and an open, migrated store."""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Self, TextIO, TypeVar

import attrs

from svc_core.errors import ConfigError
from svc_server.commands.index import SUMMARY
from svc_server.config import SETTINGS, Config, flag_name, load_config
from svc_server.services import data_events
from svc_server.store import Store, missing_data_file, missing_database, open_store

BAR_WIDTH = 28
T = TypeVar("T")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, as SIGINT raises ``KeyboardInterrupt``: the
    command stops the same way (transactions rolled back, helper processes ended) and
    ``svc`` exits 143 (128 + SIGTERM)."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``Terminated``; the handler before is restored
    after it."""
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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


Command = Callable[[argparse.Namespace], int]
"""What runs a command or an action: its parsed arguments in, its exit status out."""


def _run_by(
    subparsers: Any,
    name: str,
    common: argparse.ArgumentParser,
    func: Command,
    summary: str,
    description: str | None,
) -> argparse.ArgumentParser:
    """A parser under ``subparsers`` with ``common``'s flags, whose parse names ``func``
    as ``args.func``; a handler's docstring is its ``--help`` unless ``description``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        parents=[common],
        help=summary,
        description=description or inspect.getdoc(func),
    )
    parser.set_defaults(func=func)
    return parser


def command_parser(
    sub: Any,
    common: argparse.ArgumentParser,
    name: str,
    func: Command,
    description: str | None = None,
) -> argparse.ArgumentParser:
    """The parser of the ``svc`` command ``name``, run by ``func``: the configuration flags
    of ``common``, the command's one-line summary from ``index.SUMMARY`` and, for its
    ``--help``, ``description`` or else the docstring of ``func``."""
    return _run_by(sub, name, common, func, SUMMARY[name], description)


@attrs.frozen
class Actions:
    """The ACTIONs of a ``svc`` command, one of which is its required first word (``svc
    consumer create``, ``svc webhook endpoints``); each takes the configuration flags of
    ``common``."""

    subparsers: Any
    common: argparse.ArgumentParser

    def add(
        self, name: str, func: Command, summary: str, description: str | None = None
    ) -> argparse.ArgumentParser:
        """The parser of the action ``name``, run by ``func``: ``summary`` in the command's
        list of actions and, for its ``--help``, ``description`` or else the docstring
        of ``func``."""
        return _run_by(self.subparsers, name, self.common, func, summary, description)


def actions(
    sub: Any,
    common: argparse.ArgumentParser,
    name: str,
    metavar: str = "ACTION",
    description: str | None = None,
) -> Actions:
    """The actions of the ``svc`` command ``name``."""
    parser = sub.add_parser(name, help=SUMMARY[name], description=description)
    subparsers = parser.add_subparsers(dest=f"{name}_command", metavar=metavar)
    subparsers.required = True
    return Actions(subparsers, common)


def checked(
    convert: Callable[[str], T], noun: str, within: Callable[[T], bool], bounds: str
) -> Callable[[str], T]:
    """An argparse type: the text read by ``convert`` ("'TEXT' is not NOUN" when it
    cannot be) and then ``within`` its bounds ("must be BOUNDS" when not)."""

    def parse(text: str) -> T:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
        if not within(value):
            raise argparse.ArgumentTypeError(f"must be {bounds}")
        return value

    return parse


def config_from_args(args: argparse.Namespace) -> Config:
    """Config from ``SVC_*`` variables and the flags given on the command line."""
    overrides: dict[str, Any] = {s: getattr(args, s) for s in SETTINGS if hasattr(args, s)}
    return load_config(os.environ, overrides)


def store_from_args(
    args: argparse.Namespace, *, migrate: bool = True, reads_only: bool = False
) -> Store:
    """The store named by the configuration, schema brought up to date.

    Refused with one line (``ConfigError``): a SQLite data file gone from beside its
    accounts file (unless ``SVC_EMPTY_DATA_FILE=true`` asks for an empty one), a file
    SQLite finds damaged, and, for a command that ``reads_only`` (``svc sync status``,
    ``svc consumer list``), a SQLite database that does not exist: a typo in the path
    is said, never answered from a new empty file left behind."""
    config = config_from_args(args)
    absent = missing_database(config.database_url) if reads_only else None
    if absent is not None:
        raise ConfigError(
            f"there is no database at {absent} (SVC_DATABASE_URL {config.database_url}); "
            "this command only reads one: point SVC_DATABASE_URL at yours, or make one "
            "with svc init"
        )
    missing = missing_data_file(config.database_url)
    if missing is not None and not config.empty_data_file:
        raise ConfigError(
            f"the data file {missing} is missing (the accounts file beside it was made "
            "with one): restore it from a backup, or start with an empty one on purpose "
            "with --empty-data-file true (SVC_EMPTY_DATA_FILE=true)"
        )
    store = open_store(
        config.database_url,
        pool_size=config.db_pool_size,
        busy_timeout_ms=config.db_busy_timeout_ms,
    )
    try:
        if migrate:
            store.migrate()
        problem = store.problem(probe=True)
    except Exception:
        problem = store.problem(probe=False)
        if problem is None:
            store.close()
            raise
    if problem is not None:
        store.close()
        raise ConfigError(problem)
    return store


def publish_data_events(args: argparse.Namespace, store: Store) -> None:
    """After a load command's commits: publish its change records as ``data.updated``
    (``services.data_events``), linked to the public address the server recorded; a
    failure is a warning, never the load's."""
    warning = data_events.publish_after_load(store, time.time())
    if warning is not None:
        print(warning, file=sys.stderr)


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


Column = str | Callable[[Mapping[str, Any]], object]
"""A table column of JSON items: the key of its cell, or what makes the cell of an item."""


def print_columns(items: Iterable[Mapping[str, Any]], columns: Mapping[str, Column]) -> None:
    """``print_table`` of JSON items, a column under each header of ``columns``."""
    print_table(
        tuple(columns),
        (
            tuple(item[c] if isinstance(c, str) else c(item) for c in columns.values())
            for item in items
        ),
    )


def print_items(
    items: Sequence[Mapping[str, Any]], as_json: bool, columns: Mapping[str, Column]
) -> None:
    """A listing command's output: one JSON object a line (``--json``), else a table."""
    if not as_json:
        print_columns(items, columns)
        return
    for item in items:
        print(json.dumps(item, ensure_ascii=False))


def counted(n: int, one: str, many: str) -> str:
    """``1 delivery``, ``3 deliveries``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many}"


class ProgressBar:
    """Progress of a long command (``svc ingest``, ``svc sync``): a one-line bar redrawn
    on ``stream`` when it is a terminal, nothing otherwise; and, when ``lines`` is given
    and is not a terminal (a log file, a pipe), one line there per finished step, so a
    log shows where a run is and where it stopped."""

    def __init__(self, stream: TextIO, lines: TextIO | None = None) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.lines = lines if lines is not None and not lines.isatty() else None
        self._last = ""
        self._width = 0

    def show(self, done: int, total: int, label: str) -> None:
        """Redraw the bar: ``done`` of ``total``, then ``label``."""
        if not self.enabled:
            return
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        text = f"\r[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{total} {label}".rstrip()
        if text != self._last:
            self._last = text
            self._width = max(self._width, len(text))
            print(text.ljust(self._width), end="", file=self.stream, flush=True)

    def step(self, text: str) -> None:
        """One finished step, as a line of ``lines`` (when lines are written)."""
        if self.lines is not None:
            print(text, file=self.lines, flush=True)

    def steps(self, line: Callable[[T], str]) -> Callable[[int, int, T], None]:
        """A ``finished(done, total, item)`` callback: each item finished is a ``step``,
        ``  DONE/TOTAL`` and what ``line`` says of it."""

        def finished(done: int, total: int, item: T) -> None:
            self.step(f"  {done}/{total} {line(item)}")

        return finished

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        """The end of the block, done, failed or interrupted, wipes the bar."""
        self.clear()

    def clear(self) -> None:
        """Wipe the bar, so the next line starts clean."""
        if self.enabled and self._last:
            print("\r" + " " * self._width + "\r", end="", file=self.stream, flush=True)
            self._last = ""
            self._width = 0
