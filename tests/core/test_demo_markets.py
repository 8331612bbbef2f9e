"""The synthetic marketplace data set: complete, realistic, deterministic, loadable."""

from __future__ import annotations

from collections import Counter

import pytest

from svc_core.demo.markets import LAST_MONTH, MONTHS, REGIONS, SMALL_COHORTS, demo_market_data
from svc_core.markets import (
    CATEGORIES,
    PRODUCT_TYPES,
    Activity,
    Listing,
    MarketRow,
    join_months,
    publishable_rows,
)
from svc_core.sources.markets import (
    format_activity,
    format_listings,
    parse_activity,
    parse_listings,
)

Data = tuple[list[Listing], list[Activity]]


@pytest.fixture(scope="module")
def data() -> Data:
    return demo_market_data(7)


@pytest.fixture(scope="module")
def rows(data: Data) -> list[MarketRow]:
    return publishable_rows(join_months(*data))


def test_the_same_seed_gives_the_same_data(data: Data) -> None:
    assert demo_market_data(7) == data
    assert demo_market_data(8) != data


def test_it_covers_every_category_both_products_and_several_regions(data: Data) -> None:
    listings, _ = data
    assert {x.category for x in listings} == set(CATEGORIES)
    assert {x.product_type for x in listings} == set(PRODUCT_TYPES)
    assert len({x.region for x in listings}) >= 6
    assert {x.region for x in listings} == set(REGIONS)
    assert 2000 <= len(listings) <= 5000
    assert len({x.listing_id for x in listings}) == len(listings)
    assert any(x.discounted_price is not None for x in listings)
    assert any(x.discounted_price is None for x in listings)


def test_it_spans_24_months_ending_2026_09(data: Data) -> None:
    _, activities = data
    periods = sorted({a.period for a in activities})
    assert len(periods) == len(MONTHS) == 24
    assert (periods[0], periods[-1]) == ("2024-10", "2026-09")
    assert LAST_MONTH.label == "2026-09"


def test_activity_belongs_to_known_listings_once_per_month(data: Data) -> None:
    listings, activities = data
    ids = {x.listing_id for x in listings}
    assert {a.listing_id for a in activities} <= ids
    keys = Counter((a.listing_id, a.period) for a in activities)
    assert max(keys.values()) == 1


def test_listings_come_and_go(data: Data) -> None:
    _, activities = data
    per_listing = Counter(a.listing_id for a in activities)
    assert Counter(v == 24 for v in per_listing.values())[False] > 100


def test_small_cohorts_hold_one_or_two_listings_every_month(data: Data) -> None:
    listings, activities = data
    by_id = {x.listing_id: x for x in listings}
    sizes: Counter[tuple[str, str, str, str]] = Counter()
    for a in activities:
        x = by_id[a.listing_id]
        sizes[(x.region, x.category, x.product_type, a.period)] += 1
    for (region, category, product_type), n in SMALL_COHORTS.items():
        for month in MONTHS:
            assert sizes[(region, category, product_type, month.label)] == n


def test_the_privacy_rules_have_work_to_do(rows: list[MarketRow]) -> None:
    keys = {r.key for r in rows}
    # a small meeting cohort beside a large rental one: rental only, no combined row
    assert ("성수", "studio", "2026-09", "rental") in keys
    assert ("성수", "studio", "2026-09", "meeting") not in keys
    assert ("성수", "studio", "2026-09", None) not in keys
    # 1 rental + 2 meeting listings: only their union of 3 is published
    assert ("마포", "other", "2026-09", None) in keys
    assert ("마포", "other", "2026-09", "rental") not in keys
    # a lone cohort of 2: nothing at all
    assert not any(k[:2] == ("부산 해운대", "warehouse") for k in keys)
    assert all(r.sample_size >= 3 for r in rows)


def test_most_published_rows_carry_prices_and_demand(rows: list[MarketRow]) -> None:
    assert len(rows) > 3000
    priced = [r for r in rows if r.avg_price is not None]
    assert len(priced) > len(rows) / 3
    assert all(r.demand_index is not None for r in rows)
    assert {r.confidence for r in rows} == {"low", "medium", "high"}
    assert all(r.occupancy_proxy is not None and 0 < r.occupancy_proxy < 1 for r in rows)


def test_it_survives_the_documented_file_format(data: Data) -> None:
    listings, activities = data
    parsed_listings, listing_report = parse_listings(format_listings(listings))
    parsed_activities, activity_report = parse_activity(
        format_activity(activities), known_listings={x.listing_id for x in listings}
    )
    assert (parsed_listings, parsed_activities) == (listings, activities)
    assert listing_report.rejected == activity_report.rejected == {}
