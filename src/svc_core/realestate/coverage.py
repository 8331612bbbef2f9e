"""Coverage rows: which cohorts have data in which periods (SPEC "Coverage row").

Built from rollup rows (``svc_core.realestate.rollup``: samples, contracts and bulk
contracts per cohort, month, source and building type), which the server keeps in its
store. A period counts only with at least ``MIN_SAMPLES`` contracts, all sources
together.
"""

from __future__ import annotations

import datetime
import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs

from svc_core.cohorts.stats import MIN_SAMPLES, median
from svc_core.convert import to_json
from svc_core.envelope import CONTRACT_METHODOLOGY, Answer
from svc_core.json_schema import array, boolean, counts, doc, enum, integer, nullable, string
from svc_core.models import BUILDING_TYPES, PROPERTY_TYPES, TRANSACTION_TYPES, Transaction
from svc_core.periods import parse_month
from svc_core.realestate import freshness
from svc_core.realestate.building_types import UNKNOWN_TYPE
from svc_core.realestate.common import Context, codes_of, district_name, gu_name, layer_meta
from svc_core.realestate.loaded import held_keys
from svc_core.realestate.pulse import Deal, deals, select
from svc_core.realestate.query import CoverageQuery
from svc_core.realestate.rollup import RollupRow as RollupRow
from svc_core.realestate.rollup import rollup_of as rollup_of
from svc_core.realestate.row_docs import (
    DONG_PRECISION,
    PROPERTY_TYPE,
    SIGUNGU_CODE,
    TRANSACTION_TYPE,
)


@attrs.frozen(kw_only=True)
class CoverageRow:
    """One cohort's coverage, fields in SPEC order; ``gu`` and ``dong`` only at dong
    precision. ``samples_per_period_median`` is the median of the per-period totals.
    Then issue 28's ``contract_count`` and ``bulk_contracts`` (contracts, and those of
    several rows, over ``periods_with_data``), and the additions of issue 14:
    ``building_type`` (the filter's value, None: every deal) and ``building_type_mix`` (samples per type over ``periods_with_data``; they
    add up to ``total_samples``), ``complete`` and ``provisional`` as on pulse rows, over
    every period with data."""

    sigungu_code: str = attrs.field(metadata=doc(SIGUNGU_CODE))
    sigungu: str = attrs.field(metadata=doc(string()))
    gu: str | None = attrs.field(metadata=doc(DONG_PRECISION))
    dong: str | None = attrs.field(metadata=doc(DONG_PRECISION))
    property_type: str = attrs.field(metadata=doc(PROPERTY_TYPE))
    transaction_type: str = attrs.field(metadata=doc(TRANSACTION_TYPE))
    earliest_period: str = attrs.field(metadata=doc(string()))
    latest_period: str = attrs.field(metadata=doc(string()))
    period_count: int = attrs.field(metadata=doc(integer(minimum=1)))
    periods_with_data: tuple[str, ...] = attrs.field(
        metadata=doc(array(string(), "Sorted; usable as pulse/series periods."))
    )
    total_samples: int = attrs.field(
        metadata=doc(integer("Rows over periods_with_data.", minimum=2))
    )
    samples_per_period_median: int = attrs.field(metadata=doc(integer(minimum=2)))
    data_sources: tuple[str, ...] = attrs.field(metadata=doc(array(string())))
    contract_count: int = attrs.field(
        metadata=doc(
            integer(
                "Contracts over periods_with_data (the rows of one bulk sale are one); a "
                "period counts with at least 2.",
                minimum=2,
            )
        )
    )
    bulk_contracts: int = attrs.field(
        metadata=doc(integer("Contracts of more than one row over periods_with_data.", minimum=0))
    )
    building_type: str | None = attrs.field(
        default=None,
        metadata=doc(
            nullable(
                enum(
                    BUILDING_TYPES,
                    "The building_type filter; null when the row counts every deal.",
                )
            )
        ),
    )
    building_type_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            counts(
                "Samples per building type over periods_with_data (whole_building, unit, "
                "and unknown when the source does not say); they add up to total_samples."
            )
        ),
    )
    complete: bool = attrs.field(
        default=True,
        metadata=doc(
            boolean(
                "False when a district-month the figure is built from was loaded from an "
                "incomplete set of pages (a file whose totalCount exceeds its items, the "
                "other pages not loaded) or its svc sync rtms read is partial."
            )
        ),
    )
    provisional: bool = attrs.field(
        default=False,
        metadata=doc(
            boolean("True while latest_period is within the reporting lag (see the pulse row).")
        ),
    )


