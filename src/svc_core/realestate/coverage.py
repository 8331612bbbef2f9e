"""Coverage rows: which cohorts have data in which periods (SPEC "Coverage row").

Built from *rollup rows*: mappings with ``sigungu_code``, ``dong`` (``''`` for a
district-level row), ``property_type``, ``transaction_type``, ``month``, ``source`` and
``samples`` (the number of transactions). The server keeps such rows in its store;
``rollup_of`` counts them from transactions. A period counts only with at least
``stats.MIN_SAMPLES`` samples, all sources together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from svc_core import periods, stats
from svc_core.envelope import Answer
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES, Transaction
from svc_core.realestate.common import Context, district_name, gu_name, layer_meta
from svc_core.realestate.pulse import Deal, deals, select
from svc_core.realestate.query import CoverageQuery

RollupRow = Mapping[str, Any]
"""One cohort, month and source with its ``samples`` (see the module docstring)."""


@attrs.frozen(kw_only=True)
class CoverageRow:
    """One cohort's coverage, fields in SPEC order; ``gu`` and ``dong`` only at dong
    precision. ``samples_per_period_median`` is the median of the per-period totals."""

    sigungu_code: str
    sigungu: str
    gu: str | None
    dong: str | None
    property_type: str
    transaction_type: str
    earliest_period: str
    latest_period: str
    period_count: int
    periods_with_data: tuple[str, ...]
    total_samples: int
    samples_per_period_median: int
    data_sources: tuple[str, ...]


@attrs.frozen(kw_only=True)
class CoverageCohort:
    """A coverage row with what orders and stores it: its granularity, keys (``dong``
    ``''`` at district level), type rank and per-source samples."""

    granularity: str
    sigungu_code: str
    dong: str
    property_type: str
    transaction_type: str
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
    """Per-month, per-source samples pooled into quarters."""
    out: dict[str, dict[str, int]] = {}
    for month, by_source in by_month.items():
        label = quarter_of.get(month)
        if label is None:
            label = quarter_of[month] = periods.parse_month(month).quarter.label
        pooled = out.get(label)
        if pooled is None:
            out[label] = dict(by_source)
            continue
        for source, n in by_source.items():
            pooled[source] = pooled.get(source, 0) + n
    return out


def build_coverage(
    rollup: Iterable[RollupRow],
    granularities: Sequence[str],
    *,
    dong_level: bool,
    merge_code: str | None = None,
    names: Mapping[str, str] | None = None,
) -> list[CoverageCohort]:
    """Coverage of rollup rows (one level: district or dong), for each of
    ``granularities``, each granularity in SPEC order.

    ``merge_code`` reports every row under that district (a query by a code that also
    finds its renumbering aliases). Ordered by granularity, then ``total_samples``
    descending, then code, dong and type order. Written for speed: it runs over the
    whole rollup at a bulk load, visiting each rollup row once.
    """
    per: dict[tuple[str, str, str, str], dict[str, dict[str, int]]] = {}
    for r in rollup:
        key = (
            merge_code or r["sigungu_code"],
            r["dong"],
            r["property_type"],
            r["transaction_type"],
        )
        cohort = per.get(key)
        if cohort is None:
            cohort = per[key] = {}
        by_source = cohort.get(r["month"])
        if by_source is None:
            by_source = cohort[r["month"]] = {}
        source = r["source"]
        by_source[source] = by_source.get(source, 0) + r["samples"]
    out: list[CoverageCohort] = []
    known = dict(names or {})
    quarter_of: dict[str, str] = {}
    for granularity in granularities:
        for (code, dong, ptype, ttype), by_month in per.items():
            by_period = _by_quarter(by_month, quarter_of) if granularity == "quarter" else by_month
            labels: list[str] = []
            totals: list[int] = []
            mix: dict[str, int] = {}
            for label in sorted(by_period):
                by_source = by_period[label]
                total = sum(by_source.values())
                if total < stats.MIN_SAMPLES:
                    continue
                labels.append(label)
                totals.append(total)
                for source, n in by_source.items():
                    mix[source] = mix.get(source, 0) + n
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
                samples_per_period_median=stats.median(totals),
                data_sources=tuple(sorted(mix)),
            )
            out.append(
                CoverageCohort(
                    granularity=granularity,
                    sigungu_code=code,
                    dong=dong,
                    property_type=ptype,
                    transaction_type=ttype,
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
        )
    )
    return out


def rollup_of(records: Iterable[Deal], *, dong_level: bool) -> list[dict[str, Any]]:
    """Rollup rows counted from deals: district-level rows, or (``dong_level``) one per
    legal dong, leaving out deals without a dong."""
    counts: Counter[tuple[str, str, str, str, str, str]] = Counter()
    for d in records:
        if dong_level and not d.dong:
            continue
        dong = (d.dong or "") if dong_level else ""
        counts[(d.sigungu_code, dong, d.property_type, d.transaction_type, d.month, d.source)] += 1
    keys = ("sigungu_code", "dong", "property_type", "transaction_type", "month", "source")
    return [{**dict(zip(keys, key, strict=True)), "samples": n} for key, n in counts.items()]


def coverage_rows(records: Iterable[Transaction | Deal], query: CoverageQuery) -> list[CoverageRow]:
    """The coverage rows of ``query`` computed from transactions, as the server answers
    them (the busiest ``query.limit`` cohorts)."""
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
    )
    return [c.row for c in built[: query.limit]]


def coverage_row(stored: Mapping[str, Any]) -> CoverageRow:
    """A coverage row from its JSON form (as ``svc_core.convert`` writes it)."""
    return CoverageRow(
        **{
            **stored,
            "periods_with_data": tuple(stored["periods_with_data"]),
            "data_sources": tuple(stored["data_sources"]),
        }
    )


def coverage_answer(
    found: Sequence[tuple[CoverageRow, Mapping[str, int]]],
    query: CoverageQuery,
    context: Context,
    *,
    synthetic: bool,
) -> Answer:
    """``GET /api/v1/real-estate/coverage``'s answer: rows with their per-source samples
    in, the envelope out. An empty answer is a 200 with no rows."""
    mix: Counter[str] = Counter()
    for _, row_mix in found:
        mix.update(row_mix)
    cohort = query.cohort
    echo = {**cohort.echo(), "granularity": query.granularity, "limit": query.limit}
    meta = layer_meta(
        context,
        count=len(found),
        source_mix=dict(mix),
        synthetic=synthetic,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        query=echo,
        extra={"granularity": query.granularity, "row_cap": query.limit},
    )
    return Answer(data=[row for row, _ in found], meta=meta)
