"""``svc ingest`` and ``svc demo-data``: getting data into the store.

``svc ingest [KIND] PATH...`` loads each file in its own transaction and prints, per
file, what was read, loaded, already present, excluded (by reason) and rejected (by
reason, with the first lines), then totals. Each file's kind is recognised from its
content; a KIND given is checked against it, and names the kind of a file whose items
show several. On a terminal a progress bar runs on stderr. A file that cannot be read
(not a regular file, larger than ``--max-bytes``: ``commands.infile``), whose content is
of another kind than KIND, or whose every record is rejected is reported as
``svc: error: PATH[:LINE]: ...`` and changes nothing; the exit status is then 1.

A PATH that is a directory stands for the files directly in it, in name order (not its
subdirectories): each whose content shows its kind (KIND, when given) is loaded, and each other entry is skipped with one ``svc: skipped PATH: why`` line on
stderr, which is not an error.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Generator
from contextlib import closing
from pathlib import Path
from typing import Any

import attrs

from svc_core.errors import SourceError
from svc_core.params import ascii_int
from svc_core.sources.kind import (
    HEAD_BYTES,
    candidates,
    describe,
    item_kinds,
    layout,
    recognise,
    undecided,
)
from svc_core.sources.sniff import binary_format
from svc_server import ingest
from svc_server.commands import ahead
from svc_server.commands.base import (
    ProgressBar,
    command_parser,
    publish_data_events,
    sigterm_as_interrupt,
    store_from_args,
)
from svc_server.commands.infile import DEFAULT_MAX_BYTES, MAX_BYTES_ENV, max_bytes, read_regular
from svc_server.ingest import demo
from svc_server.ingest.coverage import refresh_stale


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(
        sub,
        common,
        "ingest",
        cmd_ingest,
        description=(
            "Load source files, one transaction per file: a file that cannot be read "
            "changes nothing, and loading a file twice adds nothing. The kind of each "
            "file is recognised from its content; KIND, when given, is one of: "
            + ", ".join(ingest.KINDS)
            + ", and a file whose content shows another kind is refused. RTMS kinds read "
            "the open-API XML/JSON and the web site's CSV export (CP949 or UTF-8). "
            "See docs/data-sources.md."
        ),
    )
    p.add_argument(
        "items",
        nargs="+",
        metavar="[KIND] PATH",
        help="optional KIND, then files or directories (a directory: every file directly "
        "in it whose kind is recognised; the others are skipped, one line each)",
    )
    p.add_argument(
        "--area-map",
        type=Path,
        metavar="CSV",
        help="rone-index only: market-area table (market_area,sigungu_code) replacing "
        "the built-in Seoul office areas",
    )
    p.add_argument(
        "--table-name",
        metavar="NAME",
        help="rone-index only: the statistic table's name (as SttsApiTbl.do lists it), "
        "read for the metric or property class when the rows do not name them",
    )
    p.add_argument(
        "--property-type",
        choices=("office", "retail", "commercial_complex"),
        help="rone-index only: the property type of rows that name no survey class",
    )
    p.add_argument(
        "--max-bytes",
        type=ascii_int,
        metavar="N",
        help=f"refuse files larger than N bytes (env {MAX_BYTES_ENV}; default "
        f"{DEFAULT_MAX_BYTES:,}); only regular files are read",
    )

    p = command_parser(sub, common, "demo-data", cmd_demo)
    p.add_argument("--seed", type=ascii_int, default=1, help="generator seed (default 1)")
    p.add_argument(
        "--if-empty", action="store_true", help="do nothing when transactions already exist"
    )


def _kind_and_paths(items: list[str]) -> tuple[str | None, list[Path]]:
    """``[KIND] PATH...``: a first word naming a kind is the kind when paths follow."""
    if len(items) > 1 and items[0] in ingest.KINDS:
        return items[0], [Path(p) for p in items[1:]]
    if items[0] in ingest.KINDS:
        raise SourceError(f"give the files to load as {items[0]}", path=items[0])
    return None, [Path(p) for p in items]


def _area_map(args: argparse.Namespace) -> ingest.AreaMap | None:
    if args.area_map is None:
        return None
    if args.kind not in (None, "rone-index"):
        raise SourceError("--area-map applies to rone-index only", path=str(args.area_map))
    data = read_regular(args.area_map, max_bytes(args.max_bytes))
    return ingest.parse_area_map(data, path=str(args.area_map))


def _skip_reason(path: Path, kind: str | None) -> str | None:
    """Why a directory entry is not loaded, or None when it is a file to load."""
    if path.name.startswith("."):
        return "a hidden file"
    if path.is_dir():
        return "a directory (not descended into: name it to load its files)"
    if not path.is_file():
        return "not a regular file"
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    allowed = candidates(head)
    if kind is not None and (kind in allowed or layout(kind) in item_kinds(head)):
        return None
    seen = recognise(head, path.name)
    if seen is None:
        found = binary_format(head)
        if found is not None:
            return f"this is {found}, not a data file svc reads"
        if len(allowed) > 1:
            return undecided(allowed, str(path))
        return "svc cannot tell what kind of file this is (name it with its KIND to load it)"
    if kind is not None and seen != kind:
        return f"this looks like {describe(seen)} ({seen}), not {kind}"
    return None


def expand_directories(paths: list[Path], kind: str | None) -> tuple[list[Path], list[str]]:
    """The files to load: each path given, a directory replaced by the files directly in
    it that are recognised; and one line per directory entry skipped, saying why."""
    files: list[Path] = []
    skipped: list[str] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        for entry in sorted(path.iterdir()):
            reason = _skip_reason(entry, kind)
            if reason is None:
                files.append(entry)
            else:
                skipped.append(f"svc: skipped {entry}: {reason}")
    return files, skipped


def _progress(bar: ProgressBar, label: str, done: int, total: int) -> None:
    bar.show(done, total, label)


def cmd_ingest(args: argparse.Namespace) -> int:
    """``svc ingest``; SIGTERM stops it as SIGINT does (``Terminated``): the file being
    written is rolled back and the process parsing ahead is ended."""
    with sigterm_as_interrupt():
        return _ingest(args)


def _ingest(args: argparse.Namespace) -> int:
    try:
        args.kind, args.paths = _kind_and_paths(args.items)
        limit = max_bytes(args.max_bytes)
        area_map = _area_map(args)
    except SourceError as exc:
        print(f"svc: error: {exc.message}", file=sys.stderr)
        return 2
    args.paths, skipped = expand_directories(args.paths, args.kind)
    for line in skipped:
        print(line, file=sys.stderr)
    if not args.paths:
        print("ingest: no file to load")
        return 0
    store = store_from_args(args)
    bar = ProgressBar(sys.stderr)
    failed = 0
    totals = {"read": 0, "loaded": 0, "duplicate": 0, "excluded": 0, "rejected": 0}
    reading = ahead.Reading(
        kind=args.kind,
        limit=limit,
        area_map=area_map,
        table_name=args.table_name,
        property_type=args.property_type,
    )
    count = len(args.paths)
    files: Generator[ahead.Parsed, None, None] | None = None
    try:
        if count == 1:  # parsed here, with the progress of its items
            path = args.paths[0]
            show = functools.partial(_progress, bar, f"file 1/1 {path.name[:32]}")
            files = (reading.parse(path, show) for _ in range(1))
        else:  # the next files parsed by a second process meanwhile
            files = ahead.parsed(args.paths, reading)
        for number, parsed in enumerate(files, start=1):
            bar.show(0, 1, f"file {number}/{count} {parsed.path.name[:32]}")
            if parsed.load is None:
                bar.clear()
                print(f"svc: error: {parsed.error}", file=sys.stderr)
                failed += 1
                continue
            load = attrs.evolve(parsed.load, defer_coverage=count > 1)
            try:
                report = ingest.commit(store, load, now=time.time()).report
            except SourceError as exc:
                bar.clear()
                print(f"svc: error: {exc.message}", file=sys.stderr)
                failed += 1
                continue
            bar.clear()
            for line in ingest.summary_lines(report):
                print(line)
            totals["read"] += report.read
            totals["loaded"] += report.loaded
            totals["duplicate"] += report.duplicate
            totals["excluded"] += report.excluded_total
            totals["rejected"] += report.rejected_total
        bar.clear()
        if len(args.paths) > 1:  # each file left its districts' coverage to the end
            refresh_stale(store)
        publish_data_events(args, store)
    finally:
        if files is not None:  # stopped early, this ends the process parsing ahead
            files.close()
        bar.clear()
        store.close()
    if len(args.paths) > 1:
        print(
            f"total ({len(args.paths) - failed} of {len(args.paths)} files loaded"
            + (f", {len(skipped)} skipped" if skipped else "")
            + "): "
            + ", ".join(f"{k} {v}" for k, v in totals.items())
        )
    if failed:
        if len(args.paths) > 1:  # one file's error line says it all
            print(
                f"svc: {failed} file(s) not loaded (nothing from them was written)",
                file=sys.stderr,
            )
        return 1
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Load the deterministic synthetic demo data (real estate and marketplace)."""
    with closing(store_from_args(args)) as store:
        if args.if_empty and not store.realestate.is_empty():
            print("demo-data: the store already has transactions; nothing loaded")
            return 0
        started = time.perf_counter()
        out = demo.load_demo(store, seed=args.seed, now=time.time())
        publish_data_events(args, store)
    took = time.perf_counter() - started
    print(
        f"demo-data (seed {args.seed}): {out['transactions']} transactions "
        f"({out['duplicate_transactions']} already present), {out['index_observations']} index "
        f"values, {out['market_listings']} marketplace listings, {out['market_activity']} "
        f"listing-months in {took:.1f}s"
    )
    return 0
