"""Marketplace persistence: listings, monthly activity, and the published answers.

``market_rows`` holds every published pulse row and ``market_dimensions`` the dimensions
of those rows (migration 0004). Both are rebuilt by the loading service inside the
transaction that changes listings or activity, so a request reads one indexed row and
never runs the privacy rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from svc_core.markets import (
    Activity,
    DimensionValue,
    Listing,
    ListingMonth,
    MarketDimensions,
    MarketRow,
)
from svc_server.store.base import Database, Row, Tx, chunks, marks, row_typed, select_in

COMBINED = "all"
"""``market_rows.product_type`` of the combined cohort (a key column cannot be NULL)."""
LOCK_KEY = "svc:markets"
ROW_COLUMNS: tuple[str, ...] = tuple(f.name for f in attrs.fields(MarketRow))
_LISTING_FIELDS = tuple(f.name for f in attrs.fields(Listing))
_ACTIVITY_FIELDS = tuple(f.name for f in attrs.fields(Activity))
_LISTING_COLUMNS = ", ".join(_LISTING_FIELDS)
_ACTIVITY_COLUMNS = ", ".join(_ACTIVITY_FIELDS)
_DIMENSIONS = ("region", "category", "period")


def _values(item: Listing | Activity) -> tuple[Any, ...]:
    """The stored columns of a listing or a month of activity: its fields, in order."""
    return attrs.astuple(item, recurse=False)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _market_row(row: Row) -> MarketRow:
    values = {name: row[name] for name in ROW_COLUMNS}
    if values["product_type"] == COMBINED:
        values["product_type"] = None
    for name in (
        "avg_price",
        "median_price",
        "min_price",
        "max_price",
        "price_p25",
        "price_p75",
        "demand_index",
        "booking_conv_rate",
        "occupancy_proxy",
    ):
        values[name] = _float(values[name])
    for name in ("sample_size", "total_views", "total_bookings"):
        values[name] = int(values[name])
    return MarketRow(**values)


@attrs.frozen(kw_only=True)
class Changes:
    """What an upsert did, and the categories whose published rows it may have changed."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    categories: frozenset[str] = frozenset()

    @property
    def written(self) -> int:
        return self.inserted + self.updated


def _changes(
    changed: Sequence[Any], stored: Mapping[Any, Any], total: int, categories: Iterable[str]
) -> Changes:
    """The ``Changes`` of an upsert: ``changed`` keys, new where nothing was ``stored``."""
    inserted = sum(1 for key in changed if key not in stored)
    return Changes(
        inserted=inserted,
        updated=len(changed) - inserted,
        unchanged=total - len(changed),
        categories=frozenset(categories),
    )


