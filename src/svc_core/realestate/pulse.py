"""Pulse rows: transactions grouped into cohorts and summarized (SPEC "Pulse row").

A cohort is the transactions of one district (and, at dong precision, one legal dong),
property type, transaction type and period; a cohort with fewer than
``MIN_SAMPLES`` contracts (the rows of one bulk sale are one: ``svc_core.cohorts.stats``) gives
no row. ``pulse_rows`` is the whole computation
from transactions (what a library user calls); ``group_rows`` is its second half, for a
caller (the server) whose store already selected the cohort's transactions.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from decimal import Decimal

import attrs

from svc_core.cohorts.confidence import cap_mixed, confidence_of, worst
from svc_core.cohorts.stats import (
    MIN_SAMPLES,
    CohortStats,
    contracts,
    per_area_quartiles,
    per_area_ratios,
    ratio_quartiles,
    summarize,
)
from svc_core.envelope import CONTRACT_METHODOLOGY, Answer
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES, Transaction
from svc_core.periods import Month, PeriodWindow, parse_month, resolve_pulse_period
from svc_core.realestate import freshness
from svc_core.realestate.building_types import (
    MIX_LIMITATION,
    building_type_mix,
    counted,
    is_mixed,
)
from svc_core.realestate.building_uses import building_use_mix
from svc_core.realestate.changes_over_time import Baseline, comparison, with_changes
from svc_core.realestate.common import Context, codes_of, district_name, gu_name, layer_meta
from svc_core.realestate.deal import Deal as Deal
from svc_core.realestate.deal import deal_of as deal_of
from svc_core.realestate.deal import deals as deals
from svc_core.realestate.deal_links import transactions_link
from svc_core.realestate.lease_figures import lease_figures, lease_limitations
from svc_core.realestate.lease_kinds import lease_kind_mix
from svc_core.realestate.loaded import Gaps, held_keys, missing_months, no_rows, row_gaps, row_key
from svc_core.realestate.median_change import Medians, median_bounds
from svc_core.realestate.pulse_row import PulseRow as PulseRow
from svc_core.realestate.pulse_row import row_columns as row_columns
from svc_core.realestate.query import ROW_FILTERS, Cohort, PulseQuery
from svc_core.same_named import SameNamed

GroupKey = tuple[str | None, str, str, str]
"""(dong, property type, transaction type, period label)."""


_FROM_STATS = SameNamed(PulseRow, CohortStats)
"""A row's figures that its cohort's summary holds under the same names (counts, prices,
rents, area, per-source mix and means)."""


def _row(
    cohort: Cohort, key: GroupKey, samples: Sequence[Deal], name: str, area_unit: str
) -> PulseRow | None:
    """One pulse row from a cohort's samples, or None below the 2-contract minimum."""
    grouped = contracts(samples)
    summary = summarize(samples, grouped=grouped)
    if summary is None:
        return None
    dong, property_type, transaction_type, period = key
    grade = confidence_of(summary)
    mix = building_type_mix(s.building_type for s in samples)
    if is_mixed(mix):
        grade = cap_mixed(grade)
    leases = lease_figures(transaction_type, samples, area_unit=area_unit)
    sale = transaction_type == "sale"  # a deposit is no price: leases have their own
    ratios = per_area_ratios(
        ((c.price, c.area) for c in (grouped if sale else samples)), area_unit=area_unit
    )
    per_area = ratio_quartiles(ratios) if sale else None
    medians = Medians(
        price=median_bounds(sorted(c.price for c in grouped)), per_area=median_bounds(ratios)
    )
    land = per_area_quartiles(
        _land(samples if sale else (), summary.bulk_contracts > 0), area_unit=area_unit
    )
    dong_level = cohort.dong_level
    return _FROM_STATS(
        summary,
        sigungu_code=cohort.sigungu_code,
        sigungu=name,
        gu=gu_name(name) if dong_level else None,
        dong=dong if dong_level else None,
        property_type=property_type,
        transaction_type=transaction_type,
        period=period,
        confidence=grade.level,
        confidence_factors=grade.factors,
        largest_contract_units=summary.largest_contract,
        building_type_mix=mix,
        area_unit=area_unit,
        p25_price_per_m2=per_area[0] if per_area else None,
        median_price_per_m2=per_area[1] if per_area else None,
        p75_price_per_m2=per_area[2] if per_area else None,
        median_land_price_per_m2=land[1] if land else None,
        **{p.name: getattr(cohort, p.name) for p in ROW_FILTERS},
        lease_kind_mix=lease_kind_mix(transaction_type, (s.lease_kind for s in samples)),
        **attrs.asdict(leases),
        building_use_mix=building_use_mix(s.building_use for s in samples),
        industrial_use_mix=_mix(property_type == "industrial", (s.industrial_use for s in samples)),
        land_category_mix=_mix(property_type == "land", (s.land_category for s in samples)),
        zoning_mix=_mix(any(s.zoning for s in samples), (s.zoning for s in samples)),
        medians=medians,
    )


