"""Random marketplace data sets for property tests (pure: svc_core only), shared by the
core, store and HTTP marketplace tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from svc_core.markets import PRODUCT_TYPES, Activity, Listing

REGIONS = ("강남", "서초")
CATEGORIES = ("office", "studio")
PERIODS = ("2026-01", "2026-02", "2026-03")


_CELLS = st.lists(
    st.tuples(st.sampled_from(REGIONS), st.sampled_from(CATEGORIES)),
    min_size=1,
    max_size=4,
    unique=True,
)
"""The (region, category) cells a data set's listings fall in: a few, so that most data
sets hold cohorts of three or more (published rows for the privacy checks to attack)
beside the cohorts of one and two (what the rules must hide)."""


def _listing(cells: list[tuple[str, str]]) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.tuples(
        st.sampled_from(cells),
        st.sampled_from(PRODUCT_TYPES),
        st.integers(0, 1000),
        st.none() | st.integers(0, 1000),
        st.just(2 ** len(PERIODS) - 1) | st.integers(1, 2 ** len(PERIODS) - 1),
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
    types), gathered in a few of its cells, so cohorts of 1 and 2 listings are common
    and so are published ones; each listing is active in every month or in those of a
    random bit mask."""
    cells = draw(_CELLS)
    specs = draw(st.lists(_listing(cells), min_size=min_listings, max_size=max_listings))
    listings: list[Listing] = []
    activities: list[Activity] = []
    for i, (
        (region, category),
        product,
        price,
        discount,
        mask,
        views,
        bookings,
        h1,
        h2,
    ) in enumerate(specs):
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
