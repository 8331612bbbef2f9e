"""A/B of ``svc serve`` from two or more source trees over HTTP, against the plain floor.

``http_bench.py`` measures one tree's pulse against a plain granian floor; on a shared
2-core VM its req/s spread too widely from round to round to tell a few per cent between
two versions of the code measured at different times. This bench serves each tree's own
``svc serve`` (granian, as shipped, ``--workers`` processes) and the plain floor (the bare
werkzeug app under granian's own WSGI interface, as in ``http_bench.py``) side by side and
loads them with wrk in interleaved rounds. Each tree runs with its own ``src`` first on the
path and its own store (``svc init`` and ``svc ingest`` of the tree's
``tests/fixtures/molit`` samples, so every tree answers the same cached pulse call).

It prints, per server, the median req/s, the median of the per-round ratios to the plain
floor (the acceptance figure of issue 41), and the server processes' CPU per answered
call (``/proc``, user + system of the master and its workers: steadier than req/s).

    git worktree add /tmp/base0 0aa1b13
    python bench/tree_ab.py /tmp/base0 . --rounds 8 --seconds 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from http_bench import PULSE, fetch, free_port, start, status_url  # noqa: E402
from loops import Served, interleaved, serve_plain  # noqa: E402


def tree_env(tree: Path, db: Path) -> dict[str, str]:
    """The environment of one tree's commands: its ``src`` first, the SQLite store ``db``."""
    return dict(
        os.environ,
        PYTHONPATH=str(tree / "src"),
        SVC_DATABASE_URL=f"sqlite:///{db}",
        SVC_SECRET_KEY="bench-secret-key-0123456789",  # noqa: S106 (a throwaway store)
        SVC_LOG_LEVEL="WARNING",
        SVC_SERVER="granian",
    )


def svc(tree: Path, env: dict[str, str], *argv: str) -> str:
    """Run ``svc argv`` as ``tree`` has it; its standard output."""
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", *argv],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def prepare(tree: Path, env: dict[str, str]) -> str:
    """Load the tree's MOLIT samples into its store; the key of an unmetered consumer."""
    svc(tree, env, "init")
    files = sorted(str(p) for p in (tree / "tests/fixtures/molit").glob("NRG_*.xml"))
    svc(tree, env, "ingest", *files)
    created = svc(
        tree,
        env,
        *("consumer", "create", "--plan", "enterprise", "--rate-limit", "100000000"),
        *("--monthly-quota", "1000000000", "--json"),
    )
    return str(json.loads(created)["api_key"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="source trees; the first is A")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="svc-tree-ab-"))
    servers: dict[str, Served] = {}
    try:
        for i, tree in enumerate(args.trees):
            env = tree_env(tree, work / f"tree-{i}.db")
            headers = {"X-API-Key": prepare(tree, env)}
            port = free_port()
            env = dict(env, SVC_PORT=str(port), SVC_WORKERS=str(args.workers))
            command = [sys.executable, "-m", "svc_server", "serve"]
            proc = start(command, env, status_url(port))
            name = f"{'AB'[i] if i < 2 else i}:{tree}"
            servers[name] = (proc, f"http://127.0.0.1:{port}{PULSE}", headers)
        first = next(iter(servers.values()))
        body = work / "body.json"
        body.write_bytes(fetch(first[1], first[2]))
        for name, (_, url, headers) in servers.items():
            size = len(fetch(url, headers))
            print(f"{name}: pulse body {size} bytes", file=sys.stderr)
        servers["plain"] = serve_plain(args, body)
    except BaseException:
        for proc, _, _ in servers.values():
            proc.terminate()
        raise
    result: dict[str, Any] = interleaved(servers, args.rounds, args.seconds, args.connections)
    a, b = list(servers)[:2]
    if b != "plain":
        result["B_over_A"] = {
            "ratio_vs_plain": round(result[b]["ratio_vs_plain"] / result[a]["ratio_vs_plain"], 3),
            "server_cpu_per_call": round(
                result[b]["server_cpu_us_per_call"] / result[a]["server_cpu_us_per_call"], 3
            ),
        }
    print(json.dumps({"rounds": args.rounds, "seconds": args.seconds, **result}, indent=2))


if __name__ == "__main__":
    main()
