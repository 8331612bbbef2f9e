"""PostgreSQL backend: psycopg 3 with a connection pool.

Statements are written with ``?`` placeholders (portable with SQLite) and translated
once per distinct string. ``lock()`` takes a transaction-scoped advisory lock so that
read-modify-write sequences (rate-limit logs) serialize per key across hosts.

Every wait is bounded by ``busy_timeout_ms`` (``SVC_DB_BUSY_TIMEOUT_MS``): a connection
from the pool and, through the session's ``lock_timeout``, every row, table or advisory
lock. A wait that reaches the bound raises ``StoreBusy`` (503 with Retry-After). Readers
never wait on writers (MVCC).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from svc_core.errors import ConfigError, StoreBusy
from svc_core.redact import redact_url
from svc_server.store.base import Params, Row


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``?`` placeholders to psycopg's ``%s`` (literal ``%`` doubled first)."""
    return sql.replace("%", "%%").replace("?", "%s")


ANALYZE_BASE = 50
ANALYZE_SHARE = 0.1
"""``analyze``: PostgreSQL's defaults for autovacuum's analyze threshold."""


class _PgTx:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> int:
        cur = self._conn.execute(translate(sql), tuple(params))
        return int(cur.rowcount)

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(translate(sql), [tuple(r) for r in rows])

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return list(self._conn.execute(translate(sql), tuple(params)).fetchall())

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        row = self._conn.execute(translate(sql), tuple(params)).fetchone()
        return dict(row) if row is not None else None


class PostgresDatabase:
    """A PostgreSQL database reached through a pool shared by the process's threads."""

    dialect = "postgresql"

    def __init__(
        self, url: str, *, min_size: int = 1, max_size: int = 10, busy_timeout_ms: int = 5_000
    ) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError(
                "PostgreSQL support is not installed: pip install 'svc[postgres]'"
            ) from exc
        self.url = url
        self._psycopg = psycopg
        # One plain connection first: a bad URL or a server that is down fails here at
        # once, in one line, rather than after the pool's 10 s of logged retries.
        try:
            psycopg.connect(url, connect_timeout=5).close()
        except psycopg.Error as exc:
            reason = " ".join(part.strip() for part in str(exc).splitlines()) or type(exc).__name__
            raise ConfigError(
                f"cannot connect to PostgreSQL at {redact_url(url)}: {reason}"
            ) from None
        self._busy = (psycopg.errors.LockNotAvailable, PoolTimeout)
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"row_factory": dict_row, "autocommit": True},
            configure=functools.partial(_session_settings, ms=int(busy_timeout_ms)),
            timeout=busy_timeout_ms / 1000,
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=10)
        except Exception as exc:
            self._pool.close()
            raise ConfigError(f"cannot connect to PostgreSQL at {redact_url(url)}: {exc}") from exc

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_PgTx]:
        try:
            with self._pool.connection() as conn, conn.transaction():
                yield _PgTx(conn)
        except self._busy as exc:
            raise StoreBusy("The database is busy; try again shortly.") from exc

    def lock(self, tx: Any, key: str) -> None:
        tx.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (key,))

    def analyze(self, table: str, changed: int, tables: Sequence[str]) -> bool:
        """``ANALYZE`` ``tables`` once ``ANALYZE_BASE`` rows plus ``ANALYZE_SHARE`` of
        ``table`` changed since its last one: autovacuum's own rule, applied at once
        rather than at its next round (a minute later by default, never when it is
        off). ``changed`` is added to what the server counted, which may not include
        the commit just made yet."""
        with self.transaction(write=False) as tx:
            row = tx.fetchone(
                "SELECT GREATEST(c.reltuples, 0) AS rows, "
                "COALESCE(s.n_mod_since_analyze, 0) AS changed FROM pg_class c "
                "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid "
                "WHERE c.oid = ?::regclass",
                (table,),
            )
        if row is None:
            return False
        if int(row["changed"]) + changed < ANALYZE_BASE + ANALYZE_SHARE * float(row["rows"]):
            return False
        with self.transaction() as tx:
            for name in tables:
                tx.execute(f"ANALYZE {name}")
        return True

    def problem(self) -> str | None:
        """None: a server's database does not vanish or rot under svc like a file (its
        failures are errors of the statements)."""
        return None

    def table_names(self) -> list[str]:
        with self.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        return [r["table_name"] for r in rows]

    def close(self) -> None:
        self._pool.close()


def _session_settings(conn: Any, *, ms: int) -> None:
    """Set a new pooled connection's ``lock_timeout`` (the URL's own options stay), and
    turn just-in-time compilation off: svc's reads are index walks of a few thousand rows
    at most, but where the planner over-estimates one (a long CSV listing's pages, each a
    sort of the rest of the selection) it compiled for 25 ms a page (``EXPLAIN
    ANALYZE``) to run a sort it does in as long without. Servers older than PostgreSQL 11
    have no ``jit`` to set."""
    conn.execute(f"SET lock_timeout = {ms}")
    conn.execute("SELECT set_config(name, 'off', false) FROM pg_settings WHERE name = 'jit'")
