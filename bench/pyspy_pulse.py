"""Where a pulse call's time goes under load: py-spy on a real ``svc serve`` worker.

Starts ``svc serve`` (granian, one worker, ``--threads`` threads) on the store you give,
creates an enterprise consumer, drives pulse with wrk for ``--seconds`` and samples the
worker with ``py-spy record --format raw`` (folded stacks, idle threads left out) at the
same time. Prints the share of samples in which each function is on the stack
(inclusive), grouped by the part of the request path it belongs to, and the top
functions by own time. ``--raw FILE`` keeps the folded stacks (for a flame graph).

    pip install py-spy   # and wrk (apt-get install wrk)
    python bench/pyspy_pulse.py /tmp/bench2m.db --seconds 15
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from http_bench import PULSE, free_port, start, status_url

STAGES = (
    ("warm lane (http.warm)", "WarmLane.__call__ (svc_server/app/warm.py"),
    ("  admission from leases", "admit_leased (svc_server/services/access.py"),
    ("  settle (quota, headers)", "settled (svc_server/app/admission.py"),
    ("environ (front)", "build_environ (svc_server/servers/front.py"),
    ("app (wsgi_app, all of svc)", "SvcApp.wsgi_app (svc_server/app.py"),
    ("dispatch", "dispatch (svc_server/app/dispatch.py"),
    ("  route match", "match (svc_server/app/dispatch.py"),
    ("  admit (key + rate/quota)", "admit (svc_server/app/admission.py"),
    ("    key lookup", "authenticate_key (svc_server/services/callers.py"),
    ("    admission write", "AccountsRepo.admit (svc_server/store/accounts.py"),
    ("  strict query", "strict_query (svc_core/params.py"),
    ("  handler", "_run (svc_server/handlers/realestate.py"),
    ("    pulse service", "pulse (svc_server/services/realestate.py"),
    ("    to_json (cattrs)", "to_json (svc_core/convert.py"),
    ("    JSON encode", "dumps (svc_server/http/responses.py"),
    ("    Response object", "Response.__init__ (werkzeug/wrappers/response.py"),
    ("  settle (quota, headers)", "settle (svc_server/app/admission.py"),
    ("request object + headers", "Request.__init__ (werkzeug/"),
    ("request id", "resolve (svc_core/requestid.py"),
    ("access log", "SvcApp._log (svc_server/app.py"),
    ("response to WSGI", "Response.__call__ (werkzeug/"),
)
OUTSIDE = "outside the app and the lane (front, event loop, granian)"
INSIDE = ("SvcApp.wsgi_app (svc_server/app.py", "WarmLane.__call__ (svc_server/app/warm.py")


def summarize(raw: Path) -> dict[str, object]:
    """Inclusive share per stage and the top own-time functions of folded stacks."""
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        for label, needle in STAGES:
            if any(needle in f for f in frames):
                inclusive[label] += n
        if not any(needle in f for f in frames for needle in INSIDE):
            inclusive[OUTSIDE] += n
        own[frames[-1].split(" (")[0] + " (" + frames[-1].split(" (")[-1]] += n
    return {
        "samples": total,
        "stages_pct": {
            label: round(100 * inclusive[label] / max(total, 1), 1)
            for label in [*(label for label, _ in STAGES), OUTSIDE]
        },
        "top_own_pct": [
            (name, round(100 * n / max(total, 1), 1)) for name, n in own.most_common(25)
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="a SQLite store with data (http_bench.py --db)")
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--raw", type=Path, help="keep the folded stacks here")
    args = parser.parse_args()
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": f"sqlite:///{args.db}",
            "SVC_SECRET_KEY": "bench-secret-key-0123456789",
            "SVC_LOG_LEVEL": "WARNING",
            "SVC_WORKERS": "1",
            "SVC_THREADS": str(args.threads),
        }
    )
    svc = [sys.executable, "-m", "svc_server"]
    created = subprocess.run(
        [*svc, "consumer", "create", "--plan", "enterprise", "--rate-limit", "100000000",
         "--monthly-quota", "1000000000", "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    key = json.loads(created.stdout)["api_key"]
    port = free_port()
    server = start([*svc, "serve"], dict(env, SVC_PORT=str(port)), status_url(port))
    raw = args.raw or Path(tempfile.mkdtemp(prefix="svc-pyspy-")) / "pulse.folded"
    try:
        time.sleep(1)
        children = subprocess.run(
            ["pgrep", "-P", str(server.pid)], capture_output=True, text=True, check=True
        ).stdout.split()
        worker = children[-1]
        url = f"http://127.0.0.1:{port}{PULSE}"
        load = ["wrk", "-t2", f"-c{args.connections}", "-H", f"X-API-Key: {key}"]
        subprocess.run([*load, "-d2s", url], capture_output=True, check=True)  # warm up
        wrk = subprocess.Popen(
            [*load, f"-d{args.seconds + 2}s", url], stdout=subprocess.PIPE, text=True
        )
        subprocess.run(
            [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", worker, "--duration", str(args.seconds),
             "--rate", str(args.rate), "--format", "raw", "--output", str(raw), "--nonblocking", "--gil"],
            check=True, capture_output=True,
        )  # fmt: skip
        out, _ = wrk.communicate()
    finally:
        server.terminate()
        server.wait()
    rps = next((line for line in out.splitlines() if "Requests/sec" in line), "")
    print(json.dumps({"wrk": rps.strip(), "folded": str(raw), **summarize(raw)}, indent=2))


if __name__ == "__main__":
    main()
