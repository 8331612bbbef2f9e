"""The deterministic demo data set (real estate and marketplace) as one load.

Written by ``commit`` like every load (natural keys, roll-up, precomputed coverage),
logged in ``ingest_log`` as kind ``demo``: that log row is what makes every real-estate
envelope served afterwards carry the synthetic-data limitation. Every month of its
districts and kinds is recorded as loaded.
"""

from __future__ import annotations

import hashlib
from typing import Any

from svc_core.demo import markets as demo_markets
from svc_core.demo import realestate as demo
from svc_core.models import LoadReport
from svc_core.periods import month_range
from svc_core.realestate import freshness
from svc_core.realestate.freshness import MonthKey
from svc_core.sources import ParseResult
from svc_server.ingest.load import Load
from svc_server.ingest.writer import commit
from svc_server.store import Store

KIND = "demo"


def demo_months() -> tuple[MonthKey, ...]:
    """Every month of the demo's districts and kinds: the demo set holds them whole, so
    its rows are complete (a kind without a deal in a month included)."""
    months = month_range(demo.DEMO_FIRST, demo.DEMO_LATEST)
    return tuple(
        (kind, code, month.label)
        for code in demo.demo_districts()
        for month in months
        for kind in freshness.LOAD_KINDS
    )


def demo_load(seed: int) -> Load:
    """The demo set of ``seed`` (pure: nothing read or written)."""
    transactions = list(demo.demo_transactions(seed))
    indices = list(demo.demo_indices(seed))
    listings, activities = demo_markets.demo_market_data(seed)
    read = len(transactions) + len(indices) + len(listings) + len(activities)
    report = LoadReport(path=f"demo-data --seed {seed}", read=read)
    return Load(
        kind=KIND,
        report=report,
        digest=hashlib.sha256(f"demo:{seed}".encode()).hexdigest(),
        transactions=ParseResult(transactions=transactions, report=report),
        whole_months=demo_months(),
        indices=indices,
        listings=listings,
        activity=activities,
        synthetic=True,
    )


def load_demo(store: Store, *, seed: int, now: float) -> dict[str, Any]:
    """Commit the demo set; a second run with the same seed adds nothing."""
    done = commit(store, demo_load(seed), now=now)
    return {
        "transactions": done.transactions,
        "duplicate_transactions": done.duplicate_transactions,
        "index_observations": done.index_observations,
        "market_listings": done.markets.listings,
        "market_activity": done.markets.activity,
    }
