"""The store contract, run unchanged on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from svc_server.store import Store, migrate, open_store


def test_migrate_creates_every_table_and_records_the_version(store: Store) -> None:
    tables = set(store.db.table_names()) | set(store.data.table_names())
    assert {"consumers", "api_keys", "transactions", "deliveries", "schema_version"} <= tables
    assert store.schema_version() == max(m.version for m in migrate.available())


def test_migrate_twice_is_a_no_op(store: Store) -> None:
    before = (set(store.db.table_names()), set(store.data.table_names()))
    assert store.migrate() == []
    assert (set(store.db.table_names()), set(store.data.table_names())) == before


def test_a_failed_transaction_changes_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.db.transaction() as tx:
        tx.execute(
            "INSERT INTO consumers (id, plan, created_at) VALUES (?, ?, ?)", ("c1", "pro", 1)
        )
        raise RuntimeError("boom")
    with store.db.transaction(write=False) as tx:
        assert tx.fetchall("SELECT id FROM consumers") == []


def test_returning_gives_the_atomic_new_value(store: Store) -> None:
    sql = (
        "INSERT INTO usage_counters (consumer_id, month, mode, count) VALUES (?, ?, ?, 1) "
        "ON CONFLICT (consumer_id, month, mode) DO UPDATE SET count = usage_counters.count + 1 "
        "RETURNING count"
    )
    seen = []
    for _ in range(3):
        with store.db.transaction() as tx:
            row = tx.fetchone(sql, ("c", "2026-11", "live"))
            assert row is not None
            seen.append(row["count"])
    assert seen == [1, 2, 3]


def test_concurrent_increments_from_threads_lose_nothing(store: Store) -> None:
    sql = (
        "INSERT INTO usage_counters (consumer_id, month, mode, count) VALUES (?, ?, ?, 1) "
        "ON CONFLICT (consumer_id, month, mode) DO UPDATE SET count = usage_counters.count + 1 "
        "RETURNING count"
    )
    results: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(25):
            with store.db.transaction() as tx:
                row = tx.fetchone(sql, ("c", "2026-11", "live"))
            assert row is not None
            with lock:
                results.append(int(row["count"]))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(1, 101))


def test_placeholders_and_percent_literals_are_portable(store: Store) -> None:
    with store.db.transaction() as tx:
        tx.execute(
            "INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)", ("u1", "a%b@x.kr", 1)
        )
        row = tx.fetchone("SELECT email FROM users WHERE email LIKE '%\\%%' ESCAPE '\\'")
    assert row == {"email": "a%b@x.kr"}


def test_executemany_inserts_every_row(store: Store) -> None:
    rows = [(f"u{i}", f"u{i}@x.kr", i) for i in range(50)]
    with store.db.transaction() as tx:
        tx.executemany("INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)", rows)
        count = tx.fetchone("SELECT COUNT(*) AS n FROM users")
    assert count == {"n": 50}


def test_two_stores_on_one_database_see_each_other(db_url: str) -> None:
    a = open_store(db_url)
    b = open_store(db_url)
    try:
        a.migrate()
        assert b.migrate() == []
        with a.db.transaction() as tx:
            tx.execute(
                "INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)", ("u", "u@x", 1)
            )
        with b.db.transaction(write=False) as tx:
            assert tx.fetchone("SELECT id FROM users") == {"id": "u"}
    finally:
        a.close()
        b.close()


def _read_modify_write(url: str, rounds: int) -> None:
    """In another process: ``rounds`` transactions that read a counter, then write it + 1
    (a lost update would show if two writers ever overlapped)."""
    other = open_store(url)
    try:
        for _ in range(rounds):
            with other.db.transaction() as tx:
                row = tx.fetchone("SELECT created_at FROM consumers WHERE id = 'n'")
                assert row is not None
                tx.execute(
                    "UPDATE consumers SET created_at = ? WHERE id = 'n'", (row["created_at"] + 1,)
                )
    finally:
        other.close()


def _counter(store: Store) -> int:
    with store.db.transaction(write=False) as tx:
        row = tx.fetchone("SELECT created_at FROM consumers WHERE id = 'n'")
    assert row is not None
    return int(row["created_at"])


@pytest.mark.parametrize("queue_file", ["usable", "unusable"])
def test_sqlite_writers_of_several_processes_and_threads_never_overlap(
    sqlite_url: str, queue_file: str
) -> None:
    """Writers queue (a lock per process, an flock across processes) and each sees the
    last one's write; where the queue file cannot be made (here: a directory holds its
    name), SQLite's own busy handler still keeps them apart."""
    import multiprocessing

    from svc_server.store.sqlite import sqlite_path

    if queue_file == "unusable":
        Path(sqlite_path(sqlite_url) + "-writer").mkdir(parents=True)
    store = open_store(sqlite_url)
    store.migrate()
    with store.db.transaction() as tx:
        tx.execute("INSERT INTO consumers (id, plan, created_at) VALUES ('n', 'pro', 0)")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_read_modify_write, args=(sqlite_url, 150)) for _ in range(2)]
    threads = [
        threading.Thread(target=_read_modify_write, args=(sqlite_url, 150)) for _ in range(3)
    ]
    for worker in (*procs, *threads):
        worker.start()
    for worker in (*procs, *threads):
        worker.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert _counter(store) == 5 * 150
    store.close()


def test_postgres_sessions_bound_lock_waits_and_never_compile_queries(pg_url: str) -> None:
    """Every pooled connection waits at most the busy timeout for a lock, and has JIT off
    (it compiled each page of a long CSV listing for 25 ms)."""
    store = open_store(pg_url, pool_size=2)
    try:
        for _ in range(3):
            with store.data.transaction(write=False) as tx:
                assert (tx.fetchone("SHOW jit") or {}).get("jit") == "off"
                assert (tx.fetchone("SHOW lock_timeout") or {}).get("lock_timeout") == "5s"
    finally:
        store.close()
