"""HTTP benchmark: real-estate pulse through the whole pipeline vs bare werkzeug floors.

Servers, all with the same --workers and --threads, on loopback, measured in interleaved
rounds (the median round per server is reported):

- ``pulse``: ``svc serve`` as shipped (granian, svc's buffering front);
- ``bare``: a bare werkzeug app returning a body of the pulse response's size, under the
  same granian front (the floor for the same server);
- ``bare_gunicorn``: the same bare app under gunicorn's gthread worker (the old floor);
- ``pulse_gunicorn``: ``svc serve --server gunicorn`` (pulse as it was served before);
- ``plain``: the bare app under plain granian (``granian --interface wsgi --workers N``,
  its own defaults, no front): what a user gets from the fastest Python server without
  svc, the floor svc's overhead is measured from (``ratio_pulse_vs_plain``; the goal is
  0.5). svc does not serve this way: granian's WSGI mode gives a thread to a request
  whose body is still arriving.

Then ``pulse`` in alternate rounds idle and while 200 slow clients (half stopped inside
the headers, half inside a declared body) hold connections to it, and ``pulse_gunicorn``
once with the slow clients: p99 and req/s beside the idle rounds'.

The load generator is wrk when installed (``apt-get install wrk``), otherwise a
documented Python client (threads, keep-alive, http.client).

    python bench/http_bench.py --transactions 2000000 --duration 10
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import date
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PULSE = "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office&transaction_type=sale"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_database(
    path: Path | None, transactions: int, seed: int = 7, *, url: str | None = None
) -> None:
    """A store (the SQLite file ``path``, or ``url``) with ``transactions`` synthetic
    deals over 57 months and 35 districts."""
    from svc_core.models import Transaction
    from svc_core.regions import regions_in_use
    from svc_server.store import open_store

    store = open_store(url or f"sqlite:///{path}")
    store.migrate()
    rng = random.Random(seed)
    codes = [r.code for r in regions_in_use()][:35]
    types = ("office", "retail", "commercial_complex", "mixed_use", "officetel")
    batch: list[Transaction] = []
    for i in range(transactions):
        code = "11680" if i % 20 == 0 else rng.choice(codes)
        ptype = rng.choice(types)
        ttype = "sale" if ptype != "officetel" or rng.random() < 0.5 else "chartered_lease"
        year = 2022 + rng.randrange(5)
        month = rng.randrange(1, 13) if year < 2026 else rng.randrange(1, 10)
        batch.append(
            Transaction(
                source="rtms_official" if rng.random() < 0.8 else "public_assessment",
                sigungu_code=code,
                sigungu="강남구" if code == "11680" else "구",
                dong=f"동{rng.randrange(8)}",
                property_type=ptype,
                transaction_type=ttype,
                deal_date=date(year, month, rng.randrange(1, 29)),
                price_krw=rng.randrange(100, 50_000) * 1_000_000,
                monthly_rent_krw=None,
                area_m2=round(rng.uniform(20, 900), 2),
                natural_key=f"bench:{seed}:{i}",
            )
        )
        if len(batch) == 50_000:
            write(store, batch)
            batch = []
    if batch:
        write(store, batch)
    store.close()


def write(store: Any, batch: list[Any]) -> None:
    """Insert deals and record their district-months as loaded, as ``svc ingest`` of a
    file without paging figures does (pulse answers 404 not_loaded for months never
    loaded)."""
    from svc_core.models import LoadReport
    from svc_core.sources import ParseResult
    from svc_server.ingest.completeness import record_file
    from svc_server.store.loading import loading

    with loading(store) as w:
        w.realestate.insert_transactions(w.tx, batch)
        result = ParseResult(transactions=batch, report=LoadReport(path="bench", read=len(batch)))
        record_file(w, "samples", result, now=time.time())


def unmetered_consumer(env: dict[str, str]) -> tuple[str, str]:
    """(consumer id, key) of a new enterprise consumer whose quota and rate limit a bench
    never reaches (its calls are still counted), made by ``svc consumer create`` against
    the store of ``env``."""
    created = subprocess.run(
        [
            *(sys.executable, "-m", "svc_server", "consumer", "create"),
            *("--plan", "enterprise", "--rate-limit", "100000000"),
            *("--monthly-quota", "1000000000", "--json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(created.stdout)
    return str(out["consumer_id"]), str(out["api_key"])


def unmetered_key(env: dict[str, str]) -> str:
    """The key of ``unmetered_consumer``."""
    return unmetered_consumer(env)[1]


def start(cmd: list[str], env: dict[str, str], url: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            return proc
        except urllib.error.HTTPError:
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"server did not start: {' '.join(cmd)}")


def wrk(
    url: str, headers: dict[str, str], duration: int, connections: int, threads: int = 2
) -> dict[str, float]:
    """wrk's req/s, p50 and p99 (ms), its non-2xx/3xx answers (``errors``), timeouts and
    every answer it read (``answers``)."""
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency", url]
    for name, value in headers.items():
        cmd += ["-H", f"{name}: {value}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"{label}%\s+([\d.]+)(us|ms|s)", out)
        if not m:
            return float("nan")
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    timeouts = re.search(r"Socket errors:.*timeout (\d+)", out)
    answers = re.search(r"(\d+) requests in", out)
    return {
        "rps": rps,
        "p50": ms("50"),
        "p99": ms("99"),
        "errors": float(non2xx.group(1)) if non2xx else 0.0,
        "timeouts": float(timeouts.group(1)) if timeouts else 0.0,
        "answers": float(answers.group(1)) if answers else 0.0,
    }


def python_load(
    url: str, headers: dict[str, str], duration: int, connections: int
) -> dict[str, float]:
    """Fallback generator: ``connections`` threads, keep-alive, for ``duration`` seconds."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    path = "/" + url.split("//", 1)[1].split("/", 1)[1]
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    stop = time.monotonic() + duration

    def worker() -> None:
        nonlocal errors
        conn = HTTPConnection(host, int(port), timeout=10)
        mine: list[float] = []
        bad = 0
        while time.monotonic() < stop:
            t = time.perf_counter()
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            resp.read()
            mine.append((time.perf_counter() - t) * 1000)
            bad += resp.status >= 300
        with lock:
            latencies.extend(mine)
            errors += bad

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    return {
        "rps": len(latencies) / duration,
        "p50": statistics.median(latencies),
        "p99": latencies[int(len(latencies) * 0.99) - 1],
        "errors": float(errors),
    }


