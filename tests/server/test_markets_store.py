"""Loading marketplace files and the published answers the load materializes.

Whatever order files arrive in, the stored rows and dimensions must equal what the pure
core computes from the stored listings and activity: that is what makes a per-request
lookup as safe as running the privacy rules per request.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc_core.demo import markets as demo_markets
from svc_core.errors import SourceError
from svc_core.markets import (
    K_ANONYMITY,
    Activity,
    Listing,
    dimensions,
    join_months,
    publishable_rows,
)
from svc_core.sources.markets import parse_activity, parse_listings
from svc_server import ingest
from svc_server.ingest import markets as markets_ingest
from svc_server.store import Store, open_store
from svc_server.store.loading import loading
from svc_server.store.markets import MarketWrites
from tests.server.markets_support import (
    FIXTURES,
    NOW,
    corrected,
    load_activity,
    load_fixture,
    load_listings,
    market_data,
    members,
    row_order,
)


def fixture_records() -> tuple[list[Listing], list[Activity]]:
    listings, _ = parse_listings((FIXTURES / "listings.csv").read_bytes())
    activities, _ = parse_activity((FIXTURES / "activity.csv").read_bytes())
    return listings, activities


def assert_published(store: Store, listings: list[Listing], activities: list[Activity]) -> None:
    """The stored answers are exactly the core's answers over the given data."""
    expected = publishable_rows(join_months(listings, activities))
    assert sorted(store.markets.rows(), key=row_order) == sorted(expected, key=row_order)
    assert store.markets.dimensions() == dimensions(expected)


def count(store: Store, table: str) -> int:
    with store.data.transaction(write=False) as tx:
        row = tx.fetchone(f"SELECT COUNT(*) AS n FROM {table}")
    return int(row["n"]) if row else 0


def test_loading_the_fixture_publishes_exactly_the_core_answers(store: Store) -> None:
    listings_report = load_fixture(store, "listings")
    activity_report = load_fixture(store, "activity")
    assert (listings_report.read, listings_report.loaded, listings_report.duplicate) == (15, 15, 0)
    assert (activity_report.read, activity_report.loaded, activity_report.duplicate) == (15, 15, 0)
    assert_published(store, *fixture_records())
    row = store.markets.row("강남", "office", "2026-05", "rental")
    assert row is not None and (row.avg_price, row.demand_index) == (232.5, 125.0)
    # suppressed: 2 meeting listings, and the combined cohort (6 - 4 = 2)
    assert store.markets.row("강남", "office", "2026-05", "meeting") is None
    assert store.markets.row("강남", "office", "2026-05", None) is None
    combined = store.markets.row("서초", "office", "2026-05", None)
    assert combined is not None and combined.product_type is None
    assert combined.demand_index == 200.0


def test_loading_the_same_files_twice_changes_nothing(store: Store) -> None:
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    before = (store.markets.rows(), store.markets.dimensions())
    again = [load_fixture(store, "listings"), load_fixture(store, "activity")]
    assert [(r.loaded, r.duplicate) for r in again] == [(0, 15), (0, 15)]
    assert (store.markets.rows(), store.markets.dimensions()) == before
    assert count(store, "market_listings") == count(store, "market_activity") == 15


def test_activity_of_unknown_listings_is_rejected_and_the_rest_loads(store: Store) -> None:
    report = load_fixture(store, "activity")
    assert (report.read, report.loaded, report.rejected) == (15, 0, {"unknown_listing": 15})
    assert store.markets.rows() == []
    listings, activities = fixture_records()
    load_listings(store, [x for x in listings if x.listing_id != "sc-3"])
    report = load_fixture(store, "activity")
    assert (report.loaded, report.rejected) == (14, {"unknown_listing": 1})
    assert [r.line for r in report.rejections] == [10]
    # 서초 now has 2 listings: nothing of it is published
    assert store.markets.row("서초", "office", "2026-05", "rental") is None
    assert_published(
        store,
        [x for x in listings if x.listing_id != "sc-3"],
        [a for a in activities if a.listing_id != "sc-3"],
    )


