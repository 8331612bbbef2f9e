"""The change records (``change_records``, migration 0020): what each load changed, per
(source kind, district, month), in the load's own transaction; and the data version of
each district (``data_changes.version``). Part of ``RealEstateRepo``.

Ids come from one sequence, taken under a lock held until the load commits
(``take_ids``), so they are committed in order: a reader paging by id never skips a
record committed after it read with a smaller id. Index loads take a number of the same
sequence for their districts' version, without a record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from svc_core.realestate.changes import (
    ALL_TYPES,
    ChangeRecord,
    ContentKey,
    Types,
    source_kind,
)
from svc_server.store.base import Database, Row, Tx, marks, row_typed, select_in
from svc_server.store.changes import (
    MonthPair,
    by_district,
    cohort_params,
    cohort_where,
    month_parts,
)

TABLES = ("transactions", "excluded_transactions")
_LOCK = "svc:change-records"
MovedRecord = tuple[str, str, str, str, str]
"""(what, sigungu_code, month, property type, transaction type): a record a load wrote
(``svc_core.realestate.changes.MOVES``)."""
_COLUMNS = (
    "id, changed_at, load_id, load_kind, source_kind, sigungu_code, month, property_types, "
    "transaction_types, added, retracted, changed, digest_before, digest_after, complete"
)


def _wrapped(values: Sequence[str]) -> str:
    """``('a', 'b')`` → ``,a,b,`` (a filter is one ``LIKE '%,a,%'``)."""
    return "," + ",".join(values) + "," if values else ","


def _unwrapped(text: str) -> tuple[str, ...]:
    return tuple(v for v in text.split(",") if v)


def record_of(row: Row) -> ChangeRecord:
    return row_typed(
        ChangeRecord,
        {
            **row,
            "property_types": _unwrapped(str(row["property_types"])),
            "transaction_types": _unwrapped(str(row["transaction_types"])),
        },
    )


class ChangeRecords:
    """Record fingerprints, change records and versions (mixed into ``RealEstateRepo``)."""

    db: Database

    def content_digests(
        self, tx: Tx, pairs: Iterable[MonthPair], types: Types = ALL_TYPES
    ) -> dict[ContentKey, str]:
        """The content digest of each (source kind, district, month) of the district-months
        ``pairs`` that holds records of ``types`` (whole source kinds: ``kind_types``):
        SHA-256 of its kept and excluded records with every column, in natural-key order
        (one absent holds nothing: ``EMPTY_DIGEST``)."""
        hashes: dict[ContentKey, hashlib._Hash] = {}
        for code, months in by_district(pairs).items():
            for part in month_parts(months):
                for table in TABLES:
                    rows = tx.fetchall(
                        f"SELECT * FROM {table} WHERE {cohort_where(len(part), types)} "
                        "ORDER BY month, natural_key",
                        cohort_params(code, part, types),
                    )
                    columns = [(c, f"({c!r}, ") for c in sorted(rows[0])] if rows else []
                    texts: dict[ContentKey, list[str]] = {}
                    for row in rows:
                        kind = source_kind(str(row["property_type"]), str(row["transaction_type"]))
                        key = (kind, code, str(row["month"]))
                        # f"{table}:{sorted(row.items())!r}\n", spelled out: a third faster
                        text = ", ".join([p + repr(row[c]) + ")" for c, p in columns])
                        texts.setdefault(key, []).append(f"{table}:[{text}]\n")
                    for key, lines in texts.items():
                        digest = hashes.get(key)
                        if digest is None:
                            digest = hashes[key] = hashlib.sha256()
                        digest.update("".join(lines).encode())
        return {key: h.hexdigest() for key, h in hashes.items()}

    def months_of_keys(self, tx: Tx, keys: Sequence[str]) -> set[MonthPair]:
        """The district-months of the kept records among ``keys``."""
        rows = select_in(
            tx, "SELECT sigungu_code, month FROM transactions WHERE natural_key IN", keys
        )
        return {(str(r["sigungu_code"]), str(r["month"])) for r in rows}

    def change_page(
        self,
        *,
        after_id: int | None,
        at: int | None,
        codes: Sequence[str],
        property_type: str | None,
        transaction_type: str | None,
        limit: int,
    ) -> tuple[list[ChangeRecord], int]:
        """Up to ``limit`` records after ``after_id`` (or written at or after ``at``)
        that the filters keep, in id order, and the latest id when the page was read
        (records up to it are all seen when the page is not full)."""
        where: list[str] = ["id <= ?"]
        params: list[int | str] = []
        if after_id is not None:
            where.append("id > ?")
            params.append(after_id)
        if at is not None:
            where.append("changed_at >= ?")
            params.append(at)
        if codes:
            where.append(f"sigungu_code IN ({marks(len(codes))})")
            params.extend(codes)
        if property_type is not None:
            where.append("property_types LIKE ?")
            params.append(f"%,{property_type},%")
        if transaction_type is not None:
            where.append("transaction_types LIKE ?")
            params.append(f"%,{transaction_type},%")
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT MAX(id) AS top FROM change_records")
            top = int((row or {}).get("top") or 0)
            rows = tx.fetchall(
                f"SELECT {_COLUMNS} FROM change_records WHERE {' AND '.join(where)} "
                "ORDER BY id LIMIT ?",
                (top, *params, limit),
            )
        return [record_of(r) for r in rows], top

    def records_after(self, after_id: int, limit: int) -> list[ChangeRecord]:
        """Up to ``limit`` records after ``after_id``, in id order (for publishing)."""
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                f"SELECT {_COLUMNS} FROM change_records WHERE id > ? ORDER BY id LIMIT ?",
                (after_id, limit),
            )
        return [record_of(r) for r in rows]


class ChangeRecordWrites:
    """The writes of the change feed's ids and records: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def take_ids(self, tx: Tx, n: int) -> int:
        """The first of ``n`` new ids of the change sequence; the lock it takes is held
        until ``tx`` ends, so ids are committed in the order they are given."""
        self.db.lock(tx, _LOCK)
        row = tx.fetchone(
            "SELECT (SELECT MAX(id) FROM change_records) AS r, "
            "(SELECT MAX(version) FROM data_changes) AS v"
        )
        top = max(int((row or {}).get("r") or 0), int((row or {}).get("v") or 0))
        return top + 1 if n > 0 else top

    def write_records(self, tx: Tx, records: Sequence[ChangeRecord]) -> None:
        tx.executemany(
            f"INSERT INTO change_records ({_COLUMNS}) VALUES ({marks(15)})",
            [
                (
                    r.id,
                    r.changed_at,
                    r.load_id,
                    r.load_kind,
                    r.source_kind,
                    r.sigungu_code,
                    r.month,
                    _wrapped(r.property_types),
                    _wrapped(r.transaction_types),
                    r.added,
                    r.retracted,
                    r.changed,
                    r.digest_before,
                    r.digest_after,
                    int(r.complete),
                )
                for r in records
            ],
        )
