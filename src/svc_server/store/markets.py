"""Marketplace persistence: listings and their monthly activity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_server.store.base import Database, Row, Tx, chunks


class MarketsRepo:
    """Every marketplace query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert_listings(
        self, tx: Tx, rows: Sequence[Sequence[Any]], *, synthetic: bool = False
    ) -> tuple[int, int, int]:
        """Insert or update listings ``(id, region, category, product_type, list_price,
        discounted_price)``; return (inserted, updated, unchanged)."""
        ids = [r[0] for r in rows]
        current: dict[str, tuple[Any, ...]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" for _ in part)
            for row in tx.fetchall(
                "SELECT listing_id, region, category, product_type, list_price, discounted_price "
                f"FROM market_listings WHERE listing_id IN ({marks})",
                tuple(part),
            ):
                current[row["listing_id"]] = tuple(row.values())
        inserted = updated = unchanged = 0
        changes = []
        for r in rows:
            old = current.get(r[0])
            if old is None:
                inserted += 1
            elif tuple(old) == tuple(r):
                unchanged += 1
                continue
            else:
                updated += 1
            changes.append((*r, int(synthetic)))
            current[r[0]] = tuple(r)
        for batch in chunks(changes):
            tx.executemany(
                "INSERT INTO market_listings (listing_id, region, category, product_type, "
                "list_price, discounted_price, synthetic) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (listing_id) DO UPDATE SET region = excluded.region, "
                "category = excluded.category, product_type = excluded.product_type, "
                "list_price = excluded.list_price, discounted_price = excluded.discounted_price",
                batch,
            )
        return inserted, updated, unchanged

    def known_listings(self, tx: Tx, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" for _ in part)
            found.update(
                r["listing_id"]
                for r in tx.fetchall(
                    f"SELECT listing_id FROM market_listings WHERE listing_id IN ({marks})",
                    tuple(part),
                )
            )
        return found

    def existing_activity(
        self, tx: Tx, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[Any, ...]]:
        """Stored activity rows for ``(listing_id, period)`` keys."""
        out: dict[tuple[str, str], tuple[Any, ...]] = {}
        ids = sorted({k[0] for k in keys})
        wanted = set(keys)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" for _ in part)
            for row in tx.fetchall(
                "SELECT listing_id, period, views, bookings, booked_hours, available_hours "
                f"FROM market_activity WHERE listing_id IN ({marks})",
                tuple(part),
            ):
                key = (row["listing_id"], row["period"])
                if key in wanted:
                    out[key] = tuple(row.values())
        return out

    def upsert_activity(self, tx: Tx, rows: Sequence[Sequence[Any]]) -> None:
        """Insert or replace ``(listing_id, period, views, bookings, booked_hours,
        available_hours)`` rows; the same file twice leaves the same state."""
        for part in chunks(rows):
            tx.executemany(
                "INSERT INTO market_activity (listing_id, period, views, bookings, booked_hours, "
                "available_hours) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (listing_id, period) DO UPDATE SET views = excluded.views, "
                "bookings = excluded.bookings, booked_hours = excluded.booked_hours, "
                "available_hours = excluded.available_hours",
                part,
            )

    def period_rows(self, period: str, category: str | None = None) -> list[Row]:
        """Every listing with activity in ``period`` (optionally one category)."""
        sql = (
            "SELECT l.listing_id, l.region, l.category, l.product_type, l.list_price, "
            "l.discounted_price, l.synthetic, a.period, a.views, a.bookings, a.booked_hours, "
            "a.available_hours FROM market_activity a JOIN market_listings l "
            "ON l.listing_id = a.listing_id WHERE a.period = ?"
        )
        params: list[Any] = [period]
        if category is not None:
            sql += " AND l.category = ?"
            params.append(category)
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(sql, params)

    def cohort_sizes(self) -> list[Row]:
        """Listings per (region, category, period, product_type): dimensions' input."""
        with self.db.transaction(write=False) as tx:
            return tx.fetchall(
                "SELECT l.region, l.category, a.period, l.product_type, COUNT(*) AS n "
                "FROM market_activity a JOIN market_listings l ON l.listing_id = a.listing_id "
                "GROUP BY l.region, l.category, a.period, l.product_type"
            )

    def is_empty(self) -> bool:
        with self.db.transaction(write=False) as tx:
            return tx.fetchone("SELECT listing_id FROM market_listings LIMIT 1") is None
