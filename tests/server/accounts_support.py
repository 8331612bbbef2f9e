"""Helpers shared by the account tests: row counts, events, and a multi-process load driver.

The driver (``hammer``) runs in child processes started with ``spawn``, so this module
imports little at the top: each child builds its own app over the shared database, the
way separate server processes do.
"""

from __future__ import annotations

import json
from typing import Any

from svc_server.store import Store

DATA_PATH = "/api/v1/real-estate/dimensions"
ACCOUNT_TABLES = (
    "users",
    "consumers",
    "memberships",
    "api_keys",
    "sessions",
    "events",
    "usage_counters",
    "usage_days",
    "usage_holds",
)


def counts(store: Store) -> dict[str, int]:
    """Row counts of every account table: a rejected request must leave them unchanged."""
    out = {}
    with store.db.transaction(write=False) as tx:
        for table in ACCOUNT_TABLES:
            row = tx.fetchone(f"SELECT COUNT(*) AS n FROM {table}")
            out[table] = int(row["n"]) if row else 0
    return out


def snapshot(store: Store) -> dict[str, list[str]]:
    """Every row of the account tables (sessions' expiry aside), to prove nothing changed."""
    out = {}
    with store.db.transaction(write=False) as tx:
        for table in ACCOUNT_TABLES:
            rows = tx.fetchall(f"SELECT * FROM {table}")
            out[table] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    return out


def events_of(store: Store, consumer_id: str) -> list[dict[str, Any]]:
    """The consumer's recorded events, payloads decoded, oldest first."""
    with store.db.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT id, type, payload FROM events WHERE consumer_id = ? ORDER BY created_at, id",
            (consumer_id,),
        )
    return [{"id": r["id"], "type": r["type"], "payload": json.loads(r["payload"])} for r in rows]


def execute(store: Store, sql: str, params: tuple[Any, ...] = ()) -> int:
    """Run one write statement (tests set up states the API cannot reach directly)."""
    with store.db.transaction() as tx:
        return tx.execute(sql, params)


def hammer(
    db_url: str, api_key: str, requests: int, now: float, barrier: Any, results: Any
) -> None:
    """Child process: build an app on ``db_url``, wait for the others, fire ``requests``
    keyed GETs at the data endpoint, and report the status codes."""
    from werkzeug.test import Client

    from svc_server.app import create_app
    from svc_server.config import Config

    app = create_app(
        Config(database_url=db_url, secret_key="x" * 32, db_pool_size=2),
        clock=lambda: now,
        migrate=False,
    )
    client = Client(app)
    barrier.wait(timeout=60)
    statuses = []
    for _ in range(requests):
        response = client.get(DATA_PATH, headers={"X-API-Key": api_key})
        statuses.append(response.status_code)
        response.close()
    app.store.close()
    results.put(statuses)


def run_processes(
    db_url: str, api_key: str, processes: int, per_process: int, now: float
) -> list[int]:
    """Start ``processes`` children against one database; all their statuses. They are
    forked from a forkserver that imported the app once, not spawned: a spawned child
    imports svc again (1 to 2 s of CPU each, four at a time on two cores). Each child is
    still a process of its own that builds its own app and pool (``hammer``)."""
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    # only read when the forkserver starts (the first use in this pytest process)
    ctx.set_forkserver_preload(["tests.server.accounts_support", "svc_server.app"])
    barrier = ctx.Barrier(processes)
    results = ctx.Queue()
    children = [
        ctx.Process(target=hammer, args=(db_url, api_key, per_process, now, barrier, results))
        for _ in range(processes)
    ]
    for child in children:
        child.start()
    statuses: list[int] = []
    for _ in children:
        statuses.extend(results.get(timeout=120))
    for child in children:
        child.join(timeout=30)
        assert child.exitcode == 0, f"a load process failed with exit code {child.exitcode}"
    return statuses
