"""Helpers shared by the marketplace tests: the fixture files, random data sets and the
ground truth an attacker is tested against."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
from hypothesis import strategies as st

from svc_core.markets import PRODUCT_TYPES, Activity, Listing, ListingMonth, MarketRow
from svc_core.models import LoadReport
from svc_core.sources.markets import format_activity, format_listings
from svc_server.services import markets_ingest
from svc_server.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markets"
NOW = 1_790_000_000.0

REGIONS = ("강남", "서초")
CATEGORIES = ("office", "studio")
PERIODS = ("2026-01", "2026-02", "2026-03")


def load_fixture(store: Store, name: str) -> LoadReport:
    """Ingest ``tests/fixtures/markets/<name>.csv`` as listings or activity."""
    kind = markets_ingest.ACTIVITY if name.startswith("activity") else markets_ingest.LISTINGS
    path = FIXTURES / f"{name}.csv"
    return markets_ingest.ingest(store, kind, path.read_bytes(), path=str(path), now=NOW)


def load_listings(store: Store, listings: Sequence[Listing], path: str = "l.csv") -> LoadReport:
    return markets_ingest.ingest(
        store, markets_ingest.LISTINGS, format_listings(listings), path=path, now=NOW
    )


def load_activity(store: Store, activities: Sequence[Activity], path: str = "a.csv") -> LoadReport:
    return markets_ingest.ingest(
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


_LISTING = st.tuples(
    st.sampled_from(REGIONS),
    st.sampled_from(CATEGORIES),
    st.sampled_from(PRODUCT_TYPES),
    st.integers(0, 1000),
    st.none() | st.integers(0, 1000),
    st.integers(1, 2 ** len(PERIODS) - 1),
    st.integers(0, 100),
    st.integers(0, 10),
    st.integers(0, 50),
    st.integers(0, 50),
)


@st.composite
def market_data(
    draw: st.DrawFn, min_listings: int = 0, max_listings: int = 20
) -> tuple[list[Listing], list[Activity]]:
    """Random listings on a small grid (2 regions, 2 categories, 3 months, both product
    types), so cohorts of 1 and 2 listings are common; each listing is active in the
    months of a random bit mask."""
    specs = draw(st.lists(_LISTING, min_size=min_listings, max_size=max_listings))
    listings: list[Listing] = []
    activities: list[Activity] = []
    for i, (region, category, product, price, discount, mask, views, bookings, h1, h2) in enumerate(
        specs
    ):
        listing = Listing(
            listing_id=f"l{i}",
            region=region,
            category=category,
            product_type=product,
            list_price=float(price),
            discounted_price=None if discount is None else float(discount) / 2,
        )
        listings.append(listing)
        for k, period in enumerate(PERIODS):
            if mask & (1 << k):
                activities.append(
                    Activity(
                        listing_id=listing.listing_id,
                        period=period,
                        views=(views * (k + 1)) % 101,
                        bookings=bookings,
                        booked_hours=float(min(h1, h2)) + 0.5 * k,
                        available_hours=float(max(h1, h2)) + k,
                    )
                )
    return listings, activities


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
