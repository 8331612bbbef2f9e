"""The marketplace half of a load: upsert listings and monthly activity, then publish
the answers of every category the load changed, inside the load's transaction.

Requests read finished answers: the privacy rules (``svc_core.markets.publishable_rows``)
never run per request, and a reader sees the answers before the load or after it, never
a mix. The privacy rules look across all regions and months of a category, and
categories are independent of each other, so a category is the unit of recomputation.
Marketplace writers hold one lock, so each recomputation sees every committed change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from svc_core import markets
from svc_core.markets import Activity, Listing
from svc_core.models import LoadReport
from svc_core.sources import markets as source
from svc_server.store.loading import Writer

LISTINGS = "market-listings"
ACTIVITY = "market-activity"
KINDS: tuple[str, ...] = (LISTINGS, ACTIVITY)


@attrs.frozen(kw_only=True)
class MarketWrite:
    """What one load did to the marketplace tables: records written (new or changed)
    and unchanged, rows published for the changed categories, and the activity file's
    report when it had to be read again (an activity of a listing not stored)."""

    listings: int = 0
    listings_unchanged: int = 0
    activity: int = 0
    activity_unchanged: int = 0
    published: int = 0
    report: LoadReport | None = None


def publish(w: Writer, categories: Iterable[str]) -> int:
    """Recompute the published rows of ``categories`` and the dimensions; return the
    number of rows published for them.

    When no row is stored yet (a first load, or data loaded before the rows were
    materialized) every category is recomputed.
    """
    wanted = set(categories)
    if not w.markets.has_rows(w.tx):
        wanted |= w.markets.all_categories(w.tx)
    if not wanted:
        return 0
    rows = markets.publishable_rows(w.markets.listing_months(w.tx, wanted))
    w.markets.replace_rows(w.tx, wanted, rows)
    w.markets.replace_dimensions(w.tx, markets.dimensions(w.markets.stored_rows(w.tx)))
    return len(rows)


def write(
    w: Writer,
    listings: Sequence[Listing],
    activities: Sequence[Activity],
    *,
    synthetic: bool = False,
    activity_file: bytes | None = None,
    path: str = "",
) -> MarketWrite:
    """Upsert ``listings``, then ``activities``, then publish, inside ``tx``.

    Every activity's listing must be among ``listings`` or stored already; when an
    ``activity_file`` is given, activity of an unknown listing is instead rejected as
    ``unknown_listing`` (the file is read again knowing the stored listings, and that
    report is returned).
    """
    w.markets.lock(w.tx)
    listed = w.markets.upsert_listings(w.tx, listings, synthetic=synthetic)
    report = None
    if activity_file is not None:
        known = w.markets.listing_categories(w.tx, (a.listing_id for a in activities))
        if any(a.listing_id not in known for a in activities):
            activities, report = source.parse_activity(
                activity_file, path=path, known_listings=known
            )
    active = w.markets.upsert_activity(w.tx, activities)
    published = publish(w, listed.categories | active.categories)
    return MarketWrite(
        listings=listed.written,
        listings_unchanged=listed.unchanged,
        activity=active.written,
        activity_unchanged=active.unchanged,
        published=published,
        report=report,
    )
