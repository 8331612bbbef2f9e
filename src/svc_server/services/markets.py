"""Marketplace use cases: pulse and dimensions.

Both read answers the loader materialized (``svc_server.ingest.markets``): pulse is one
primary-key lookup, dimensions one small ordered read. Each takes the store and the
``Asked`` (the caller, the strict-parsed query parameters, the request's id and clock)
and returns an ``Answer`` (data and ``_meta``); a cohort that is empty or suppressed
raises ``NotFound`` (the same answer for both, so a 404 says nothing about why). No
HTTP objects here: an embedding application can call these directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from svc_core import markets
from svc_core.caller import Caller
from svc_core.envelope import Answer, rate_limit
from svc_core.errors import InvalidParams, NotFound
from svc_server.store import Store

CACHE_SECONDS = 6 * 3600
"""How long a client may reuse an answer: the data refreshes once a day (SPEC: 6 h)."""


@attrs.frozen(kw_only=True)
class Asked:
    """A marketplace call: who asks, its strict-parsed query parameters, the request's id
    and when (unix seconds)."""

    caller: Caller
    params: Mapping[str, str]
    request_id: str | None
    now: float

    def meta(self) -> dict[str, Any]:
        """The ``_meta`` fields that follow the call: when it was answered, how the caller
        signed in, its rate limit and the request's id."""
        return {
            "generated_at": datetime.fromtimestamp(self.now, UTC),
            "auth_method": self.caller.auth_method,
            "rate_limit": rate_limit(self.caller),
            "request_id": self.request_id,
        }


def pulse(store: Store, asked: Asked) -> Answer:
    """GET /api/v1/markets/pulse: the published row of one cohort.

    ``InvalidParams`` for a missing or malformed parameter; ``NotFound`` (with the
    marketplace ``_meta``, count 0) when the cohort has no published row.
    """
    query = markets.market_query(list(asked.params.items()))
    row = store.markets.row(query.region, query.category, query.period, query.product_type)
    rows = [] if row is None else [row]
    meta = markets.market_meta(
        count=len(rows), confidence=markets.rows_confidence(rows), query=query, **asked.meta()
    )
    if row is None:
        products = query.product_type or "all product types"
        raise NotFound(
            f"No published marketplace data for {query.region}, {query.category}, "
            f"{query.period} ({products}).",
            hint=(
                f"A cohort is published only with at least {markets.K_ANONYMITY} listings "
                "and when no other answer would reveal fewer. " + markets.DIMENSIONS_HINT
            ),
            meta=meta,
        )
    return Answer(data=[row], meta=meta)


def dimensions(store: Store, asked: Asked) -> Answer:
    """GET /api/v1/markets/dimensions: the regions, categories and periods with data.

    Takes no parameters (``InvalidParams`` for any). Without published data the lists
    are empty and ``total_combinations`` is 0.
    """
    if asked.params:
        raise InvalidParams(
            f"Unknown query parameter {next(iter(asked.params))[:64]!r}.",
            hint="GET /api/v1/markets/dimensions takes no parameters.",
        )
    dims = store.markets.dimensions()
    meta = markets.market_dimensions_meta(
        total_combinations=dims.total_combinations, **asked.meta()
    )
    return Answer(data=dims.as_dict(), meta=meta)
