"""Pulse against its peers on the same data, its own old self, and under a large write.

All servers read the same SQLite data (``--db``, whose public data svc keeps in the
``-data`` file beside it, which the peers open; built with ``--transactions`` synthetic
deals when missing, as ``http_bench.py`` builds it) and are measured with wrk in
interleaved rounds, the median round per server reported:

- ``pulse``: ``svc serve`` as shipped (granian, svc's front; ``--workers`` x ``--threads``);
- ``pulse_gunicorn``: the same ``svc serve --server gunicorn``;
- ``pulse_before`` (with ``--baseline-rev REV``): ``svc serve --server gunicorn`` from the
  source of git revision REV (exported to a temporary folder), i.e. pulse as it was
  served before issue 17's request path: the "3x its own throughput of today" baseline;
  it reads a one-file copy of the store (``single_file``), as svc kept it then;
- ``bare``: a bare werkzeug app returning pulse's body under the same granian front;
- ``fastapi_query``: FastAPI under uvicorn (``--workers`` processes, httptools, uvloop),
  querying and summarizing the cohort per request (``peer_apps.py``);
- ``fastapi_cached``: the same endpoint caching its answer per process and metering
  every call with one write transaction;
- ``datasette``: ``datasette serve`` (one process, ``num_sql_threads`` = ``--threads``),
  the cohort's figures from a canned query;
- ``pulse_pg`` (with ``--pg-url``): ``svc serve`` on PostgreSQL holding the same deals
  (loaded once into the schema named in the URL's ``search_path``).

Then ``pulse`` (and ``pulse_pg``) idle and while ``svc ingest`` loads a large RTMS file
into the same database in another process, in alternate rounds (p99 beside the idle
p99), and the resident memory of each server's worker processes after the rounds.

    python bench/peers_bench.py --db /tmp/bench2m.db --duration 12
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from http_bench import (
    PULSE,
    build_database,
    fetch,
    free_port,
    granian_command,
    median_run,
    start,
    status_url,
    wrk,
)
from ingest_bench import synthetic_xml
from peer_apps import datasette_metadata, window

ROOT = Path(__file__).resolve().parent.parent
CANNED = "sigungu_code=11680&property_type=office&transaction_type=sale"


def rss_mb(pid: int) -> float:
    """Resident memory of one process, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in found.split()]


def workers_rss(pid: int) -> list[float]:
    """RSS of the worker processes of a server started as ``pid`` (its children, or the
    process itself when it has none)."""
    kids = [
        p
        for p in children(pid)
        if b"resource_tracker" not in Path(f"/proc/{p}/cmdline").read_bytes()
    ]
    return [round(rss_mb(p), 1) for p in kids] if kids else [round(rss_mb(pid), 1)]


def load_postgres(url: str, transactions: int) -> None:
    """The same synthetic deals in the PostgreSQL schema of ``url`` (once)."""
    import psycopg

    from svc_server.store import open_store

    options = dict(parse_qsl(urlsplit(url).query)).get("options", "")
    schema = options.partition("search_path=")[2].split()[0] if "search_path=" in options else ""
    if schema:  # a fresh database has no such schema yet
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    store = open_store(url)
    store.migrate()
    with store.data.transaction(write=False) as tx:
        row = tx.fetchone("SELECT COUNT(*) AS n FROM transactions")
    store.close()
    if row and int(row["n"]) >= transactions:
        return
    t = time.perf_counter()
    build_database(None, transactions, url=url)
    store = open_store(url)
    store.realestate.refresh_statistics(transactions)  # as svc ingest and sync do
    store.close()
    print(f"loaded PostgreSQL in {time.perf_counter() - t:.0f}s", file=sys.stderr)


def export_source(rev: str, work: Path) -> Path:
    """``src/`` of git revision ``rev``, exported under ``work``."""
    target = work / f"src-{rev}"
    if not target.exists():
        target.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / "src"


