"""Real-estate persistence: transactions, the cohort-month rollup, indices, ingest log.

The rollup ``cohort_months`` (samples per district, dong, property type, transaction
type, month and source; dong ``''`` for the whole district) is maintained in the same
transaction as the rows it counts, so coverage and dimensions never scan transactions
and pulse reads only its cohort through the ``transactions_cohort`` index.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from svc_server.store.base import Database, Row, Tx, chunks

if TYPE_CHECKING:
    from svc_core.models import IndexObservation, Transaction

_IN_CHUNK = 500
_CACHE_ENTRIES = 32
# 'YYYY-MM' -> 'YYYY-Qn' in portable SQL (SQLite and PostgreSQL).
_QUARTER_SQL = (
    "substr(month, 1, 4) || '-Q' || CAST((CAST(substr(month, 6, 2) AS INTEGER) + 2) / 3 AS TEXT)"
)


def _marks(n: int) -> str:
    return ", ".join("?" for _ in range(n))


class RealEstateRepo:
    """Every real-estate query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # Rollup answers change only when a load commits: cache them per data version.
        self._rollup_cache: dict[tuple[Any, ...], list[Row]] = {}
        self._cache_lock = threading.Lock()

    def data_version(self) -> tuple[int, int]:
        """Changes whenever a load commits (every load writes one ``ingest_log`` row)."""
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT COUNT(*) AS n, MAX(loaded_at) AS at FROM ingest_log")
        return (int(row["n"] or 0), int(row["at"] or 0)) if row else (0, 0)

    # writing -----------------------------------------------------------------------------

    def _existing(self, tx: Tx, table: str, keys: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(keys), _IN_CHUNK):
            part = keys[start : start + _IN_CHUNK]
            rows = tx.fetchall(
                f"SELECT natural_key FROM {table} WHERE natural_key IN ({_marks(len(part))})",
                tuple(part),
            )
            found.update(r["natural_key"] for r in rows)
        return found

    def insert_transactions(
        self, tx: Tx, records: Sequence[Transaction], *, synthetic: bool = False
    ) -> tuple[int, int]:
        """Insert new records (by natural key) and bump the rollup; (loaded, duplicate)."""
        unique: dict[str, Transaction] = {}
        for record in records:
            unique.setdefault(record.natural_key, record)
        existing = self._existing(tx, "transactions", list(unique))
        fresh = [r for k, r in unique.items() if k not in existing]
        duplicate = len(records) - len(fresh)
        rows = [
            (
                r.natural_key,
                r.source,
                r.sigungu_code,
                r.sigungu,
                r.dong,
                r.property_type,
                r.transaction_type,
                r.deal_date.isoformat(),
                r.period_month,
                r.price_krw,
                r.monthly_rent_krw,
                r.area_m2,
                int(synthetic),
            )
            for r in fresh
        ]
        for part in chunks(rows):
            tx.executemany(
                "INSERT INTO transactions (natural_key, source, sigungu_code, sigungu, dong, "
                "property_type, transaction_type, deal_date, month, price_krw, "
                "monthly_rent_krw, area_m2, synthetic) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                part,
            )
        counts: Counter[tuple[str, str, str, str, str, str]] = Counter()
        for r in fresh:
            base = (
                r.sigungu_code,
                "",
                r.property_type,
                r.transaction_type,
                r.period_month,
                r.source,
            )
            counts[base] += 1
            if r.dong:
                counts[(r.sigungu_code, r.dong, *base[2:])] += 1
        rollup = [(*key, n) for key, n in counts.items()]
        for part in chunks(rollup):
            tx.executemany(
                "INSERT INTO cohort_months (sigungu_code, dong, property_type, transaction_type, "
                "month, source, samples) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (sigungu_code, dong, property_type, transaction_type, month, source) "
                "DO UPDATE SET samples = cohort_months.samples + excluded.samples",
                part,
            )
        return len(fresh), duplicate

    def delete_transactions(self, tx: Tx, keys: Sequence[str]) -> int:
        """Remove deals a later report cancelled, and take them out of the rollup."""
        rows: list[Row] = []
        for start in range(0, len(keys), _IN_CHUNK):
            part = list(keys[start : start + _IN_CHUNK])
            rows.extend(
                tx.fetchall(
                    "SELECT natural_key, sigungu_code, dong, property_type, transaction_type, "
                    f"month, source FROM transactions WHERE natural_key IN ({_marks(len(part))})",
                    tuple(part),
                )
            )
        counts: Counter[tuple[str, str, str, str, str, str]] = Counter()
        for r in rows:
            base = (
                r["sigungu_code"],
                "",
                r["property_type"],
                r["transaction_type"],
                r["month"],
                r["source"],
            )
            counts[base] += 1
            if r["dong"]:
                counts[(r["sigungu_code"], r["dong"], *base[2:])] += 1
        for r in rows:
            tx.execute("DELETE FROM transactions WHERE natural_key = ?", (r["natural_key"],))
        for (code, dong, ptype, ttype, month, source), n in counts.items():
            where = (
                "sigungu_code = ? AND dong = ? AND property_type = ? AND transaction_type = ? "
                "AND month = ? AND source = ?"
            )
            params = (code, dong, ptype, ttype, month, source)
            tx.execute(
                f"UPDATE cohort_months SET samples = samples - ? WHERE {where}", (n, *params)
            )
            tx.execute(f"DELETE FROM cohort_months WHERE samples <= 0 AND {where}", params)
        return len(rows)

    def insert_indices(
        self, tx: Tx, records: Sequence[IndexObservation], *, synthetic: bool = False
    ) -> tuple[int, int]:
        """Insert new index observations by natural key; (loaded, duplicate)."""
        unique: dict[str, IndexObservation] = {}
        for record in records:
            unique.setdefault(record.natural_key, record)
        existing = self._existing(tx, "index_observations", list(unique))
        fresh = [r for k, r in unique.items() if k not in existing]
        rows = [
            (
                r.natural_key,
                r.sigungu_code,
                r.sigungu,
                r.property_type,
                r.metric_type,
                r.period,
                r.period_end_date.isoformat(),
                r.value_pct,
                r.source,
                int(synthetic),
            )
            for r in fresh
        ]
        for part in chunks(rows):
            tx.executemany(
                "INSERT INTO index_observations (natural_key, sigungu_code, sigungu, "
                "property_type, metric_type, period, period_end_date, value_pct, source, "
                "synthetic) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                part,
            )
        return len(fresh), len(records) - len(fresh)

    def log_ingest(self, tx: Tx, row: Mapping[str, Any]) -> None:
        row = dict(row)
        row["excluded"] = json.dumps(row.get("excluded") or {}, ensure_ascii=False)
        row["rejected"] = json.dumps(row.get("rejected") or {}, ensure_ascii=False)
        cols = ", ".join(row)
        tx.execute(
            f"INSERT INTO ingest_log ({cols}) VALUES ({_marks(len(row))})", tuple(row.values())
        )

    def has_synthetic(self) -> bool:
        """True once demo data was loaded (the demo loader logs itself as kind ``demo``)."""
        with self.db.transaction(write=False) as tx:
            return tx.fetchone("SELECT id FROM ingest_log WHERE kind = 'demo' LIMIT 1") is not None

    def is_empty(self) -> bool:
        with self.db.transaction(write=False) as tx:
            return tx.fetchone("SELECT natural_key FROM transactions LIMIT 1") is None

    # reading -----------------------------------------------------------------------------

    def latest_month(self) -> str | None:
        """The latest month having any transaction (rolling windows end here)."""
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT MAX(month) AS m FROM cohort_months")
        return row["m"] if row and row["m"] else None

    def latest_index_period(self) -> str | None:
        """The latest quarter label having any index observation."""
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone(
                "SELECT MAX(period) AS p FROM index_observations WHERE period LIKE '%-Q%'"
            )
        return row["p"] if row and row["p"] else None

    def samples(
        self,
        codes: Sequence[str],
        months: Sequence[str],
        *,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong: str | None = None,
    ) -> list[Row]:
        """Transactions of a cohort over a month range (the index drives the scan)."""
        sql = (
            "SELECT sigungu_code, sigungu, dong, property_type, transaction_type, month, "
            "source, price_krw, monthly_rent_krw, area_m2, synthetic FROM transactions "
            f"WHERE sigungu_code IN ({_marks(len(codes))}) AND month >= ? AND month <= ?"
        )
        params: list[Any] = [*codes, min(months), max(months)]
        if property_type is not None:
            sql += " AND property_type = ?"
            params.append(property_type)
        if transaction_type is not None:
            sql += " AND transaction_type = ?"
            params.append(transaction_type)
        if dong is not None:
            sql += " AND dong = ?"
            params.append(dong)
        wanted = set(months)
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(sql, params)
        return [r for r in rows if r["month"] in wanted]

    def rollup(
        self,
        *,
        codes: Sequence[str] | None = None,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong_level: bool = False,
        dong: str | None = None,
        month_from: str | None = None,
        month_to: str | None = None,
        granularity: str = "month",
    ) -> list[Row]:
        """Rollup rows (never raw transactions) for coverage and dimensions.

        Samples are summed per cohort, period and source in SQL; ``granularity``
        ``quarter`` labels periods ``YYYY-Qn``, ``month`` keeps ``YYYY-MM``.
        """
        key = (
            self.data_version(),
            tuple(codes or ()),
            property_type,
            transaction_type,
            dong_level,
            dong,
            month_from,
            month_to,
            granularity,
        )
        with self._cache_lock:
            cached = self._rollup_cache.get(key)
        if cached is not None:
            return cached
        period = _QUARTER_SQL if granularity == "quarter" else "month"
        sql = (
            f"SELECT sigungu_code, dong, property_type, transaction_type, {period} AS period, "
            "source, SUM(samples) AS samples FROM cohort_months WHERE "
        )
        sql += "dong <> ''" if dong_level else "dong = ''"
        params: list[Any] = []
        if codes:
            sql += f" AND sigungu_code IN ({_marks(len(codes))})"
            params.extend(codes)
        if property_type is not None:
            sql += " AND property_type = ?"
            params.append(property_type)
        if transaction_type is not None:
            sql += " AND transaction_type = ?"
            params.append(transaction_type)
        if dong is not None:
            sql += " AND dong = ?"
            params.append(dong)
        if month_from is not None:
            sql += " AND month >= ?"
            params.append(month_from)
        if month_to is not None:
            sql += " AND month <= ?"
            params.append(month_to)
        sql += " GROUP BY sigungu_code, dong, property_type, transaction_type, period, source"
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(sql, params)
        with self._cache_lock:
            if len(self._rollup_cache) >= _CACHE_ENTRIES:
                self._rollup_cache.pop(next(iter(self._rollup_cache)))
            self._rollup_cache[key] = rows
        return rows

    def indices(
        self,
        codes: Sequence[str],
        periods: Sequence[str],
        *,
        property_type: str | None = None,
        metric_type: str | None = None,
    ) -> list[Row]:
        sql = (
            "SELECT sigungu_code, sigungu, property_type, metric_type, period, period_end_date, "
            "value_pct, source, synthetic FROM index_observations "
            f"WHERE sigungu_code IN ({_marks(len(codes))}) AND period IN ({_marks(len(periods))})"
        )
        params: list[Any] = [*codes, *periods]
        if property_type is not None:
            sql += " AND property_type = ?"
            params.append(property_type)
        if metric_type is not None:
            sql += " AND metric_type = ?"
            params.append(metric_type)
        sql += " ORDER BY sigungu_code, property_type, metric_type, period"
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(sql, params)

    def exclusions(self) -> dict[str, int]:
        """Records excluded at ingest, by reason, over every load."""
        totals: Counter[str] = Counter()
        with self.db.transaction(write=False) as tx:
            for row in tx.fetchall("SELECT excluded FROM ingest_log"):
                for reason, n in json.loads(row["excluded"]).items():
                    totals[reason] += int(n)
        return dict(totals)
