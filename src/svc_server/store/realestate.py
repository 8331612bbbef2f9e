"""Real-estate persistence: transactions, rollups, precomputed coverage, indices, log.

``cohort_months`` (samples per district, dong, property type, transaction type, month
and source; dong ``''`` for the whole district) is maintained in the same transaction as
the rows it counts. ``coverage_cohorts`` holds the finished coverage rows per cohort and
granularity, rebuilt at ingest for the districts a load touched (the service computes
them: ``svc_server.services.realestate.refresh_coverage``). So coverage and dimensions
never scan transactions, and coverage without a district reads only ``limit`` rows.

Pulse reads only its cohort: ``samples`` always names every property type, transaction
type and month it wants as ``IN`` lists, so both SQLite and PostgreSQL walk the
``transactions_cohort`` (or, for one dong, ``transactions_dong``) index with equality
on every column and the cost follows the cohort's size, not the table's.

Answers that change only when a load commits (``DataState``, dimensions, one district's
coverage) are cached in-process per *data version*: every load writes one
``ingest_log`` row, so the version is the log's row count and latest load time. Each
process keeps its own cache and reads the version from the database, so several server
processes stay consistent.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_server.store.base import (
    IN_CHUNK,
    Database,
    Row,
    Tx,
    chunks,
    insert_row,
    marks,
    select_in,
)

if TYPE_CHECKING:
    from svc_core.models import IndexObservation, LoadReport, Transaction

T = TypeVar("T")
Progress = Callable[[int], None]
"""Called with the number of records written so far during a long write."""

_WRITE_CHUNK = 5000
_CACHE_ENTRIES = 1024
VERSION_TTL = 1.0
"""Seconds a process trusts the data version it last read (see ``data_version``)."""
_TRANSACTION_KINDS_SQL = "kind LIKE 'rtms-%'"
"""Loads whose exclusions describe transactions (coverage_note); R-ONE and marketplace
exclusions are about other records."""


TRANSACTION_COLUMNS = (
    "natural_key",
    "source",
    "sigungu_code",
    "sigungu",
    "dong",
    "property_type",
    "transaction_type",
    "deal_date",
    "month",
    "price_krw",
    "monthly_rent_krw",
    "area_m2",
    "synthetic",
)
"""The columns ``transaction_rows`` fills, in order."""

RollupKey = tuple[str, str, str, str, str, str]
"""(sigungu_code, dong or '', property_type, transaction_type, month, source)."""


def _equal(**filters: Any) -> tuple[str, list[Any]]:
    """``AND column = ?`` for each filter that is not None, and the parameters."""
    used = [(column, value) for column, value in filters.items() if value is not None]
    return "".join(f" AND {column} = ?" for column, _ in used), [value for _, value in used]


def transaction_rows(records: Iterable[Transaction], *, synthetic: bool) -> list[tuple[Any, ...]]:
    """The ``transactions`` table's rows for ``records``, in ``TRANSACTION_COLUMNS`` order."""
    flag = int(synthetic)
    days: dict[datetime.date, tuple[str, str]] = {}  # a file repeats a few dozen dates
    rows: list[tuple[Any, ...]] = []
    for r in records:
        day = days.get(r.deal_date)
        if day is None:
            day = days[r.deal_date] = (r.deal_date.isoformat(), r.period_month)
        rows.append(
            (
                r.natural_key,
                r.source,
                r.sigungu_code,
                r.sigungu,
                r.dong,
                r.property_type,
                r.transaction_type,
                day[0],
                day[1],
                r.price_krw,
                r.monthly_rent_krw,
                r.area_m2,
                flag,
            )
        )
    return rows


def rollup_counts(records: Iterable[Transaction]) -> Counter[RollupKey]:
    """The ``cohort_months`` rows ``records`` add: each counts once for its district
    (dong ``''``) and once more for its dong when it has one."""
    counts: Counter[RollupKey] = Counter()
    months: dict[datetime.date, str] = {}
    for r in records:
        month = months.get(r.deal_date)
        if month is None:
            month = months[r.deal_date] = r.period_month
        counts[(r.sigungu_code, "", r.property_type, r.transaction_type, month, r.source)] += 1
        if r.dong:
            counts[
                (r.sigungu_code, r.dong, r.property_type, r.transaction_type, month, r.source)
            ] += 1
    return counts


