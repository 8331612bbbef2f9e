"""Persistence: open a database by URL and wrap it in the ``Store`` the services use."""

from __future__ import annotations

from svc_core.errors import ConfigError
from svc_server.store.base import Database
from svc_server.store.sqlite import sqlite_data_url
from svc_server.store.store import Store


def open_database(url: str, *, pool_size: int = 10, busy_timeout_ms: int = 5_000) -> Database:
    """Connect to ``sqlite:///...`` or ``postgresql://...``; no wait for the database
    lasts longer than about ``busy_timeout_ms`` (``StoreBusy`` then)."""
    if url.startswith("sqlite:///"):
        from svc_server.store.sqlite import SqliteDatabase

        return SqliteDatabase(url, busy_timeout_ms=busy_timeout_ms)
    if url.startswith(("postgresql://", "postgres://")):
        from svc_server.store.postgres import PostgresDatabase

        return PostgresDatabase(url, max_size=pool_size, busy_timeout_ms=busy_timeout_ms)
    raise ConfigError(f"unsupported database URL {url!r}: use sqlite:///... or postgresql://...")


def open_store(url: str, *, pool_size: int = 10, busy_timeout_ms: int = 5_000) -> Store:
    """Open the database behind ``url`` as a ``Store``; a SQLite file's public data in
    the file beside it that ``sqlite_data_url`` names (see ``Store``)."""
    db = open_database(url, pool_size=pool_size, busy_timeout_ms=busy_timeout_ms)
    data_url = sqlite_data_url(url) if url.startswith("sqlite:///") else None
    data = open_database(data_url, busy_timeout_ms=busy_timeout_ms) if data_url else None
    return Store(db, data)


__all__ = ["Database", "Store", "open_database", "open_store", "sqlite_data_url"]