def test_a_new_price_recomputes_the_published_rows(store: Store) -> None:
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    listings, activities = fixture_records()
    changed = [attrs.evolve(x, list_price=500.0) if x.listing_id == "gn-1" else x for x in listings]
    report = load_listings(store, changed)
    assert (report.loaded, report.duplicate) == (1, 14)
    row = store.markets.row("강남", "office", "2026-05", "rental")
    assert row is not None and row.avg_price == (500 + 150 + 300 + 380) / 4
    assert_published(store, changed, activities)


def test_a_listing_moving_category_rebuilds_both_categories(store: Store) -> None:
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    listings, activities = fixture_records()
    moved = [attrs.evolve(x, category="office") if x.listing_id == "wh-1" else x for x in listings]
    load_listings(store, moved)
    # 마포 warehouse is down to 2 listings (suppressed), 마포 office rental up to 4
    assert store.markets.row("마포", "warehouse", "2026-05", "rental") is None
    mapo = store.markets.row("마포", "office", "2026-05", "rental")
    assert mapo is not None and mapo.sample_size == 4
    assert [v.value for v in store.markets.dimensions().categories] == ["office"]
    assert_published(store, moved, activities)


def test_a_corrected_month_replaces_the_stored_one(store: Store) -> None:
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    listings, activities = fixture_records()
    fixed = [attrs.evolve(a, views=40) if a.listing_id == "gn-3" else a for a in activities]
    report = load_activity(store, fixed)
    assert (report.loaded, report.duplicate) == (1, 14)
    row = store.markets.row("강남", "office", "2026-05", "rental")
    assert row is not None and row.total_views == 100
    assert_published(store, listings, fixed)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfelisting_id\n", "not UTF-8"),
        (
            b"listing_id,region,category,product_type,list_price\ngn-1,a,office,rental,1\n",
            "bad header",
        ),
        (b"", "empty"),
    ],
)
def test_an_unreadable_file_changes_nothing(store: Store, data: bytes, message: str) -> None:
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    before = (store.markets.rows(), count(store, "ingest_log"))
    for kind in markets_ingest.KINDS:
        with pytest.raises(SourceError, match=message):
            ingest.ingest(store, kind, data, path="x.csv", now=NOW)
    assert (store.markets.rows(), count(store, "ingest_log")) == before


def test_bad_rows_are_counted_by_reason_and_logged(store: Store) -> None:
    report = load_fixture(store, "listings_bad_rows")
    assert report.loaded == 2  # ok-1 and ok-12
    assert report.rejected["duplicate_listing_id"] == 1
    assert report.rejected_total == report.read - 2
    with store.data.transaction(write=False) as tx:
        logged = tx.fetchone("SELECT kind, read_count, loaded, rejected FROM ingest_log")
    assert logged is not None
    assert (logged["kind"], logged["read_count"], logged["loaded"]) == (
        "market-listings",
        report.read,
        2,
    )
    assert '"duplicate_listing_id": {"count": 1, "lines": [11]}' in logged["rejected"]


def test_a_failed_load_rolls_back_the_records_and_the_answers(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_fixture(store, "listings")
    load_fixture(store, "activity")
    before = store.markets.rows()
    listings, _ = fixture_records()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(MarketWrites, "replace_dimensions", broken)  # the load's writer
    with pytest.raises(RuntimeError):
        load_listings(store, [attrs.evolve(x, list_price=9.0) for x in listings])
    monkeypatch.undo()
    assert store.markets.rows() == before
    row = store.markets.row("강남", "office", "2026-05", "rental")
    assert row is not None and row.avg_price == 232.5


def test_data_stored_without_answers_is_published_by_the_next_load(store: Store) -> None:
    # e.g. a database loaded before the answers were materialized
    listings, activities = fixture_records()
    with loading(store) as w:
        w.markets.upsert_listings(w.tx, listings)
        w.markets.upsert_activity(w.tx, activities)
    assert store.markets.rows() == []
    report = load_fixture(store, "listings")
    assert report.loaded == 0
    assert_published(store, listings, activities)


def test_activity_of_a_listing_not_stored_is_refused_by_the_writer(store: Store) -> None:
    _, activities = fixture_records()
    with pytest.raises(ValueError, match="not stored"), loading(store) as w:
        w.markets.upsert_activity(w.tx, activities)


def test_concurrent_loads_see_each_other(store: Store) -> None:
    """Marketplace writers are serialized: every load's answers include the others'."""
    listings, activities = fixture_records()
    load_listings(store, listings)
    months = [attrs.evolve(a, period=f"2026-{m:02d}") for m in range(1, 7) for a in activities]
    by_month = [[a for a in months if a.period == f"2026-{m:02d}"] for m in range(1, 7)]
    errors: list[BaseException] = []

    def load(part: list[Activity], n: int) -> None:
        try:
            load_activity(store, part, path=f"a{n}.csv")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(p, n)) for n, p in enumerate(by_month)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert_published(store, listings, months)


