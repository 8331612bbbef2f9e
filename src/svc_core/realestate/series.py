"""Pulse rows for several calendar periods (SPEC "Pulse series").

The rows are pulse rows; a quarter pools its three months. ``_meta`` says which of the
requested periods have rows and which are missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from svc_core.envelope import Answer
from svc_core.errors import NotFound
from svc_core.models import Transaction
from svc_core.periods import parse_quarter
from svc_core.realestate.common import Context
from svc_core.realestate.pulse import Deal, PulseRow, deals, group_rows, rows_meta, select
from svc_core.realestate.query import DIMENSIONS_HINT, SeriesQuery
from svc_core.stats import MIN_SAMPLES


def series_months(requested: Sequence[str]) -> dict[str, str]:
    """Month label → the requested period (a month or a quarter) that holds it."""
    period_of: dict[str, str] = {}
    for label in requested:
        if "-Q" in label:
            for month in parse_quarter(label).months():
                period_of[month.label] = label
        else:
            period_of[label] = label
    return period_of


def series_rows(records: Iterable[Transaction | Deal], query: SeriesQuery) -> list[PulseRow]:
    """The rows of ``query`` computed from transactions, as the server answers them."""
    period_of = series_months(query.periods)
    chosen = select(query.cohort, deals(records), period_of)
    return group_rows(query.cohort, chosen, period_of, area_unit=query.area_unit)


def series_answer(
    rows: Sequence[PulseRow], query: SeriesQuery, context: Context, *, synthetic: bool
) -> Answer:
    """``GET /api/v1/real-estate/pulse/series``'s answer; ``NotFound`` (404, with the same
    envelope) when none of the periods has a cohort."""
    requested = list(query.periods)
    returned = sorted({r.period for r in rows})
    echo = {
        **query.cohort.echo(),
        "period": None,
        "periods": requested,
        "from_period": query.from_period,
        "to_period": query.to_period,
        "building_type": query.cohort.building_type,
        **query.cohort.deal_echo(),
        "area_unit": query.area_unit,
    }
    extra = {
        "periods_requested": requested,
        "periods_returned": returned,
        "missing_periods": [label for label in requested if label not in returned],
    }
    meta = rows_meta(
        rows,
        query.cohort,
        context,
        synthetic=synthetic,
        query=echo,
        extra=extra,
        period_of=series_months(requested),
    )
    if not rows:
        raise NotFound(
            f"None of the {len(requested)} requested periods has a cohort with at least "
            f"{MIN_SAMPLES} contracts in {query.cohort.place()}.",
            hint=DIMENSIONS_HINT,
            meta=meta,
        )
    return Answer(data=list(rows), meta=meta)
