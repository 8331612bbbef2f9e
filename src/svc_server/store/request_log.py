"""The request log and usage per key (migration 0014): written in batches, read by the
dashboard. Portable SQL; the tables live in the accounts' file."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from svc_core.accounts.requestlog import LoggedCall, LogQuery
from svc_server.store.account_rows import KeyCalls
from svc_server.store.base import Database, Tx, row_as


@attrs.frozen(kw_only=True)
class CallLine:
    """A line of an account's request log as the dashboard lists it, with its key's
    prefix and label (None once the key is gone)."""

    at_ms: int
    key_id: str
    key_prefix: str | None
    key_label: str | None
    method: str
    path: str
    status: int
    error_code: str | None
    request_id: str
    duration_ms: float


class RequestLogRepo:
    """Every request-log and per-key usage query."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def insert_calls(self, tx: Tx, calls: Sequence[LoggedCall], ids: Callable[[], str]) -> None:
        """Add ``calls`` to their accounts' logs (each row named by ``ids``)."""
        tx.executemany(
            "INSERT INTO request_log (id, consumer_id, key_id, at_ms, method, path, status, "
            "error_code, request_id, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    ids(),
                    c.consumer_id,
                    c.key_id,
                    c.at_ms,
                    c.method,
                    c.path,
                    c.status,
                    c.error_code,
                    c.request_id,
                    c.duration_ms,
                )
                for c in calls
            ],
        )

    def add_key_usage(self, tx: Tx, counts: Mapping[tuple[str, str], int]) -> None:
        """Add successful counted calls per (key id, month)."""
        tx.executemany(
            "INSERT INTO key_usage (key_id, month, count) VALUES (?, ?, ?) "
            "ON CONFLICT (key_id, month) DO UPDATE SET count = key_usage.count + excluded.count",
            [(key_id, month, n) for (key_id, month), n in sorted(counts.items())],
        )

    def prune(self, tx: Tx, consumer_ids: Sequence[str], oldest_ms: int, keep: int) -> int:
        """Delete calls logged before ``oldest_ms`` (every account's), and all but the
        ``keep`` newest of each of ``consumer_ids``; the number of rows deleted."""
        deleted = tx.execute("DELETE FROM request_log WHERE at_ms < ?", (oldest_ms,))
        for consumer_id in sorted(set(consumer_ids)):
            last = tx.fetchone(
                "SELECT at_ms, id FROM request_log WHERE consumer_id = ? "
                "ORDER BY at_ms DESC, id DESC LIMIT 1 OFFSET ?",
                (consumer_id, keep - 1),
            )
            if last is None:
                continue
            deleted += tx.execute(
                "DELETE FROM request_log WHERE consumer_id = ? "
                "AND (at_ms < ? OR (at_ms = ? AND id < ?))",
                (consumer_id, last["at_ms"], last["at_ms"], last["id"]),
            )
        return deleted

    def calls(self, tx: Tx, consumer_id: str, query: LogQuery, oldest_ms: int) -> list[CallLine]:
        """The account's calls matching ``query`` and logged since ``oldest_ms``, newest
        first, with their key's prefix and label."""
        where = ["r.consumer_id = ?", "r.at_ms >= ?"]
        args: list[object] = [consumer_id, oldest_ms]
        if query.key_id is not None:
            where.append("r.key_id = ?")
            args.append(query.key_id)
        if query.status is not None:
            where.append("r.status BETWEEN ? AND ?")
            args += [query.status.low, query.status.high]
        rows = tx.fetchall(
            "SELECT r.at_ms, r.key_id, k.prefix AS key_prefix, k.label AS key_label, r.method, "
            "r.path, r.status, r.error_code, r.request_id, r.duration_ms FROM request_log r "
            "LEFT JOIN api_keys k ON k.id = r.key_id "
            f"WHERE {' AND '.join(where)} ORDER BY r.at_ms DESC, r.id DESC LIMIT ? OFFSET ?",
            (*args, query.limit, query.offset),
        )
        return [row_as(CallLine, r) for r in rows]

    def key_usage(self, tx: Tx, consumer_id: str, month: str) -> list[KeyCalls]:
        """Every key of the account with its successful counted calls in ``month``."""
        rows = tx.fetchall(
            "SELECT k.id, k.prefix, k.label, k.mode, k.status, k.grace_until, "
            "COALESCE(u.count, 0) AS calls "
            "FROM api_keys k LEFT JOIN key_usage u ON u.key_id = k.id AND u.month = ? "
            "WHERE k.consumer_id = ? ORDER BY k.created_at, k.id",
            (month, consumer_id),
        )
        return [row_as(KeyCalls, r) for r in rows]
