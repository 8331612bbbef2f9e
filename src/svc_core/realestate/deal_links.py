"""The link from a figure to the deals behind it (a pulse row's ``transactions_url``).

The link names the row's concrete months, ``from=YYYY-MM&to=YYYY-MM`` (the first and
last month of its period: for a rolling window the months it resolved to), never the
period's label: ``last_6m`` resolves against the latest month with data, so a label
would list other deals once a later month is loaded. The listing reads exactly those
months, so the link keeps listing the deals the row was computed from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote, urlencode


def transactions_link(
    base: str,
    *,
    sigungu_code: str,
    months: Sequence[str],
    property_type: str,
    transaction_type: str,
    filters: Mapping[str, str | None],
    dong: str | None = None,
) -> str:
    """``base`` (the absolute address of ``/api/v1/real-estate/transactions``) with the
    cohort's filters (the listing's parameters by name, in order; None: not filtered)
    and its months as ``from``/``to`` (``months`` oldest first, not empty),
    percent-encoded."""
    pairs = [
        ("sigungu_code", sigungu_code),
        ("from", months[0]),
        ("to", months[-1]),
        ("property_type", property_type),
        ("transaction_type", transaction_type),
    ]
    pairs += [(name, value) for name, value in filters.items() if value is not None]
    if dong is not None:
        pairs += [("geo_precision", "dong"), ("dong", dong)]
    return f"{base}?{urlencode(pairs, quote_via=quote)}"