class MarketsRepo:
    """Every marketplace query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def listing_categories(self, tx: Tx, ids: Iterable[str]) -> dict[str, str]:
        """The category of each stored listing among ``ids`` (unknown ids are absent)."""
        return {
            row["listing_id"]: row["category"]
            for row in select_in(
                tx,
                "SELECT listing_id, category FROM market_listings WHERE listing_id IN",
                sorted(set(ids)),
            )
        }

    def listing_months(self, tx: Tx, categories: Iterable[str]) -> list[ListingMonth]:
        """Every listing-month of ``categories``: all regions and months, as the privacy
        rules need them."""
        wanted = sorted(set(categories))
        if not wanted:
            return []
        listings = {
            row["listing_id"]: row_typed(Listing, row)
            for row in tx.fetchall(
                f"SELECT {_LISTING_COLUMNS} FROM market_listings "
                f"WHERE category IN ({marks(len(wanted))})",
                wanted,
            )
        }
        rows = tx.fetchall(
            f"SELECT {', '.join('a.' + c for c in _ACTIVITY_FIELDS)} "
            "FROM market_activity a JOIN market_listings l "
            f"ON l.listing_id = a.listing_id WHERE l.category IN ({marks(len(wanted))})",
            wanted,
        )
        return [
            ListingMonth(listing=listings[r["listing_id"]], activity=row_typed(Activity, r))
            for r in rows
        ]

    def all_categories(self, tx: Tx) -> set[str]:
        """Every category that has a listing."""
        return {r["category"] for r in tx.fetchall("SELECT DISTINCT category FROM market_listings")}

    def has_rows(self, tx: Tx) -> bool:
        """Whether any published row is stored."""
        return tx.fetchone("SELECT region FROM market_rows LIMIT 1") is not None

    def stored_rows(self, tx: Tx) -> list[MarketRow]:
        """Every published row, in key order (the backend's text order)."""
        return [
            _market_row(r)
            for r in tx.fetchall(
                f"SELECT {', '.join(ROW_COLUMNS)} FROM market_rows "
                "ORDER BY region, category, period, product_type"
            )
        ]

    def row(
        self, region: str, category: str, period: str, product_type: str | None
    ) -> MarketRow | None:
        """The published row of one cohort (``product_type`` None = combined), or None."""
        with self.db.transaction(write=False) as tx:
            found = tx.fetchone(
                f"SELECT {', '.join(ROW_COLUMNS)} FROM market_rows "
                "WHERE region = ? AND category = ? AND period = ? AND product_type = ?",
                (region, category, period, COMBINED if product_type is None else product_type),
            )
        return None if found is None else _market_row(found)

    def rows(self) -> list[MarketRow]:
        """Every published row, in key order (the backend's text order)."""
        with self.db.transaction(write=False) as tx:
            return self.stored_rows(tx)

    def dimensions(self) -> MarketDimensions:
        """The stored dimensions of the published rows."""
        with self.db.transaction(write=False) as tx:
            found = tx.fetchall(
                "SELECT dimension, value, sample_count FROM market_dimensions "
                "ORDER BY dimension, position"
            )
        by_name: dict[str, list[DimensionValue]] = {name: [] for name in _DIMENSIONS}
        for r in found:
            by_name[r["dimension"]].append(
                DimensionValue(value=r["value"], sample_count=int(r["sample_count"]))
            )
        return MarketDimensions(
            regions=tuple(by_name["region"]),
            categories=tuple(by_name["category"]),
            periods=tuple(by_name["period"]),
        )


class MarketWrites(MarketsRepo):
    """The writes of marketplace listings, activity and published rows: only the one
    write path reaches them (``store.loading``)."""

    def lock(self, tx: Tx) -> None:
        """Serialize marketplace writers: a rebuild must see every committed change."""
        self.db.lock(tx, LOCK_KEY)

    def upsert_listings(
        self, tx: Tx, listings: Sequence[Listing], *, synthetic: bool = False
    ) -> Changes:
        """Insert or update listings by ``listing_id``; a later item with the same id wins.

        ``categories`` holds the old and new category of every inserted or updated listing.
        """
        latest = {item.listing_id: _values(item) for item in listings}
        current = {
            row["listing_id"]: _values(row_typed(Listing, row))
            for row in select_in(
                tx,
                f"SELECT {_LISTING_COLUMNS} FROM market_listings WHERE listing_id IN",
                sorted(latest),
            )
        }
        changed = [key for key, values in latest.items() if current.get(key) != values]
        categories = {latest[key][2] for key in changed} | {
            current[key][2] for key in changed if key in current
        }
        writes = [(*latest[key], int(synthetic)) for key in changed]
        for batch in chunks(writes):
            tx.executemany(
                f"INSERT INTO market_listings ({_LISTING_COLUMNS}, synthetic) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (listing_id) DO UPDATE SET region = excluded.region, "
                "category = excluded.category, product_type = excluded.product_type, "
                "list_price = excluded.list_price, discounted_price = excluded.discounted_price",
                batch,
            )
        return _changes(changed, current, len(listings), categories)

    def upsert_activity(self, tx: Tx, activities: Sequence[Activity]) -> Changes:
        """Insert or replace months of activity by ``(listing_id, period)``.

        Every listing must be stored already. Rows equal to the stored ones are counted as
        ``unchanged`` and not written; a later item with the same key wins.
        """
        latest = {(a.listing_id, a.period): _values(a) for a in activities}
        category_of = self.listing_categories(tx, [key[0] for key in latest])
        unknown = sorted({key[0] for key in latest} - category_of.keys())
        if unknown:
            raise ValueError(f"activity of listings not stored: {', '.join(unknown[:5])}")
        current: dict[tuple[str, str], tuple[Any, ...]] = {}
        for row in select_in(
            tx,
            f"SELECT {_ACTIVITY_COLUMNS} FROM market_activity WHERE listing_id IN",
            sorted(category_of),
        ):
            key = (row["listing_id"], row["period"])
            if key in latest:
                current[key] = _values(row_typed(Activity, row))
        changed = [key for key, values in latest.items() if current.get(key) != values]
        categories = {category_of[key[0]] for key in changed}
        writes = [latest[key] for key in changed]
        for batch in chunks(writes):
            tx.executemany(
                f"INSERT INTO market_activity ({_ACTIVITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (listing_id, period) DO UPDATE SET views = excluded.views, "
                "bookings = excluded.bookings, booked_hours = excluded.booked_hours, "
                "available_hours = excluded.available_hours",
                batch,
            )
        return _changes(changed, current, len(activities), categories)

    def replace_rows(self, tx: Tx, categories: Iterable[str], rows: Sequence[MarketRow]) -> None:
        """Make ``rows`` the published rows of ``categories`` (every row must be of one)."""
        wanted = sorted(set(categories))
        if not wanted:
            return
        stray = {r.category for r in rows} - set(wanted)
        if stray:
            raise ValueError(f"rows of categories not being replaced: {sorted(stray)}")
        tx.execute(f"DELETE FROM market_rows WHERE category IN ({marks(len(wanted))})", wanted)
        values = [
            tuple(
                COMBINED if name == "product_type" and value is None else value
                for name, value in zip(ROW_COLUMNS, attrs.astuple(r), strict=True)
            )
            for r in rows
        ]
        for batch in chunks(values):
            tx.executemany(
                f"INSERT INTO market_rows ({', '.join(ROW_COLUMNS)}) "
                f"VALUES ({marks(len(ROW_COLUMNS))})",
                batch,
            )

    def replace_dimensions(self, tx: Tx, dims: MarketDimensions) -> None:
        tx.execute("DELETE FROM market_dimensions")
        values = [
            (name, position, v.value, v.sample_count)
            for name, items in zip(
                _DIMENSIONS, (dims.regions, dims.categories, dims.periods), strict=True
            )
            for position, v in enumerate(items)
        ]
        for batch in chunks(values):
            tx.executemany(
                "INSERT INTO market_dimensions (dimension, position, value, sample_count) "
                "VALUES (?, ?, ?, ?)",
                batch,
            )
