"""Sync state: one ``sync_months`` row per (kind, sigungu, month) read by ``svc sync
rtms``, the natural keys a month's stored records carry (to find what a re-read
retracts), one ``sync_tables`` row per R-ONE table and market-area era read by
``svc sync rone``, and the months files loaded by ``svc ingest`` hold (``ingested``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.periods import Month
from svc_core.sources.datasets import RtmsDataset
from svc_core.sync.rtms import IngestedMonth, MonthState, StateKey
from svc_server.store.base import Database, Row, Tx, marks
from svc_server.store.source_months import month_reads

UNREAD = "not_read"
"""The status of an R-ONE survey table svc cannot read by its name (``sync_tables``)."""
_COLUMNS = (
    "kind",
    "sigungu_code",
    "month",
    "status",
    "fetched_at",
    "total_count",
    "pages",
    "digest",
    "attempt",
    "attempted_at",
    "detail",
)


def _month(label: str) -> Month:
    year, month = label.split("-")
    return Month(year=int(year), month=int(month))


def _state(row: Row) -> MonthState:
    return MonthState(
        kind=RtmsDataset.of_sync_name(row["kind"]),
        sigungu_code=row["sigungu_code"],
        month=_month(row["month"]),
        status=row["status"],
        total_count=None if row["total_count"] is None else int(row["total_count"]),
        pages=int(row["pages"]),
        digest=row["digest"],
        fetched_at=None if row["fetched_at"] is None else float(row["fetched_at"]),
        attempted_at=float(row["attempted_at"]),
    )


class SyncRepo:
    """Reads and writes ``sync_months``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def states(
        self, *, kinds: Sequence[RtmsDataset] = (), codes: Sequence[str] = ()
    ) -> dict[StateKey, MonthState]:
        """Every recorded month (of ``kinds`` and ``codes`` when given)."""
        return {(s.kind, s.sigungu_code, s.month.label): s for s in self._read(kinds, codes, None)}

    def rows(self, *, kinds: Sequence[RtmsDataset] = (), codes: Sequence[str] = ()) -> list[Row]:
        """The raw rows, ordered by kind, district and month (for ``svc sync status``)."""
        return self._rows(kinds, codes, None)

    def get(self, tx: Tx, kind: RtmsDataset, code: str, month: Month) -> MonthState | None:
        row = tx.fetchone(
            f"SELECT {', '.join(_COLUMNS)} FROM sync_months "
            "WHERE kind = ? AND sigungu_code = ? AND month = ?",
            (kind.sync_name, code, month.label),
        )
        return _state(row) if row else None

    def _rows(self, kinds: Sequence[RtmsDataset], codes: Sequence[str], tx: Tx | None) -> list[Row]:
        where: list[str] = []
        params: list[Any] = []
        if kinds:
            where.append(f"kind IN ({marks(len(kinds))})")
            params.extend(k.sync_name for k in kinds)
        if codes:
            where.append(f"sigungu_code IN ({marks(len(codes))})")
            params.extend(codes)
        sql = f"SELECT {', '.join(_COLUMNS)} FROM sync_months"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY kind, sigungu_code, month"
        if tx is not None:
            return tx.fetchall(sql, params)
        with self.db.transaction(write=False) as t:
            return t.fetchall(sql, params)

    def _read(
        self, kinds: Sequence[RtmsDataset], codes: Sequence[str], tx: Tx | None
    ) -> list[MonthState]:
        return [_state(r) for r in self._rows(kinds, codes, tx)]

    def stored_keys(
        self, tx: Tx, kind: RtmsDataset, code: str, month: Month, prefix: str
    ) -> set[str]:
        """Natural keys starting with ``prefix`` among the district's records of the
        month of the kind's cohorts (read through the cohort index)."""
        properties, transactions = kind.property_types, kind.transaction_types
        rows = tx.fetchall(
            "SELECT natural_key FROM transactions WHERE sigungu_code = ? "
            f"AND property_type IN ({marks(len(properties))}) "
            f"AND transaction_type IN ({marks(len(transactions))}) AND month = ?",
            (code, *properties, *transactions, month.label),
        )
        return {r["natural_key"] for r in rows if r["natural_key"].startswith(prefix)}

    def ingested(
        self, *, kinds: Sequence[RtmsDataset] = (), codes: Sequence[str] = ()
    ) -> list[IngestedMonth]:
        """The RTMS months (sync kinds ``kinds``, districts ``codes``, when given) holding
                records loaded from a file by ``svc ingest``, with those files and whether the
                month is known whole (``source_months``: None for a whole read of a file without
        paging figures, which counts as loaded but states no total). A sync's own loads (logged with the
                API's URL as their path) are left out; records stored before loads were noted on
                them (migration 0011) are not found until their file is loaded again."""
        wanted = list(kinds or RtmsDataset)
        ingest_kinds = [k.ingest_kind for k in wanted]
        sql = (
            "SELECT l.kind AS kind, t.sigungu_code AS sigungu_code, t.month AS month, "
            "l.path AS path FROM transactions t JOIN ingest_log l ON l.id = t.load_id "
            f"WHERE l.kind IN ({marks(len(ingest_kinds))}) "
            "AND l.path NOT LIKE 'http://%' AND l.path NOT LIKE 'https://%'"
        )
        params: list[Any] = list(ingest_kinds)
        if codes:
            sql += f" AND t.sigungu_code IN ({marks(len(codes))})"
            params.extend(codes)
        sql += " GROUP BY l.kind, t.sigungu_code, t.month, l.path"
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(sql, params)
            sources: dict[tuple[str, str, str], list[str]] = {}
            for row in rows:
                dataset = next(d for d in wanted if d.ingest_kind == row["kind"])
                key = (dataset.sync_name, row["sigungu_code"], row["month"])
                sources.setdefault(key, []).append(str(row["path"]))
            reads = month_reads(tx, list(sources))
        whole = {key: None if read.by_file else read.complete for key, read in reads.items()}
        return [
            IngestedMonth(
                kind=RtmsDataset.of_sync_name(name),
                sigungu_code=code,
                month=_month(label),
                sources=tuple(sorted(paths)),
                complete=whole.get((name, code, label)),
            )
            for (name, code, label), paths in sorted(sources.items())
        ]

    def tables(self) -> list[Row]:
        """Every R-ONE table state, by table and era."""
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(
                "SELECT table_id, era, table_name, status, fetched_at, total_count, pages, "
                "loaded, detail FROM sync_tables ORDER BY table_id, era"
            )


