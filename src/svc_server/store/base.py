"""The persistence contract: a ``Database`` protocol with two backends.

Services never see a driver. They call ``Store`` methods (``svc_server.store.store``),
which are written once in portable SQL against ``Database``; SQLite (sqlite-utils) and
PostgreSQL (psycopg 3 with a pool) each implement ``Database``. SQL uses ``?``
placeholders; the PostgreSQL backend translates them.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import attrs
import cattrs

Row = dict[str, Any]
Params = Sequence[Any]
T = TypeVar("T", bound=attrs.AttrsInstance)


class Tx(Protocol):
    """One open transaction: every statement inside commits or rolls back together."""

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; return the affected row count."""
        ...

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """Run a statement once per parameter row."""
        ...

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a query; return every row as a dict."""
        ...

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Run a query; return its first row or None."""
        ...


class Database(Protocol):
    """A connection source for one database; safe to share across threads."""

    dialect: str  # "sqlite" or "postgresql"
    url: str

    def transaction(self, *, write: bool = True) -> AbstractContextManager[Tx]:
        """Open a transaction; ``write`` takes the write lock up front (SQLite)."""
        ...

    def lock(self, tx: Tx, key: str) -> None:
        """Serialize transactions that name the same ``key`` until ``tx`` ends."""
        ...

    def analyze(self, table: str, changed: int, tables: Sequence[str]) -> bool:
        """After a commit that changed ``changed`` rows of ``table``: refresh the
        planner's statistics of ``tables`` when the backend keeps them and they are
        stale by autovacuum's rule; True when it did."""
        ...

    def table_names(self) -> list[str]:
        """Tables that exist now (for ``svc init`` and health checks)."""
        ...

    def problem(self) -> str | None:
        """Why this database cannot serve what it holds (a SQLite file damaged, gone or
        replaced), one line; None when it can."""
        ...

    def close(self) -> None:
        """Release every connection."""
        ...


def row_as(cls: type[T], row: Mapping[str, Any]) -> T:
    """The typed value of one database row: the fields ``cls`` declares, by column name
    (other columns are left out; a field with a default may be missing from the row)."""
    return cls(**{f.name: row[f.name] for f in attrs.fields(cls) if f.name in row})


_TYPED = cattrs.Converter(detailed_validation=False)


def row_typed(cls: type[T], row: Mapping[str, Any]) -> T:
    """``row_as`` with each value made the type its field declares (``str``, ``int``,
    ``float``, ``bool``; None stays None in an optional field): the drivers give a date
    column as a ``date``, NUMERIC as ``Decimal`` and a boolean as 0 or 1 (SQLite)."""
    return _TYPED.structure(row, cls)


def rows_as(cls: type[T], rows: Iterable[Mapping[str, Any]]) -> list[T]:
    """The typed values of database rows holding every field of ``cls`` (positional, at
    least two; other columns are left out), one constructor call per row: for the reads
    on hot paths. Arguments by name cost a string compare per field and parameter name
    (the driver's column names are not the interned parameter names): 7 µs a row for
    ``ListingRow``'s 37 fields, 2 µs by position."""
    values = operator.itemgetter(*(f.name for f in attrs.fields(cls)))
    return [cls(*values(r)) for r in rows]


def row_or_none(cls: type[T], row: Mapping[str, Any] | None) -> T | None:
    """``row_as`` for a lookup that may find nothing."""
    return None if row is None else row_as(cls, row)


def fetchall(db: Database, sql: str, params: Params = ()) -> list[Row]:
    """Read in a short read-only transaction."""
    with db.transaction(write=False) as tx:
        return tx.fetchall(sql, params)


def fetchone(db: Database, sql: str, params: Params = ()) -> Row | None:
    """Read one row in a short read-only transaction."""
    with db.transaction(write=False) as tx:
        return tx.fetchone(sql, params)


IN_CHUNK = 500
"""Values per ``IN (...)`` list: well under every backend's parameter limit."""


def marks(n: int) -> str:
    """``?, ?, ...``: ``n`` placeholders."""
    return ", ".join("?" * n)


def insert_row(tx: Tx, table: str, row: Mapping[str, Any], *, conflict: str = "") -> int:
    """``INSERT INTO table (columns) VALUES (...)`` for one row (plus ``conflict``, e.g.
    ``ON CONFLICT DO NOTHING``); the number of rows inserted. Names come from code."""
    return tx.execute(
        f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks(len(row))}) {conflict}".rstrip(),
        tuple(row.values()),
    )


def select_in(tx: Tx, sql: str, values: Sequence[Any]) -> list[Row]:
    """``sql`` (ending in ``... IN``) for every value, ``IN_CHUNK`` values a statement,
    so no statement carries an unbounded parameter list."""
    rows: list[Row] = []
    for part in chunks(values, IN_CHUNK):
        rows.extend(tx.fetchall(f"{sql} ({marks(len(part))})", tuple(part)))
    return rows


def update_by_id(tx: Tx, table: str, row_id: str, fields: Mapping[str, Any], **where: Any) -> int:
    """``UPDATE table SET fields WHERE id = row_id`` and each ``where`` column equals its
    value (a compare-and-set when one is given); the number of rows changed. Table and
    column names come from code, never from input."""
    sets = ", ".join(f"{name} = ?" for name in fields)
    also = "".join(f" AND {column} = ?" for column in where)
    return tx.execute(
        f"UPDATE {table} SET {sets} WHERE id = ?{also}",
        (*fields.values(), row_id, *where.values()),
    )


def chunks(rows: Sequence[Params], size: int = 5000) -> Iterator[Sequence[Params]]:
    """Split a large batch so one statement never carries unbounded parameters."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


WRITE_CHUNK = 5000
"""Rows per executemany batch of a bulk write."""


def equal_filters(**filters: Any) -> tuple[str, list[Any]]:
    """``AND column = ?`` for each filter that is not None, and the parameters."""
    used = [(column, value) for column, value in filters.items() if value is not None]
    return "".join(f" AND {column} = ?" for column, _ in used), [value for _, value in used]


def existing_keys(tx: Tx, table: str, keys: Sequence[str]) -> set[str]:
    """Which of ``keys`` ``table`` already holds (by ``natural_key``); an empty table
    answers without a lookup, so a first bulk load skips them."""
    found: set[str] = set()
    if tx.fetchone(f"SELECT natural_key FROM {table} LIMIT 1") is None:
        return found
    rows = select_in(tx, f"SELECT natural_key FROM {table} WHERE natural_key IN", keys)
    found.update(r["natural_key"] for r in rows)
    return found
