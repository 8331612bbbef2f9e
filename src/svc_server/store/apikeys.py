"""API-key persistence: the ``api_keys`` table, and the key rows each process keeps.

Every write that changes what a key admits moves the access stamp in its transaction
(``KeyCache.bump``), so the rows ``cached_key_by_hash`` remembers are read again within
``KEY_STAMP_TTL`` seconds on every process and host (``store.keycache``).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import attrs

from svc_server.store.account_rows import ApiKey, KeyGrant
from svc_server.store.base import Database, Row, Tx, insert_row, row_as, update_by_id
from svc_server.store.keycache import KeyCache


class ApiKeysTable:
    """The API-key queries of ``AccountsRepo``, in portable SQL."""

    db: Database
    keys: KeyCache

    def insert_key(self, tx: Tx, key: ApiKey) -> None:
        row = attrs.asdict(key, recurse=False)
        row["ip_allowlist"] = json.dumps(list(key.ip_allowlist))
        insert_row(tx, "api_keys", row)
        self.keys.bump(tx)

    def cached_key_by_hash(self, key_hash: str) -> KeyGrant | None:
        """``key_by_hash`` remembered in this process while the access stamp holds (see
        ``store.keycache``): most calls read nothing."""
        return self.keys.get(key_hash, self.key_by_hash)

    def known_key_by_hash(self, key_hash: str) -> tuple[int, KeyGrant] | None:
        """The row ``cached_key_by_hash`` would return without a read, with the access
        stamp it holds under, else None (``KeyCache.peek``)."""
        return self.keys.peek(key_hash)

    def known_access_stamp(self) -> int | None:
        """The access stamp when known without a read, else None."""
        return self.keys.known_stamp()

    def key_by_hash(self, key_hash: str) -> KeyGrant | None:
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone(
                "SELECT k.*, c.plan AS plan, c.status AS consumer_status, "
                "c.monthly_quota_override AS monthly_quota_override, "
                "c.rate_limit_override AS rate_limit_override "
                "FROM api_keys k JOIN consumers c ON c.id = k.consumer_id WHERE k.key_hash = ?",
                (key_hash,),
            )
        return _decode_key(KeyGrant, row)

    def get_key(self, tx: Tx, key_id: str) -> ApiKey | None:
        return _decode_key(ApiKey, tx.fetchone("SELECT * FROM api_keys WHERE id = ?", (key_id,)))

    def keys_of_consumer(self, tx: Tx, consumer_id: str) -> list[ApiKey]:
        rows = tx.fetchall(
            "SELECT * FROM api_keys WHERE consumer_id = ? ORDER BY created_at, id", (consumer_id,)
        )
        return [_key(ApiKey, row) for row in rows]

    def keys_by_prefix(self, tx: Tx, prefix: str) -> list[ApiKey]:
        """The keys whose shown prefix is ``prefix`` (usually one; the prefix is not unique)."""
        rows = tx.fetchall(
            "SELECT * FROM api_keys WHERE prefix = ? ORDER BY created_at, id", (prefix,)
        )
        return [_key(ApiKey, row) for row in rows]

    def count_active_keys(self, tx: Tx, consumer_id: str) -> int:
        row = tx.fetchone(
            "SELECT COUNT(*) AS n FROM api_keys WHERE consumer_id = ? AND status = 'active'",
            (consumer_id,),
        )
        return int(row["n"]) if row else 0

    def update_key(self, tx: Tx, key_id: str, fields: dict[str, Any]) -> int:
        fields = dict(fields)
        if "ip_allowlist" in fields:
            fields["ip_allowlist"] = json.dumps(list(fields["ip_allowlist"]))
        self.keys.bump(tx)
        return update_by_id(tx, "api_keys", key_id, fields)

    def update_key_if(self, tx: Tx, key_id: str, status: str, fields: dict[str, Any]) -> bool:
        """Update a key only while it still has ``status`` (compare-and-set)."""
        self.keys.bump(tx)
        return update_by_id(tx, "api_keys", key_id, fields, status=status) == 1

    def revoke_key(self, tx: Tx, key_id: str, now: int) -> bool:
        """Revoke a key; True only for the one caller that revoked it (a compare-and-set:
        concurrent revokes wait on the row and then find it revoked)."""
        self.keys.bump(tx)
        return (
            tx.execute(
                "UPDATE api_keys SET status = 'revoked', revoked_at = ? "
                "WHERE id = ? AND status <> 'revoked'",
                (now, key_id),
            )
            == 1
        )

    def touch_key(self, key_id: str, now: int) -> None:
        """Record use at most once a minute per key (callers skip it when the row they
        read is fresh, so most requests write nothing here)."""
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE api_keys SET last_used_at = ? WHERE id = ? "
                "AND (last_used_at IS NULL OR last_used_at < ?)",
                (now, key_id, now - 60),
            )
        self.keys.touched(key_id, now)


K = TypeVar("K", ApiKey, KeyGrant)


def _key(cls: type[K], row: Row) -> K:
    """A stored key row as ``cls``, its JSON allowlist decoded."""
    return row_as(cls, {**row, "ip_allowlist": tuple(json.loads(row["ip_allowlist"] or "[]"))})


def _decode_key(cls: type[K], row: Row | None) -> K | None:
    return None if row is None else _key(cls, row)
