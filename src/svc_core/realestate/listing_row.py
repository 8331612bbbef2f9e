"""A stored record as ``GET /api/v1/real-estate/transactions`` reads it (``ListingRow``).

The store builds one per read row, with one call (its fields are the columns, in order:
positional, since on the hot path of paging and CSV streams arguments by name cost more
than the rest of the row's way to JSON); ``record.record_of`` makes the served record of
it, and ``listing.sort_key``/``contract_sort_key`` its place in the listing order.
"""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class ListingRow:
    """The columns a listing reads of ``transactions`` (or ``excluded_transactions``), as
    stored: ``deal_date`` ``YYYY-MM-DD``, ``synthetic`` and ``renewal_right_used`` 0 or 1
    (the latter None when not published), a NULL ``contract_id`` for a record stored
    before migration 0016. ``is_excluded`` is 1 for an excluded record, which carries its
    ``reason`` and, when the source gave one, its ``cancellation_date``; ``contract_key``
    is what the contract listing orders by (the contract id, or the natural key when
    there is none)."""

    natural_key: str
    source: str
    sigungu_code: str
    sigungu: str
    dong: str | None
    property_type: str
    transaction_type: str
    deal_date: str
    month: str
    price_krw: int
    monthly_rent_krw: int | None
    area_m2: float | None
    synthetic: int
    building_type: str | None
    land_area_m2: float | None
    building_use: str | None
    floor: int | None
    build_year: int | None
    jibun: str | None
    load_id: str | None
    deal_type: str | None
    seller_type: str | None
    buyer_type: str | None
    land_use: str | None
    broker_district: str | None
    building_name: str | None
    lease_kind: str | None
    term_start: str | None
    term_end: str | None
    renewal_right_used: int | None
    previous_deposit_krw: int | None
    previous_monthly_rent_krw: int | None
    contract_id: str | None
    land_category: str | None
    zoning: str | None
    industrial_use: str | None
    is_excluded: int
    reason: str | None
    cancellation_date: str | None
    contract_key: str
