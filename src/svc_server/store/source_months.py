"""What the store holds of each district-month (``source_months``): the paging record of
the files and syncs that loaded it (or the whole read of a file without paging figures),
and whether it holds every item, that is whether it is loaded. Part of
``RealEstateRepo``, kept in its own module; the rule is
``svc_core.realestate.freshness``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from svc_core.realestate.freshness import MonthKey, MonthRead
from svc_server.store.base import IN_CHUNK, Database, Tx, chunks, marks


def _read(row: Mapping[str, object]) -> MonthRead:
    pages = json.loads(str(row["pages"]))
    total = row["total_count"]
    return MonthRead(
        total_count=None if total is None else int(str(total)),
        pages={int(page): int(items) for page, items in pages.items()},
    )


def month_reads(tx: Tx, keys: Sequence[MonthKey]) -> dict[MonthKey, MonthRead]:
    """The recorded reads of ``keys`` (a key never recorded is left out): one statement
    per kind and district, its months an ``IN`` list."""
    months: dict[tuple[str, str], list[str]] = {}
    for kind, code, month in dict.fromkeys(keys):
        months.setdefault((kind, code), []).append(month)
    out: dict[MonthKey, MonthRead] = {}
    for (kind, code), wanted in months.items():
        for part in chunks(wanted, IN_CHUNK):
            rows = tx.fetchall(
                "SELECT month, total_count, pages FROM source_months "
                f"WHERE kind = ? AND sigungu_code = ? AND month IN ({marks(len(part))})",
                (kind, code, *part),
            )
            for row in rows:
                out[(kind, code, row["month"])] = _read(row)
    return out


class SourceMonths:
    """Reads and writes of ``source_months``."""

    db: Database

    def month_reads(self, tx: Tx, keys: Sequence[MonthKey]) -> dict[MonthKey, MonthRead]:
        """The recorded reads of ``keys`` (``month_reads``)."""
        return month_reads(tx, keys)

    def incomplete_months(self, tx: Tx) -> frozenset[MonthKey]:
        """Every district-month known to be incomplete (few: the index on ``complete``
        finds them)."""
        rows = tx.fetchall("SELECT kind, sigungu_code, month FROM source_months WHERE complete = 0")
        return frozenset((r["kind"], r["sigungu_code"], r["month"]) for r in rows)

    def loaded_months(
        self, codes: Sequence[str], months: Sequence[str], kinds: Sequence[str]
    ) -> frozenset[MonthKey]:
        """The district-months of ``codes`` × ``months`` × ``kinds`` with a complete read:
        a walk of the primary key with an ``IN`` list on each of its columns, so the
        cost follows the cohort, not the number of months the store holds. (``complete``
        is read, not filtered on: SQLite would walk its index, nearly every row.)"""
        if not codes or not months or not kinds:
            return frozenset()
        sql = (
            "SELECT kind, sigungu_code, month, complete FROM source_months "
            f"WHERE kind IN ({marks(len(kinds))}) AND sigungu_code IN ({marks(len(codes))}) "
            f"AND month IN ({marks(len(months))})"
        )
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(sql, [*kinds, *codes, *months])
        return frozenset((r["kind"], r["sigungu_code"], r["month"]) for r in rows if r["complete"])


class SourceMonthWrites:
    """The writes of what was read of each district-month: only the one write path reaches
    them (``store.loading``)."""

    db: Database

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
