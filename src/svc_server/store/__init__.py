"""Persistence: open a database by URL and wrap it in the ``Store`` the services use."""

from __future__ import annotations

import os

from svc_core.errors import ConfigError
from svc_core.redact import redact_url
from svc_server.store import sqlite
from svc_server.store.base import Database
from svc_server.store.migrate import DATA_TABLES
from svc_server.store.sqlite import sqlite_data_url
from svc_server.store.store import Store


def open_database(
    url: str, *, pool_size: int = 10, busy_timeout_ms: int = 5_000, create: bool = True
) -> Database:
    """Connect to ``sqlite:///...`` or ``postgresql://...``; no wait for the database
    lasts longer than about ``busy_timeout_ms`` (``StoreBusy`` then). ``create`` false:
    a SQLite file that is not there is an error, not a new empty database."""
    if url.startswith("sqlite:///"):
        from svc_server.store.sqlite import SqliteDatabase

        return SqliteDatabase(url, busy_timeout_ms=busy_timeout_ms, create=create)
    if url.startswith(("postgresql://", "postgres://")):
        from svc_server.store.postgres import PostgresDatabase

        return PostgresDatabase(url, max_size=pool_size, busy_timeout_ms=busy_timeout_ms)
    raise ConfigError(
        f"unsupported database URL {redact_url(url)!r}: use sqlite:///... or postgresql://..."
    )


def open_store(
    url: str, *, pool_size: int = 10, busy_timeout_ms: int = 5_000, create: bool = True
) -> Store:
    """Open the database behind ``url`` as a ``Store``; a SQLite file's public data in
    the file beside it that ``sqlite_data_url`` names (see ``Store``). ``create`` false
    (a served process): SQLite files must exist, as ``svc serve`` found them."""
    db = open_database(url, pool_size=pool_size, busy_timeout_ms=busy_timeout_ms, create=create)
    data_url = sqlite_data_url(url) if url.startswith("sqlite:///") else None
    data = (
        open_database(data_url, busy_timeout_ms=busy_timeout_ms, create=create)
        if data_url
        else None
    )
    return Store(db, data)


def missing_data_file(url: str) -> str | None:
    """The path of the SQLite data file ``url``'s accounts file was made with, when it
    is gone (``sqlite.missing_data_file``); None otherwise."""
    return sqlite.missing_data_file(url, DATA_TABLES)


def missing_database(url: str) -> str | None:
    """The path of a SQLite database ``url`` names that does not exist (opening it
    would create it); None for one that exists, ``:memory:`` and PostgreSQL (whose
    server says itself that a database is missing)."""
    if not url.startswith("sqlite:"):
        return None
    path = sqlite.sqlite_path(url)
    return None if path == ":memory:" or os.path.exists(path) else path


__all__ = [
    "Database",
    "Store",
    "missing_data_file",
    "missing_database",
    "open_database",
    "open_store",
    "sqlite_data_url",
]