def rollup_rows(counts: Mapping[RollupKey, int]) -> list[Row]:
    """Rollup counts as the rows ``RealEstateRepo.rollup`` returns."""
    return [
        {
            "sigungu_code": code,
            "dong": dong,
            "property_type": ptype,
            "transaction_type": ttype,
            "month": month,
            "source": source,
            "samples": n,
        }
        for (code, dong, ptype, ttype, month, source), n in counts.items()
    ]


@attrs.frozen(kw_only=True)
class CoverageRecord:
    """One finished coverage row of a cohort at one granularity (``dong`` ``''`` for a
    district-level row), with its per-source samples and ordering keys."""

    granularity: str
    sigungu_code: str
    dong: str
    property_type: str
    transaction_type: str
    type_rank: int
    total_samples: int
    row: dict[str, Any]
    source_mix: dict[str, int]


@attrs.frozen(kw_only=True)
class DataState:
    """What every real-estate answer needs to know about the store, per data version.

    ``latest_month`` ends rolling pulse windows, ``latest_index_period`` rolling index
    windows; ``exclusions`` (transactions excluded at ingest, by reason, each distinct
    RTMS file counted once) feed ``coverage_note``; ``synthetic`` is true once demo data
    was loaded; ``coverage_complete`` is false while some district lacks precomputed
    coverage rows.
    """

    version: tuple[int, int]
    latest_month: str | None
    latest_index_period: str | None
    exclusions: Mapping[str, int]
    synthetic: bool
    coverage_complete: bool = True


