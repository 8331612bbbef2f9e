"""Loading marketplace listings and monthly activity, and publishing their answers.

``ingest`` loads one file (``market-listings`` or ``market-activity``) in one
transaction: the records are upserted by their natural keys, and the published rows of
every category the file changed, and the dimensions, are recomputed from the stored
data before the transaction commits. Requests then read finished answers: the privacy
rules (``svc_core.markets.publishable_rows``) never run per request, and a reader sees
the answers before the load or after it, never a mix.

The privacy rules look across all regions and months of a category, and categories are
independent of each other, so a category is the unit of recomputation. Marketplace
writers hold one lock, so each recomputation sees every committed change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from svc_core import markets
from svc_core.errors import InvalidParams
from svc_core.markets import Activity, Listing
from svc_core.models import LoadReport
from svc_core.sources import markets as source
from svc_server.store import Store
from svc_server.store.base import Tx

LISTINGS = "market-listings"
ACTIVITY = "market-activity"
KINDS: tuple[str, ...] = (LISTINGS, ACTIVITY)


def publish(store: Store, tx: Tx, categories: Iterable[str]) -> int:
    """Recompute the published rows of ``categories`` and the dimensions; return the
    number of rows published for them.

    When no row is stored yet (a first load, or data loaded before the rows were
    materialized) every category is recomputed.
    """
    wanted = set(categories)
    if not store.markets.has_rows(tx):
        wanted |= store.markets.all_categories(tx)
    if not wanted:
        return 0
    rows = markets.publishable_rows(store.markets.listing_months(tx, wanted))
    store.markets.replace_rows(tx, wanted, rows)
    store.markets.replace_dimensions(tx, markets.dimensions(store.markets.stored_rows(tx)))
    return len(rows)


def write(
    store: Store,
    tx: Tx,
    listings: Sequence[Listing],
    activities: Sequence[Activity],
    *,
    synthetic: bool = False,
) -> dict[str, int]:
    """Upsert listings, then their activity, then publish, inside ``tx`` (demo data).

    Returns the listings and listing-months written (new or changed) and the rows
    published for the categories that changed. Every activity's listing must be among
    ``listings`` or stored already (ValueError otherwise).
    """
    store.markets.lock(tx)
    listed = store.markets.upsert_listings(tx, listings, synthetic=synthetic)
    active = store.markets.upsert_activity(tx, activities)
    published = publish(store, tx, listed.categories | active.categories)
    return {"listings": listed.written, "activity": active.written, "rows": published}


def write_listings(
    store: Store, tx: Tx, listings: Sequence[Listing], report: LoadReport
) -> LoadReport:
    """Upsert parsed listings and publish, inside ``tx``; ``report`` gets the counts."""
    store.markets.lock(tx)
    changes = store.markets.upsert_listings(tx, listings)
    publish(store, tx, changes.categories)
    report.loaded, report.duplicate = changes.written, changes.unchanged
    return report


def write_activity(
    store: Store,
    tx: Tx,
    activities: Sequence[Activity],
    report: LoadReport,
    *,
    data: bytes,
    path: str,
) -> LoadReport:
    """Upsert parsed activity and publish, inside ``tx``; return the report.

    Activity of a listing the store does not know is rejected as ``unknown_listing``:
    the file (``data``) is read again knowing the stored listings, and that report is
    returned.
    """
    store.markets.lock(tx)
    known = store.markets.listing_categories(tx, (a.listing_id for a in activities))
    if any(a.listing_id not in known for a in activities):
        activities, report = source.parse_activity(data, path=path, known_listings=known)
    changes = store.markets.upsert_activity(tx, activities)
    publish(store, tx, changes.categories)
    report.loaded, report.duplicate = changes.written, changes.unchanged
    return report


def ingest(store: Store, kind: str, data: bytes, *, path: str, now: float) -> LoadReport:
    """Load one ``market-listings`` or ``market-activity`` file.

    The file is parsed before anything is written: an unreadable file raises
    ``SourceError`` and changes nothing. ``loaded`` counts records new or changed,
    ``duplicate`` records already stored with the same values.
    """
    if kind == LISTINGS:
        listings, report = source.parse_listings(data, path=path)
        with store.data.transaction() as tx:
            write_listings(store, tx, listings, report)
            store.realestate.record_load(tx, kind=kind, data=data, report=report, now=now)
        return report
    if kind == ACTIVITY:
        activities, report = source.parse_activity(data, path=path)
        with store.data.transaction() as tx:
            report = write_activity(store, tx, activities, report, data=data, path=path)
            store.realestate.record_load(tx, kind=kind, data=data, report=report, now=now)
        return report
    raise InvalidParams(f"Unknown marketplace kind {kind!r}; choose one of: {', '.join(KINDS)}.")
