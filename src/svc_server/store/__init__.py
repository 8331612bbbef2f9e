"""Persistence: open a database by URL and wrap it in the ``Store`` the services use."""

from __future__ import annotations

from svc_core.errors import ConfigError
from svc_server.store.base import Database
from svc_server.store.store import Store


def open_database(url: str, *, pool_size: int = 10) -> Database:
    """Connect to ``sqlite:///...`` or ``postgresql://...``."""
    if url.startswith("sqlite:///"):
        from svc_server.store.sqlite import SqliteDatabase

        return SqliteDatabase(url)
    if url.startswith(("postgresql://", "postgres://")):
        from svc_server.store.postgres import PostgresDatabase

        return PostgresDatabase(url, max_size=pool_size)
    raise ConfigError(f"unsupported database URL {url!r}: use sqlite:///... or postgresql://...")


def open_store(url: str, *, pool_size: int = 10) -> Store:
    """Open the database behind ``url`` as a ``Store``."""
    return Store(open_database(url, pool_size=pool_size))


__all__ = ["Database", "Store", "open_database", "open_store"]
