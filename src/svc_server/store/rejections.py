"""What loads rejected and excluded, per cohort: the records a load rejected as malformed
(``rejected_records``, migration 0023), counted per district-month and listed with their
reason, and the records excluded by rule (``excluded_transactions``) counted for the
cohorts an answer is about. Part of ``RealEstateRepo``.

A cohort here is districts ``codes`` (a code and its renumbering aliases), ``months``
(None: every month) and types (None: every type). A rejected record whose type the reader
could not tell (NULL) belongs to every type's cohort: it may be one of its deals.

A rejection lasts as long as its source holds the record: a load that reads a
district-month whole (a complete ``svc sync rtms`` month, an RTMS API file holding every
page of its query, the demo set's months) forgets the earlier rejections of its kind
(the load's kind, ``rtms-commercial``, ...) there that it did not reject again
(``clear_rejected``, in the load's transaction: ``ingest.writer``), so a corrected file
or a re-sync no longer counts them. A partial read (one page of several, a web CSV
export, svc's samples) forgets none: nothing in it says what the rest of the month
holds.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from svc_core.realestate.traces import RejectedRow
from svc_server.store.base import (
    IN_CHUNK,
    WRITE_CHUNK,
    Database,
    Row,
    Tx,
    chunks,
    marks,
)

if TYPE_CHECKING:
    from svc_core.sources import RejectedRecord

REJECTED_COLUMNS = (
    "natural_key",
    "kind",
    "sigungu_code",
    "month",
    "property_type",
    "transaction_type",
    "reason",
    "detail",
    "line",
    "path",
    "load_id",
)
REJECTED_LISTED = 200
"""The most rejected records one listing answer names (its count is always whole)."""
LISTED_COLUMNS = ", ".join(f.name for f in attrs.fields(RejectedRow))
"""What ``rejected_list`` reads of each record."""


def _cohort(
    codes: Sequence[str] | None,
    months: Sequence[str] | None,
    property_type: str | None,
    transaction_type: str | None,
    *,
    nullable: bool,
) -> tuple[str, list[Any]]:
    """The conditions (without ``WHERE``) of a cohort; ``nullable``: a NULL type matches
    (a rejected record whose type could not be told)."""
    sql = "1 = 1" if codes is None else f"sigungu_code IN ({marks(len(codes))})"
    params: list[Any] = list(codes or ())
    if months is not None:
        sql += f" AND month IN ({marks(len(months))})"
        params += list(months)
    for column, value in (("property_type", property_type), ("transaction_type", transaction_type)):
        if value is not None:
            sql += f" AND ({column} = ? OR {column} IS NULL)" if nullable else f" AND {column} = ?"
            params.append(value)
    return sql, params


class Rejections:
    """Reads and writes of ``rejected_records``, and cohort counts of exclusions."""

    db: Database

    def rejected_counts(
        self,
        codes: Sequence[str],
        months: Sequence[str] | None,
        *,
        property_type: str | None = None,
        transaction_type: str | None = None,
    ) -> list[tuple[str, str, str, int]]:
        """(sigungu_code, month, reason, n) of the cohort's rejected records, by
        district, month and reason."""
        if not codes or (months is not None and not months):
            return []
        where, params = _cohort(codes, months, property_type, transaction_type, nullable=True)
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT sigungu_code, month, reason, COUNT(*) AS n FROM rejected_records "
                f"WHERE {where} GROUP BY sigungu_code, month, reason "
                "ORDER BY sigungu_code, month, reason",
                params,
            )
        return [
            (str(r["sigungu_code"]), str(r["month"]), str(r["reason"]), int(r["n"])) for r in rows
        ]

    def rejected_list(
        self,
        codes: Sequence[str],
        months: Sequence[str],
        *,
        property_type: str | None = None,
        transaction_type: str | None = None,
    ) -> list[RejectedRow]:
        """The cohort's rejected records (at most ``REJECTED_LISTED``), by month, file
        and line."""
        if not codes or not months:
            return []
        where, params = _cohort(codes, months, property_type, transaction_type, nullable=True)
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                f"SELECT {LISTED_COLUMNS} FROM rejected_records WHERE {where} "
                f"ORDER BY month, path, line, natural_key LIMIT {REJECTED_LISTED}",
                params,
            )
        return [RejectedRow(**r) for r in rows]

    def rejected_by_month(self) -> list[Row]:
        """(kind, sigungu_code, month, n) of every district-month holding rejected
        records: what ``svc sync status`` shows."""
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(
                "SELECT kind, sigungu_code, month, COUNT(*) AS n FROM rejected_records "
                "GROUP BY kind, sigungu_code, month ORDER BY sigungu_code, month, kind"
            )

    def cohort_exclusions(
        self,
        codes: Sequence[str] | None,
        months: Sequence[str] | None,
        *,
        property_type: str | None = None,
        transaction_type: str | None = None,
    ) -> dict[str, int]:
        """Records excluded by rule (cancelled, partial share, ...) in the cohort, by
        reason; ``codes`` None: every district."""
        if (codes is not None and not codes) or (months is not None and not months):
            return {}
        where, params = _cohort(codes, months, property_type, transaction_type, nullable=False)
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                f"SELECT reason, COUNT(*) AS n FROM excluded_transactions WHERE {where} "
                "GROUP BY reason ORDER BY reason",
                params,
            )
        return {str(r["reason"]): int(r["n"]) for r in rows}


class RejectionWrites:
    """The writes of rejected records: only the one write path reaches them (``store.loading``)."""

    db: Database

    def insert_rejected(
        self, tx: Tx, records: Sequence[RejectedRecord], *, kind: str, path: str, load_id: str
    ) -> int:
        """Keep the records a load rejected (a record kept already takes this load's
        reason and place: the same bytes read again). Returns the records written."""
        rows = [
            (
                r.natural_key,
                kind,
                r.sigungu_code,
                r.month,
                r.property_type,
                r.transaction_type,
                r.reason,
                r.detail,
                r.line,
                path,
                load_id,
            )
            for r in records
        ]
        updated = ", ".join(f"{c} = excluded.{c}" for c in REJECTED_COLUMNS[1:])
        for part in chunks(rows, WRITE_CHUNK):
            tx.executemany(
                f"INSERT INTO rejected_records ({', '.join(REJECTED_COLUMNS)}) "
                f"VALUES ({marks(len(REJECTED_COLUMNS))}) "
                f"ON CONFLICT (natural_key) DO UPDATE SET {updated}",
                part,
            )
        return len(rows)

    def clear_rejected(
        self, tx: Tx, *, kind: str, months: Collection[tuple[str, str]], keep: Collection[str]
    ) -> int:
        """Forget the rejected records of ``kind`` in ``months`` ((district, month) pairs
        a load of that kind read whole) but ``keep`` (the natural keys it rejected
        again). Returns the records forgotten."""
        if not months:
            return 0
        codes = sorted({code for code, _ in months})
        stale: list[str] = []
        for part in chunks(codes, IN_CHUNK):
            rows = tx.fetchall(
                "SELECT natural_key, sigungu_code, month FROM rejected_records "
                f"WHERE kind = ? AND sigungu_code IN ({marks(len(part))})",
                (kind, *part),
            )
            stale += [
                str(r["natural_key"])
                for r in rows
                if (r["sigungu_code"], r["month"]) in months and r["natural_key"] not in keep
            ]
        for part in chunks(stale, IN_CHUNK):
            tx.execute(
                f"DELETE FROM rejected_records WHERE natural_key IN ({marks(len(part))})",
                tuple(part),
            )
        return len(stale)
