"""Answers cached per *data version*: every load writes one ``ingest_log`` row, so the
log's row count and latest load time identify the data, with the number of district-months
known to be incomplete (a partial sync changes it and writes no log row). Each process
keeps its own small
LRU and reads the version from the database at most once per ``VERSION_TTL``, so several
server processes stay consistent within that bound."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from svc_server.store.base import Database

T = TypeVar("T")
CACHE_ENTRIES = 1024
VERSION_TTL = 1.0
"""Seconds a process trusts the data version it last read (see ``data_version``)."""
Version = tuple[int, int, int, int]
"""(ingest-log rows, latest load time, incomplete district-months)."""
_VERSION_SQL = (
    "SELECT (SELECT COUNT(*) FROM ingest_log) AS n, "
    "(SELECT MAX(loaded_at) FROM ingest_log) AS at, "
    "(SELECT COUNT(*) FROM source_months WHERE complete = 0) AS gaps, "
    "(SELECT COUNT(*) FROM coverage_districts) AS covered"
)


class VersionedCache:
    """A per-process LRU of answers keyed by data version."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._version: tuple[float, Version] | None = None

    def data_version(self) -> Version:
        """Changes whenever a load commits (every load writes one ``ingest_log`` row),
        and when the coverage of districts a deferred load left stale is rebuilt.

        Read from the database at most once per ``VERSION_TTL`` seconds per process: a
        load committed by another process is seen within that bound, one committed by
        this process at once (``RealEstateRepo.log_ingest`` calls ``forget_version``).
        """
        now = time.monotonic()
        known = self._version
        if known is not None and now - known[0] < VERSION_TTL:
            return known[1]
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone(_VERSION_SQL)
        version = (
            (
                int(row["n"] or 0),
                int(row["at"] or 0),
                int(row["gaps"] or 0),
                int(row["covered"] or 0),
            )
            if row
            else (0, 0, 0, 0)
        )
        self._version = (now, version)
        return version

    def known_version(self) -> Version | None:
        """``data_version`` when it needs no read (read within ``VERSION_TTL``), else
        None: for a caller that must not wait on I/O (``http.warm``)."""
        known = self._version
        if known is None or time.monotonic() - known[0] >= VERSION_TTL:
            return None
        return known[1]

    def forget_version(self) -> None:
        """Make the next ``data_version`` read the database (called when a load writes)."""
        self._version = None

    def cached(
        self,
        key: tuple[Any, ...],
        compute: Callable[[], T],
        *,
        version: Version | None = None,
    ) -> T:
        """``compute()`` once per data version and ``key`` (a small LRU per process).

        The version is read before computing, so an entry can only hold data at least as
        new as its version: a load committing meanwhile changes the version and the
        next call recomputes.
        """
        full = (version if version is not None else self.data_version(), *key)
        with self._cache_lock:
            if full in self._cache:
                self._cache.move_to_end(full)
                return self._cache[full]  # type: ignore[no-any-return]
        value = compute()
        with self._cache_lock:
            self._cache[full] = value
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return value
