"""Loading the deterministic demo data set (real estate and marketplace).

One transaction for everything, through the same store writes as real loads (natural
keys, rollup, precomputed coverage), logged in ``ingest_log`` as kind ``demo``: that log
row is what makes every real-estate envelope served afterwards carry the synthetic-data
limitation.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from typing import Any

from svc_core import demo, demo_markets
from svc_server.services import coverage, markets_ingest
from svc_server.store import Store
from svc_server.store.realestate import RollupKey, rollup_rows


def load_demo(store: Store, *, seed: int, now: float) -> dict[str, Any]:
    """Write the demo set in one transaction; a second run with the same seed adds nothing."""
    transactions = list(demo.demo_transactions(seed))
    indices = list(demo.demo_indices(seed))
    listings, activities = demo_markets.demo_market_data(seed)
    with store.data.transaction() as tx:
        first = store.realestate.rollup_is_empty(tx)
        added: Counter[RollupKey] = Counter()
        load_id = str(uuid.uuid4())
        loaded, duplicate = store.realestate.insert_transactions(
            tx, transactions, synthetic=True, added=added, load_id=load_id
        )
        if loaded:
            # Into an empty store the rollup is exactly what these records added.
            rollup = rollup_rows(added) if first else None
            coverage.refresh_coverage(store, tx, demo.demo_districts(), rollup=rollup)
        idx_loaded, _ = store.realestate.insert_indices(tx, indices, synthetic=True)
        market = markets_ingest.write(store, tx, listings, activities, synthetic=True)
        store.realestate.log_ingest(
            tx,
            {
                "id": load_id,
                "kind": "demo",
                "path": f"demo-data --seed {seed}",
                "sha256": hashlib.sha256(f"demo:{seed}".encode()).hexdigest(),
                "read_count": len(transactions) + len(indices),
                "loaded": loaded + idx_loaded,
                "duplicate": duplicate,
                "excluded": {},
                "rejected": {},
                "loaded_at": int(now),
            },
        )
    return {
        "transactions": loaded,
        "duplicate_transactions": duplicate,
        "index_observations": idx_loaded,
        "market_listings": market["listings"],
        "market_activity": market["activity"],
    }