STORED_LATER = ("complete", "provisional")
"""Row fields set when serving (they follow the clock), never stored."""


@attrs.frozen(kw_only=True)
class CoverageCohort:
    """A coverage row with what orders and stores it: its granularity, keys (``dong``
    ``''`` at district level, ``building_type`` ``''`` for the combined row), type rank
    and per-source samples."""

    granularity: str
    sigungu_code: str
    dong: str
    property_type: str
    transaction_type: str
    building_type: str
    type_rank: int
    total_samples: int
    row: CoverageRow
    source_mix: dict[str, int]


def type_rank(property_type: str, transaction_type: str) -> int:
    """Enumeration order of a (property type, transaction type) pair, for sorting."""
    return PROPERTY_TYPES.index(property_type) * len(TRANSACTION_TYPES) + TRANSACTION_TYPES.index(
        transaction_type
    )


def _by_quarter(
    by_month: Mapping[str, Mapping[str, int]], quarter_of: dict[str, str]
) -> dict[str, dict[str, int]]:
    """Per-month counts (per source or per building type) pooled into quarters."""
    out: dict[str, dict[str, int]] = {}
    for month, by_source in by_month.items():
        label = quarter_of.get(month)
        if label is None:
            label = quarter_of[month] = parse_month(month).quarter.label
        pooled = out.get(label)
        if pooled is None:
            out[label] = dict(by_source)
            continue
        for source, n in by_source.items():
            pooled[source] = pooled.get(source, 0) + n
    return out


CohortKey = tuple[str, str, str, str, str]
"""(sigungu code, dong or '', property type, transaction type, building type or '' for
the combined row)."""


def _count(
    table: dict[CohortKey, dict[str, dict[str, int]]], key: CohortKey, month: str, what: str, n: int
) -> None:
    cohort = table.get(key)
    if cohort is None:
        cohort = table[key] = {}
    counts = cohort.get(month)
    if counts is None:
        counts = cohort[month] = {}
    counts[what] = counts.get(what, 0) + n