def status_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/api/status"


def fetch(url: str, headers: dict[str, str]) -> bytes:
    """One call that must succeed: the load is measured only on a working server."""
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as answer:
        return bytes(answer.read())


def median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """The round with the median throughput (its latencies belong to the same run)."""
    ordered = sorted(runs, key=lambda r: r["rps"])
    return ordered[len(ordered) // 2]


def granian_command(
    args: argparse.Namespace, port: int, target: str, *, wsgi: bool, loop: str = "auto"
) -> list[str]:
    """granian serving ``target`` from bench/: svc's RSGI front, or granian's own WSGI
    with its defaults (the plain floor), on the event loop ``loop`` (granian's names)."""
    interface = ["--interface", "wsgi"]
    if not wsgi:
        interface = ["--interface", "rsgi", "--factory"]
    return [
        sys.executable,
        "-m",
        "granian",
        "--working-dir",
        str(ROOT / "bench"),
        *interface,
        f"--workers={args.workers}",
        "--host",
        "127.0.0.1",
        f"--port={port}",
        "--loop",
        loop,
        "--log-level",
        "warning",
        target,
    ]


def hold_slow_clients(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that send part of a request and then nothing."""
    head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    body = (
        b"POST /api/auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    )
    held = []
    for n in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(head if n % 2 else body)
        held.append(sock)
    time.sleep(0.5)
    return held


def with_slow_clients(
    url: str, args: argparse.Namespace, load: Any, headers: dict[str, str], seconds: int
) -> dict[str, float]:
    """One load round against ``url`` while ``args.slow_clients`` slow clients hold it."""
    held = hold_slow_clients(int(url.split(":")[2].split("/")[0]), args.slow_clients)
    try:
        return dict(load(url, headers, seconds, args.connections))
    finally:
        for sock in held:
            sock.close()


def gunicorn_command(args: argparse.Namespace, port: int, app: str) -> list[str]:
    """gunicorn serving ``app`` from bench/ with the worker settings under test."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "--chdir",
        str(ROOT / "bench"),
        "-k",
        "gthread",
        f"--workers={args.workers}",
        f"--threads={args.threads}",
        "-b",
        f"127.0.0.1:{port}",
        app,
    ]


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transactions", type=int, default=2_000_000)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--db", type=Path, help="reuse a database built earlier")
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds of duration/rounds seconds"
    )
    parser.add_argument(
        "--decompose",
        action="store_true",
        help="also serve bench/stubbed_app.py with admission and settlement, then also the key "
        "lookup, stubbed: shows what each part of the pipeline costs",
    )
    parser.add_argument(
        "--slow-clients", type=int, default=200, help="held during the last pulse round"
    )
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="svc-bench-"))
    db = args.db or work / "bench.db"
    if not db.exists():
        t = time.perf_counter()
        build_database(db, args.transactions)
        print(
            f"built {args.transactions:,} transactions in {time.perf_counter() - t:.0f}s",
            file=sys.stderr,
        )
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": f"sqlite:///{db}",
            "SVC_SECRET_KEY": "bench-secret-key-0123456789",
            "SVC_LOG_LEVEL": "WARNING",
            "SVC_SERVER": "granian",
            "SVC_WORKERS": str(args.workers),
            "SVC_THREADS": str(args.threads),
        }
    )
    svc = [sys.executable, "-m", "svc_server"]
    headers = {"X-API-Key": unmetered_key(env)}

    load = wrk if shutil.which("wrk") else python_load
    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    slow: dict[str, dict[str, float]] = {}
    try:
        port = free_port()
        proc = start([*svc, "serve"], dict(env, SVC_PORT=str(port)), status_url(port))
        servers["pulse"] = (proc, f"http://127.0.0.1:{port}{PULSE}")
        sample = fetch(servers["pulse"][1], headers)
        body_file = work / "body.json"
        body_file.write_bytes(sample)
        bare_env = dict(env, SVC_BENCH_BODY=str(body_file))
        port = free_port()
        command = granian_command(args, port, "bare_front:make", wsgi=False)
        servers["bare"] = (start(command, bare_env, status_url(port)), f"http://127.0.0.1:{port}/")
        port = free_port()
        command = gunicorn_command(args, port, "bare_app:app")
        servers["bare_gunicorn"] = (
            start(command, bare_env, status_url(port)),
            f"http://127.0.0.1:{port}/",
        )
        port = free_port()
        proc = start(
            [*svc, "serve", "--server", "gunicorn"],
            dict(env, SVC_PORT=str(port)),
            status_url(port),
        )
        servers["pulse_gunicorn"] = (proc, f"http://127.0.0.1:{port}{PULSE}")
        port = free_port()
        command = granian_command(args, port, "bare_app:app", wsgi=True)
        servers["plain"] = (start(command, bare_env, status_url(port)), f"http://127.0.0.1:{port}/")
        for stub in ("admit", "admit,key") if args.decompose else ():
            port = free_port()
            command = granian_command(args, port, "bare_front:stubbed", wsgi=False)
            proc = start(
                command, dict(env, SVC_BENCH_STUB=stub, SVC_PORT=str(port)), status_url(port)
            )
            servers[stub] = (proc, f"http://127.0.0.1:{port}{PULSE}")
            assert len(fetch(servers[stub][1], headers)) == len(sample), "same answer expected"
        for name in ("pulse_gunicorn",):
            assert len(fetch(servers[name][1], headers)) == len(sample), "same answer expected"
        # Interleaved rounds, median per server: a change of machine load (this is often
        # a shared virtual machine) then hits every server alike.
        seconds = max(1, args.duration // args.rounds)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, (_, url) in servers.items():
                runs[name].append(load(url, headers, seconds, args.connections))
        # pulse idle and pulse with the slow clients, alternately; gunicorn once.
        quiet: list[dict[str, float]] = []
        crowded: list[dict[str, float]] = []
        for _ in range(args.rounds):
            quiet.append(load(servers["pulse"][1], headers, seconds, args.connections))
            crowded.append(with_slow_clients(servers["pulse"][1], args, load, headers, seconds))
        slow["pulse_idle"], slow["pulse"] = median_run(quiet), median_run(crowded)
        url = servers["pulse_gunicorn"][1]
        slow["pulse_gunicorn"] = with_slow_clients(url, args, load, headers, seconds)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
    figures = {name: median_run(found) for name, found in runs.items()}
    pulse, floor, old = figures["pulse"], figures["bare"], figures["bare_gunicorn"]
    result = {
        "generator": load.__name__,
        "transactions": args.transactions,
        "body_bytes": len(sample),
        "rounds": args.rounds,
        "seconds_per_round": seconds,
        "connections": args.connections,
        "figures": figures,
        "pulse": pulse,
        "bare": floor,
        "ratio_rps": pulse["rps"] / floor["rps"],
        "ratio_pulse_vs_plain": pulse["rps"] / figures["plain"]["rps"],
        "ratio_pulse_vs_plain_rounds": [
            p["rps"] / q["rps"] for p, q in zip(runs["pulse"], runs["plain"], strict=True)
        ],
        "ratio_pulse_vs_gunicorn_floor": pulse["rps"] / old["rps"],
        "ratio_floor_vs_gunicorn_floor": floor["rps"] / old["rps"],
        "ratio_pulse_vs_pulse_gunicorn": pulse["rps"] / figures["pulse_gunicorn"]["rps"],
        "slow_clients": {"count": args.slow_clients, **slow["pulse"]},
        "slow_clients_idle": slow["pulse_idle"],
        "slow_clients_gunicorn": slow["pulse_gunicorn"],
        "stubbed": {name: figures[name] for name in figures if name in ("admit", "admit,key")},
        "all_rounds": runs,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
