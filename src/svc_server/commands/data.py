"""``svc ingest`` and ``svc demo-data``: getting data into the store."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from svc_core.errors import SourceError
from svc_server.commands.base import store_from_args
from svc_server.services import demo, ingest


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "ingest",
        parents=[common],
        help="load source files (MOLIT RTMS, R-ONE, samples CSV, marketplace CSV)",
        description=(
            "Load source files, one transaction per file: a file that cannot be read "
            "changes nothing, and loading a file twice adds nothing. KIND is one of: "
            + ", ".join(ingest.KINDS)
            + "."
        ),
    )
    p.add_argument("kind", choices=ingest.KINDS, metavar="KIND")
    p.add_argument("paths", nargs="+", metavar="PATH", type=Path)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "demo-data",
        parents=[common],
        help="load the synthetic demo data set",
        description="Load the deterministic synthetic demo data (real estate and marketplace).",
    )
    p.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    p.add_argument(
        "--if-empty", action="store_true", help="do nothing when transactions already exist"
    )
    p.set_defaults(func=cmd_demo)


def _progress(done: int, total: int, path: Path) -> None:
    if sys.stderr.isatty():
        width = 30
        filled = width * done // total
        bar = "#" * filled + "-" * (width - filled)
        print(f"\r[{bar}] {done}/{total} {path.name[:40]:<40}", end="", file=sys.stderr, flush=True)
        if done == total:
            print(file=sys.stderr)


def cmd_ingest(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    failed = 0
    totals = {"read": 0, "loaded": 0, "duplicate": 0, "excluded": 0, "rejected": 0}
    try:
        for number, path in enumerate(args.paths, start=1):
            _progress(number - 1, len(args.paths), path)
            try:
                data = path.read_bytes()
            except OSError as exc:
                print(f"svc: error: {path}: {exc.strerror or exc}", file=sys.stderr)
                failed += 1
                continue
            try:
                report = ingest.ingest(store, args.kind, data, path=str(path), now=time.time())
            except SourceError as exc:
                print(f"svc: error: {exc.message}", file=sys.stderr)
                failed += 1
                continue
            _progress(number, len(args.paths), path)
            for line in ingest.summary_lines(report):
                print(line)
            totals["read"] += report.read
            totals["loaded"] += report.loaded
            totals["duplicate"] += report.duplicate
            totals["excluded"] += report.excluded_total
            totals["rejected"] += report.rejected_total
    finally:
        store.close()
    if len(args.paths) > 1:
        print("total: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if failed:
        print(f"svc: {failed} file(s) not loaded (nothing from them was written)", file=sys.stderr)
        return 1
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    try:
        if args.if_empty and not store.realestate.is_empty():
            print("demo-data: the store already has transactions; nothing loaded")
            return 0
        started = time.perf_counter()
        out = demo.load_demo(store, seed=args.seed, now=time.time())
    finally:
        store.close()
    took = time.perf_counter() - started
    print(
        f"demo-data (seed {args.seed}): {out['transactions']} transactions "
        f"({out['duplicate_transactions']} already present), {out['index_observations']} index "
        f"values, {out['market_listings']} marketplace listings, {out['market_activity']} "
        f"listing-months in {took:.1f}s"
    )
    return 0
