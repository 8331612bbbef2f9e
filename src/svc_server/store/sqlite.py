"""SQLite backend: one connection per thread, WAL, foreign keys, busy timeout.

sqlite-utils opens and tunes the database; statements go through the plain DB-API
connection so transactions are explicit (``BEGIN IMMEDIATE`` for writes, which takes
the write lock up front and makes read-modify-write sequences atomic across processes).

Writers queue before ``BEGIN IMMEDIATE``: threads on a lock of the process, processes
on an ``flock`` of ``<database>-writer`` (POSIX only). SQLite's own busy handler
polls with sleeps of up to 100 ms, so under load from several server processes most of
a request's time went to sleeping on a lock that had long been free; a queued writer
is woken the moment the previous one commits.

Every wait is bounded by ``busy_timeout_ms`` (``SVC_DB_BUSY_TIMEOUT_MS``): the queue of
the process, the ``flock`` (polled, so a writer stopped while holding it, e.g. an ingest
under SIGSTOP, cannot hang the others) and SQLite's busy handler for writers outside
svc. A wait that reaches the bound, or a database locked from outside, raises
``StoreBusy`` (503 with Retry-After). Readers never queue: in WAL mode a read sees the
last commit while a writer works.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlite_utils

from svc_core.errors import ConfigError, StoreBusy
from svc_core.redact import redact_url
from svc_server.store.base import Params, Row

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's busy handler alone
    fcntl = None  # type: ignore[assignment]

MIN_SQLITE = (3, 35, 0)  # RETURNING and ON CONFLICT DO UPDATE ... RETURNING
FLOCK_POLL_SECONDS = 0.005
"""The first pause between tries of a held ``flock``; it doubles up to 50 ms."""
DAMAGED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
"""SQLite's codes for a file that is not (or no longer) a sound database."""


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds a lock."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _flock_until(fd: int, deadline: float) -> bool:
    """Take the exclusive ``flock`` on ``fd`` before ``deadline``; False when it stays held."""
    pause = FLOCK_POLL_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)


class _SqliteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> int:
        return self._conn.execute(sql, tuple(params)).rowcount

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        self._conn.executemany(sql, rows)

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        cur = self._conn.execute(sql, tuple(params))
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        cur = self._conn.execute(sql, tuple(params))
        row = cur.fetchone()
        if row is None:
            return None
        names = [d[0] for d in cur.description or ()]
        return dict(zip(names, row, strict=True))