def build_coverage(
    rollup: Iterable[RollupRow],
    granularities: Sequence[str],
    *,
    dong_level: bool,
    merge_code: str | None = None,
    names: Mapping[str, str] | None = None,
    building_types: Sequence[str | None] = (None,),
) -> list[CoverageCohort]:
    """Coverage of rollup rows (one level: district or dong), for each of
    ``granularities``, each granularity in SPEC order, and each of ``building_types``
    (None: the combined row of every deal; a type: its deals only).

    ``merge_code`` reports every row under that district (a query by a code that also
    finds its renumbering aliases). Ordered by granularity, then ``total_samples``
    descending, then code, dong, type order and building type. Written for speed: it
    runs over the whole rollup at a bulk load, visiting each rollup row once.
    """
    sources: dict[CohortKey, dict[str, dict[str, int]]] = {}
    types: dict[CohortKey, dict[str, dict[str, int]]] = {}
    deals: dict[CohortKey, dict[str, dict[str, int]]] = {}  # contracts and bulk ones
    combined = None in building_types
    typed = {t for t in building_types if t is not None}
    for r in rollup:
        btype = r.building_type
        base = (merge_code or r.sigungu_code, r.dong, r.property_type, r.transaction_type)
        month, source, n = r.month, r.source, r.samples
        contracts, bulk = r.contracts, r.bulk_contracts
        if combined:
            key = (*base, "")
            _count(sources, key, month, source, n)
            _count(types, key, month, btype or UNKNOWN_TYPE, n)
            _count(deals, key, month, "contracts", contracts)
            _count(deals, key, month, "bulk", bulk)
        if btype in typed:
            key = (*base, btype)
            _count(sources, key, month, source, n)
            _count(types, key, month, btype, n)
            _count(deals, key, month, "contracts", contracts)
            _count(deals, key, month, "bulk", bulk)
    out: list[CoverageCohort] = []
    known = dict(names or {})
    quarter_of: dict[str, str] = {}
    for granularity in granularities:
        for key, by_month in sources.items():
            code, dong, ptype, ttype, btype = key
            type_months = types[key]
            deal_months = deals[key]
            by_period = by_month
            by_type = type_months
            by_deals = deal_months
            if granularity == "quarter":
                by_period = _by_quarter(by_month, quarter_of)
                by_type = _by_quarter(type_months, quarter_of)
                by_deals = _by_quarter(deal_months, quarter_of)
            labels: list[str] = []
            totals: list[int] = []
            mix: dict[str, int] = {}
            type_mix: dict[str, int] = {}
            contract_count = bulk_contracts = 0
            for label in sorted(by_period):
                counted = by_deals[label]
                if counted["contracts"] < MIN_SAMPLES:
                    continue
                by_source = by_period[label]
                total = sum(by_source.values())
                contract_count += counted["contracts"]
                bulk_contracts += counted["bulk"]
                labels.append(label)
                totals.append(total)
                for source, n in by_source.items():
                    mix[source] = mix.get(source, 0) + n
                for kind, n in by_type[label].items():
                    type_mix[kind] = type_mix.get(kind, 0) + n
            if not labels:
                continue
            name = known.get(code)
            if name is None:
                name = known[code] = district_name(code)
            total_samples = sum(totals)
            row = CoverageRow(
                sigungu_code=code,
                sigungu=name,
                gu=gu_name(name) if dong_level else None,
                dong=dong if dong_level else None,
                property_type=ptype,
                transaction_type=ttype,
                earliest_period=labels[0],
                latest_period=labels[-1],
                period_count=len(labels),
                periods_with_data=tuple(labels),
                total_samples=total_samples,
                samples_per_period_median=median(totals),
                data_sources=tuple(sorted(mix)),
                building_type=btype or None,
                building_type_mix=dict(sorted(type_mix.items())),
                contract_count=contract_count,
                bulk_contracts=bulk_contracts,
            )
            out.append(
                CoverageCohort(
                    granularity=granularity,
                    sigungu_code=code,
                    dong=dong,
                    property_type=ptype,
                    transaction_type=ttype,
                    building_type=btype,
                    type_rank=type_rank(ptype, ttype),
                    total_samples=total_samples,
                    row=row,
                    source_mix=dict(sorted(mix.items())),
                )
            )
    out.sort(
        key=lambda c: (
            granularities.index(c.granularity),
            -c.total_samples,
            c.sigungu_code,
            c.dong,
            c.type_rank,
            c.building_type,
        )
    )
    return out


def coverage_rows(
    records: Iterable[Transaction | Deal],
    query: CoverageQuery,
    *,
    incomplete: Collection[freshness.MonthKey] = (),
    today: datetime.date | None = None,
) -> list[CoverageRow]:
    """The coverage rows of ``query`` computed from transactions, as the server answers
    them (the busiest ``query.limit`` cohorts); ``complete`` and ``provisional`` follow
    ``incomplete`` and ``today`` (when given)."""
    cohort = query.cohort
    items = deals(records)
    chosen = select(cohort, items, {d.month for d in items})
    names: dict[str, str] = {}
    for d in chosen:
        names.setdefault(d.sigungu_code, d.sigungu)
    if cohort.sigungu_code:
        own = next((d.sigungu for d in chosen if d.sigungu_code == cohort.sigungu_code), None)
        first = own or next(iter(names.values()), None)
        names = {cohort.sigungu_code: district_name(cohort.sigungu_code, first)}
    else:
        names = {code: district_name(code, name) for code, name in names.items()}
    built = build_coverage(
        rollup_of(chosen, dong_level=cohort.dong_level),
        (query.granularity,),
        dong_level=cohort.dong_level,
        merge_code=cohort.sigungu_code or None,
        names=names,
        building_types=(cohort.building_type,),
    )
    rows = [c.row for c in built[: query.limit]]
    if today is None:
        return rows
    finished = finish_rows(rows, loaded=held_keys(items), incomplete=incomplete, today=today)
    return [row for row, _ in finished]


