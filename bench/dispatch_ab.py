"""A/B of one dispatched, cached pulse call in process: two source trees side by side.

The HTTP bench (``http_bench.py``) measures the whole server against a plain granian
floor, but on a shared 2-core VM its rounds spread from 0.3 to 1.1 of the floor, too wide
to tell a 5 % change. This bench takes the server out: each tree's own ``SvcApp``
answers the same cached pulse call (a key, the real MOLIT samples of that tree's
``tests/fixtures/molit``), in a process of its own with that tree's ``src`` first on the
path, in interleaved rounds. It prints microseconds per call (the best of each round's
repeats) and the ratio B / A of the medians.

    git worktree add /tmp/base 675da76
    python bench/dispatch_ab.py /tmp/base .          # A = the base, B = this tree
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, tempfile, time, uuid
from pathlib import Path
from werkzeug.test import EnvironBuilder
from svc_server.app import create_app
from svc_server.cli import main
from svc_server.config import Config
from svc_server.store import open_store
from tests.http import multihost_support as mh

tree, calls = Path(sys.argv[1]), int(sys.argv[2])
url = f"sqlite:///{tempfile.mkdtemp()}/svc.db"
main(["init", "--database-url", url])
files = sorted(str(p) for p in (tree / "tests/fixtures/molit").glob("NRG_*.xml"))
main(["ingest", "--database-url", url, *files])
store = open_store(url)
_, key = mh.consumer(store, f"ab-{uuid.uuid4().hex[:8]}@example.com",
                     monthly_quota=10_000_000, rate_limit=10_000_000)
app = create_app(Config(database_url=url, secret_key="x" * 40), store=store)
query = "sigungu_code=11680&property_type=office&transaction_type=sale"

def call():
    environ = EnvironBuilder(path="/api/v1/real-estate/pulse", query_string=query,
                             headers={"X-API-Key": key}).get_environ()
    b"".join(app(environ, lambda status, headers, exc=None: None))

for _ in range(200):
    call()
best = float("inf")
for _ in range(5):
    started = time.perf_counter()
    for _ in range(calls):
        call()
    best = min(best, (time.perf_counter() - started) / calls * 1e6)
print(f"{best:.2f}")
"""


def one_round(tree: Path, calls: int) -> float:
    """Microseconds per call of ``tree``'s app, the best of five repeats."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), str(calls)],
        env={"PYTHONPATH": f"{tree / 'src'}:{tree}", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True, cwd=tree,
    )  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the base tree (a git worktree)")
    parser.add_argument("b", type=Path, help="the tree measured against it")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000, help="calls per repeat")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"A": [], "B": []}
    for _ in range(args.rounds):  # interleaved: A, B, A, B, ...
        for name, tree in (("A", args.a), ("B", args.b)):
            times[name].append(one_round(tree.resolve(), args.calls))
    for name, values in times.items():
        shown = " ".join(f"{v:.1f}" for v in values)
        print(f"{name}: median {statistics.median(values):.1f} µs per call (rounds {shown})")
    ratio = statistics.median(times["B"]) / statistics.median(times["A"])
    print(f"B / A: {ratio:.3f}")


if __name__ == "__main__":
    main()