class SqliteDatabase:
    """A SQLite file shared by threads and processes."""

    dialect = "sqlite"

    def __init__(self, url: str, *, busy_timeout_ms: int = 5_000, create: bool = True) -> None:
        """``create`` false: a missing file is an error, never a new empty database (a
        served process opens files ``svc serve`` checked; one deleted since must fail)."""
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise ConfigError(
                f"SQLite {sqlite3.sqlite_version} is too old: svc needs 3.35 or newer"
            )
        self.url = url
        self.path = sqlite_path(url)
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._writer = threading.Lock()
        self._writer_fd: int | None = None
        self._create = create
        self._identity: tuple[int, int] | None = None  # (device, inode) first opened
        self.damage: str | None = None
        """SQLite's word that the file is damaged, once a statement met it."""

    def _queue_fd(self) -> int | None:
        """The per-process descriptor of the writers' ``flock`` file (None: no flock, as
        where the file cannot be created; SQLite's busy handler then does the waiting)."""
        if fcntl is None or self.path == ":memory:" or self._writer_fd == -1:
            return None
        if self._writer_fd is None:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self._writer_fd = os.open(f"{self.path}-writer", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                self._writer_fd = -1
                return None
        return self._writer_fd

    @contextmanager
    def _write_turn(self) -> Iterator[None]:
        """Wait for this process's and then this machine's turn to write (see above),
        ``busy_timeout_ms`` at most in all; ``StoreBusy`` when the turn does not come."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        if not self._writer.acquire(timeout=self._busy_timeout_ms / 1000):
            raise StoreBusy("The database is busy with another write; try again shortly.")
        try:
            fd = self._queue_fd()
            if fd is not None and not _flock_until(fd, deadline):
                raise StoreBusy("The database is busy with another write; try again shortly.")
            try:
                yield
            finally:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            self._writer.release()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._connect()
            except sqlite3.DatabaseError as exc:
                self._note(exc)
                raise
        return conn

    def _connect(self) -> sqlite3.Connection:
        """A new connection of this thread, tuned and remembered."""
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        target, uri = self.path, False
        if not self._create and self.path != ":memory:":
            target, uri = f"file:{quote(os.path.abspath(self.path))}?mode=rw", True
        conn = sqlite3.connect(
            target,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            check_same_thread=False,
            timeout=self._busy_timeout_ms / 1000,
            uri=uri,
        )
        if self._identity is None and os.path.exists(self.path):
            found = os.stat(self.path)
            self._identity = (found.st_dev, found.st_ino)
        db = sqlite_utils.Database(conn)
        if self.path != ":memory:":
            db.enable_wal()
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        self._local.conn = conn
        with self._all_lock:
            self._all.append(conn)
        return conn

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_SqliteTx]:
        conn = self._connection()
        if conn.in_transaction:  # nested use on one thread joins the open transaction
            yield _SqliteTx(conn)
            return
        try:
            with self._write_turn() if write else nullcontext():
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield _SqliteTx(conn)
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            if conn.in_transaction:  # COMMIT itself was refused
                conn.execute("ROLLBACK")
            raise StoreBusy("The database is locked; try again shortly.") from exc
        except sqlite3.DatabaseError as exc:
            self._note(exc)
            raise

    def _note(self, exc: sqlite3.DatabaseError) -> None:
        if exc.sqlite_errorcode & 0xFF in DAMAGED:
            self.damage = str(exc)

    def problem(self) -> str | None:
        """Why this file cannot serve what it holds, if it cannot: damaged (a statement
        met SQLite's "malformed" or "not a database"), gone from its path, or another
        file there now than the one opened. None when it is the file it was."""
        name = os.path.basename(self.path)
        if self.damage is not None:
            return f"{name} is damaged ({self.damage}); restore it from a backup"
        if self.path == ":memory:" or self._identity is None:
            return None
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return f"{name} is missing; restore it from a backup and restart svc serve"
        if (found.st_dev, found.st_ino) != self._identity:
            return f"{name} was replaced while svc ran; restart svc serve"
        return None

    def lock(self, tx: Any, key: str) -> None:
        """BEGIN IMMEDIATE already serializes every writer; nothing more to take."""

    def analyze(self, table: str, changed: int, tables: Sequence[str]) -> bool:
        """Nothing to refresh: SQLite's planner goes by the indexes' shape."""
        return False

    def table_names(self) -> list[str]:
        return list(sqlite_utils.Database(self._connection()).table_names())

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
        if self._writer_fd is not None and self._writer_fd >= 0:
            os.close(self._writer_fd)
        self._writer_fd = None


def sqlite_path(url: str) -> str:
    """``sqlite:///relative.db``, ``sqlite:////abs/path.db`` or ``sqlite:///:memory:``."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        raise ConfigError(f"not a SQLite URL: {redact_url(url)!r} (use sqlite:///path.db)")
    path = url[len(prefix) :]
    if not path:
        raise ConfigError("the SQLite URL names no file (use sqlite:///path.db)")
    return path


def sqlite_data_url(url: str) -> str | None:
    """The file beside a SQLite database that holds its public data: ``svc.db``'s is
    ``svc-data.db`` (None for ``:memory:``, where each connection is a database)."""
    path = sqlite_path(url)
    if path == ":memory:":
        return None
    head, slash, name = path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    name = f"{stem}-data.{suffix}" if dot and stem else f"{name}-data"
    return f"sqlite:///{head}{slash}{name}"


def missing_data_file(url: str, data_tables: Iterable[str]) -> str | None:
    """The data file of the SQLite store ``url`` when it should be there and is not:
    the accounts file exists, has a schema and none of ``data_tables``, so a data file
    was made beside it (a file from before the split still holds its data). None when
    nothing is missing, the URL is not a SQLite file, or the accounts file cannot tell."""
    if not url.startswith("sqlite:///"):
        return None
    path, data_url = sqlite_path(url), sqlite_data_url(url)
    if data_url is None or not os.path.exists(path) or os.path.exists(sqlite_path(data_url)):
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            tables = {str(row[0]) for row in rows}
        finally:
            conn.close()
    except sqlite3.DatabaseError:  # damaged, or locked: opening it says so
        return None
    if "schema_version" in tables and tables.isdisjoint(data_tables):
        return sqlite_path(data_url)
    return None


def move_tables(source: Any, target: Any, tables: Sequence[str]) -> None:
    """Move ``tables`` from the SQLite file ``source`` to the same tables of ``target``
    (created already, at the same schema version): the rows are copied in one
    transaction of ``target``, the tables dropped from ``source`` in one of its own, and
    ``source`` vacuumed to give the space back. Safe to run again, or in two processes
    at once (the workers of ``svc serve`` each migrate): a table ``target`` already has
    rows in, or ``source`` no longer has, is not copied (a move cut short between the
    two transactions resumes with the drop)."""
    assert isinstance(source, SqliteDatabase) and isinstance(target, SqliteDatabase)
    present = [t for t in tables if t in source.table_names()]
    if not present:
        return
    conn = target._connection()
    conn.execute("ATTACH DATABASE ? AS moving", (source.path,))
    try:
        with target.transaction() as tx:
            tx.execute("PRAGMA defer_foreign_keys = ON")  # rows come in table order
            for table in present:
                there = tx.fetchone(
                    "SELECT 1 AS found FROM moving.sqlite_master WHERE type = 'table' AND name = ?",
                    (table,),
                )
                if not there or tx.fetchone(f"SELECT 1 AS found FROM {table} LIMIT 1"):
                    continue
                columns = ", ".join(
                    row["name"]
                    for row in tx.fetchall(f"SELECT name FROM pragma_table_info('{table}')")
                )
                tx.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM moving.{table}")
    finally:
        conn.execute("DETACH DATABASE moving")
    with source.transaction() as tx:
        tx.execute("PRAGMA defer_foreign_keys = ON")
        for table in present:
            tx.execute(f"DROP TABLE IF EXISTS {table}")
    try:
        source._connection().execute("VACUUM")
    except sqlite3.OperationalError as exc:  # another process reads it: space comes back later
        if not _busy(exc):
            raise
