"""Marketplace aggregates and their privacy rules.

Field definitions are checked on the hand-computed fixture in ``tests/fixtures/markets``;
the k-anonymity rules are checked by hypothesis on random listing sets full of cohorts of
1 and 2 listings, by trying the differencing attacks an API user could run.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import attrs
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from svc_core.errors import InvalidParams, InvalidPeriod
from svc_core.markets import (
    CATEGORIES,
    K_ANONYMITY,
    PRODUCT_TYPES,
    Activity,
    DimensionValue,
    Listing,
    ListingMonth,
    MarketQuery,
    MarketRow,
    aggregate,
    confidence_for,
    dimensions,
    join_months,
    market_dimensions_meta,
    market_meta,
    market_query,
    publishable_rows,
    rows_confidence,
)
from svc_core.sources.markets import parse_activity, parse_listings
from tests import market_strategies as grid
from tests.market_strategies import market_data

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markets"


def _fixture_months() -> list[ListingMonth]:
    listings, _ = parse_listings((FIXTURES / "listings.csv").read_bytes())
    activities, _ = parse_activity((FIXTURES / "activity.csv").read_bytes())
    return join_months(listings, activities)


FIXTURE = _fixture_months()


def _row(region: str, category: str, product_type: str | None) -> MarketRow | None:
    return aggregate(
        FIXTURE, region=region, category=category, period="2026-05", product_type=product_type
    )


def _listing(listing_id: str, price: float = 100.0, **kw: object) -> Listing:
    fields: dict[str, object] = {
        "listing_id": listing_id,
        "region": "강남",
        "category": "office",
        "product_type": "rental",
        "list_price": price,
    }
    fields.update(kw)
    return Listing(**fields)  # type: ignore[arg-type]


def _month(listing: Listing, period: str = "2026-05", views: int = 10) -> ListingMonth:
    return ListingMonth(
        listing=listing,
        activity=Activity(
            listing_id=listing.listing_id,
            period=period,
            views=views,
            bookings=1,
            booked_hours=1.0,
            available_hours=2.0,
        ),
    )


# --- records ---------------------------------------------------------------------------


def test_effective_price_prefers_the_discounted_price() -> None:
    assert _listing("a", 200.0, discounted_price=150).effective_price == 150.0
    assert _listing("a", 200.0).effective_price == 200.0
    assert _listing("a", 200.0, discounted_price=0).effective_price == 0.0


@pytest.mark.parametrize(
    "change",
    [
        {"listing_id": ""},
        {"listing_id": "-a"},
        {"listing_id": "a b"},
        {"region": ""},
        {"region": " 강남"},
        {"region": "강\u202e남"},
        {"region": "강\u2028남"},
        {"region": "강\u200d남"},
        {"region": "x" * 65},
        {"region": "e\u0301"},  # NFD: the loader normalizes, records insist on NFC
        {"category": "Office"},
        {"category": "apartment"},
        {"product_type": "lease"},
        {"list_price": -1.0},
        {"list_price": float("nan")},
        {"list_price": float("inf")},
        {"list_price": True},
        {"list_price": "100"},
        {"list_price": 1e13},
        {"discounted_price": -0.5},
    ],
)
def test_listing_validators_refuse_bad_values(change: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "listing_id": "a",
        "region": "강남",
        "category": "office",
        "product_type": "rental",
        "list_price": 1.0,
    }
    fields.update(change)
    with pytest.raises(ValueError):
        Listing(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"period": "2026-13"},
        {"period": "2026-00"},
        {"period": "2026-1"},
        {"period": "1989-12"},
        {"views": -1},
        {"views": True},
        {"bookings": 1.0},
        {"booked_hours": 3.0},
        {"available_hours": -1.0},
    ],
)
def test_activity_validators_refuse_bad_values(change: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "listing_id": "a",
        "period": "2026-05",
        "views": 1,
        "bookings": 0,
        "booked_hours": 1.0,
        "available_hours": 2.0,
    }
    fields.update(change)
    with pytest.raises(ValueError):
        Activity(**fields)  # type: ignore[arg-type]


def test_activity_hours_may_be_integers_and_become_floats() -> None:
    a = Activity(
        listing_id="a", period="2026-05", views=0, bookings=0, booked_hours=2, available_hours=2
    )
    assert (a.booked_hours, type(a.booked_hours)) == (2.0, float)


def test_a_listing_month_pairs_the_same_listing() -> None:
    with pytest.raises(ValueError):
        ListingMonth(listing=_listing("a"), activity=_month(_listing("b")).activity)


def test_join_months_drops_unknown_listings_and_the_last_listing_wins() -> None:
    old, new = _listing("a", 100.0), _listing("a", 120.0)
    acts = [_month(old).activity, _month(_listing("zz")).activity]
    (joined,) = join_months([old, new], acts)
    assert joined.listing.list_price == 120.0


def test_two_activity_rows_of_one_listing_month_are_refused() -> None:
    m = _month(_listing("a"))
    with pytest.raises(ValueError, match="two activity rows"):
        publishable_rows([m, m])


# --- field definitions on the hand-computed fixture -------------------------------------


def test_prices_mean_median_quartiles_min_max_use_effective_prices() -> None:
    row = _row("강남", "office", "rental")
    assert row is not None
    # effective prices: 100, 150 (discounted from 200), 300, 380 (discounted from 400)
    assert row.avg_price == 232.5  # 930 / 4
    assert row.median_price == 225.0  # h = 1.5: 150 + 0.5 * 150
    assert row.price_p25 == 137.5  # h = 0.75: 100 + 0.75 * 50
    assert row.price_p75 == 320.0  # h = 2.25: 300 + 0.25 * 80
    assert (row.min_price, row.max_price) == (100.0, 380.0)


def test_counts_rates_and_occupancy() -> None:
    row = _row("강남", "office", "rental")
    assert row is not None
    assert (row.sample_size, row.total_views, row.total_bookings) == (4, 60, 6)
    assert row.booking_conv_rate == 0.1  # 6 / 60
    assert row.occupancy_proxy == 0.36  # (50 + 30 + 0 + 100) / (100 + 100 + 100 + 200)
    assert row.confidence == "low"


def test_demand_index_compares_views_per_listing_with_the_category_average() -> None:
    # office rental, 2026-05, published cohorts: 강남 60 views / 4, 서초 60 / 3, 마포 0 / 3;
    # category average 120 / 10 = 12 views per listing
    rows = {r: _row(r, "office", "rental") for r in ("강남", "서초", "마포")}
    assert {r: row.demand_index for r, row in rows.items() if row} == {
        "강남": 125.0,  # 100 * 15 / 12
        "서초": 100 * 60 * 10 / (3 * 120),  # 166.66..., unrounded
        "마포": 0.0,
    }


def test_other_cohorts_of_the_fixture() -> None:
    seocho = _row("서초", "office", "rental")
    assert seocho is not None
    assert (seocho.avg_price, seocho.median_price, seocho.price_p25, seocho.price_p75) == (
        2000.0,
        2000.0,
        1500.0,
        2500.0,
    )
    assert (seocho.booking_conv_rate, seocho.occupancy_proxy) == (0.05, 0.2)


def test_undefined_rates_are_null() -> None:
    mapo = _row("마포", "office", "rental")
    assert mapo is not None
    assert mapo.total_views == 0
    assert mapo.booking_conv_rate is None  # no views
    assert mapo.occupancy_proxy is None  # no available hours
    warehouse = _row("마포", "warehouse", "rental")
    assert warehouse is not None
    assert warehouse.demand_index is None  # the whole category had no views
    assert warehouse.occupancy_proxy == 0.1


def test_the_combined_cohort_equals_the_product_cohort_when_it_is_the_only_one() -> None:
    combined, rental = _row("서초", "office", None), _row("서초", "office", "rental")
    assert combined is not None and rental is not None
    assert combined.product_type is None
    assert attrs.evolve(combined, product_type="rental", demand_index=None) == attrs.evolve(
        rental, demand_index=None
    )
    # combined baseline: published combined cohorts 서초 (60 / 3) and 마포 (0 / 3)
    assert combined.demand_index == 200.0


def test_rounding_prices_2_rates_4_demand_1() -> None:
    months = [
        _month(_listing("a", 1 / 3)),
        _month(_listing("b", 1.0)),
        _month(_listing("c", 1.0), views=11),
        _month(_listing("d", 5.0, region="서초"), views=7),
        _month(_listing("e", 5.0, region="서초"), views=7),
        _month(_listing("f", 5.0, region="서초"), views=7),
    ]
    row = aggregate(months, region="강남", category="office", period="2026-05", product_type=None)
    assert row is not None
    assert row.avg_price == 0.78  # 2.3333 / 3
    assert row.booking_conv_rate == 3 / 31  # unrounded: SPEC defines the ratio itself
    assert row.demand_index == 100 * 31 * 6 / (3 * 52)  # (31 / 3) / (52 / 6), unrounded


@pytest.mark.parametrize(
    ("n", "level"), [(3, "low"), (7, "low"), (8, "medium"), (19, "medium"), (20, "high")]
)
def test_confidence_ladder(n: int, level: str) -> None:
    assert confidence_for(n) == level
    months = [_month(_listing(f"l{i}")) for i in range(n)]
    row = aggregate(months, region="강남", category="office", period="2026-05", product_type=None)
    assert row is not None and row.confidence == level


def test_rows_are_ordered_and_as_dict_follows_spec_order() -> None:
    rows = publishable_rows(FIXTURE)
    assert [r.key for r in rows] == [
        ("강남", "office", "2026-05", "rental"),
        ("마포", "office", "2026-05", "rental"),
        ("마포", "office", "2026-05", None),
        ("마포", "warehouse", "2026-05", "rental"),
        ("마포", "warehouse", "2026-05", None),
        ("서초", "office", "2026-05", "rental"),
        ("서초", "office", "2026-05", None),
    ]
    assert list(rows[0].as_dict()) == [
        "region",
        "category",
        "period",
        "product_type",
        "avg_price",
        "median_price",
        "min_price",
        "max_price",
        "price_p25",
        "price_p75",
        "sample_size",
        "total_views",
        "total_bookings",
        "demand_index",
        "booking_conv_rate",
        "occupancy_proxy",
        "confidence",
    ]


def test_a_period_without_activity_has_no_cohort() -> None:
    assert (
        aggregate(FIXTURE, region="강남", category="office", period="2026-06", product_type=None)
        is None
    )
    assert (
        aggregate(FIXTURE, region="부산", category="office", period="2026-05", product_type=None)
        is None
    )


# --- privacy: primary and complementary suppression -------------------------------------


def test_a_cohort_of_two_is_never_published() -> None:
    assert _row("강남", "office", "meeting") is None


def test_combined_minus_rental_cannot_expose_the_two_meeting_listings() -> None:
    # 강남 office: 4 rental listings are published; the combined cohort (6) would give
    # the 2 meeting listings away by subtraction, so it is suppressed.
    assert _row("강남", "office", "rental") is not None
    assert _row("강남", "office", None) is None


def test_two_small_product_cohorts_publish_only_their_union() -> None:
    months = [
        _month(_listing("r1")),
        _month(_listing("m1", product_type="meeting")),
        _month(_listing("m2", product_type="meeting")),
    ]
    kw = {"region": "강남", "category": "office", "period": "2026-05"}
    assert aggregate(months, **kw, product_type="rental") is None
    assert aggregate(months, **kw, product_type="meeting") is None
    combined = aggregate(months, **kw, product_type=None)
    assert combined is not None and combined.sample_size == 3


def test_all_three_are_published_when_both_products_have_three() -> None:
    months = [_month(_listing(f"r{i}")) for i in range(3)] + [
        _month(_listing(f"m{i}", product_type="meeting")) for i in range(3)
    ]
    keys = {r.key[3] for r in publishable_rows(months)}
    assert keys == {"rental", "meeting", None}


# --- privacy: prices across months ------------------------------------------------------


def _series(*periods: tuple[str, Iterable[str]]) -> list[ListingMonth]:
    prices = {"a": 100.0, "b": 200.0, "c": 300.0, "d": 1000.0, "e": 50.0, "f": 70.0, "g": 90.0}
    return [_month(_listing(i, prices[i]), period) for period, ids in periods for i in ids]


def _rental(months: list[ListingMonth], period: str) -> MarketRow | None:
    return aggregate(months, region="강남", category="office", period=period, product_type="rental")


def test_a_listing_leaving_does_not_reveal_its_price() -> None:
    months = _series(("2026-01", "abcd"), ("2026-02", "abc"))
    jan, feb = _rental(months, "2026-01"), _rental(months, "2026-02")
    assert jan is not None and feb is not None
    assert jan.avg_price == 400.0
    # 4 * 400 - 3 * feb.avg_price would be d's price: February's prices are withheld
    assert feb.sample_size == 3
    assert (feb.avg_price, feb.median_price, feb.min_price, feb.max_price) == (None,) * 4
    assert (feb.price_p25, feb.price_p75) == (None, None)
    assert feb.total_views == 30 and feb.demand_index == 100.0


def test_a_swap_of_one_listing_does_not_reveal_a_price_difference() -> None:
    months = _series(("2026-01", "abcd"), ("2026-02", "abce"))
    feb = _rental(months, "2026-02")
    assert feb is not None and feb.avg_price is None


def test_prices_return_once_three_listings_changed() -> None:
    months = _series(("2026-01", "abcd"), ("2026-02", "abc"), ("2026-03", "abcdefg"))
    mar = _rental(months, "2026-03")
    assert mar is not None and mar.avg_price == round(1810 / 7, 2)


def test_within_a_cell_prices_go_to_all_rows_or_to_one() -> None:
    jan = [_month(_listing(i)) for i in ("a", "b", "c", "d")]
    jan = [attrs.evolve(m, activity=attrs.evolve(m.activity, period="2026-01")) for m in jan]
    feb = [_month(_listing(i), "2026-02") for i in ("a", "b", "c")] + [
        _month(_listing(f"m{i}", product_type="meeting"), "2026-02") for i in range(3)
    ]
    rows = {r.key[3]: r for r in publishable_rows(jan + feb) if r.period == "2026-02"}
    # rental lost one listing since January: withheld; combined and meeting would
    # reveal it by subtraction, so only meeting keeps its prices
    assert rows["rental"].avg_price is None
    assert rows["meeting"].avg_price == 100.0
    assert rows[None].avg_price is None


# --- privacy: properties under attack ---------------------------------------------------


@st.composite
def market_months(draw: st.DrawFn, max_listings: int = 24) -> list[ListingMonth]:
    """``market_data`` of three listings or more as (listing, month) pairs: cohorts of 1
    and 2 listings are common, and most data sets publish rows (checked below)."""
    listings, activities = draw(market_data(min_listings=3, max_listings=max_listings))
    by_id = {listing.listing_id: listing for listing in listings}
    return [ListingMonth(listing=by_id[a.listing_id], activity=a) for a in activities]


def _members(months: list[ListingMonth], row: MarketRow) -> frozenset[str]:
    """The listing ids a row describes, recomputed from its key."""
    return frozenset(
        m.listing.listing_id
        for m in months
        if (m.listing.region, m.listing.category, m.period)
        == (row.region, row.category, row.period)
        and row.product_type in (None, m.listing.product_type)
    )


def _with_members(months: list[ListingMonth]) -> list[tuple[MarketRow, frozenset[str]]]:
    return [(row, _members(months, row)) for row in publishable_rows(months)]


def _small(size: int) -> bool:
    return 0 < size < K_ANONYMITY


def test_most_generated_data_sets_publish_rows_for_the_checks_to_attack() -> None:
    """The privacy properties below check published rows: a data set that publishes none
    checks nothing. At least half of the examples they draw publish a row, and a good
    share hide a cohort of one or two listings beside a published one."""
    seen: list[tuple[int, bool]] = []

    @settings(max_examples=120, derandomize=True, database=None, phases=[Phase.generate])
    @given(market_months())
    def draw(months: list[ListingMonth]) -> None:
        rows = publishable_rows(months)
        published = {(r.region, r.category, r.period) for r in rows}
        cells: dict[tuple[str, str, str], set[str]] = {}
        for m in months:
            key = (m.listing.region, m.listing.category, m.period)
            cells.setdefault(key, set()).add(m.listing.listing_id)
        hidden = any(_small(len(ids)) for key, ids in cells.items() if key not in published)
        seen.append((len(rows), hidden and bool(rows)))

    draw()
    assert len(seen) == 120
    assert sum(1 for rows, _ in seen if rows) >= len(seen) / 2
    assert sum(1 for _, both in seen if both) >= len(seen) / 4


@settings(max_examples=120)
@given(market_months())
def test_no_published_row_describes_fewer_than_three_listings(
    months: list[ListingMonth],
) -> None:
    for row in publishable_rows(months):
        members = _members(months, row)
        assert row.sample_size == len(members) >= K_ANONYMITY


@settings(max_examples=120)
@given(market_months())
def test_no_two_rows_of_a_month_difference_to_one_or_two_listings(
    months: list[ListingMonth],
) -> None:
    for (a, sa), (b, sb) in combinations(_with_members(months), 2):
        if (a.region, a.category, a.period) != (b.region, b.category, b.period):
            continue  # other cells hold other listings (or other months' activity)
        assert not _small(len(sa ^ sb))
        # what an attacker actually subtracts
        if sa >= sb:
            assert not _small(a.sample_size - b.sample_size)


@settings(max_examples=120)
@given(market_months())
def test_no_two_price_answers_difference_to_one_or_two_listings(
    months: list[ListingMonth],
) -> None:
    priced = [(r, ids) for r, ids in _with_members(months) if r.avg_price is not None]
    for (a, sa), (b, sb) in combinations(priced, 2):
        if (a.region, a.category) == (b.region, b.category):
            assert not _small(len(sa ^ sb))


@settings(max_examples=60)
@given(market_months())
def test_within_a_cell_two_priced_rows_mean_every_row_is_priced(
    months: list[ListingMonth],
) -> None:
    cells: dict[tuple[str, str, str], list[MarketRow]] = {}
    for row in publishable_rows(months):
        cells.setdefault((row.region, row.category, row.period), []).append(row)
    for rows in cells.values():
        priced = [r for r in rows if r.avg_price is not None]
        if len(priced) >= 2:
            assert len(priced) == len(rows)


@settings(max_examples=60)
@given(market_months())
def test_demand_index_is_computable_from_published_rows_alone(
    months: list[ListingMonth],
) -> None:
    rows = publishable_rows(months)
    for row in rows:
        peers = [
            r
            for r in rows
            if (r.category, r.period, r.product_type)
            == (row.category, row.period, row.product_type)
        ]
        views = sum(r.total_views for r in peers)
        listings = sum(r.sample_size for r in peers)
        expected = None
        if views:
            # views per listing over the published average, exact then rounded once
            expected = float(Fraction(100 * row.total_views * listings, row.sample_size * views))
        assert row.demand_index == expected


@settings(max_examples=60)
@given(market_months(), st.data())
def test_listings_outside_published_rows_cannot_move_any_number(
    months: list[ListingMonth], data: st.DataObject
) -> None:
    rows = publishable_rows(months)
    covered = set().union(*(_members(months, r) for r in rows)) if rows else set()
    changed = []
    for m in months:
        if m.listing.listing_id in covered:
            changed.append(m)
            continue
        listing = attrs.evolve(m.listing, list_price=float(data.draw(st.integers(0, 10**6))))
        activity = attrs.evolve(m.activity, views=data.draw(st.integers(0, 10**6)), bookings=0)
        changed.append(ListingMonth(listing=listing, activity=activity))
    assert publishable_rows(changed) == rows


@settings(max_examples=60)
@given(market_months(), st.sampled_from(grid.PERIODS))
def test_later_months_never_change_earlier_answers(months: list[ListingMonth], cutoff: str) -> None:
    earlier = [m for m in months if m.period <= cutoff]
    assert publishable_rows(earlier) == [r for r in publishable_rows(months) if r.period <= cutoff]


@settings(max_examples=40)
@given(market_months())
def test_aggregate_answers_exactly_the_published_rows(months: list[ListingMonth]) -> None:
    rows = {r.key: r for r in publishable_rows(months)}
    for region in grid.REGIONS:
        for category in grid.CATEGORIES:
            for period in grid.PERIODS:
                for product_type in (*PRODUCT_TYPES, None):
                    got = aggregate(
                        months,
                        region=region,
                        category=category,
                        period=period,
                        product_type=product_type,
                    )
                    assert got == rows.get((region, category, period, product_type))


@settings(max_examples=60)
@given(market_months())
def test_row_statistics_match_their_definitions(months: list[ListingMonth]) -> None:
    for row, ids in _with_members(months):
        members = [m for m in months if m.listing.listing_id in ids and m.period == row.period]
        views = sum(m.activity.views for m in members)
        assert row.total_views == views
        assert row.total_bookings == sum(m.activity.bookings for m in members)
        assert row.occupancy_proxy is None or 0 <= row.occupancy_proxy <= 1
        if row.avg_price is None:
            continue
        prices = sorted(m.listing.effective_price for m in members)
        q1, q2, q3 = statistics.quantiles(prices, n=4, method="inclusive")
        assert row.avg_price == round(statistics.fmean(prices), 2)
        assert row.median_price == round(q2, 2) == round(statistics.median(prices), 2)
        assert (row.price_p25, row.price_p75) == (round(q1, 2), round(q3, 2))
        assert (row.min_price, row.max_price) == (prices[0], prices[-1])
        ladder = [row.min_price, row.price_p25, row.median_price, row.price_p75, row.max_price]
        known = [v for v in ladder if v is not None]
        assert len(known) == 5 and known == sorted(known)


# --- dimensions -------------------------------------------------------------------------


def test_dimensions_count_published_combinations() -> None:
    dims = dimensions(publishable_rows(FIXTURE))
    # published combinations: (강남, office), (마포, office), (마포, warehouse), (서초, office)
    assert dims.regions == (
        DimensionValue(value="강남", sample_count=1),
        DimensionValue(value="마포", sample_count=2),
        DimensionValue(value="서초", sample_count=1),
    )
    assert dims.categories == (
        DimensionValue(value="office", sample_count=3),
        DimensionValue(value="warehouse", sample_count=1),
    )
    assert dims.periods == (DimensionValue(value="2026-05", sample_count=4),)
    assert dims.total_combinations == 3 * 2 * 1
    assert dims.as_dict()["regions"][0] == {"value": "강남", "sample_count": 1}


def test_a_combination_of_only_small_cohorts_is_not_listed() -> None:
    months = [_month(_listing("a", region="판교")), _month(_listing("b", region="판교"))]
    months += [_month(_listing(f"x{i}")) for i in range(3)]
    dims = dimensions(publishable_rows(months))
    assert [v.value for v in dims.regions] == ["강남"]


@settings(max_examples=60)
@given(market_months(), st.integers(1, 1000))
def test_dimensions_reveal_no_listing_counts(months: list[ListingMonth], factor: int) -> None:
    rows = publishable_rows(months)
    dims = dimensions(rows)
    combos = {(r.region, r.category, r.period) for r in rows}
    for field, values in (("regions", dims.regions), ("periods", dims.periods)):
        assert sum(v.sample_count for v in values) == len(combos), field
    scaled = [attrs.evolve(r, sample_size=r.sample_size * factor, total_views=0) for r in rows]
    assert dimensions(scaled) == dims


def test_categories_follow_the_enumeration_order() -> None:
    months = [
        _month(_listing(f"{c}{i}", category=c)) for c in reversed(CATEGORIES) for i in range(3)
    ]
    assert [v.value for v in dimensions(publishable_rows(months)).categories] == list(CATEGORIES)


# --- query and meta ---------------------------------------------------------------------


def test_market_query_accepts_the_documented_parameters() -> None:
    q = market_query(
        [
            ("region", "강남"),
            ("category", "office"),
            ("period", "2026-09"),
            ("product_type", "rental"),
        ]
    )
    assert q == MarketQuery(
        region="강남", category="office", period="2026-09", product_type="rental"
    )
    q = market_query([("region", "e\u0301"), ("category", "studio"), ("period", "2026-01")])
    assert (q.region, q.product_type) == ("\u00e9", None)


@pytest.mark.parametrize(
    ("pairs", "error", "words"),
    [
        ([("category", "office"), ("period", "2026-09")], InvalidParams, "'region'"),
        ([("region", "강남"), ("period", "2026-09")], InvalidParams, "'category'"),
        ([("region", "강남"), ("category", "office")], InvalidParams, "'period'"),
        (
            [("region", "강남"), ("category", "Office"), ("period", "2026-09")],
            InvalidParams,
            "one of",
        ),
        (
            [("region", "강남"), ("category", "office"), ("period", "2026-13")],
            InvalidPeriod,
            "01 to 12",
        ),
        (
            [("region", "강남"), ("category", "office"), ("period", "last_6m")],
            InvalidPeriod,
            "YYYY-MM",
        ),
        (
            [
                ("region", "강남"),
                ("category", "office"),
                ("period", "2026-09"),
                ("product_type", "x"),
            ],
            InvalidParams,
            "rental, meeting",
        ),
        (
            [("region", "강남"), ("category", "office"), ("period", "2026-09"), ("sigungu", "1")],
            InvalidParams,
            "Unknown",
        ),
        (
            [("region", "강\u0000남"), ("category", "office"), ("period", "2026-09")],
            InvalidParams,
            "NUL",
        ),
        (
            [("region", "x" * 65), ("category", "office"), ("period", "2026-09")],
            InvalidParams,
            "64",
        ),
    ],
)
def test_market_query_refuses_bad_parameters(
    pairs: list[tuple[str, str]], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        market_query(pairs)


def test_market_meta_has_the_spec_fields() -> None:
    q = MarketQuery(region="강남", category="office", period="2026-09")
    meta = market_meta(
        generated_at=datetime(2026, 10, 1, 9, 30, tzinfo=timezone(timedelta(hours=9))),
        count=1,
        confidence="high",
        auth_method="api_key",
        query=q,
        rate_limit={"limit_per_min": 120, "remaining": 119},
        request_id="req_abc",
    )
    assert meta == {
        "service": "svc",
        "api_version": "v1",
        "generated_at": "2026-10-01T00:30:00Z",
        "count": 1,
        "confidence": "high",
        "auth_method": "api_key",
        "query": {
            "region": "강남",
            "category": "office",
            "period": "2026-09",
            "product_type": None,
        },
        "rate_limit": {"limit_per_min": 120, "remaining": 119},
        "request_id": "req_abc",
    }


def test_market_dimensions_meta_has_the_spec_fields() -> None:
    meta = market_dimensions_meta(
        generated_at=datetime(2026, 10, 1, tzinfo=UTC),
        total_combinations=42,
        auth_method="session",
        rate_limit={"limit_per_min": 60, "remaining": None},
    )
    assert meta == {
        "service": "svc",
        "api_version": "v1",
        "generated_at": "2026-10-01T00:00:00Z",
        "total_combinations": 42,
        "auth_method": "session",
        "rate_limit": {"limit_per_min": 60, "remaining": None},
    }


def test_rows_confidence_is_the_weakest() -> None:
    rows = publishable_rows(FIXTURE)
    assert rows_confidence(rows) == "low"
    assert rows_confidence([]) is None
