"""What the store holds of each RTMS district-month (``source_months``): the paging
record of the files and syncs that loaded it, and whether it holds every item. Part of
``RealEstateRepo``, kept in its own module; the rule is
``svc_core.realestate.freshness``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from svc_core.realestate.freshness import MonthKey, MonthRead
from svc_server.store.base import Database, Tx


def _read(row: Mapping[str, object]) -> MonthRead:
    pages = json.loads(str(row["pages"]))
    total = row["total_count"]
    return MonthRead(
        total_count=None if total is None else int(str(total)),
        pages={int(page): int(items) for page, items in pages.items()},
    )


class SourceMonths:
    """Reads and writes of ``source_months``."""

    db: Database

    def month_reads(self, tx: Tx, keys: Sequence[MonthKey]) -> dict[MonthKey, MonthRead]:
        """The recorded reads of ``keys`` (a key never recorded is left out)."""
        out: dict[MonthKey, MonthRead] = {}
        for key in dict.fromkeys(keys):
            row = tx.fetchone(
                "SELECT total_count, pages FROM source_months "
                "WHERE kind = ? AND sigungu_code = ? AND month = ?",
                key,
            )
            if row is not None:
                out[key] = _read(row)
        return out

    def save_month_reads(self, tx: Tx, reads: Mapping[MonthKey, MonthRead], *, now: float) -> None:
        """Write (insert or replace) the reads of district-months."""
        tx.executemany(
            "INSERT INTO source_months (kind, sigungu_code, month, total_count, pages, "
            "complete, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (kind, sigungu_code, month) DO UPDATE SET "
            "total_count = excluded.total_count, pages = excluded.pages, "
            "complete = excluded.complete, updated_at = excluded.updated_at",
            [
                (
                    *key,
                    read.total_count,
                    json.dumps({str(p): n for p, n in sorted(read.pages.items())}),
                    int(read.complete),
                    int(now),
                )
                for key, read in reads.items()
            ],
        )

    def incomplete_months(self, tx: Tx) -> frozenset[MonthKey]:
        """Every district-month known to be incomplete (few: the index on ``complete``
        finds them)."""
        rows = tx.fetchall("SELECT kind, sigungu_code, month FROM source_months WHERE complete = 0")
        return frozenset((r["kind"], r["sigungu_code"], r["month"]) for r in rows)
