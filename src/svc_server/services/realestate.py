"""Real-estate use cases: pulse, series, coverage, indices, dimensions.

Each takes the store, the caller, the already strict-parsed query parameters and the
request's id, clock and links, and returns ``(data, meta)``; an empty answer where SPEC
wants a 404 raises ``NotFound`` carrying the same envelope. No HTTP objects here: an
embedding application can call these directly.

Parameters are validated completely (400) before the tier gate (403) is applied, so a
malformed request is told what is wrong whatever the caller's plan.

Queries by a district code also find the records stored under its renumbering aliases
(``svc_core.regions.aliases``); the rows are reported under the requested code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from svc_core import confidence, envelope, periods, plans, regions, stats
from svc_core import params as p
from svc_core.caller import Caller
from svc_core.errors import InvalidParams, NotFound
from svc_core.models import METRIC_TYPES, PROPERTY_TYPES, TRANSACTION_TYPES
from svc_server.store import Store
from svc_server.store.base import Row, Tx
from svc_server.store.realestate import CoverageRecord, DataState

GEO = ("sigungu", "dong")
GRANULARITY = ("quarter", "month")
DONG_TIER = "pro"
DEFAULT_SOURCES = ("rtms_official",)
INDEX_SOURCES = ("rone_official",)
DIMENSIONS_HINT = (
    "See GET /api/v1/real-estate/dimensions for the districts and types that have data, "
    "and GET /api/v1/real-estate/coverage for the periods with data."
)
INDICES_HINT = (
    "Indices exist for districts mapped from R-ONE market areas and for the periods the "
    "survey published; try period=last_8q or a year such as 2025."
)
PULSE_PARAMS = frozenset(
    {"sigungu_code", "property_type", "transaction_type", "period", "geo_precision", "dong"}
)
SERIES_PARAMS = frozenset(
    {
        "sigungu_code",
        "periods",
        "from_period",
        "to_period",
        "property_type",
        "transaction_type",
        "geo_precision",
        "dong",
    }
)
COVERAGE_PARAMS = frozenset(
    {
        "sigungu_code",
        "property_type",
        "transaction_type",
        "geo_precision",
        "dong",
        "granularity",
        "limit",
    }
)
INDICES_PARAMS = frozenset({"sigungu_code", "property_type", "metric_type", "period"})
DIMENSIONS_PARAMS = frozenset({"geo_precision"})

PULSE_COLUMNS = (
    "sigungu_code",
    "sigungu",
    "gu",
    "dong",
    "property_type",
    "transaction_type",
    "period",
    "sample_count",
    "avg_price",
    "p25_price",
    "median_price",
    "p75_price",
    "avg_monthly_rent",
    "p25_monthly_rent",
    "median_monthly_rent",
    "p75_monthly_rent",
    "avg_area_m2",
    "confidence",
    "source_mix",
    "source_means",
    "confidence_factors",
)
COVERAGE_COLUMNS = (
    "sigungu_code",
    "sigungu",
    "gu",
    "dong",
    "property_type",
    "transaction_type",
    "earliest_period",
    "latest_period",
    "period_count",
    "periods_with_data",
    "total_samples",
    "samples_per_period_median",
    "data_sources",
)
INDEX_COLUMNS = (
    "sigungu_code",
    "sigungu",
    "property_type",
    "metric_type",
    "period",
    "period_end_date",
    "value_pct",
    "annualized_cap_rate",
)
COVERAGE_LIMIT_DEFAULT = 200
COVERAGE_LIMIT_MAX = 500
INCOME_YIELD_PERIODS_PER_YEAR = 4

Result = tuple[Any, dict[str, Any]]


@attrs.frozen(kw_only=True)
class Links:
    """Absolute URLs the envelope and tier errors point at."""

    disclosure_url: str
    upgrade_url: str


@attrs.frozen(kw_only=True)
class Cohort:
    """What rows are asked for: a district (``''`` = any) and optional filters."""

    sigungu_code: str
    property_type: str | None
    transaction_type: str | None
    geo_precision: str
    dong: str | None


# parameters ----------------------------------------------------------------------------


def _dong(params: Mapping[str, str]) -> str | None:
    dong = p.optional(params, "dong")
    if dong is not None and (len(dong) > 40 or dong != dong.strip() or not dong.isprintable()):
        raise InvalidParams(
            "Query parameter 'dong' must be a legal dong name such as 역삼동.",
            hint="List dongs with GET /api/v1/real-estate/dimensions?geo_precision=dong.",
        )
    return dong


def _filters(params: Mapping[str, str], code: str) -> Cohort:
    """The type and geography filters; ``dong`` counts only with ``geo_precision=dong``."""
    property_type = p.enum(params, "property_type", PROPERTY_TYPES)
    transaction_type = p.enum(params, "transaction_type", TRANSACTION_TYPES)
    geo = p.enum(params, "geo_precision", GEO, default="sigungu") or "sigungu"
    dong = _dong(params)
    return Cohort(
        sigungu_code=code,
        property_type=property_type,
        transaction_type=transaction_type,
        geo_precision=geo,
        dong=dong if geo == "dong" else None,
    )


def _required_code(params: Mapping[str, str]) -> str:
    return p.sigungu_code(p.required(params, "sigungu_code", hint=DIMENSIONS_HINT))


def _gate(caller: Caller, geo_precision: str, links: Links) -> None:
    """403 ``TIER_RESTRICTED`` unless the caller's plan may use ``geo_precision``."""
    if geo_precision == "dong":
        plans.require_tier(caller.plan, DONG_TIER, links.upgrade_url)


