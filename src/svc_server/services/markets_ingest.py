"""Loading marketplace listings and monthly activity (one transaction per file)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from svc_core.markets import Activity, Listing
from svc_core.models import LoadReport
from svc_core.sources import markets as source
from svc_server.store import Store
from svc_server.store.base import Tx


def _listing_row(item: Listing) -> tuple[object, ...]:
    return (
        item.listing_id,
        item.region,
        item.category,
        item.product_type,
        item.list_price,
        item.discounted_price,
    )


def write(
    store: Store,
    tx: Tx,
    listings: Sequence[Listing],
    activities: Sequence[Activity],
    *,
    synthetic: bool = False,
) -> dict[str, int]:
    """Upsert listings then activity rows inside ``tx``."""
    inserted, updated, _ = store.markets.upsert_listings(
        tx,
        [_listing_row(item) for item in listings],
        synthetic=synthetic,
    )
    store.markets.upsert_activity(
        tx,
        [
            (a.listing_id, a.period, a.views, a.bookings, a.booked_hours, a.available_hours)
            for a in activities
        ],
    )
    return {"listings": inserted + updated, "activity": len(activities)}


def ingest(store: Store, kind: str, data: bytes, *, path: str, now: float) -> LoadReport:
    """``market-listings`` or ``market-activity``: parse, then write in one transaction.

    Listings are keyed by ``listing_id`` (a later file updates a listing's prices);
    activity by ``(listing_id, period)`` (a later file replaces that month's numbers).
    Activity rows for listings the store does not know are rejected.
    """
    with store.db.transaction() as tx:
        if kind == "market-listings":
            listings, report = source.parse_listings(data, path=path)
            inserted, updated, unchanged = store.markets.upsert_listings(
                tx,
                [_listing_row(item) for item in listings],
            )
            report.loaded, report.duplicate = inserted + updated, unchanged
        else:
            ids = _activity_ids(data)
            known = store.markets.known_listings(tx, ids)
            activities, report = source.parse_activity(data, path=path, known_listings=known)
            existing = store.markets.existing_activity(
                tx, [(a.listing_id, a.period) for a in activities]
            )
            rows = [
                (a.listing_id, a.period, a.views, a.bookings, a.booked_hours, a.available_hours)
                for a in activities
            ]
            changed = [r for r in rows if existing.get((r[0], r[1])) != r]
            store.markets.upsert_activity(tx, changed)
            report.loaded, report.duplicate = len(changed), len(rows) - len(changed)
        store.realestate.log_ingest(
            tx,
            {
                "id": str(uuid.uuid4()),
                "kind": kind,
                "path": path[:500],
                "sha256": hashlib.sha256(data).hexdigest(),
                "read_count": report.read,
                "loaded": report.loaded,
                "duplicate": report.duplicate,
                "excluded": report.excluded,
                "rejected": {k: {"count": v} for k, v in report.rejected.items()},
                "loaded_at": int(now),
            },
        )
    return report


def _activity_ids(data: bytes) -> list[str]:
    """Listing ids named by an activity file (first column), for the known-listing check."""
    activities, _ = source.parse_activity(data, path="<ids>")
    return sorted({a.listing_id for a in activities})