def coverage_row(text: str) -> CoverageRow:
    """A coverage row from its ``stored_form``."""
    stored = json.loads(text)
    return CoverageRow(
        **{
            **stored,
            "periods_with_data": tuple(stored["periods_with_data"]),
            "data_sources": tuple(stored["data_sources"]),
        }
    )


def stored_form(row: CoverageRow) -> str:
    """A coverage row's JSON text as the store keeps it: without the fields that follow
    the clock (``STORED_LATER``); ``coverage_row`` reads it back."""
    out: dict[str, Any] = to_json(row)
    for name in STORED_LATER:
        out.pop(name, None)
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def finish_rows(
    rows: Iterable[CoverageRow],
    *,
    loaded: Collection[freshness.MonthKey],
    incomplete: Collection[freshness.MonthKey],
    today: datetime.date,
) -> list[tuple[CoverageRow, list[str]]]:
    """Each row with ``complete`` and ``provisional`` set over its periods with data,
    and those of its periods with a month not loaded completely (never loaded, or read
    partially: ``freshness.loaded_months`` against ``loaded`` and ``incomplete``), as on
    pulse rows: a quarter with deals in one month whose other months were never loaded
    is not complete."""
    out: list[tuple[CoverageRow, list[str]]] = []
    provisional_of: dict[str, bool] = {}  # rows share a few latest periods
    for row in rows:
        codes = codes_of(row.sigungu_code)
        kinds = freshness.load_kinds(row.property_type, row.transaction_type)
        gaps: list[str] = []
        for label in row.periods_with_data:
            months = freshness.label_months(label)
            have = freshness.loaded_months(
                codes, months, kinds, loaded=loaded, incomplete=incomplete
            )
            if len(have) != len(months):
                gaps.append(label)
        provisional = provisional_of.get(row.latest_period)
        if provisional is None:
            months = freshness.label_months(row.latest_period)
            provisional = provisional_of[row.latest_period] = freshness.any_provisional(
                months, today
            )
        if row.complete != (not gaps) or row.provisional != provisional:
            row = attrs.evolve(row, complete=not gaps, provisional=provisional)
        out.append((row, gaps))
    return out


def coverage_answer(
    found: Sequence[tuple[CoverageRow, Mapping[str, int]]],
    query: CoverageQuery,
    context: Context,
    *,
    synthetic: bool,
    loaded: Collection[freshness.MonthKey],
    incomplete: Collection[freshness.MonthKey] = (),
) -> Answer:
    """``GET /api/v1/real-estate/coverage``'s answer: rows with their per-source samples
    in, the envelope out (``complete`` and ``provisional`` set against ``loaded``,
    ``incomplete`` and the context's date). An empty answer is a 200 with no rows."""
    mix: Counter[str] = Counter()
    for _, row_mix in found:
        mix.update(row_mix)
    finished = finish_rows(
        (row for row, _ in found),
        loaded=loaded,
        incomplete=incomplete,
        today=context.generated_at.date(),
    )
    gaps = sorted({label for _, labels in finished for label in labels})
    cohort = query.cohort
    echo = {
        **cohort.echo(),
        "building_type": cohort.building_type,
        **cohort.land_filters(),
        "granularity": query.granularity,
        "limit": query.limit,
    }
    meta = layer_meta(
        context,
        count=len(found),
        source_mix=dict(mix),
        synthetic=synthetic,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        query=echo,
        extra={
            "granularity": query.granularity,
            "row_cap": query.limit,
            "data_as_of": context.data_as_of,
            "data_version": context.data_version,
            "incomplete_periods": gaps,
            "methodology": CONTRACT_METHODOLOGY,
        },
    )
    return Answer(data=[row for row, _ in finished], meta=meta)
