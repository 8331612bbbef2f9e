"""A synthetic, deterministic marketplace data set for ``svc demo-data``.

``demo_market_data(seed)`` returns about 2,500 listings in seven regions, every category
and both product types, with monthly activity for the 24 months ending ``LAST_MONTH``.
Listings come and go (most run all 24 months, some start late or stop early), views
follow a seasonal curve, and prices follow category, region and product type (rental
prices are monthly KRW, meeting prices hourly KRW; about 30% carry a discount).

``SMALL_COHORTS`` are held at 1 or 2 listings in every month so that the privacy rules
have something to suppress: a lone small cohort, a small meeting cohort beside a large
rental cohort (complementary suppression of the combined row) and two small cohorts
whose union reaches 3.

The same seed always gives the same data; nothing reads the clock or global randomness.
"""

from __future__ import annotations

import calendar
import math
import random

from svc_core.markets import CATEGORIES, Activity, Listing
from svc_core.periods import Month, month_range

LAST_MONTH = Month(year=2026, month=9)
MONTHS: tuple[Month, ...] = month_range(LAST_MONTH.shift(-23), LAST_MONTH)

REGIONS: dict[str, tuple[str, float]] = {
    "강남": ("gangnam", 1.4),
    "서초": ("seocho", 1.1),
    "마포": ("mapo", 0.9),
    "성수": ("seongsu", 0.9),
    "여의도": ("yeouido", 1.0),
    "판교": ("pangyo", 0.8),
    "부산 해운대": ("haeundae", 0.6),
}
"""Region name → (id prefix, size and price factor)."""

# category → (rental listings, meeting listings) per region, (monthly rent KRW, hourly
# meeting price KRW), at factor 1.0
_CATEGORIES: dict[str, tuple[int, int, int, int]] = {
    "office": (55, 6, 2_400_000, 30_000),
    "meeting_room": (12, 55, 1_500_000, 22_000),
    "warehouse": (14, 0, 1_800_000, 15_000),
    "retail": (30, 4, 3_000_000, 25_000),
    "studio": (14, 26, 1_300_000, 35_000),
    "share_office": (45, 22, 450_000, 18_000),
    "event_space": (8, 20, 4_000_000, 80_000),
    "party_room": (6, 28, 1_600_000, 40_000),
    "residence": (18, 0, 1_100_000, 20_000),
    "other": (7, 5, 900_000, 15_000),
}

LEAVE_RATE = 0.03

SMALL_COHORTS: dict[tuple[str, str, str], int] = {
    ("부산 해운대", "warehouse", "rental"): 2,
    ("판교", "party_room", "meeting"): 1,
    ("판교", "party_room", "rental"): 0,
    ("성수", "studio", "meeting"): 2,
    ("여의도", "residence", "rental"): 1,
    ("마포", "other", "rental"): 1,
    ("마포", "other", "meeting"): 2,
    ("서초", "warehouse", "rental"): 2,
}
"""(region, category, product_type) → listings held in every month (0 = none at all)."""


def _size(rng: random.Random, region: str, category: str, product_type: str) -> int:
    fixed = SMALL_COHORTS.get((region, category, product_type))
    if fixed is not None:
        return fixed
    rental, meeting, _, _ = _CATEGORIES[category]
    base = rental if product_type == "rental" else meeting
    if base == 0:
        return 0
    return max(3, round(base * REGIONS[region][1] * rng.uniform(0.8, 1.2)))


def _round_to(value: float, step: int) -> float:
    return float(max(step, round(value / step) * step))


def _listing(
    rng: random.Random, listing_id: str, region: str, category: str, product_type: str
) -> Listing:
    _, _, rent, hourly = _CATEGORIES[category]
    base = rent if product_type == "rental" else hourly
    step = 10_000 if product_type == "rental" else 500
    factor = REGIONS[region][1] ** 0.7
    price = _round_to(base * factor * math.exp(rng.gauss(0, 0.25)), step)
    discounted = None
    if rng.random() < 0.3:
        discounted = _round_to(price * rng.uniform(0.8, 0.95), step)
    return Listing(
        listing_id=listing_id,
        region=region,
        category=category,
        product_type=product_type,
        list_price=price,
        discounted_price=discounted,
    )


def _lifespan(rng: random.Random, fixed: bool) -> tuple[int, int]:
    """First and last month index: 70% run from the start, the rest join later; each
    month a listing leaves with probability ``LEAVE_RATE``."""
    last = len(MONTHS) - 1
    if fixed:
        return 0, last
    start = 0 if rng.random() < 0.7 else rng.randint(1, last)
    end = start
    while end < last and rng.random() >= LEAVE_RATE:
        end += 1
    return start, end


# month index → (label, days, demand factor: seasonal curve times a 1% monthly trend)
_CALENDAR: tuple[tuple[str, int, float], ...] = tuple(
    (
        m.label,
        calendar.monthrange(m.year, m.month)[1],
        (1 + 0.2 * math.sin(2 * math.pi * (m.month - 3) / 12)) * (1 + 0.01 * i),
    )
    for i, m in enumerate(MONTHS)
)


def _activity(rng: random.Random, listing: Listing, index: int, popularity: float) -> Activity:
    label, days, season = _CALENDAR[index]
    views = max(0, round(popularity * season * rng.uniform(0.7, 1.3)))
    if listing.product_type == "rental":
        available = float(days * 24)
        occupancy = min(1.0, max(0.0, rng.gauss(0.7, 0.15)))
        bookings = min(views, rng.choice((0, 0, 1, 1, 2)))
    else:
        available = float(days * 12)
        occupancy = min(1.0, max(0.0, rng.gauss(0.3, 0.12) * season))
        bookings = min(views, round(views * rng.uniform(0.02, 0.08)))
    booked = min(available, round(available * occupancy * 2) / 2)
    return Activity(
        listing_id=listing.listing_id,
        period=label,
        views=views,
        bookings=bookings,
        booked_hours=booked,
        available_hours=available,
    )


def demo_market_data(seed: int = 0) -> tuple[list[Listing], list[Activity]]:
    """Listings and their monthly activity, the same for the same ``seed``."""
    rng = random.Random(seed)  # noqa: S311  # synthetic data, not security
    listings: list[Listing] = []
    activities: list[Activity] = []
    for region, (prefix, _) in REGIONS.items():
        for category in CATEGORIES:
            for product_type in ("rental", "meeting"):
                fixed = (region, category, product_type) in SMALL_COHORTS
                for n in range(_size(rng, region, category, product_type)):
                    listing_id = f"{prefix}-{category}-{product_type[0]}{n:04d}"
                    listing = _listing(rng, listing_id, region, category, product_type)
                    listings.append(listing)
                    start, end = _lifespan(rng, fixed)
                    popularity = math.exp(rng.gauss(4.5, 0.6))
                    activities.extend(
                        _activity(rng, listing, i, popularity) for i in range(start, end + 1)
                    )
    return listings, activities
