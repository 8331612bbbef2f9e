"""The deals behind a figure: ``GET /api/v1/real-estate/transactions``, a page at a time
(JSON) or the whole selection streamed (CSV).

The selection is pulse's: the period resolves against the same latest month, the
district takes its renumbering aliases, and the store reads the same filters
(``store.transactions``), so paging through it returns exactly the records of the
matching pulse row. Validation comes before the tier gate, as for pulse: a malformed or
foreign cursor is a 400 whatever the plan. With ``group=contract`` the store reads whole
contracts a page at a time and ``contract_record`` groups their rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from svc_core import periods
from svc_core.envelope import Answer, Links
from svc_core.errors import InvalidParams
from svc_core.realestate import cursor, freshness, traces
from svc_core.realestate import listing as core
from svc_core.realestate.common import Context, codes_of, gate
from svc_core.realestate.contract_record import contract_records
from svc_core.realestate.listing import Served, TransactionsQuery
from svc_core.realestate.listing_row import ListingRow
from svc_core.realestate.loaded import unknown_district
from svc_core.realestate.record import record_of
from svc_server.services.realestate import Call, cohort_context
from svc_server.store import Store
from svc_server.store.realestate import DataState
from svc_server.store.transactions import Selection, any_synthetic

STREAM_PAGE = 1000
"""Records per store read while a CSV answer streams."""


@attrs.frozen(kw_only=True)
class Listing:
    """A resolved listing: the period's window, what the store reads, where to start
    (None: the beginning) and the fingerprint cursors are bound to."""

    window: periods.PeriodWindow
    selection: Selection
    after: cursor.SortKey | None
    fingerprint: str


def _resolve(state: DataState, query: TransactionsQuery, call: Call) -> Listing:
    latest = periods.parse_month(state.latest_month) if state.latest_month else None
    window = query.window(latest)
    fingerprint = core.selection_fingerprint(query, window.months)
    after = cursor.decode(query.cursor, fingerprint) if query.cursor is not None else None
    gate(call.caller, query.cohort.geo_precision, call.links)
    cohort = query.cohort
    selection = Selection(
        codes=tuple(codes_of(cohort.sigungu_code)),
        months=tuple(window.months),
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        dong=cohort.dong,
        dong_level=cohort.dong_level,
        building_type=cohort.building_type,
        lease_kind=cohort.lease_kind,
        deal_type=cohort.deal_type,
        buyer_type=cohort.buyer_type,
        **cohort.land_filters(),
        include_excluded=query.include_excluded,
        contract_id=query.contract_id,
    )
    return Listing(window=window, selection=selection, after=after, fingerprint=fingerprint)


def transactions(store: Store, query: TransactionsQuery, call: Call) -> Answer:
    """One page: up to ``query.limit`` records (contracts) after the cursor, and the
    cursor of the next page in ``_meta.next_cursor`` (None on the last)."""
    state = call.versions.state(store)
    found = _resolve(state, query, call)
    page, more = _page(store, found, query.limit, by_contract=query.by_contract)
    next_cursor = cursor.encode(_key(page[-1], query), found.fingerprint) if more else None
    synthetic = any_synthetic(page) if page else state.synthetic
    return core.transactions_answer(
        _records(page, query, call.links),
        query,
        found.window,
        _context(store, state, found, query, call),
        synthetic=synthetic,
        next_cursor=next_cursor,
        extra=_traced(store, state, found, query, records=query.include_excluded),
    )


def _context(
    store: Store, state: DataState, found: Listing, query: TransactionsQuery, call: Call
) -> Context:
    """The listing's context: its exclusions and rejected records those of its cohort
    and months (an unknown district code with nothing loaded is a 404)."""
    cohort = query.cohort
    unknown = unknown_district(cohort.sigungu_code)
    if unknown is not None and not store.realestate.loaded_months(
        codes_of(cohort.sigungu_code), found.window.months, freshness.LOAD_KINDS
    ):
        raise unknown
    return cohort_context(store, state, call, cohort=cohort, months=found.window.months)


def _traced(
    store: Store, state: DataState, found: Listing, query: TransactionsQuery, *, records: bool
) -> dict[str, object]:
    """``unloaded_periods`` (the months never loaded for the selection's district and
    types) and, with ``records``, ``rejected_records`` (the selection's records rejected
    as malformed, with their reason)."""
    cohort = query.cohort
    codes = codes_of(cohort.sigungu_code)
    months = found.window.months
    kinds = freshness.cohort_kinds(cohort.property_type, cohort.transaction_type)
    loaded = store.realestate.loaded_months(codes, months, kinds)
    unloaded = traces.unloaded_months(cohort.sigungu_code, months, kinds, loaded)
    if not records:
        return {"unloaded_periods": unloaded}
    rows = store.realestate.rejected_list(
        codes,
        months,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
    )
    return {
        "unloaded_periods": unloaded,
        "rejected_records": [traces.rejected_record(r) for r in rows],
    }


def _page(
    store: Store, found: Listing, limit: int, *, by_contract: bool
) -> tuple[list[ListingRow], bool]:
    """The rows of up to ``limit`` records (or whole contracts) from the listing's start,
    and whether more follow."""
    if by_contract:
        return store.realestate.contract_listing(found.selection, after=found.after, limit=limit)
    rows = store.realestate.listing(found.selection, after=found.after, limit=limit + 1)
    return rows[:limit], len(rows) > limit


def _key(row: ListingRow, query: TransactionsQuery) -> cursor.SortKey:
    return core.contract_sort_key(row) if query.by_contract else core.sort_key(row)


def _records(rows: list[ListingRow], query: TransactionsQuery, links: Links) -> list[Served]:
    """The served records of a page's rows: one per row, or one per contract."""
    records = [record_of(r) for r in rows]
    if not query.by_contract:
        return list(records)
    return list(contract_records(records, transactions_url=links.transactions_url))


def _stream(
    store: Store, found: Listing, query: TransactionsQuery, links: Links
) -> Iterator[Served]:
    """Every record (contract) from the listing's start, ``STREAM_PAGE`` at a time, each
    read in its own short transaction (memory and locks stay flat however long the client
    reads)."""
    while True:
        rows, more = _page(store, found, STREAM_PAGE, by_contract=query.by_contract)
        yield from _records(rows, query, links)
        if not more:
            return
        found = attrs.evolve(found, after=_key(rows[-1], query))


def stream(
    store: Store, query: TransactionsQuery, call: Call
) -> tuple[dict[str, object], Iterator[Served]]:
    """The whole selection for a CSV or NDJSON answer (``limit`` does not apply; a
    cursor starts it where a page ended): its envelope and the records (contracts), read
    lazily. A selection of more than ``CSV_CAP`` records is a 400 asking to narrow it."""
    state = call.versions.state(store)
    found = _resolve(state, query, call)
    mix, excluded = store.realestate.listing_size(found.selection, by_contract=query.by_contract)
    total = sum(mix.values()) + excluded
    if total > core.CSV_CAP:
        raise InvalidParams(
            f"The selection holds {total:,} records, more than the {core.CSV_CAP:,} one CSV "
            "or NDJSON answer streams.",
            hint="Narrow it (a shorter period, property_type, transaction_type, "
            "building_type or a dong), or page through it as JSON with limit and cursor.",
        )
    meta = core.listing_meta(
        query,
        found.window,
        _context(store, state, found, query, call),
        synthetic=state.synthetic,
        next_cursor=None,
        count=total,
        mix=mix,
        extra=_traced(store, state, found, query, records=False),
    )
    return meta, _stream(store, found, query, call.links)
