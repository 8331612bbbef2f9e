"""Index rows: R-ONE survey statistics of a district, with the cap rate (SPEC "Index row").

``annualized_cap_rate`` is ``value_pct`` x 4 on ``income_yield`` rows (a quarterly NOI
yield), rounded to 6 decimals; null on every other metric. When a district and its
renumbering alias both hold a value for the same series and period, the requested
code's own value is kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import attrs

from svc_core.envelope import Answer
from svc_core.errors import NotFound
from svc_core.models import METRIC_TYPES, PROPERTY_TYPES, IndexObservation
from svc_core.periods import IndexWindow
from svc_core.realestate.common import Context, district_name, layer_meta
from svc_core.realestate.query import IndicesQuery

INDEX_SOURCES = ("rone_official",)
INCOME_YIELD_PERIODS_PER_YEAR = 4
INDICES_HINT = (
    "Indices exist for districts mapped from R-ONE market areas and for the periods the "
    "survey published; try period=last_8q or a year such as 2025."
)


@attrs.frozen(kw_only=True)
class IndexValue:
    """One stored index value as the rows see it (``period_end_date`` as ``YYYY-MM-DD``)."""

    sigungu_code: str
    sigungu: str
    property_type: str
    metric_type: str
    period: str
    period_end_date: str
    value_pct: float
    source: str = "rone_official"
    synthetic: bool = False


def index_value_of(obs: IndexObservation) -> IndexValue:
    """The rows' view of a parsed observation."""
    return IndexValue(
        sigungu_code=obs.sigungu_code,
        sigungu=obs.sigungu,
        property_type=obs.property_type,
        metric_type=obs.metric_type,
        period=obs.period,
        period_end_date=obs.period_end_date.isoformat(),
        value_pct=obs.value_pct,
        source=obs.source,
    )


@attrs.frozen(kw_only=True)
class IndexRow:
    """One index value of the requested district, fields in SPEC order."""

    sigungu_code: str
    sigungu: str
    property_type: str
    metric_type: str
    period: str
    period_end_date: str
    value_pct: float
    annualized_cap_rate: float | None


CAP_RATE_METHOD = (
    "annualized_cap_rate = value_pct x 4 on income_yield rows: R-ONE's quarterly income "
    "(NOI) yield annualized by simple multiplication, not compounded; null on other metrics."
)
"""How ``annualized_cap_rate`` is computed, stated in every indices envelope."""


def cap_rate(metric_type: str, value_pct: float) -> float | None:
    """The annualized cap rate of a quarterly ``income_yield``; None for other metrics."""
    if metric_type != "income_yield":
        return None
    return round(value_pct * INCOME_YIELD_PERIODS_PER_YEAR, 6)


def chosen_values(code: str, found: Iterable[IndexValue]) -> list[IndexValue]:
    """One value per (property type, metric, period): the requested code's own value
    before an alias's."""
    chosen: dict[tuple[str, str, str], IndexValue] = {}
    for v in found:
        key = (v.property_type, v.metric_type, v.period)
        if key not in chosen or v.sigungu_code == code:
            chosen[key] = v
    return list(chosen.values())


def index_rows(code: str, values: Iterable[IndexValue]) -> list[IndexRow]:
    """Rows of ``values`` reported under ``code``, by property type, metric and period."""
    rows = [
        IndexRow(
            sigungu_code=code,
            sigungu=district_name(code, v.sigungu),
            property_type=v.property_type,
            metric_type=v.metric_type,
            period=v.period,
            period_end_date=v.period_end_date,
            value_pct=float(v.value_pct),
            annualized_cap_rate=cap_rate(v.metric_type, float(v.value_pct)),
        )
        for v in values
    ]
    rows.sort(
        key=lambda r: (
            PROPERTY_TYPES.index(r.property_type),
            METRIC_TYPES.index(r.metric_type),
            r.period,
        )
    )
    return rows


def indices_answer(
    found: Sequence[IndexValue],
    query: IndicesQuery,
    window: IndexWindow,
    context: Context,
    *,
    synthetic: bool,
) -> Answer:
    """``GET /api/v1/real-estate/indices``'s answer from the window's values (of the
    district and its aliases); ``NotFound`` (404, with the envelope) when there is none.
    ``synthetic`` is the store's flag, used when nothing is found."""
    kept = chosen_values(query.sigungu_code, found)
    rows = index_rows(query.sigungu_code, kept)
    echo = {
        "sigungu_code": query.sigungu_code,
        "property_type": query.property_type,
        "metric_type": query.metric_type,
        "period": query.period,
        "window_from": window.window_from,
        "window_to": window.window_to,
    }
    meta = layer_meta(
        context,
        count=len(rows),
        source_mix=dict(Counter(v.source for v in kept)),
        synthetic=any(v.synthetic for v in kept) if kept else synthetic,
        sources=INDEX_SOURCES,
        query=echo,
        extra={
            "cap_rate_method": CAP_RATE_METHOD,
            "data_as_of": context.data_as_of,
            "data_version": context.data_version,
        },
    )
    if not rows:
        raise NotFound(
            f"No index values for district {query.sigungu_code} in {query.period}"
            + (f" ({window.window_from} to {window.window_to})." if window.periods else "."),
            hint=INDICES_HINT,
            meta=meta,
        )
    return Answer(data=rows, meta=meta)
