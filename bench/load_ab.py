"""A/B of the national load from two or more source trees: the same files, each tree's
``svc ingest``, in alternate rounds.

``national.py`` times one tree's load of the whole country; a later run of it on another
tree meets another hour of a shared machine. This bench writes the files once (RTMS XML
of every district in use over ten years, the three kinds ``svc sync`` loads by default,
as ``national.py`` writes them), then loads them into a new SQLite store with each tree's
own ``svc init`` and ``svc ingest rtms-KIND DIR`` (its ``src`` first on the path), tree
after tree, each round starting with the next tree (a run's first load reads the files
cold), and prints each tree's load times, their median, and the ratio of the medians
B / A.

    git worktree add /tmp/base0 0aa1b13
    python bench/load_ab.py /tmp/base0 . --deals 500000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from national import KINDS, write_files  # noqa: E402
from tree_ab import svc, tree_env  # noqa: E402


def load_once(tree: Path, files: Path, work: Path) -> float:
    """Seconds ``tree``'s ``svc ingest`` takes to load ``files`` into a new store."""
    for leftover in work.glob("load*.db*"):
        leftover.unlink()
    env = tree_env(tree, work / "load.db")
    svc(tree, env, "init")
    started = time.perf_counter()
    for kind in KINDS:
        svc(tree, env, "ingest", f"rtms-{kind}", str(files / kind))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="source trees; the first is A")
    parser.add_argument("--deals", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="svc-load-ab-"))
    try:
        files = work / "files"
        count = write_files(files, args.deals, args.seed)
        print(f"wrote {count} files of ~{args.deals:,} deals", file=sys.stderr)
        times: dict[str, list[float]] = {str(tree): [] for tree in args.trees}
        for number in range(args.rounds):
            # the first load of a run reads the newly written files cold: each round
            # starts with another tree, so that load does not always fall on the same one
            shift = number % len(args.trees)
            for tree in [*args.trees[shift:], *args.trees[:shift]]:
                seconds = load_once(tree, files, work)
                print(f"{tree}: {seconds:.1f} s", file=sys.stderr)
                times[str(tree)].append(round(seconds, 1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {tree: round(statistics.median(found), 1) for tree, found in times.items()}
    result: dict[str, object] = {"deals": args.deals, "seconds": times, "median": medians}
    if len(args.trees) >= 2:
        a, b = (medians[str(tree)] for tree in args.trees[:2])
        result["B_over_A"] = round(b / a, 3)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
