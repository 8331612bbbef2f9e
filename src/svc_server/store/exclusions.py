"""The exclusions every answer states (``_meta.exclusions``): the sum, over the latest
read of each RTMS file (or sync month), of the records it excluded by reason. Kept by
every load in its own transaction (migration 0022), so reading them costs a few rows
whatever the number of loads: summed from the whole ``ingest_log`` on each data version,
they took 80 ms at 7,680 loads (11 ms with the sum in SQL). Part of ``RealEstateRepo``.

``latest_reads`` holds each file's latest read by its digest (a later load time wins,
then the smaller id: the log's order); ``exclusion_counts`` how many latest reads hold
each exclusions text (the JSON of reason to count).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_server.store.base import Database, Tx

_LOCK = "svc:latest-reads"


class ExclusionCounts:
    """Reads and writes of ``latest_reads`` and ``exclusion_counts``."""

    db: Database

    def exclusion_counts(self, tx: Tx) -> list[tuple[str, int]]:
        """(exclusions text, latest reads holding it) of every text some latest read
        holds."""
        rows = tx.fetchall("SELECT excluded, reads FROM exclusion_counts WHERE reads > 0")
        return [(str(r["excluded"]), int(r["reads"])) for r in rows]


class ExclusionWrites:
    """The writes of the exclusion counts: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def count_exclusions(self, tx: Tx, row: Mapping[str, Any]) -> None:
        """Make ``row`` its file's latest read when it is (a later load time, or the same
        and a smaller id: the log's order) and move the counts of exclusions texts from
        the read it replaces to it (migration 0022). Under a lock: two loads of one file
        at once would otherwise both take it for the first read."""
        self.db.lock(tx, _LOCK)
        old = tx.fetchone(
            "SELECT id, loaded_at, excluded FROM latest_reads WHERE sha256 = ?", (row["sha256"],)
        )
        new = (int(row["loaded_at"]), str(row["id"]), str(row["excluded"]))
        if old is not None and (-new[0], new[1]) >= (-int(old["loaded_at"]), str(old["id"])):
            return  # an earlier read of the file replaces nothing
        if old is None:
            tx.execute(
                "INSERT INTO latest_reads (sha256, id, loaded_at, excluded) VALUES (?, ?, ?, ?)",
                (row["sha256"], new[1], new[0], new[2]),
            )
        else:
            tx.execute(
                "UPDATE latest_reads SET id = ?, loaded_at = ?, excluded = ? WHERE sha256 = ?",
                (new[1], new[0], new[2], row["sha256"]),
            )
            tx.execute(
                "UPDATE exclusion_counts SET reads = reads - 1 WHERE excluded = ?",
                (str(old["excluded"]),),
            )
        tx.execute(
            "INSERT INTO exclusion_counts (excluded, reads) VALUES (?, 1) ON CONFLICT "
            "(excluded) DO UPDATE SET reads = exclusion_counts.reads + 1",
            (new[2],),
        )