def _mix(shown: bool, values: Iterable[str | None]) -> dict[str, int]:
    """Samples per value (``counted``) on a row whose samples can carry one, else empty."""
    return counted(values) if shown else {}


def _land(samples: Sequence[Deal], bulk: bool) -> list[tuple[int, float | Decimal | None]]:
    """(price, land area) per contract of the whole buildings among ``samples`` (a bulk
    contract's total price and land area; ``bulk``: the cohort has one)."""
    whole = [s for s in samples if s.building_type == "whole_building"]
    if not bulk or len(contracts(whole)) == len(whole):
        return [(s.price, s.land_area) for s in whole]
    return [(c.price, c.area) for c in contracts([s._replace(area=s.land_area) for s in whole])]


def row_order(row: PulseRow) -> tuple[str, int, int, str]:
    """Rows come by period, property type, transaction type (enumeration order), dong."""
    return (
        row.period,
        PROPERTY_TYPES.index(row.property_type),
        TRANSACTION_TYPES.index(row.transaction_type),
        row.dong or "",
    )


def group_rows(
    cohort: Cohort,
    samples: Sequence[Deal],
    period_of: Mapping[str, str],
    *,
    area_unit: str = "m2",
) -> list[PulseRow]:
    """The rows of ``samples`` (already the cohort's transactions): grouped by dong (dong
    precision only), types and the period ``period_of`` maps each month to; per-area
    prices in ``area_unit``.

    At dong precision, records without a dong are left out. The district is named from
    the bundled table, else from the first sample's name.
    """
    dong_level = cohort.dong_level
    groups: dict[GroupKey, list[Deal]] = {}
    for s in samples:
        dong = s.dong if dong_level else None
        if dong_level and not dong:
            continue
        key = (dong, s.property_type, s.transaction_type, period_of[s.month])
        groups.setdefault(key, []).append(s)
    name = district_name(cohort.sigungu_code, samples[0].sigungu if samples else None)
    rows = [r for key, group in groups.items() if (r := _row(cohort, key, group, name, area_unit))]
    rows.sort(key=row_order)
    return rows


def row_link(base: str | None, row: PulseRow, months: Sequence[str]) -> str | None:
    """The deals behind ``row`` (whose period holds ``months``) under ``base``, the
    address of the listing; None without an address."""
    if base is None or not months:
        return None
    return transactions_link(
        base,
        sigungu_code=row.sigungu_code,
        months=months,
        property_type=row.property_type,
        transaction_type=row.transaction_type,
        filters={p.name: getattr(row, p.name) for p in ROW_FILTERS},
        dong=row.dong,
    )


def finish_rows(
    rows: Iterable[PulseRow],
    gaps: Gaps,
    *,
    today: datetime.date,
    transactions_url: str | None,
) -> list[PulseRow]:
    """``rows`` with ``complete``, ``months_loaded``, ``months_expected`` (from their
    ``gaps``: ``row_gaps``), ``provisional`` (against ``today``) and ``transactions_url``
    (under that address; None without one) set."""
    out: list[PulseRow] = []
    for row in rows:
        months, missing = gaps[row_key(row)]
        out.append(
            attrs.evolve(
                row,
                complete=not missing,
                provisional=freshness.any_provisional(months, today),
                transactions_url=row_link(transactions_url, row, months),
                months_loaded=len(months) - len(missing),
                months_expected=len(months),
            )
        )
    return out