# small helpers -------------------------------------------------------------------------


def _now(now: float) -> datetime:
    return datetime.fromtimestamp(now, UTC)


def _name(code: str, fallback: str | None = None) -> str:
    return regions.region_name(code) or fallback or code


def gu_name(sigungu: str) -> str:
    """The gu of a district name: its last word (``성남시 분당구`` → ``분당구``)."""
    words = sigungu.split()
    return words[-1] if words else sigungu


def _codes(code: str) -> list[str]:
    """The requested code and its renumbering aliases, requested code first."""
    return [code, *sorted(regions.aliases(code))]


def _month(label: str | None) -> periods.Month | None:
    return periods.parse_month(label) if label else None


def _quarter(label: str | None) -> periods.Quarter | None:
    return periods.parse_quarter(label) if label else None


def _meta(
    state: DataState,
    caller: Caller,
    request_id: str,
    now: float,
    links: Links,
    *,
    count: int,
    source_mix: Mapping[str, int],
    synthetic: bool,
    grade: str | None = None,
    sources: Iterable[str] = (),
    cohort: Cohort | None = None,
    query: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    data_sources = set(sources) | set(source_mix) or set(DEFAULT_SOURCES)
    return envelope.layer_envelope(
        caller=caller,
        request_id=request_id,
        generated_at=_now(now),
        count=count,
        confidence=grade,
        source_mix=source_mix,
        data_sources=sorted(data_sources),
        disclosure_url=links.disclosure_url,
        exclusions=state.exclusions,
        synthetic=synthetic,
        property_type=cohort.property_type if cohort else None,
        transaction_type=cohort.transaction_type if cohort else None,
        query=query,
        extra=extra,
    )


# pulse rows ----------------------------------------------------------------------------

GroupKey = tuple[str | None, str, str, str]
"""(dong, property type, transaction type, period label)."""


def _pulse_row(
    cohort: Cohort, key: GroupKey, samples: Sequence[Row], name: str
) -> dict[str, Any] | None:
    """One pulse row from a cohort's samples, or None below the 2-sample minimum."""
    summary = stats.summarize(
        [
            stats.Sample(
                price=int(s["price_krw"]),
                monthly_rent=None if s["monthly_rent_krw"] is None else int(s["monthly_rent_krw"]),
                area=None if s["area_m2"] is None else float(s["area_m2"]),
                source=str(s["source"]),
            )
            for s in samples
        ]
    )
    if summary is None:
        return None
    dong, property_type, transaction_type, period = key
    grade = confidence.confidence_of(summary)
    dong_level = cohort.geo_precision == "dong"
    return {
        "sigungu_code": cohort.sigungu_code,
        "sigungu": name,
        "gu": gu_name(name) if dong_level else None,
        "dong": dong if dong_level else None,
        "property_type": property_type,
        "transaction_type": transaction_type,
        "period": period,
        "sample_count": summary.sample_count,
        "avg_price": summary.avg_price,
        "p25_price": summary.p25_price,
        "median_price": summary.median_price,
        "p75_price": summary.p75_price,
        "avg_monthly_rent": summary.avg_monthly_rent,
        "p25_monthly_rent": summary.p25_monthly_rent,
        "median_monthly_rent": summary.median_monthly_rent,
        "p75_monthly_rent": summary.p75_monthly_rent,
        "avg_area_m2": summary.avg_area_m2,
        "confidence": grade.level,
        "source_mix": summary.source_mix,
        "source_means": summary.source_means,
        "confidence_factors": grade.factors.as_dict(),
    }


def _pulse_rows(
    cohort: Cohort, samples: Sequence[Row], period_of: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Group samples by dong (dong precision only), types and period; summarize each.

    At dong precision, records without a dong are left out. Rows come ordered by period,
    property type, transaction type (enumeration order) and dong.
    """
    dong_level = cohort.geo_precision == "dong"
    groups: dict[GroupKey, list[Row]] = {}
    for s in samples:
        dong = s["dong"] if dong_level else None
        if dong_level and not dong:
            continue
        key = (dong, s["property_type"], s["transaction_type"], period_of[s["month"]])
        groups.setdefault(key, []).append(s)
    fallback = str(samples[0]["sigungu"]) if samples else None
    name = _name(cohort.sigungu_code, fallback)
    rows = [r for key, group in groups.items() if (r := _pulse_row(cohort, key, group, name))]
    rows.sort(
        key=lambda r: (
            r["period"],
            PROPERTY_TYPES.index(r["property_type"]),
            TRANSACTION_TYPES.index(r["transaction_type"]),
            r["dong"] or "",
        )
    )
    return rows


def _mix(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for row in rows:
        total.update(row["source_mix"])
    return dict(total)


def _synthetic(state: DataState, found: Sequence[Row]) -> bool:
    """Rows say whether they are synthetic; an empty answer follows the store."""
    return any(r["synthetic"] for r in found) if found else state.synthetic


def _cohort_rows(
    store: Store, state: DataState, cohort: Cohort, period_of: Mapping[str, str]
) -> tuple[list[dict[str, Any]], bool]:
    """The pulse rows of ``cohort`` over the months in ``period_of`` and whether they are
    synthetic, computed once per data version (the rows are shared: never mutate them).

    A cache hit costs no query: at 2M transactions a busy district's window holds
    thousands of samples, and reading and summarizing them is most of a pulse call.
    """

    def compute() -> tuple[list[dict[str, Any]], bool]:
        found = store.realestate.samples(
            _codes(cohort.sigungu_code),
            sorted(period_of),
            property_type=cohort.property_type,
            transaction_type=cohort.transaction_type,
            dong=cohort.dong,
        )
        return _pulse_rows(cohort, found, period_of), _synthetic(state, found)

    key = ("pulse", cohort, tuple(sorted(period_of.items())))
    return store.realestate.cached(key, compute, version=state.version)


def _rows_meta(
    state: DataState,
    caller: Caller,
    request_id: str,
    now: float,
    links: Links,
    rows: Sequence[Mapping[str, Any]],
    synthetic: bool,
    cohort: Cohort,
    query: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The envelope of pulse rows: count, source mix and grade follow from the rows."""
    return _meta(
        state,
        caller,
        request_id,
        now,
        links,
        count=len(rows),
        source_mix=_mix(rows),
        synthetic=synthetic,
        grade=confidence.worst(r["confidence"] for r in rows),
        cohort=cohort,
        query=query,
        extra=extra,
    )


def _cohort_query(cohort: Cohort) -> dict[str, Any]:
    return {
        "sigungu_code": cohort.sigungu_code or None,
        "property_type": cohort.property_type,
        "transaction_type": cohort.transaction_type,
        "geo_precision": cohort.geo_precision,
        "dong": cohort.dong,
    }


# endpoints -----------------------------------------------------------------------------


def pulse(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> Result:
    """GET /api/v1/real-estate/pulse: one row per cohort over one period."""
    cohort = _filters(params, _required_code(params))
    period = p.optional(params, "period") or "last_6m"
    state = store.realestate.state()
    window = periods.resolve_pulse_period(period, _month(state.latest_month))
    _gate(caller, cohort.geo_precision, links)
    rows, synthetic = _cohort_rows(store, state, cohort, {m: window.label for m in window.months})
    query = _cohort_query(cohort)
    query.update(
        {"period": period, "window_from": window.window_from, "window_to": window.window_to}
    )
    meta = _rows_meta(state, caller, request_id, now, links, rows, synthetic, cohort, query)
    if not rows:
        window_text = f" ({window.window_from} to {window.window_to})" if window.months else ""
        raise NotFound(
            f"No cohort with at least {stats.MIN_SAMPLES} transactions matches district "
            f"{cohort.sigungu_code} in {period}{window_text}.",
            hint=DIMENSIONS_HINT,
            meta=meta,
        )
    return rows, meta


def _series_months(requested: Sequence[str]) -> dict[str, str]:
    """Month label → the requested period (a month or a quarter) that holds it."""
    period_of: dict[str, str] = {}
    for label in requested:
        if "-Q" in label:
            for month in periods.parse_quarter(label).months():
                period_of[month.label] = label
        else:
            period_of[label] = label
    return period_of


def series(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> Result:
    """GET /api/v1/real-estate/pulse/series: pulse rows for up to 12 calendar periods."""
    cohort = _filters(params, _required_code(params))
    requested = periods.expand_series(
        params.get("periods"), params.get("from_period"), params.get("to_period")
    )
    _gate(caller, cohort.geo_precision, links)
    state = store.realestate.state()
    period_of = _series_months(requested)
    rows, synthetic = _cohort_rows(store, state, cohort, period_of)
    returned = sorted({r["period"] for r in rows})
    query = _cohort_query(cohort)
    query.update(
        {
            "period": None,
            "periods": list(requested),
            "from_period": params.get("from_period"),
            "to_period": params.get("to_period"),
        }
    )
    meta = _rows_meta(
        state,
        caller,
        request_id,
        now,
        links,
        rows,
        synthetic,
        cohort,
        query,
        extra={
            "periods_requested": list(requested),
            "periods_returned": returned,
            "missing_periods": [label for label in requested if label not in returned],
        },
    )
    if not rows:
        raise NotFound(
            f"None of the {len(requested)} requested periods has a cohort with at least "
            f"{stats.MIN_SAMPLES} transactions in district {cohort.sigungu_code}.",
            hint=DIMENSIONS_HINT,
            meta=meta,
        )
    return rows, meta


def type_rank(property_type: str, transaction_type: str) -> int:
    """Enumeration order of a (property type, transaction type) pair, for sorting."""
    return PROPERTY_TYPES.index(property_type) * len(TRANSACTION_TYPES) + TRANSACTION_TYPES.index(
        transaction_type
    )


def median_int(values: Sequence[int]) -> int:
    """The median of sorted integers rounded half to even (``stats.quartiles`` agrees)."""
    n = len(values)
    if n % 2:
        return values[n // 2]
    twice = values[n // 2 - 1] + values[n // 2]
    half = twice // 2
    return half + 1 if twice % 2 and half % 2 else half


def district_names(store: Store, codes: Iterable[str], *, tx: Tx | None = None) -> dict[str, str]:
    """Names of districts: the bundled table, else the name their records carry."""
    names: dict[str, str] = {}
    unknown: list[str] = []
    for code in set(codes):
        name = regions.region_name(code)
        if name is None:
            unknown.append(code)
        else:
            names[code] = name
    if unknown:
        wanted = sorted({c for code in unknown for c in _codes(code)})
        found = store.realestate.sigungu_names(wanted, tx=tx)
        for code in unknown:
            name = next((found[c] for c in _codes(code) if c in found), None)
            if name is not None:
                names[code] = name
    return names


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
    rollup: Iterable[Row],
    granularities: Sequence[str],
    *,
    dong_level: bool,
    merge_code: str | None = None,
    names: Mapping[str, str] | None = None,
) -> list[CoverageRecord]:
    """Coverage rows from rollup rows (one level: district or dong), for each of
    ``granularities``, each granularity in SPEC order.

    A period counts only with at least ``MIN_SAMPLES`` samples (all sources together).
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
    out: list[CoverageRecord] = []
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
                name = known[code] = _name(code)
            total_samples = sum(totals)
            totals.sort()
            row = {
                "sigungu_code": code,
                "sigungu": name,
                "gu": gu_name(name) if dong_level else None,
                "dong": dong if dong_level else None,
                "property_type": ptype,
                "transaction_type": ttype,
                "earliest_period": labels[0],
                "latest_period": labels[-1],
                "period_count": len(labels),
                "periods_with_data": labels,
                "total_samples": total_samples,
                "samples_per_period_median": median_int(totals),
                "data_sources": sorted(mix),
            }
            out.append(
                CoverageRecord(
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


def refresh_coverage(
    store: Store, tx: Tx, codes: Iterable[str], *, rollup: Sequence[Row] | None = None
) -> int:
    """Rebuild the precomputed coverage rows of districts ``codes`` (and of any district
    still missing them) inside the load's transaction; return the rows written.

    ``rollup`` may hand over the complete rollup rows of ``codes`` when the caller has
    them in memory (a first bulk load); by default they are read from the store.
    """
    wanted = sorted(set(codes) | store.realestate.stale_coverage_districts(tx))
    if not wanted:
        return 0
    if rollup is None or set(wanted) - set(codes):
        rollup = store.realestate.rollup(codes=wanted, dong_level=None, tx=tx)
    district = [r for r in rollup if r["dong"] == ""]
    dongs = [r for r in rollup if r["dong"] != ""]
    names = district_names(store, wanted, tx=tx)
    records = [
        record
        for level, rows in ((False, district), (True, dongs))
        for record in build_coverage(rows, GRANULARITY, dong_level=level, names=names)
    ]
    store.realestate.replace_coverage(tx, wanted, records)
    return len(records)


def _coverage_rows(
    store: Store, state: DataState, cohort: Cohort, granularity: str, limit: int
) -> list[tuple[dict[str, Any], dict[str, int]]]:
    dong_level = cohort.geo_precision == "dong"
    if cohort.sigungu_code or not state.coverage_complete:
        # One district (with its aliases) is small: build it from the rollup. The whole
        # table is built here only for data loaded before coverage was precomputed.
        def build() -> list[CoverageRecord]:
            rollup = store.realestate.rollup(
                codes=_codes(cohort.sigungu_code) if cohort.sigungu_code else None,
                property_type=cohort.property_type,
                transaction_type=cohort.transaction_type,
                dong_level=dong_level,
                dong=cohort.dong,
            )
            codes = (
                {cohort.sigungu_code}
                if cohort.sigungu_code
                else {r["sigungu_code"] for r in rollup}
            )
            return build_coverage(
                rollup,
                (granularity,),
                dong_level=dong_level,
                merge_code=cohort.sigungu_code or None,
                names=district_names(store, codes),
            )

        records = store.realestate.cached(
            ("coverage", cohort, granularity), build, version=state.version
        )
        return [(r.row, r.source_mix) for r in records[:limit]]
    return store.realestate.coverage(
        granularity=granularity,
        dong_level=dong_level,
        limit=limit,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        dong=cohort.dong,
    )


def coverage(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> Result:
    """GET /api/v1/real-estate/coverage: which cohorts have data in which periods.

    Rows are ordered by ``total_samples`` descending (then code, dong and types); an
    empty answer is a 200 with no rows. Without a district the rows come precomputed
    (maintained at ingest), so the call reads ``limit`` rows whatever the table size.
    """
    code_text = p.optional(params, "sigungu_code")
    code = p.sigungu_code(code_text) if code_text is not None else ""
    cohort = _filters(params, code)
    granularity = p.enum(params, "granularity", GRANULARITY, default="quarter") or "quarter"
    limit = p.integer(
        params, "limit", low=1, high=COVERAGE_LIMIT_MAX, default=COVERAGE_LIMIT_DEFAULT
    )
    _gate(caller, cohort.geo_precision, links)
    state = store.realestate.state()
    found = _coverage_rows(store, state, cohort, granularity, limit)
    rows = [row for row, _ in found]
    mix: Counter[str] = Counter()
    for _, row_mix in found:
        mix.update(row_mix)
    query = _cohort_query(cohort)
    query.update({"granularity": granularity, "limit": limit})
    meta = _meta(
        state,
        caller,
        request_id,
        now,
        links,
        count=len(rows),
        source_mix=dict(mix),
        synthetic=state.synthetic,
        cohort=cohort,
        query=query,
        extra={"granularity": granularity, "row_cap": limit},
    )
    return rows, meta


def _index_row(code: str, r: Row) -> dict[str, Any]:
    value = float(r["value_pct"])
    cap_rate = None
    if r["metric_type"] == "income_yield":
        cap_rate = round(value * INCOME_YIELD_PERIODS_PER_YEAR, 6)
    return {
        "sigungu_code": code,
        "sigungu": _name(code, r["sigungu"]),
        "property_type": r["property_type"],
        "metric_type": r["metric_type"],
        "period": r["period"],
        "period_end_date": str(r["period_end_date"]),
        "value_pct": value,
        "annualized_cap_rate": cap_rate,
    }


def indices(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> Result:
    """GET /api/v1/real-estate/indices: R-ONE survey statistics of a district.

    ``annualized_cap_rate`` is ``value_pct`` x 4 on ``income_yield`` rows (a quarterly
    NOI yield), null otherwise. When a district and its renumbering alias both hold a
    value for the same series and period, the requested code's own value is kept.
    """
    code = _required_code(params)
    property_type = p.enum(params, "property_type", PROPERTY_TYPES)
    metric_type = p.enum(params, "metric_type", METRIC_TYPES)
    period = p.optional(params, "period") or "last_4q"
    state = store.realestate.state()
    window = periods.resolve_index_period(period, _quarter(state.latest_index_period))
    found = store.realestate.indices(
        _codes(code), window.periods, property_type=property_type, metric_type=metric_type
    )
    chosen: dict[tuple[str, str, str], Row] = {}
    for r in found:
        series_key = (r["property_type"], r["metric_type"], r["period"])
        if series_key not in chosen or r["sigungu_code"] == code:
            chosen[series_key] = r
    rows = [_index_row(code, r) for r in chosen.values()]
    rows.sort(
        key=lambda r: (
            PROPERTY_TYPES.index(r["property_type"]),
            METRIC_TYPES.index(r["metric_type"]),
            r["period"],
        )
    )
    kept = list(chosen.values())
    query = {
        "sigungu_code": code,
        "property_type": property_type,
        "metric_type": metric_type,
        "period": period,
        "window_from": window.window_from,
        "window_to": window.window_to,
    }
    meta = _meta(
        state,
        caller,
        request_id,
        now,
        links,
        count=len(rows),
        source_mix=dict(Counter(str(r["source"]) for r in kept)),
        synthetic=_synthetic(state, kept),
        sources=INDEX_SOURCES,
        query=query,
    )
    if not rows:
        raise NotFound(
            f"No index values for district {code} in {period}"
            + (f" ({window.window_from} to {window.window_to})." if window.periods else "."),
            hint=INDICES_HINT,
            meta=meta,
        )
    return rows, meta


def _ranked(counter: Mapping[Any, int]) -> list[tuple[Any, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))


def _dimensions_data(
    store: Store, geo: str, window: periods.PeriodWindow
) -> tuple[dict[str, Any], dict[str, int]]:
    sigungus: Counter[str] = Counter()
    ptypes: Counter[str] = Counter()
    ttypes: Counter[str] = Counter()
    mix: Counter[str] = Counter()
    gu_dongs: Counter[tuple[str, str]] = Counter()
    if window.months:
        first, last = window.months[0], window.months[-1]
        for r in store.realestate.rollup(month_from=first, month_to=last):
            n = int(r["samples"])
            sigungus[r["sigungu_code"]] += n
            ptypes[r["property_type"]] += n
            ttypes[r["transaction_type"]] += n
            mix[r["source"]] += n
        if geo == "dong":
            for r in store.realestate.rollup(dong_level=True, month_from=first, month_to=last):
                gu_dongs[(r["sigungu_code"], r["dong"])] += int(r["samples"])
    names = district_names(store, sigungus)
    data = {
        "sigungus": [
            {"value": names.get(code, code), "code": code, "sample_count": n}
            for code, n in _ranked(sigungus)
        ],
        "gu_dongs": [
            {"value": f"{gu_name(names.get(code, code))} > {dong}", "code": code, "sample_count": n}
            for (code, dong), n in _ranked(gu_dongs)
        ],
        "property_types": [{"value": v, "sample_count": n} for v, n in _ranked(ptypes)],
        "transaction_types": [{"value": v, "sample_count": n} for v, n in _ranked(ttypes)],
    }
    return data, dict(mix)


def dimensions(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> Result:
    """GET /api/v1/real-estate/dimensions: what has data in the ``last_6m`` window.

    Items are ordered by ``sample_count`` descending. ``gu_dongs`` is filled only for
    ``geo_precision=dong``; ``_meta.count`` is the number of ``sigungus``.
    """
    geo = p.enum(params, "geo_precision", GEO, default="sigungu") or "sigungu"
    _gate(caller, geo, links)
    state = store.realestate.state()
    window = periods.resolve_pulse_period("last_6m", _month(state.latest_month))
    data, mix = store.realestate.cached(
        ("dimensions", geo, window.months),
        lambda: _dimensions_data(store, geo, window),
        version=state.version,
    )
    meta = _meta(
        state,
        caller,
        request_id,
        now,
        links,
        count=len(data["sigungus"]),
        source_mix=mix,
        synthetic=state.synthetic,
        query={
            "geo_precision": geo,
            "period": "last_6m",
            "window_from": window.window_from,
            "window_to": window.window_to,
        },
    )
    return data, meta