def consumer_key(env: dict[str, str]) -> str:
    created = subprocess.run(
        [sys.executable, "-m", "svc_server", "consumer", "create", "--plan", "enterprise",
         "--rate-limit", "100000000", "--monthly-quota", "1000000000", "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return str(json.loads(created.stdout)["api_key"])


def single_file(db: Path, data: Path) -> Path:
    """A copy of the store ``db`` (with its data file ``data``) as one SQLite file, as svc
    kept it before the data had a file of its own: what ``pulse_before``'s source reads.
    Built once beside ``db``; the accounts are not copied (the baseline makes its own)."""
    from svc_server.store import Store, migrate, open_database

    whole = db.with_name(f"{db.stem}-single{db.suffix}")
    if whole.exists():
        return whole
    store = Store(open_database(f"sqlite:///{whole}"))  # no data file: every table here
    store.migrate()
    store.close()
    conn = sqlite3.connect(whole, isolation_level=None)
    conn.execute("ATTACH DATABASE ? AS data", (str(data),))
    conn.execute("BEGIN")
    for table in sorted(migrate.DATA_TABLES):
        conn.execute(f"INSERT INTO {table} SELECT * FROM data.{table}")
    conn.execute("COMMIT")
    conn.close()
    return whole


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, help="the SQLite store (built when missing)")
    parser.add_argument("--transactions", type=int, default=2_000_000)
    parser.add_argument("--pg-url", help="also pulse on PostgreSQL (a schema in search_path)")
    parser.add_argument("--duration", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--ingest-items", type=int, default=60_000)
    parser.add_argument("--skip", nargs="*", default=[], help="servers to leave out")
    parser.add_argument("--baseline-rev", help="also pulse_before: svc at this git revision")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="svc-peers-"))
    db = args.db or work / "bench.db"
    if not db.exists():
        build_database(db, args.transactions)
    if args.pg_url:
        load_postgres(args.pg_url, args.transactions)
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": f"sqlite:///{db}",
            "SVC_SECRET_KEY": "bench-secret-key-0123456789",
            "SVC_LOG_LEVEL": "WARNING",
            "SVC_WORKERS": str(args.workers),
            "SVC_THREADS": str(args.threads),
            "SVC_INLINE_WORKER": "false",
        }
    )
    key = consumer_key(env)
    headers = {"X-API-Key": key}
    from svc_server.store import sqlite_data_url
    from svc_server.store.sqlite import sqlite_path

    # The peers read (and the FastAPI peers meter in) the file holding svc's public data.
    data = Path(sqlite_path(str(sqlite_data_url(f"sqlite:///{db}"))))
    with sqlite3.connect(data) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS peer_meter (key TEXT PRIMARY KEY, calls INTEGER NOT NULL)"
        )
        latest = conn.execute("SELECT MAX(month) FROM cohort_months").fetchone()[0]
    month_from, month_to = window(latest)
    svc = [sys.executable, "-m", "svc_server"]
    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    wanted = [
        name
        for name in ("pulse", "pulse_gunicorn", "pulse_before", "bare", "fastapi_query",
                     "fastapi_cached", "datasette", "pulse_pg")
        if name not in args.skip
        and (name != "pulse_pg" or args.pg_url)
        and (name != "pulse_before" or args.baseline_rev)
    ]  # fmt: skip
    result: dict[str, Any] = {"transactions": args.transactions, "latest_month": latest}
    keys: dict[str, str] = {}  # the servers that read a database of their own
    try:
        for name in wanted:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            if name in ("pulse", "pulse_gunicorn", "pulse_pg", "pulse_before"):
                server_env = dict(env, SVC_PORT=str(port))
                command = [*svc, "serve"]
                if name in ("pulse_gunicorn", "pulse_before"):
                    command += ["--server", "gunicorn"]
                if name == "pulse_before":
                    server_env["PYTHONPATH"] = str(export_source(args.baseline_rev, work))
                    server_env["SVC_DATABASE_URL"] = f"sqlite:///{single_file(db, data)}"
                    keys[name] = consumer_key(server_env)
                if name == "pulse_pg":
                    server_env["SVC_DATABASE_URL"] = args.pg_url
                    keys[name] = result["pg_key"] = consumer_key(server_env)
                proc = start(command, server_env, status_url(port))
                servers[name] = (proc, base + PULSE)
            elif name == "bare":
                body = work / "body.json"
                body.write_bytes(fetch(servers["pulse"][1], headers))
                command = granian_command(args, port, "bare_front:make", wsgi=False)
                proc = start(command, dict(env, SVC_BENCH_BODY=str(body)), status_url(port))
                servers[name] = (proc, base + "/")
            elif name.startswith("fastapi"):
                command = [sys.executable, "-m", "uvicorn", "--app-dir", str(ROOT / "bench"),
                           "--workers", str(args.workers), "--port", str(port),
                           "--log-level", "warning", "--no-access-log", "peer_apps:app"]  # fmt: skip
                peer_env = dict(env, SVC_BENCH_DB=str(data), SVC_BENCH_PEER=name)
                servers[name] = (start(command, peer_env, status_url(port)), base + PULSE)
            elif name == "datasette":
                meta = work / "metadata.json"
                meta.write_text(json.dumps(datasette_metadata(data.stem)))
                command = [sys.executable, "-m", "datasette", "serve", str(data), "--metadata",
                           str(meta), "--port", str(port), "--setting", "num_sql_threads",
                           str(args.threads), "--setting", "sql_time_limit_ms", "10000"]  # fmt: skip
                url = (
                    f"{base}/{data.stem}/pulse.json?{CANNED}"
                    f"&month_from={month_from}&month_to={month_to}"
                )
                servers[name] = (start(command, env, f"{base}/-/versions.json"), url)
        samples = {}
        for name, (_, url) in servers.items():
            call_headers = {"X-API-Key": keys[name]} if name in keys else headers
            samples[name] = fetch(url, call_headers)[:300].decode("utf-8", "replace")
        result["samples"] = samples
        seconds = max(1, args.duration // args.rounds)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, (_, url) in servers.items():
                call_headers = {"X-API-Key": keys[name]} if name in keys else headers
                runs[name].append(wrk(url, call_headers, seconds, args.connections))
        result["figures"] = {name: median_run(found) for name, found in runs.items()}
        result["all_rounds"] = runs
        result["rss_mb"] = {name: workers_rss(proc.pid) for name, (proc, _) in servers.items()}
        if "pulse" in servers:
            result["during_ingest"] = during_ingest(args, env, servers["pulse"][1], headers, work)
        if "pulse_pg" in servers:
            pg_env = dict(env, SVC_DATABASE_URL=args.pg_url)
            pg_headers = {"X-API-Key": result["pg_key"]}
            url = servers["pulse_pg"][1]
            result["during_ingest_pg"] = during_ingest(args, pg_env, url, pg_headers, work)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
    print(json.dumps(result, indent=2))
    return result


def during_ingest(
    args: argparse.Namespace, env: dict[str, str], url: str, headers: dict[str, str], work: Path
) -> dict[str, Any]:
    """pulse idle and while ``svc ingest`` loads ``--ingest-items`` deals (each round a
    new file, so every round writes), alternately. A first load, unmeasured, times the
    ingest; each loaded round then lasts 2 s longer than a load (and so takes in its
    write transaction and the first answers recomputed once it commits). Before each idle round every process has seen
    the last load and answered from it once: the first of those answers, recomputed from
    the new data, is reported apart (``first_after_load_ms``)."""

    def ingest(n: int) -> tuple[subprocess.Popen[bytes], float]:
        path = work / f"ingest-{n}.xml"
        seed = (int(time.time()) % 100_000) * 100 + n  # new deals on every run and round
        path.write_bytes(synthetic_xml(args.ingest_items, seed=seed))
        loader = subprocess.Popen(
            [sys.executable, "-m", "svc_server", "ingest", "rtms-commercial", str(path)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return loader, time.perf_counter()

    def after_load() -> float:
        """Wait until every process sees the load (the data version is re-read at most
        once a second), time the first answer (recomputed from the new data), then warm
        the other processes, so idle rounds measure idle, not the recomputation."""
        time.sleep(1.2)
        t = time.perf_counter()
        fetch(url, headers)
        first = (time.perf_counter() - t) * 1000
        for _ in range(40):
            fetch(url, headers)
        return round(first, 1)

    loader, started = ingest(0)
    loader.wait()
    # A loaded round outlasts the load by 2 s, so it always takes in the load's write
    # transaction (its last seconds) and the answers recomputed once it commits.
    seconds = max(2, round(time.perf_counter() - started + 2))
    idle: list[dict[str, float]] = []
    busy: list[dict[str, float]] = []
    ingest_seconds: list[float] = []
    first_after_load: list[float] = []
    for n in range(1, args.rounds + 1):
        first_after_load.append(after_load())
        idle.append(wrk(url, headers, seconds, args.connections))
        loader, started = ingest(n)
        busy.append(wrk(url, headers, seconds, args.connections))
        loader.wait()
        ingest_seconds.append(round(time.perf_counter() - started, 1))
    return {
        "idle": median_run(idle),
        "ingest": median_run(busy),
        "idle_rounds": idle,
        "ingest_rounds": busy,
        "ingest_seconds": ingest_seconds,
        "first_after_load_ms": first_after_load,
        "round_seconds": seconds,
        "items": args.ingest_items,
    }


if __name__ == "__main__":
    main()
