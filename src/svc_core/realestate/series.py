"""Pulse rows for several calendar periods (SPEC "Pulse series").

The rows are pulse rows; a quarter pools its three months. ``_meta`` says which of the
requested periods have rows and which are missing, and which have no month loaded at
all (``unloaded_periods``).
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable, Sequence

from svc_core.cohorts.stats import MIN_SAMPLES
from svc_core.envelope import Answer
from svc_core.models import Transaction
from svc_core.periods import parse_quarter
from svc_core.realestate import freshness
from svc_core.realestate.common import Context
from svc_core.realestate.loaded import (
    Gaps,
    missing_months,
    no_rows,
    nothing_loaded,
)
from svc_core.realestate.pulse import (
    Deal,
    PulseRow,
    deals,
    rows_meta,
    rows_over,
)
from svc_core.realestate.query import SeriesQuery


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


def series_rows(
    records: Iterable[Transaction | Deal],
    query: SeriesQuery,
    *,
    today: datetime.date | None = None,
    incomplete: Collection[freshness.MonthKey] = (),
    loaded: Collection[freshness.MonthKey] | None = None,
    transactions_url: str | None = None,
) -> list[PulseRow]:
    """The rows of ``query`` computed from transactions, as the server answers them;
    ``today``, ``incomplete``, ``loaded`` and ``transactions_url`` as for
    ``pulse_rows``."""
    return rows_over(
        query.cohort,
        deals(records),
        series_months(query.periods),
        query.area_unit,
        today=today,
        incomplete=incomplete,
        loaded=loaded,
        transactions_url=transactions_url,
    )


def series_answer(
    rows: Sequence[PulseRow],
    query: SeriesQuery,
    context: Context,
    *,
    synthetic: bool,
    gaps: Gaps,
    loaded: Collection[freshness.MonthKey],
) -> Answer:
    """``GET /api/v1/real-estate/pulse/series``'s answer (``incomplete_periods`` from the
    rows' ``gaps``, ``unloaded_periods`` against the cohort's ``loaded`` district-months);
    ``NotFound`` (404, with the same envelope) when none of the periods has a cohort, its
    ``reason`` ``not_loaded`` when none of them has a month loaded."""
    requested = list(query.periods)
    returned = sorted({r.period for r in rows})
    cohort = query.cohort
    unloaded = [
        label
        for label in requested
        if nothing_loaded(cohort, freshness.label_months(label), loaded)
    ]
    echo = {
        **cohort.echo(),
        "period": None,
        "periods": requested,
        "from_period": query.from_period,
        "to_period": query.to_period,
        "building_type": cohort.building_type,
        **cohort.deal_echo(),
        "area_unit": query.area_unit,
    }
    extra = {
        "periods_requested": requested,
        "periods_returned": returned,
        "missing_periods": [label for label in requested if label not in returned],
        "unloaded_periods": unloaded,
    }
    meta = rows_meta(
        rows,
        cohort,
        context,
        synthetic=synthetic,
        query=echo,
        gaps=missing_months(gaps),
        extra=extra,
        period_of=series_months(requested),
    )
    if not rows:
        raise no_rows(
            cohort,
            ", ".join(requested),
            meta,
            months=series_months(requested),
            loaded=loaded,
            too_few=f"None of the {len(requested)} requested periods has a cohort with at "
            f"least {MIN_SAMPLES} contracts in {cohort.place()}.",
        )
    return Answer(data=list(rows), meta=meta)
