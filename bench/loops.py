"""What the event loop and the warm lane cost pulse (issue 32, item 1), in server CPU.

The warm lane answers a cached pulse call on granian's event loop, so the loop's own
per-call work counts. Serves svc's app as ``svc serve`` does (granian RSGI, the factory
``svc_server.commands.core:granian_app``, ``--workers`` processes; granian's own
defaults for the backlog and head buffer) on each loop asked for, plus:

- ``constant``: the same front and loop, with a lane that sends the first warm answer
  again for every call (``bench/bare_front.py:constant_lane``): no admission, no
  settlement, no request log, no per-call values. The gap between it and the real
  lane is the cost of the lane's own work;
- ``plain``: the bare werkzeug app under granian's own WSGI interface (the floor of
  ``http_bench.py``).

Interleaved rounds, medians per server: req/s, req/s ÷ plain, and the CPU the server's
processes used per answered call (``/proc``: user + system of the master and its
workers), which is steadier than req/s on a shared machine.

    python bench/loops.py --db /tmp/b200k.db --rounds 8 --seconds 4
    python bench/loops.py --loops asyncio,uvloop --rounds 8   # rloop needs pip install rloop
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from http_bench import (  # noqa: E402
    PULSE,
    build_database,
    fetch,
    free_port,
    granian_command,
    start,
    status_url,
    unmetered_key,
    wrk,
)
from peers_bench import children  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes ``pids`` have used."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(stat[11]) + int(stat[12])
    return total / TICKS


Served = tuple[subprocess.Popen[bytes], str, dict[str, str]]
"""A server: its process, the URL each round loads and the headers sent with it."""


def serve_plain(args: argparse.Namespace, body: Path) -> Served:
    """The plain floor: the bare werkzeug app under granian's own WSGI interface, answering
    ``body`` (the file of a pulse answer)."""
    port = free_port()
    command = granian_command(args, port, "bare_app:app", wsgi=True)
    env = dict(os.environ, SVC_BENCH_BODY=str(body))
    return start(command, env, status_url(port)), f"http://127.0.0.1:{port}/", {}


def interleaved(
    servers: dict[str, Served], rounds: int, seconds: int, connections: int
) -> dict[str, dict[str, Any]]:
    """``rounds`` rounds of wrk against each server in turn (a failed answer stops the
    bench), then per server: the median req/s, the median of its per-round ratios to the
    server named ``plain``, those ratios, and its processes' CPU per answered call (µs).
    The servers are stopped at the end."""
    rps: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, list[float]] = {name: [] for name in servers}
    try:
        for _ in range(rounds):
            for name, (proc, url, headers) in servers.items():
                pids = [proc.pid, *children(proc.pid)]
                before = cpu_seconds(pids)
                found = wrk(url, headers, seconds, connections)
                if found.get("errors"):
                    raise RuntimeError(f"{name}: {found['errors']} failed answers")
                cpu[name].append((cpu_seconds(pids) - before) / max(1.0, found["answers"]) * 1e6)
                rps[name].append(found["rps"])
    finally:
        for proc, _, _ in servers.values():
            proc.terminate()
            proc.wait()
    plain = rps["plain"]
    result: dict[str, dict[str, Any]] = {}
    for name, rates in rps.items():
        ratios = [r / p for r, p in zip(rates, plain, strict=True)]
        result[name] = {
            "rps": round(statistics.median(rates)),
            "ratio_vs_plain": round(statistics.median(ratios), 3),
            "ratios_by_round": [round(r, 3) for r in ratios],
            "server_cpu_us_per_call": round(statistics.median(cpu[name]), 1),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="a store built earlier (else 200,000 deals)")
    parser.add_argument("--loops", default="asyncio,uvloop")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="svc-loops-"))
    db = args.db or work / "bench.db"
    if not db.exists():
        build_database(db, 200_000)
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": f"sqlite:///{db}",
            "SVC_SECRET_KEY": "bench-secret-key-0123456789",
            "SVC_LOG_LEVEL": "WARNING",
        }
    )
    headers = {"X-API-Key": unmetered_key(env)}
    servers: dict[str, Served] = {}
    try:
        for loop in args.loops.split(","):
            port = free_port()
            target = "svc_server.commands.core:granian_app"
            command = granian_command(args, port, target, wsgi=False, loop=loop)
            url = f"http://127.0.0.1:{port}{PULSE}"
            servers[loop] = (start(command, env, status_url(port)), url, headers)
        port = free_port()
        command = granian_command(args, port, "bare_front:constant_lane", wsgi=False, loop="uvloop")
        url = f"http://127.0.0.1:{port}{PULSE}"
        servers["constant"] = (start(command, env, status_url(port)), url, headers)
        body = work / "body.json"
        body.write_bytes(fetch(servers[args.loops.split(",")[0]][1], headers))
        servers["plain"] = serve_plain(args, body)
    except BaseException:
        for proc, _, _ in servers.values():
            proc.terminate()
        raise
    result = interleaved(servers, args.rounds, args.seconds, args.connections)
    print(json.dumps({"rounds": args.rounds, "seconds": args.seconds, **result}, indent=2))


if __name__ == "__main__":
    main()