def select(cohort: Cohort, records: Iterable[Deal], months: Iterable[str]) -> list[Deal]:
    """The deals of ``cohort`` (its district or a renumbering alias, its types and dong)
    in ``months``, in their order: what the store's cohort read returns."""
    codes = set(codes_of(cohort.sigungu_code)) if cohort.sigungu_code else None
    wanted = set(months)
    return [
        d
        for d in records
        if (codes is None or d.sigungu_code in codes)
        and (cohort.property_type is None or d.property_type == cohort.property_type)
        and (cohort.transaction_type is None or d.transaction_type == cohort.transaction_type)
        and (cohort.dong is None or d.dong == cohort.dong)
        and (cohort.building_type is None or d.building_type == cohort.building_type)
        and (cohort.lease_kind is None or d.lease_kind == cohort.lease_kind)
        and (cohort.deal_type is None or d.deal_type == cohort.deal_type)
        and (cohort.buyer_type is None or d.buyer_type == cohort.buyer_type)
        and all(f is None or getattr(d, n) == f for n, f in cohort.land_filters().items())
        and d.month in wanted
    ]


def latest_month(records: Iterable[Deal]) -> Month | None:
    """The latest month with a transaction: where rolling windows end."""
    label = max((d.month for d in records), default=None)
    return parse_month(label) if label else None


def pulse_rows(
    records: Iterable[Transaction | Deal],
    query: PulseQuery,
    *,
    latest: Month | None = None,
    today: datetime.date | None = None,
    incomplete: Collection[freshness.MonthKey] = (),
    loaded: Collection[freshness.MonthKey] | None = None,
    transactions_url: str | None = None,
) -> list[PulseRow]:
    """The pulse rows of ``query`` computed from transactions: exactly the ``data`` the
    server answers when it holds the same transactions.

    A rolling period ends at ``latest``, by default the latest month among ``records``
    (all of them, as the server uses its whole store). With ``today`` the rows say
    ``complete`` and how many months are loaded (against ``loaded``, by default the
    district-months ``records`` hold, and ``incomplete``: ``freshness.loaded_of`` and
    ``incomplete_of`` the files loaded) and ``provisional``, and link their deals under
    ``transactions_url`` (the server's address of the route) when given, and carry
    their changes against the previous period and a year earlier (which depend on what
    was loaded, as ``complete`` does; without ``today`` the rows have none).
    """
    items = deals(records)
    end = latest if latest is not None else latest_month(items)
    window = resolve_pulse_period(query.period, end)
    period_of = {m: window.label for m in window.months}
    return rows_over(
        query.cohort,
        items,
        period_of,
        query.area_unit,
        today=today,
        incomplete=incomplete,
        loaded=loaded,
        transactions_url=transactions_url,
    )


def rows_over(
    cohort: Cohort,
    items: Sequence[Deal],
    period_of: Mapping[str, str],
    area_unit: str,
    *,
    today: datetime.date | None,
    incomplete: Collection[freshness.MonthKey],
    loaded: Collection[freshness.MonthKey] | None,
    transactions_url: str | None,
) -> list[PulseRow]:
    """The rows of ``cohort`` over the periods of ``period_of`` among ``items``, as
    ``pulse_rows`` and ``series_rows`` answer them (``today`` and the rest as there)."""
    if today is None:
        return group_rows(cohort, select(cohort, items, period_of), period_of, area_unit=area_unit)
    done = held_keys(items) if loaded is None else loaded
    rows, gaps = rows_with_changes(
        cohort, items, period_of, area_unit, loaded=done, incomplete=incomplete
    )
    return finish_rows(rows, gaps, today=today, transactions_url=transactions_url)


def rows_with_changes(
    cohort: Cohort,
    items: Sequence[Deal],
    period_of: Mapping[str, str],
    area_unit: str,
    *,
    loaded: Collection[freshness.MonthKey],
    incomplete: Collection[freshness.MonthKey],
) -> tuple[list[PulseRow], Gaps]:
    """The rows of ``cohort`` over the periods of ``period_of`` among ``items``, with
    their changes against the previous period and a year earlier (the base periods' rows
    computed from the same ``items``), and the rows' completeness gaps."""
    rows = group_rows(cohort, select(cohort, items, period_of), period_of, area_unit=area_unit)
    gaps = row_gaps(rows, period_of, loaded=loaded, incomplete=incomplete)
    previous, year_ago = (
        Baseline(
            comparison=base,
            rows=group_rows(
                cohort, select(cohort, items, base.period_of), base.period_of, area_unit=area_unit
            ),
            loaded=loaded,
            incomplete=incomplete,
        )
        for base in (comparison(period_of, year=False), comparison(period_of, year=True))
    )
    return with_changes(rows, gaps, previous=previous, year_ago=year_ago), gaps


