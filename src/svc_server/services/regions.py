"""``GET /api/v1/real-estate/regions``: places by name or code, from the bundled tables
(districts, legal dongs, the market-area table) and the market areas whose R-ONE values
the store holds (their codes and published paths)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from svc_core.realestate.regions_answer import regions_answer
from svc_server.store import Store


def regions(
    store: Store,
    query: Mapping[str, str],
    *,
    generated_at: datetime,
    auth_method: str,
    rate_limit: Mapping[str, int | None],
    request_id: str | None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(data, _meta)`` of the regions answer; ``InvalidParams`` for a bad query."""
    return regions_answer(
        query,
        generated_at=generated_at,
        auth_method=auth_method,
        rate_limit=rate_limit,
        areas=store.realestate.market_areas(),
        request_id=request_id,
    )
