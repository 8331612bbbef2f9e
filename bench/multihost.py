"""Many hosts, measured (issue 32, item 3): two ``svc serve`` processes on one
PostgreSQL, as two hosts would run, against one, in interleaved rounds.

One store (a fresh schema of ``--pg-url`` with ``--transactions`` synthetic deals) is
served by ``svc serve`` processes of one worker each, on their own ports:

- ``one``: wrk against one process (the baseline);
- ``two``: two wrk runs at once, one against each process, for the same seconds: the
  sum of both is the figure.

Every call is a counted pulse call of one metered key (a monthly quota far above what
a run uses): after the rounds the quota counter is compared with the 200 answers wrk
read across every process; they differ only by calls in flight when a wrk run stopped
(answered and counted, never read), at most its connections per run. The exact count
across two servers is asserted by ``tests/http/test_multihost.py``. The ratio
two ÷ one is printed with the goal (≥ 1.8× on a machine with cores for it); on a
2-core machine the two processes, PostgreSQL and wrk share two cores, and the figure
says so.

    python bench/multihost.py --pg-url postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from http_bench import (  # noqa: E402
    build_database,
    free_port,
    start,
    status_url,
    unmetered_consumer,
    wrk,
)
from national import pg_url  # noqa: E402

PULSE = "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office&transaction_type=sale"


def ok(run: dict[str, float]) -> int:
    """The 2xx answers of one wrk run."""
    return int(run["answers"] - run["errors"])


def at_once(urls: list[str], key: str, seconds: int, connections: int) -> list[dict[str, float]]:
    """One wrk per URL, all for the same seconds."""
    results: list[dict[str, float]] = [{} for _ in urls]

    def run(i: int) -> None:  # one thread each: the two share the load generator's cores
        results[i] = wrk(urls[i], {"X-API-Key": key}, seconds, connections, threads=1)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(urls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def counted(url: str, consumer_id: str) -> int:
    """The consumer's settled calls, as the quota counter holds them."""
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT COALESCE(SUM(count), 0) FROM usage_counters WHERE consumer_id = %s",
            (consumer_id,),
        ).fetchone()
    return int(row[0]) if row else 0


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pg-url", required=True)
    parser.add_argument("--transactions", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=16, help="per wrk")
    args = parser.parse_args(argv)

    url = pg_url(args.pg_url, "bench_multihost")
    build_database(None, args.transactions, url=url)
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": url,
            "SVC_SECRET_KEY": "bench-secret-key-0123456789",
            "SVC_LOG_LEVEL": "WARNING",
        }
    )
    consumer_id, key = unmetered_consumer(env)
    servers = []
    ports = []
    try:
        for _ in range(2):
            port = free_port()
            servers.append(
                start(
                    [sys.executable, "-m", "svc_server", "serve"],
                    dict(env, SVC_PORT=str(port), SVC_WORKERS="1"),
                    status_url(port),
                )
            )
            ports.append(port)
        urls = [f"http://127.0.0.1:{p}{PULSE}" for p in ports]
        answered = 0
        runs = 0
        for u in urls:  # warm both (cache, lease)
            answered += ok(wrk(u, {"X-API-Key": key}, 2, args.connections, threads=1))
            runs += 1
        one: list[float] = []
        two: list[float] = []
        for _ in range(args.rounds):
            alone = wrk(urls[0], {"X-API-Key": key}, args.seconds, args.connections, threads=1)
            one.append(alone["rps"])
            answered += ok(alone)
            both = at_once(urls, key, args.seconds, args.connections)
            two.append(sum(b["rps"] for b in both))
            answered += sum(ok(b) for b in both)
            runs += 3
    finally:
        for server in servers:
            server.terminate()
            server.wait()
    time.sleep(0.5)
    settled = counted(url, consumer_id)  # the processes wrote their leases back on exit
    result = {
        "transactions": args.transactions,
        "cores": os.cpu_count(),
        "one process rps (median)": statistics.median(one),
        "two processes rps (median)": statistics.median(two),
        "ratio two / one": statistics.median(two) / statistics.median(one),
        "goal": ">= 1.8 on a machine with the cores for it",
        "answers wrk read": answered,
        "quota counter": settled,
        # a call in flight when a wrk run stops is answered and counted, never read
        "counter - read": settled - answered,
        "in flight at most": runs * args.connections,
        "within bound": 0 <= settled - answered <= runs * args.connections,
        "rounds": {"one": one, "two": two},
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
