"""The link from a figure to the deals behind it (a pulse row's ``transactions_url``).

The link names the row's concrete months, ``from=YYYY-MM&to=YYYY-MM`` (the first and
last month of its period: for a rolling window the months it resolved to), never the
period's label: ``last_6m`` resolves against the latest month with data, so a label
would list other deals once a later month is loaded. The listing reads exactly those
months, so the link keeps listing the deals the row was computed from.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, urlencode


def transactions_link(
    base: str,
    *,
    sigungu_code: str,
    months: Sequence[str],
    property_type: str,
    transaction_type: str,
    building_type: str | None = None,
    lease_kind: str | None = None,
    deal_type: str | None = None,
    buyer_type: str | None = None,
    industrial_use: str | None = None,
    land_category: str | None = None,
    zoning: str | None = None,
    dong: str | None = None,
) -> str:
    """``base`` (the absolute address of ``/api/v1/real-estate/transactions``) with the
    cohort's filters and its months as ``from``/``to`` (``months`` oldest first, not
    empty), percent-encoded."""
    pairs = [
        ("sigungu_code", sigungu_code),
        ("from", months[0]),
        ("to", months[-1]),
        ("property_type", property_type),
        ("transaction_type", transaction_type),
    ]
    filters = (
        ("building_type", building_type),
        ("lease_kind", lease_kind),
        ("deal_type", deal_type),
        ("buyer_type", buyer_type),
        ("industrial_use", industrial_use),
        ("land_category", land_category),
        ("zoning", zoning),
    )
    pairs += [(name, value) for name, value in filters if value is not None]
    if dong is not None:
        pairs += [("geo_precision", "dong"), ("dong", dong)]
    return f"{base}?{urlencode(pairs, quote_via=quote)}"