def test_the_demo_data_set_is_published_and_reloads_as_a_no_op(sqlite_store: Store) -> None:
    listings, activities = demo_markets.demo_market_data(1)
    with loading(sqlite_store) as w:
        first = markets_ingest.write(w, listings, activities, synthetic=True)
    rows = publishable_rows(join_months(listings, activities))
    assert (first.listings, first.activity, first.published) == (
        len(listings),
        len(activities),
        len(rows),
    )
    stored = sqlite_store.markets.rows()
    assert sorted(stored, key=row_order) == sorted(rows, key=row_order)
    assert min(r.sample_size for r in stored) >= K_ANONYMITY
    for region, category, product_type in demo_markets.SMALL_COHORTS:
        assert not [
            r
            for r in stored
            if (r.region, r.category, r.product_type) == (region, category, product_type)
        ]
    with loading(sqlite_store) as w:
        again = markets_ingest.write(w, listings, activities, synthetic=True)
    assert (again.listings, again.activity, again.published) == (0, 0, 0)


# --- loads in any order give the core's answers ------------------------------------------


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(
    market_data(min_listings=6),
    st.integers(1, 3),
    st.lists(st.tuples(st.integers(0, 19), st.integers(0, 1000), st.integers(0, 2)), max_size=5),
)
def test_incremental_loads_publish_what_a_full_recomputation_would(
    data: tuple[list[Listing], list[Activity]],
    parts: int,
    corrections: list[tuple[int, int, int]],
) -> None:
    listings, activities = data
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'svc.db'}")
        try:
            store.migrate()
            load_listings(store, listings)
            for k in range(parts):
                load_activity(store, activities[k::parts], path=f"a{k}.csv")
            assert_published(store, listings, activities)
            fixes = {
                f"l{i}": corrected(listings[i], price, move)
                for i, price, move in corrections
                if i < len(listings)
            }
            load_listings(store, list(fixes.values()), path="fix.csv")
            final = {x.listing_id: x for x in listings} | fixes
            assert_published(store, list(final.values()), activities)
        finally:
            store.close()


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(market_data(min_listings=6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_correcting_listings_no_answer_covers_changes_no_answer(
    data: tuple[list[Listing], list[Activity]], price: int, views: int
) -> None:
    """A listing outside every published cohort can be corrected (price, views) without
    any stored answer moving: the answers carry nothing about it."""
    listings, activities = data
    rows = publishable_rows(join_months(listings, activities))
    months = join_months(listings, activities)
    covered = {i for row in rows for i in members(months, row)}
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'svc.db'}")
        try:
            store.migrate()
            load_listings(store, listings)
            load_activity(store, activities)
            before = (sorted(store.markets.rows(), key=row_order), store.markets.dimensions())
            load_listings(
                store,
                [
                    attrs.evolve(x, list_price=float(price))
                    for x in listings
                    if x.listing_id not in covered
                ],
                path="fix.csv",
            )
            load_activity(
                store,
                [attrs.evolve(a, views=views) for a in activities if a.listing_id not in covered],
                path="fix-activity.csv",
            )
            after = (sorted(store.markets.rows(), key=row_order), store.markets.dimensions())
            assert after == before
        finally:
            store.close()
