"""The data version, read plainly: every load writes one ``ingest_log`` row, so the log's
row count and latest load time identify the data, with the number of district-months
known to be incomplete (a partial sync changes it and writes no log row) and of districts
whose precomputed coverage is up to date (a deferred rebuild changes it).

What keeps answers per version (and how often it is read) is the services' concern
(``svc_server.services.versioned``); the store only reads it, and counts the loads this
process committed (``LoadCount``) so that a reader can tell it moved without a read.
"""

from __future__ import annotations

import threading

from svc_server.store.base import Database

Version = tuple[int, int, int, int]
"""(ingest-log rows, latest load time, incomplete district-months, covered districts)."""
_VERSION_SQL = (
    "SELECT (SELECT COUNT(*) FROM ingest_log) AS n, "
    "(SELECT MAX(loaded_at) FROM ingest_log) AS at, "
    "(SELECT COUNT(*) FROM source_months WHERE complete = 0) AS gaps, "
    "(SELECT COUNT(*) FROM coverage_districts) AS covered"
)


def read_version(db: Database) -> Version:
    """The current data version of ``db`` (one query)."""
    with db.transaction(write=False) as tx:
        row = tx.fetchone(_VERSION_SQL)
    if row is None:
        return (0, 0, 0, 0)
    return (
        int(row["n"] or 0),
        int(row["at"] or 0),
        int(row["gaps"] or 0),
        int(row["covered"] or 0),
    )


class LoadCount:
    """How many loads (``store.loading`` transactions) this process committed to one data
    store: counted after each commit, so a reader that saw the count before reading the
    version knows to read it again once the count moves."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def count(self) -> int:
        """The loads committed so far."""
        return self._count

    def add(self) -> None:
        """Count one committed load."""
        with self._lock:
            self._count += 1