class SyncWrites(SyncRepo):
    """The writes of sync state: only the one write path reaches them (``store.loading``)."""

    def record(
        self,
        tx: Tx,
        *,
        kind: RtmsDataset,
        code: str,
        month: Month,
        status: str,
        attempt: str,
        attempted_at: float,
        detail: str = "",
        fetched_at: float | None = None,
        total_count: int | None = None,
        pages: int = 0,
        digest: str | None = None,
    ) -> None:
        """Write the month's state (insert or replace)."""
        values = (
            kind.sync_name,
            code,
            month.label,
            status,
            None if fetched_at is None else int(fetched_at),
            total_count,
            pages,
            digest,
            attempt,
            int(attempted_at),
            detail[:500],
        )
        updates = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[3:])
        tx.execute(
            f"INSERT INTO sync_months ({', '.join(_COLUMNS)}) VALUES ({marks(len(_COLUMNS))}) "
            f"ON CONFLICT (kind, sigungu_code, month) DO UPDATE SET {updates}",
            values,
        )

    def note_attempt(
        self,
        tx: Tx,
        *,
        kind: RtmsDataset,
        code: str,
        month: Month,
        attempt: str,
        at: float,
        detail: str,
    ) -> None:
        """Record an incomplete attempt on a month whose complete read stays."""
        tx.execute(
            "UPDATE sync_months SET attempt = ?, attempted_at = ?, detail = ? "
            "WHERE kind = ? AND sigungu_code = ? AND month = ?",
            (attempt, int(at), detail[:500], kind.sync_name, code, month.label),
        )

    def record_table(
        self,
        tx: Tx,
        *,
        table_id: str,
        era: str,
        table_name: str,
        status: str,
        at: float,
        total_count: int | None,
        pages: int,
        loaded: int,
        detail: str = "",
    ) -> None:
        """Write an R-ONE table's state for one era (insert or replace)."""
        columns = (
            "table_id",
            "era",
            "table_name",
            "status",
            "fetched_at",
            "total_count",
            "pages",
            "loaded",
            "detail",
        )
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[2:])
        tx.execute(
            f"INSERT INTO sync_tables ({', '.join(columns)}) VALUES ({marks(len(columns))}) "
            f"ON CONFLICT (table_id, era) DO UPDATE SET {updates}",
            (
                table_id,
                era,
                table_name[:300],
                status,
                int(at),
                total_count,
                pages,
                loaded,
                detail[:500],
            ),
        )

    def record_unread_tables(
        self, tx: Tx, tables: Sequence[tuple[str, str, str]], *, at: float
    ) -> None:
        """Replace the R-ONE survey tables recorded as not read (status ``not_read``, era
        ``""``) by ``tables`` (id, name, why): what the latest table list held."""
        tx.execute("DELETE FROM sync_tables WHERE status = ? AND era = ?", (UNREAD, ""))
        for table_id, name, why in tables:
            self.record_table(
                tx,
                table_id=table_id,
                era="",
                table_name=name,
                status=UNREAD,
                at=at,
                total_count=None,
                pages=0,
                loaded=0,
                detail=why,
            )