def source_mix(rows: Iterable[PulseRow]) -> dict[str, int]:
    """Samples per source over ``rows``."""
    total: Counter[str] = Counter()
    for row in rows:
        total.update(row.source_mix)
    return dict(total)


def rows_meta(
    rows: Sequence[PulseRow],
    cohort: Cohort,
    context: Context,
    *,
    synthetic: bool,
    query: Mapping[str, object],
    gaps: Sequence[str],
    extra: Mapping[str, object] | None = None,
    period_of: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """The envelope of pulse rows: count, source mix and grade follow from the rows; a
    row mixing building types adds ``MIX_LIMITATION``, rows resting on one bulk contract
    ``bulk_limitation``, lease rows the caveats of ``lease_limitations`` (``period_of``
    maps the rows' months to their periods); ``data_as_of`` (from the context) and
    ``incomplete_periods`` (``gaps``: ``missing_months``) say how fresh and whole they
    are, ``methodology`` how contracts are counted."""
    extra = {
        **(extra or {}),
        "data_as_of": context.data_as_of,
        "data_version": context.data_version,
        "incomplete_periods": list(gaps),
        "methodology": CONTRACT_METHODOLOGY,
    }
    meta = layer_meta(
        context,
        count=len(rows),
        source_mix=source_mix(rows),
        synthetic=synthetic,
        grade=worst(r.confidence for r in rows),
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        query=query,
        extra=extra,
    )
    if any(r.confidence_factors.mixed_building_types for r in rows):
        meta["known_limitations"].append(MIX_LIMITATION)
    meta["known_limitations"].extend(lease_limitations(rows, period_of or {}))
    concentrated = bulk_limitation(rows)
    if concentrated:
        meta["known_limitations"].append(concentrated)
    return meta


def bulk_limitation(rows: Iterable[PulseRow]) -> str | None:
    """The known limitation naming the rows whose largest contract holds more than a
    third of their samples (units), or None when there is none."""
    named = [
        f"{r.period} {r.property_type} {r.transaction_type}"
        + (f" in {r.dong}" if r.dong else "")
        + (f" ({r.building_type})" if r.building_type else "")
        + f": {r.largest_contract_units} of {r.sample_count}"
        for r in rows
        if r.largest_contract_units > 1 and 3 * r.largest_contract_units > r.sample_count
    ]
    if not named:
        return None
    return (
        "One bulk contract (several units of one building sold together) holds more than "
        f"a third of the samples of these rows: {'; '.join(named)}. It counts once in "
        "their figures, which rest on few independent deals."
    )


def pulse_answer(
    rows: Sequence[PulseRow],
    query: PulseQuery,
    window: PeriodWindow,
    context: Context,
    *,
    synthetic: bool,
    gaps: Gaps,
    loaded: Collection[freshness.MonthKey],
) -> Answer:
    """``GET /api/v1/real-estate/pulse``'s answer (``incomplete_periods`` from the rows'
    ``gaps``); ``NotFound`` (404, with the same envelope, ``loaded.no_rows`` against the
    cohort's ``loaded`` district-months) when no cohort has enough transactions."""
    cohort = query.cohort
    echo = {
        **cohort.echo(),
        "period": query.period,
        "window_from": window.window_from,
        "window_to": window.window_to,
        "building_type": cohort.building_type,
        **{p.name: getattr(cohort, p.name) for p in ROW_FILTERS},
        "area_unit": query.area_unit,
    }
    period_of = {m: window.label for m in window.months}
    meta = rows_meta(
        rows,
        cohort,
        context,
        synthetic=synthetic,
        query=echo,
        gaps=missing_months(gaps),
        period_of=period_of,
    )
    if not rows:
        window_text = f" ({window.window_from} to {window.window_to})" if window.months else ""
        period = f"{query.period}{window_text}"
        too_few = f"No cohort with at least {MIN_SAMPLES} contracts matches "
        too_few += f"{cohort.place()} in {period}."
        raise no_rows(cohort, period, meta, months=window.months, loaded=loaded, too_few=too_few)
    return Answer(data=list(rows), meta=meta)
