"""Helpers shared by the marketplace tests: the fixture files, random data sets and the
ground truth an attacker is tested against."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from svc_core.markets import Activity, Listing, ListingMonth, MarketRow
from svc_core.models import LoadReport
from svc_core.sources.markets import format_activity, format_listings
from svc_server import ingest
from svc_server.ingest import markets as markets_ingest
from svc_server.store import Store
from tests.market_strategies import CATEGORIES, PERIODS, REGIONS, market_data

__all__ = ["CATEGORIES", "PERIODS", "REGIONS", "market_data"]  # re-exported for the tests

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markets"
NOW = 1_790_000_000.0


def load_fixture(store: Store, name: str) -> LoadReport:
    """Ingest ``tests/fixtures/markets/<name>.csv`` as listings or activity."""
    kind = markets_ingest.ACTIVITY if name.startswith("activity") else markets_ingest.LISTINGS
    path = FIXTURES / f"{name}.csv"
    return ingest.ingest(store, kind, path.read_bytes(), path=str(path), now=NOW)


def load_listings(store: Store, listings: Sequence[Listing], path: str = "l.csv") -> LoadReport:
    return ingest.ingest(
        store, markets_ingest.LISTINGS, format_listings(listings), path=path, now=NOW
    )


def load_activity(store: Store, activities: Sequence[Activity], path: str = "a.csv") -> LoadReport:
    return ingest.ingest(
        store, markets_ingest.ACTIVITY, format_activity(activities), path=path, now=NOW
    )


def row_order(row: MarketRow) -> tuple[str, str, str, str]:
    return (row.region, row.category, row.period, row.product_type or "")


def members(months: Sequence[ListingMonth], row: MarketRow) -> frozenset[str]:
    """The listing ids a published row describes, recomputed from its key."""
    return frozenset(
        m.listing.listing_id
        for m in months
        if (m.listing.region, m.listing.category, m.period)
        == (row.region, row.category, row.period)
        and row.product_type in (None, m.listing.product_type)
    )


def corrected(listing: Listing, price: int, move: int) -> Listing:
    """A later version of a listing: a new price, and maybe another region or category."""
    region, category = listing.region, listing.category
    if move == 1:
        region = REGIONS[1 - REGIONS.index(region)]
    elif move == 2:
        category = CATEGORIES[1 - CATEGORIES.index(category)]
    return attrs.evolve(
        listing, list_price=float(price), discounted_price=None, region=region, category=category
    )
