"""Changes over time of pulse and series rows (issue 46, item 2): each row's medians
against the previous period and against the same period a year earlier.

The previous period of a month is the month before, of a quarter the quarter before, of
a rolling window the window of as many months just before it; a year earlier is every
month shifted back 12 (so ``last_12m``'s previous window and its year-earlier window are
the same). ``comparison`` maps the rows' periods to those base periods; the caller
computes the base periods' rows with the same cohort (pulse's ``group_rows``, the
server's cached cohort rows) and ``with_changes`` sets the four change fields of each
row: the median (a lease's deposit) and the median per area (``median_price_per_m2`` of
a sale, ``median_deposit_per_m2`` of a lease), each against both base periods, by the
method of ``svc_core.realestate.median_change``.

A change is null with its reason when no month of the base period was read at all
(``not_loaded``), a side's period is not loaded completely (``incomplete``: a month
missing, or read only in part), the base period is loaded but
has no row (``too_few_transactions``), or a side has no such median (``no_value``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple

import attrs

from svc_core.periods import parse_month
from svc_core.realestate import freshness
from svc_core.realestate.common import codes_of
from svc_core.realestate.loaded import Gap, Gaps, RowKey, row_gaps, row_key
from svc_core.realestate.median_change import (
    INCOMPLETE,
    NOT_LOADED,
    TOO_FEW,
    Change,
    Side,
    change_between,
    unavailable,
)
from svc_core.realestate.pulse_row import PulseRow

YEAR = 12


@attrs.frozen
class Comparison:
    """What the rows of some periods are compared with: each period's base period
    (``base_of``: label → base label, None when the base would fall before 1990) and the
    base periods' months (``period_of``: month → base label, what the base rows are
    computed over)."""

    base_of: Mapping[str, str | None]
    period_of: Mapping[str, str]


def _label(label: str, months: Sequence[str]) -> str:
    """The label of base ``months`` for a period labelled ``label``: a month's month, a
    quarter's quarter, a rolling window's ``first/last`` months."""
    if len(label) == 7 and label[4] == "-" and label[5:].isdigit():
        return months[0]
    if "-Q" in label:
        first = parse_month(months[0])
        return first.quarter.label
    return f"{months[0]}/{months[-1]}"


def comparison(period_of: Mapping[str, str], *, year: bool) -> Comparison:
    """The base periods of the periods in ``period_of`` (month → period): the same
    months a year earlier (``year``), else the period just before, of as many months."""
    base_of: dict[str, str | None] = {}
    months_of: dict[str, str] = {}
    for label, months in freshness.period_months(period_of).items():
        back = YEAR if year else len(months)
        try:
            shifted = [parse_month(m).shift(-back).label for m in months]
        except ValueError:  # before the calendar's first year: nothing can be loaded
            base_of[label] = None
            continue
        base = _label(label, shifted)
        base_of[label] = base
        months_of.update(dict.fromkeys(shifted, base))
    return Comparison(base_of=base_of, period_of=months_of)


@attrs.frozen
class Baseline:
    """A comparison with the rows of its base periods (the same cohort's) and what was
    loaded of their months (``loaded`` and ``incomplete`` district-months)."""

    comparison: Comparison
    rows: Sequence[PulseRow]
    loaded: Collection[freshness.MonthKey]
    incomplete: Collection[freshness.MonthKey] = frozenset()


class _Key(NamedTuple):
    """A base row's completeness key (``loaded.Row``), whether the row exists or not."""

    sigungu_code: str
    property_type: str
    transaction_type: str
    period: str


RowIndex = dict[tuple[str | None, str, str, str], PulseRow]


def _index(rows: Iterable[PulseRow]) -> RowIndex:
    return {(r.dong, r.property_type, r.transaction_type, r.period): r for r in rows}


def _per_area_value(row: PulseRow) -> int | None:
    return row.median_price_per_m2 if row.transaction_type == "sale" else row.median_deposit_per_m2


def _sides(row: PulseRow) -> tuple[Side, Side]:
    """A row's two medians as sides of a change: price (deposit) and per area."""
    medians = row.medians
    return (
        Side(row.median_price, medians.price, row.contract_count),
        Side(_per_area_value(row), medians.per_area, row.contract_count),
    )


def _missing_reason(key: _Key, gap: Gap, baseline: Baseline) -> str | None:
    """None when every month of a base period is loaded completely; ``not_loaded`` when
    none of them was read at all (completely or in part: ``incomplete``); else
    ``incomplete``."""
    if not gap.missing:
        return None
    if len(gap.missing) < len(gap.months):
        return INCOMPLETE
    codes = codes_of(key.sigungu_code)
    kinds = freshness.load_kinds(key.property_type, key.transaction_type)
    read = freshness.any_loaded(codes, gap.missing, kinds, baseline.loaded)
    partly = freshness.any_loaded(codes, gap.missing, kinds, baseline.incomplete)
    return INCOMPLETE if read or partly else NOT_LOADED


def _changes(
    row: PulseRow, complete: bool, baseline: Baseline, index: RowIndex, gaps: dict[RowKey, Gap]
) -> tuple[Change, Change]:
    """The two changes (median, median per area) of ``row`` against ``baseline``."""
    this = _sides(row)
    label = baseline.comparison.base_of.get(row.period)
    if label is None:
        return unavailable(None, this[0], None, NOT_LOADED), unavailable(
            None, this[1], None, NOT_LOADED
        )
    key = _Key(row.sigungu_code, row.property_type, row.transaction_type, label)
    if key not in gaps:
        gaps.update(
            row_gaps(
                [key],
                baseline.comparison.period_of,
                loaded=baseline.loaded,
                incomplete=baseline.incomplete,
            )
        )
    reason = _missing_reason(key, gaps[key], baseline) or (None if complete else INCOMPLETE)
    found = index.get((row.dong, row.property_type, row.transaction_type, label))
    base = _sides(found) if found is not None else (None, None)
    if reason is None and found is None:
        reason = TOO_FEW
    if reason is not None:
        return unavailable(label, this[0], base[0], reason), unavailable(
            label, this[1], base[1], reason
        )
    assert base[0] is not None and base[1] is not None
    return change_between(label, this[0], base[0]), change_between(label, this[1], base[1])


def with_changes(
    rows: Iterable[PulseRow], gaps: Gaps, *, previous: Baseline, year_ago: Baseline
) -> list[PulseRow]:
    """``rows`` (whose completeness ``gaps`` are, ``loaded.row_gaps``) with their changes
    against the ``previous`` and ``year_ago`` baselines set."""
    indexes = (_index(previous.rows), _index(year_ago.rows))
    base_gaps: tuple[dict[RowKey, Gap], dict[RowKey, Gap]] = ({}, {})
    out: list[PulseRow] = []
    for row in rows:
        complete = not gaps[row_key(row)].missing
        prev = _changes(row, complete, previous, indexes[0], base_gaps[0])
        year = _changes(row, complete, year_ago, indexes[1], base_gaps[1])
        out.append(
            attrs.evolve(
                row,
                change_vs_previous=prev[0],
                change_vs_year_ago=year[0],
                change_vs_previous_per_m2=prev[1],
                change_vs_year_ago_per_m2=year[1],
            )
        )
    return out
