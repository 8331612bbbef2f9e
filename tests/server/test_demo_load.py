"""``svc demo-data``: the whole set once per session, and a small slice for idempotency,
determinism and the command, on SQLite and PostgreSQL."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from svc_core.demo import markets as demo_markets
from svc_core.demo import realestate as core_demo
from svc_core.models import METRIC_TYPES
from svc_server import cli
from svc_server.ingest import demo
from svc_server.store import Store, open_store
from tests.conftest import Templates

SLICE = 3000


@functools.cache
def _small_markets(seed: int) -> tuple[Any, Any]:
    """The whole set's first 40 listings and their activity. The regions are drawn in
    order from one generator, so the set of its first region alone (a fifth of the
    work) begins with the same listings."""
    first = dict(itertools.islice(demo_markets.REGIONS.items(), 1))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(demo_markets, "REGIONS", first)
        listings, activities = FULL_MARKETS(seed)
    kept = listings[:40]
    ids = {listing.listing_id for listing in kept}
    return kept, [a for a in activities if a.listing_id in ids]


FULL_TRANSACTIONS = core_demo.demo_transactions
FULL_INDICES = core_demo.demo_indices
FULL_MARKETS = demo_markets.demo_market_data


def use_small_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the demo set its first records (3,000 deals, 600 index values, 40 listings
    and their activity), so a load takes a moment where the whole set takes 15 s."""

    def transactions(seed: int) -> Iterator[Any]:
        return itertools.islice(FULL_TRANSACTIONS(seed), SLICE)

    def indices(seed: int) -> Iterator[Any]:
        return itertools.islice(FULL_INDICES(seed), 600)

    monkeypatch.setattr(core_demo, "demo_transactions", transactions)
    monkeypatch.setattr(core_demo, "demo_indices", indices)
    monkeypatch.setattr(demo_markets, "demo_market_data", _small_markets)


@pytest.fixture
def small_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first records of the demo set, so a load takes a moment (``use_small_demo``)."""
    use_small_demo(monkeypatch)


def table(store: Store, sql: str) -> list[dict[str, Any]]:
    with store.data.transaction(write=False) as tx:
        return tx.fetchall(sql)


def test_the_full_demo_set(demo_db_url: str) -> None:
    store = open_store(demo_db_url)
    try:
        counts = store.realestate.counts()
        assert 160_000 < counts["transactions"] < 185_000
        assert (
            counts["index_observations"]
            # every metric of all floors; floor_utility_ratio is a floor's own
            == len(core_demo.demo_districts()) * 3 * (len(METRIC_TYPES) - 1) * 20
        )
        assert counts["coverage_cohorts"] > 0
        flags = table(
            store,
            "SELECT MIN(synthetic) AS lo, MAX(synthetic) AS hi, MIN(month) AS first, "
            "MAX(month) AS last, COUNT(DISTINCT sigungu_code) AS districts FROM transactions",
        )[0]
        assert flags == {
            "lo": 1,
            "hi": 1,
            "first": "2021-10",
            "last": "2026-09",
            "districts": len(core_demo.demo_districts()),
        }
        state = store.realestate.state()
        assert state.synthetic and state.coverage_complete
        assert (state.latest_month, state.latest_index_period) == ("2026-09", "2026-Q3")
        [log] = table(store, "SELECT kind, path, loaded FROM ingest_log")
        assert log["kind"] == "demo" and log["path"] == "demo-data --seed 1"
        # every month of every district and dataset is loaded, deals or none
        [months] = table(
            store,
            "SELECT COUNT(*) AS n, MIN(complete) AS whole, SUM(total_count) AS items "
            "FROM source_months",
        )
        assert months == {
            # the five RTMS datasets and the other sources'
            "n": len(core_demo.demo_districts()) * core_demo.DEMO_MONTHS * 6,
            "whole": 1,
            "items": counts["transactions"],
        }
    finally:
        store.close()


def test_a_second_load_adds_nothing(store: Store, small_demo: None) -> None:
    first = demo.load_demo(store, seed=1, now=0)
    assert first["transactions"] == SLICE and first["duplicate_transactions"] == 0
    before = store.realestate.counts()
    coverage = table(
        store, "SELECT granularity, sigungu_code, dong, row_json FROM coverage_cohorts"
    )
    second = demo.load_demo(store, seed=1, now=1)
    assert second["transactions"] == 0 and second["duplicate_transactions"] == SLICE
    assert second["index_observations"] == 0
    after = store.realestate.counts()
    assert after == {**before, "ingest_log": before["ingest_log"] + 1}
    assert table(
        store, "SELECT granularity, sigungu_code, dong, row_json FROM coverage_cohorts"
    ) == (coverage)


def test_the_same_seed_gives_the_same_rows(
    db_url: str, templates: Templates, small_demo: None, tmp_path: Any
) -> None:
    other = f"sqlite:///{tmp_path / 'other.db'}"
    dumps = []
    for url in (db_url, other):
        templates.fill(url)  # migrated
        s = open_store(url)
        demo.load_demo(s, seed=7, now=0)
        dumps.append(
            table(
                s,
                "SELECT natural_key, source, sigungu_code, dong, property_type, "
                "transaction_type, deal_date, price_krw, monthly_rent_krw FROM transactions "
                "ORDER BY natural_key",
            )
        )
        s.close()
    assert dumps[0] == dumps[1]
    assert len(dumps[0]) == SLICE


def test_svc_demo_data_and_if_empty(
    sqlite_url: str, small_demo: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["demo-data", "--seed", "3", "--database-url", sqlite_url]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"demo-data (seed 3): {SLICE} transactions (0 already present)")
    assert cli.main(["demo-data", "--if-empty", "--database-url", sqlite_url]) == 0
    assert "nothing loaded" in capsys.readouterr().out
