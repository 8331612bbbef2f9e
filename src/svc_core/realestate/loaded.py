"""What was loaded behind pulse and series rows (issue 28): which months of each row's
period are loaded completely (``row_gaps``; the rule is ``svc_core.realestate.freshness``),
the months an answer misses (``_meta.incomplete_periods``), and the 404 of an answer
without rows, whose ``error.reason`` says whether nothing was loaded for its period
(``NOT_LOADED``) or too few deals are (``TOO_FEW``).

Rows are read through ``Row`` (a pulse row's keys) so this module needs nothing of
``pulse``, which builds on it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple, Protocol

from svc_core.errors import NotFound
from svc_core.realestate import freshness
from svc_core.realestate.common import codes_of
from svc_core.realestate.deal import Deal
from svc_core.realestate.query import DIMENSIONS_HINT, Cohort
from svc_core.regions import region

REGIONS_HINT = "Find a district's code by its name with GET /api/v1/real-estate/regions."

NOT_LOADED = "not_loaded"
"""``error.reason`` of a 404 whose period has no month loaded for the district and
types: nothing was loaded for it."""
TOO_FEW = "too_few_transactions"
"""``error.reason`` of a 404 whose period is loaded (at least one month) but holds no
cohort with enough transactions."""
UNKNOWN_DISTRICT = "unknown_district"
"""``error.reason`` of a 404 about a code no district has (nor had) and under which
nothing was loaded."""
NOT_FOUND_REASONS = (NOT_LOADED, TOO_FEW, UNKNOWN_DISTRICT)


def unknown_district(code: str | None) -> NotFound | None:
    """The 404 (``UNKNOWN_DISTRICT``) of a district code that is in no version of the
    bundled table, or None when some district has (or had) it."""
    if not code or region(code) is not None:
        return None
    return NotFound(
        f"No district has the code {code}: it is in no version of the district table.",
        hint=REGIONS_HINT,
        extra={"reason": UNKNOWN_DISTRICT},
    )


class Row(Protocol):
    """What completeness reads of a pulse row."""

    @property
    def sigungu_code(self) -> str: ...
    @property
    def property_type(self) -> str: ...
    @property
    def transaction_type(self) -> str: ...
    @property
    def period(self) -> str: ...


RowKey = tuple[str, str, str, str]
"""(sigungu code, property type, transaction type, period) of a row: what its
completeness depends on."""


class Gap(NamedTuple):
    """The months of a row's period and those of them not loaded completely."""

    months: tuple[str, ...]
    missing: tuple[str, ...]


Gaps = Mapping[RowKey, Gap]
"""Each row's ``Gap``, by ``row_key`` (``row_gaps``)."""


def row_key(row: Row) -> RowKey:
    return (row.sigungu_code, row.property_type, row.transaction_type, row.period)


def row_gaps(
    rows: Iterable[Row],
    period_of: Mapping[str, str],
    *,
    loaded: Collection[freshness.MonthKey],
    incomplete: Collection[freshness.MonthKey],
) -> dict[RowKey, Gap]:
    """For each row's district, types and period (``period_of`` maps month → period):
    the period's months and those of them not loaded completely
    (``freshness.loaded_months`` over the district's codes and the kinds of the types).
    Depends only on what was loaded, so the server computes it once per data version."""
    months = freshness.period_months(period_of)
    out: dict[RowKey, Gap] = {}
    for row in rows:
        key = row_key(row)
        if key in out:
            continue  # the rows of one district's dongs share it
        spans = months.get(row.period, ())
        have = freshness.loaded_months(
            codes_of(row.sigungu_code),
            spans,
            freshness.load_kinds(row.property_type, row.transaction_type),
            loaded=loaded,
            incomplete=incomplete,
        )
        out[key] = Gap(months=spans, missing=tuple(m for m in spans if m not in have))
    return out


def missing_months(gaps: Gaps) -> list[str]:
    """The months ``YYYY-MM`` of the rows' periods that some row misses (not loaded
    completely for its district and types), sorted: ``_meta.incomplete_periods``."""
    return sorted({month for gap in gaps.values() for month in gap.missing})


def held_keys(records: Iterable[Deal]) -> frozenset[freshness.MonthKey]:
    """The district-months ``records`` hold, under the kinds of their types: what a
    store loading them from a file without paging figures counts as loaded."""
    return frozenset(
        (kind, d.sigungu_code, d.month)
        for d in records
        for kind in freshness.load_kinds(d.property_type, d.transaction_type)
    )


def nothing_loaded(
    cohort: Cohort, months: Iterable[str], loaded: Collection[freshness.MonthKey]
) -> bool:
    """True when none of ``months`` is loaded for the cohort's district (or an alias) and
    any kind of its types."""
    kinds = freshness.cohort_kinds(cohort.property_type, cohort.transaction_type)
    return not freshness.any_loaded(codes_of(cohort.sigungu_code), months, kinds, loaded)


def no_rows(
    cohort: Cohort,
    period: str,
    meta: Mapping[str, object],
    *,
    months: Iterable[str],
    loaded: Collection[freshness.MonthKey],
    too_few: str,
) -> NotFound:
    """The 404 of an answer without rows over ``period`` (its ``months``), with the
    answer's envelope: ``NOT_LOADED`` when none of the months is in the cohort's
    ``loaded`` (``nothing_loaded``), else ``TOO_FEW`` with the message ``too_few``."""
    if not nothing_loaded(cohort, months, loaded):
        return NotFound(too_few, hint=DIMENSIONS_HINT, meta=meta, extra={"reason": TOO_FEW})
    unknown = unknown_district(cohort.sigungu_code)
    if unknown is not None:
        return NotFound(unknown.message, hint=unknown.hint, meta=meta, extra=unknown.extra)
    types = ", ".join(t for t in (cohort.property_type, cohort.transaction_type) if t)
    what = cohort.place() + (f" ({types})" if types else "")
    return NotFound(
        f"Nothing was loaded for {what} in {period}: no month of it is loaded completely "
        "(by svc sync rtms, or svc ingest of whole files), so svc cannot tell whether it "
        "has deals.",
        hint=DIMENSIONS_HINT,
        meta=meta,
        extra={"reason": NOT_LOADED},
    )