class RealEstateRepo:
    """Every real-estate query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._version: tuple[float, tuple[int, int]] | None = None

    # versioned cache ---------------------------------------------------------------------

    def data_version(self) -> tuple[int, int]:
        """Changes whenever a load commits (every load writes one ``ingest_log`` row).

        Read from the database at most once per ``VERSION_TTL`` seconds per process: a
        load committed by another process is seen within that bound, one committed by
        this process at once (``log_load`` calls ``forget_version``).
        """
        now = time.monotonic()
        known = self._version
        if known is not None and now - known[0] < VERSION_TTL:
            return known[1]
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT COUNT(*) AS n, MAX(loaded_at) AS at FROM ingest_log")
        version = (int(row["n"] or 0), int(row["at"] or 0)) if row else (0, 0)
        self._version = (now, version)
        return version

    def forget_version(self) -> None:
        """Make the next ``data_version`` read the database (called when a load writes)."""
        self._version = None

    def cached(
        self,
        key: tuple[Any, ...],
        compute: Callable[[], T],
        *,
        version: tuple[int, int] | None = None,
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
            while len(self._cache) > _CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return value

    def state(self) -> DataState:
        """The store's current ``DataState`` (one cheap query when nothing changed)."""
        version = self.data_version()
        return self.cached(("state",), lambda: self._state(version), version=version)

    def _state(self, version: tuple[int, int]) -> DataState:
        with self.db.transaction(write=False) as tx:
            month = tx.fetchone("SELECT MAX(month) AS m FROM cohort_months")
            quarter = tx.fetchone(
                "SELECT MAX(period) AS p FROM index_observations WHERE period LIKE '%-Q%'"
            )
            demo = tx.fetchone("SELECT id FROM ingest_log WHERE kind = 'demo' LIMIT 1")
            logged = tx.fetchall(
                f"SELECT sha256, excluded FROM ingest_log WHERE {_TRANSACTION_KINDS_SQL} "
                "ORDER BY loaded_at DESC, id"
            )
            stale = self.stale_coverage_districts(tx)
        totals: Counter[str] = Counter()
        seen: set[str] = set()
        for row in logged:
            if row["sha256"] in seen:
                continue  # the same file (or sync month) read again: its latest read counts
            seen.add(row["sha256"])
            for reason, n in json.loads(row["excluded"]).items():
                totals[reason] += int(n)
        return DataState(
            version=version,
            latest_month=month["m"] if month and month["m"] else None,
            latest_index_period=quarter["p"] if quarter and quarter["p"] else None,
            exclusions=dict(sorted(totals.items())),
            synthetic=demo is not None,
            coverage_complete=not stale,
        )

    # writing -----------------------------------------------------------------------------

    def _existing(self, tx: Tx, table: str, keys: Sequence[str]) -> set[str]:
        found: set[str] = set()
        if tx.fetchone(f"SELECT natural_key FROM {table} LIMIT 1") is None:
            return found  # an empty table: a first (bulk) load skips the key lookups
        rows = select_in(tx, f"SELECT natural_key FROM {table} WHERE natural_key IN", keys)
        found.update(r["natural_key"] for r in rows)
        return found

    def insert_transactions(
        self,
        tx: Tx,
        records: Sequence[Transaction],
        *,
        synthetic: bool = False,
        progress: Progress | None = None,
        added: Counter[RollupKey] | None = None,
    ) -> tuple[int, int]:
        """Insert new records (by natural key) and bump the rollup; (loaded, duplicate).

        ``progress(written)`` is called after each batch; ``added``, when given, receives
        the rollup counts the new records added.
        """
        unique: dict[str, Transaction] = {}
        for record in records:
            unique.setdefault(record.natural_key, record)
        existing = self._existing(tx, "transactions", list(unique))
        fresh = [r for key, r in unique.items() if key not in existing]
        rows = transaction_rows(fresh, synthetic=synthetic)
        written = 0
        for part in chunks(rows, _WRITE_CHUNK):
            tx.executemany(
                f"INSERT INTO transactions ({', '.join(TRANSACTION_COLUMNS)}) "
                f"VALUES ({marks(len(TRANSACTION_COLUMNS))}) ON CONFLICT DO NOTHING",
                part,
            )
            written += len(part)
            if progress is not None:
                progress(written)
        counts = rollup_counts(fresh)
        self._bump_rollup(tx, counts)
        if added is not None:
            added.update(counts)
        return len(rows), len(records) - len(rows)

    def _bump_rollup(self, tx: Tx, counts: Mapping[RollupKey, int]) -> None:
        rollup = [(*key, n) for key, n in counts.items()]
        for part in chunks(rollup, _WRITE_CHUNK):
            tx.executemany(
                "INSERT INTO cohort_months (sigungu_code, dong, property_type, transaction_type, "
                "month, source, samples) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (sigungu_code, dong, property_type, transaction_type, month, source) "
                "DO UPDATE SET samples = cohort_months.samples + excluded.samples",
                part,
            )

    def delete_transactions(self, tx: Tx, keys: Sequence[str]) -> tuple[int, set[str]]:
        """Remove deals a later report cancelled and take them out of the rollup;
        (records removed, districts touched)."""
        rows = select_in(
            tx,
            "SELECT natural_key, sigungu_code, dong, property_type, transaction_type, "
            "month, source FROM transactions WHERE natural_key IN",
            keys,
        )
        if not rows:
            return 0, set()
        counts: Counter[RollupKey] = Counter()
        for r in rows:
            base = (r["property_type"], r["transaction_type"], r["month"], r["source"])
            counts[(r["sigungu_code"], "", *base)] += 1
            if r["dong"]:
                counts[(r["sigungu_code"], r["dong"], *base)] += 1
        tx.executemany(
            "DELETE FROM transactions WHERE natural_key = ?", [(r["natural_key"],) for r in rows]
        )
        where = (
            "sigungu_code = ? AND dong = ? AND property_type = ? AND transaction_type = ? "
            "AND month = ? AND source = ?"
        )
        tx.executemany(
            f"UPDATE cohort_months SET samples = samples - ? WHERE {where}",
            [(n, *key) for key, n in counts.items()],
        )
        tx.executemany(f"DELETE FROM cohort_months WHERE samples <= 0 AND {where}", list(counts))
        return len(rows), {r["sigungu_code"] for r in rows}

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
        for part in chunks(rows, _WRITE_CHUNK):
            tx.executemany(
                "INSERT INTO index_observations (natural_key, sigungu_code, sigungu, "
                "property_type, metric_type, period, period_end_date, value_pct, source, "
                "synthetic) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                part,
            )
        return len(fresh), len(records) - len(fresh)

    def log_ingest(self, tx: Tx, row: Mapping[str, Any]) -> None:
        """Record one load (this also moves the data version on)."""
        self.forget_version()
        row = dict(row)
        row["excluded"] = json.dumps(row.get("excluded") or {}, ensure_ascii=False)
        row["rejected"] = json.dumps(row.get("rejected") or {}, ensure_ascii=False)
        insert_row(tx, "ingest_log", row)

    def record_load(
        self,
        tx: Tx,
        *,
        kind: str,
        report: LoadReport,
        now: float,
        data: bytes | None = None,
        digest: str | None = None,
    ) -> None:
        """One ``ingest_log`` row for a load: provenance (``report.path``, the SHA-256 of
        ``data`` or the given ``digest``), counts, and the exclusions coverage_note
        reports. Rows of the same digest count their exclusions once."""
        if digest is None:
            digest = hashlib.sha256(data or b"").hexdigest()
        rejected: dict[str, Any] = {
            reason: {
                "count": count,
                "lines": [r.line for r in report.rejections if r.reason == reason],
            }
            for reason, count in report.rejected.items()
        }
        self.log_ingest(
            tx,
            {
                "id": str(uuid.uuid4()),
                "kind": kind,
                "path": report.path[:500],
                "sha256": digest,
                "read_count": report.read,
                "loaded": report.loaded,
                "duplicate": report.duplicate,
                "excluded": report.excluded,
                "rejected": rejected,
                "loaded_at": int(now),
            },
        )

    def rollup_is_empty(self, tx: Tx) -> bool:
        return tx.fetchone("SELECT month FROM cohort_months LIMIT 1") is None

    def is_empty(self) -> bool:
        with self.db.transaction(write=False) as tx:
            return tx.fetchone("SELECT natural_key FROM transactions LIMIT 1") is None

    def counts(self) -> dict[str, int]:
        """Rows per real-estate table (for tests, the CLI and operators)."""
        out: dict[str, int] = {}
        tables = (
            "transactions",
            "cohort_months",
            "coverage_cohorts",
            "index_observations",
            "ingest_log",
        )
        with self.db.transaction(write=False) as tx:
            for table in tables:
                row = tx.fetchone(f"SELECT COUNT(*) AS n FROM {table}")
                out[table] = int(row["n"]) if row else 0
        return out

    # reading -----------------------------------------------------------------------------

    def samples(
        self,
        codes: Sequence[str],
        months: Sequence[str],
        *,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong: str | None = None,
    ) -> list[Row]:
        """Transactions of one cohort: districts ``codes``, the listed ``months``, and the
        type filters (None = every type). Each filter is an ``IN`` list so the index is
        used on every column and nothing outside the cohort is read."""
        if not codes or not months:
            return []
        ptypes = PROPERTY_TYPES if property_type is None else (property_type,)
        ttypes = TRANSACTION_TYPES if transaction_type is None else (transaction_type,)
        sql = (
            "SELECT sigungu_code, sigungu, dong, property_type, transaction_type, month, "
            "source, price_krw, monthly_rent_krw, area_m2, synthetic FROM transactions "
            f"WHERE sigungu_code IN ({marks(len(codes))})"
        )
        where, equal = _equal(dong=dong)
        sql += where + (
            f" AND property_type IN ({marks(len(ptypes))})"
            f" AND transaction_type IN ({marks(len(ttypes))})"
            f" AND month IN ({marks(len(months))})"
        )
        params = [*codes, *equal, *ptypes, *ttypes, *months]
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(sql, params)

    def rollup(
        self,
        *,
        codes: Sequence[str] | None = None,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong_level: bool | None = False,
        dong: str | None = None,
        month_from: str | None = None,
        month_to: str | None = None,
        tx: Tx | None = None,
    ) -> list[Row]:
        """Rollup rows (never raw transactions): one per cohort, month and source, with
        ``samples``. District-level rows (``dong`` ``''``) unless ``dong_level`` (dong
        rows); both when ``dong_level`` is None. Aggregation is left to the caller: a
        plain scan is several times faster than a SQL ``GROUP BY`` here. ``tx`` reads
        inside an open (write) transaction."""
        sql = (
            "SELECT sigungu_code, dong, property_type, transaction_type, month, source, "
            "samples FROM cohort_months WHERE 1 = 1"
        )
        if dong_level is not None:
            sql += " AND dong <> ''" if dong_level else " AND dong = ''"
        params: list[Any] = []
        if codes is not None:
            if not codes:
                return []
            sql += f" AND sigungu_code IN ({marks(len(codes))})"
            params.extend(codes)
        where, equal = _equal(
            property_type=property_type, transaction_type=transaction_type, dong=dong
        )
        sql += where
        params.extend(equal)
        if month_from is not None:
            sql += " AND month >= ?"
            params.append(month_from)
        if month_to is not None:
            sql += " AND month <= ?"
            params.append(month_to)
        if tx is not None:
            return tx.fetchall(sql, params)
        with self.db.transaction(write=False) as read:
            return read.fetchall(sql, params)

    def sigungu_names(self, codes: Sequence[str], *, tx: Tx | None = None) -> dict[str, str]:
        """The district name the records of each code carry (for codes the bundled table
        does not know); codes without records are left out."""

        def read(t: Tx) -> dict[str, str]:
            out: dict[str, str] = {}
            for code in codes:
                row = t.fetchone(
                    "SELECT sigungu FROM transactions WHERE sigungu_code = ? LIMIT 1", (code,)
                )
                if row is not None:
                    out[code] = row["sigungu"]
            return out

        if tx is not None:
            return read(tx)
        with self.db.transaction(write=False) as read_tx:
            return read(read_tx)

    # coverage, precomputed ---------------------------------------------------------------

    def stale_coverage_districts(self, tx: Tx) -> set[str]:
        """Districts with rollup rows whose coverage was never computed (data loaded
        before the coverage table existed)."""
        # The districts of the rollup by one index seek each (a skip scan), not a scan.
        rows = tx.fetchall(
            "WITH RECURSIVE d(code) AS ("
            "SELECT MIN(sigungu_code) FROM cohort_months UNION ALL "
            "SELECT (SELECT MIN(sigungu_code) FROM cohort_months WHERE sigungu_code > d.code) "
            "FROM d WHERE d.code IS NOT NULL) "
            "SELECT code FROM d WHERE code IS NOT NULL AND code NOT IN "
            "(SELECT sigungu_code FROM coverage_districts)"
        )
        return {r["code"] for r in rows}

    def replace_coverage(
        self, tx: Tx, codes: Sequence[str], rows: Sequence[CoverageRecord]
    ) -> None:
        """Replace every coverage row of the districts ``codes`` by ``rows`` and mark the
        districts up to date."""
        tx.executemany(
            "INSERT INTO coverage_districts (sigungu_code) VALUES (?) ON CONFLICT DO NOTHING",
            [(code,) for code in codes],
        )
        for part in chunks(codes, IN_CHUNK):
            tx.execute(
                f"DELETE FROM coverage_cohorts WHERE sigungu_code IN ({marks(len(part))})",
                tuple(part),
            )
        values = [
            (
                r.granularity,
                r.sigungu_code,
                r.dong,
                r.property_type,
                r.transaction_type,
                int(r.dong != ""),
                r.type_rank,
                r.total_samples,
                json.dumps(r.row, ensure_ascii=False, separators=(",", ":")),
                json.dumps(r.source_mix, separators=(",", ":")),
            )
            for r in rows
        ]
        for batch in chunks(values, _WRITE_CHUNK):
            tx.executemany(
                "INSERT INTO coverage_cohorts (granularity, sigungu_code, dong, property_type, "
                "transaction_type, dong_level, type_rank, total_samples, row_json, source_mix) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                batch,
            )

    def coverage(
        self,
        *,
        granularity: str,
        dong_level: bool,
        limit: int,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong: str | None = None,
    ) -> list[tuple[dict[str, Any], dict[str, int]]]:
        """The top ``limit`` precomputed coverage rows, by ``total_samples`` descending
        (then district, dong and type order), with each row's per-source samples."""
        sql = (
            "SELECT row_json, source_mix FROM coverage_cohorts "
            "WHERE granularity = ? AND dong_level = ?"
        )
        where, equal = _equal(
            property_type=property_type, transaction_type=transaction_type, dong=dong
        )
        sql += where + " ORDER BY total_samples DESC, sigungu_code, dong, type_rank LIMIT ?"
        params: list[Any] = [granularity, int(dong_level), *equal, limit]
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(sql, params)
        return [(json.loads(r["row_json"]), json.loads(r["source_mix"])) for r in rows]

    def indices(
        self,
        codes: Sequence[str],
        periods: Sequence[str],
        *,
        property_type: str | None = None,
        metric_type: str | None = None,
    ) -> list[Row]:
        """Index observations of districts ``codes`` in ``periods``, ordered for output."""
        if not codes or not periods:
            return []
        sql = (
            "SELECT sigungu_code, sigungu, property_type, metric_type, period, period_end_date, "
            "value_pct, source, synthetic FROM index_observations "
            f"WHERE sigungu_code IN ({marks(len(codes))}) AND period IN ({marks(len(periods))})"
        )
        where, equal = _equal(property_type=property_type, metric_type=metric_type)
        params = [*codes, *periods, *equal]
        sql += where + " ORDER BY property_type, metric_type, period, sigungu_code"
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(sql, params)
