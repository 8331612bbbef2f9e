"""Real-estate use cases: pulse, series, coverage, indices, dimensions.

Each takes the store, the caller, the already strict-parsed query parameters and the
request's id and clock, and returns ``(rows, meta)``; an empty answer where SPEC wants a
404 raises ``NotFound`` carrying the same envelope. No HTTP objects here: an embedding
application can call these directly.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
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

GEO = ("sigungu", "dong")
GRANULARITY = ("quarter", "month")
DIMENSIONS_HINT = (
    "See GET /api/v1/real-estate/dimensions for the districts and types that have data, "
    "and /api/v1/real-estate/coverage for the periods."
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


@attrs.frozen(kw_only=True)
class Links:
    """Absolute URLs the envelope and tier errors point at."""

    disclosure_url: str
    upgrade_url: str


@attrs.frozen(kw_only=True)
class Cohort:
    """What rows are asked for: a district and optional filters."""

    sigungu_code: str
    property_type: str | None
    transaction_type: str | None
    geo_precision: str
    dong: str | None


def _cohort(params: Mapping[str, str], caller: Caller, links: Links) -> Cohort:
    code = p.sigungu_code(p.required(params, "sigungu_code", hint=DIMENSIONS_HINT))
    return _filters(params, caller, links, code)


def _filters(params: Mapping[str, str], caller: Caller, links: Links, code: str) -> Cohort:
    property_type = p.enum(params, "property_type", PROPERTY_TYPES)
    transaction_type = p.enum(params, "transaction_type", TRANSACTION_TYPES)
    geo = p.enum(params, "geo_precision", GEO, default="sigungu") or "sigungu"
    dong = p.optional(params, "dong")
    if dong is not None and (len(dong) > 40 or not dong.strip() or dong != dong.strip()):
        raise InvalidParams("Query parameter 'dong' must be a dong name such as 역삼동.")
    if geo == "dong":
        plans.require_tier(caller.plan, "pro", links.upgrade_url)
    return Cohort(
        sigungu_code=code,
        property_type=property_type,
        transaction_type=transaction_type,
        geo_precision=geo,
        dong=dong if geo == "dong" else None,
    )


def _now(now: float) -> datetime:
    return datetime.fromtimestamp(now, UTC)


def _latest_month(store: Store) -> periods.Month | None:
    latest = store.realestate.latest_month()
    return periods.parse_month(latest) if latest else None


def _name(code: str, fallback: str | None = None) -> str:
    return regions.region_name(code) or fallback or code


def _codes(code: str) -> list[str]:
    """The requested code and its renumbering aliases, requested code first."""
    return [code, *sorted(regions.aliases(code) - {code})]


def _row(
    cohort: Cohort,
    key: tuple[str, str | None, str, str],
    period: str,
    samples: Sequence[Mapping[str, Any]],
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
    code, dong, property_type, transaction_type = key
    grade = confidence.confidence_of(summary)
    name = _name(code, str(samples[0]["sigungu"]))
    return {
        "sigungu_code": code,
        "sigungu": name,
        "gu": name if cohort.geo_precision == "dong" else None,
        "dong": dong if cohort.geo_precision == "dong" else None,
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


def _order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        row["period"],
        PROPERTY_TYPES.index(row["property_type"]),
        TRANSACTION_TYPES.index(row["transaction_type"]),
        row["dong"] or "",
    )


def _group(
    cohort: Cohort, samples: Iterable[Mapping[str, Any]], period_of: Mapping[str, str]
) -> dict[tuple[tuple[str, str | None, str, str], str], list[Mapping[str, Any]]]:
    groups: dict[tuple[tuple[str, str | None, str, str], str], list[Mapping[str, Any]]] = (
        defaultdict(list)
    )
    for s in samples:
        if cohort.geo_precision == "dong" and not s["dong"]:
            continue
        dong = s["dong"] if cohort.geo_precision == "dong" else None
        key = (cohort.sigungu_code, dong, s["property_type"], s["transaction_type"])
        groups[(key, period_of[s["month"]])].append(s)
    return groups


def _envelope(
    store: Store,
    caller: Caller,
    request_id: str,
    now: float,
    links: Links,
    rows: Sequence[Mapping[str, Any]],
    *,
    synthetic: bool,
    cohort: Cohort | None,
    sources: Iterable[str] = (),
    grade: str | None = None,
    query: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    source_mix: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    if source_mix is None:
        mix: Counter[str] = Counter()
        for row in rows:
            mix.update(row.get("source_mix") or {})
        source_mix = dict(mix)
    data_sources = set(sources) | set(source_mix) or {"rtms_official"}
    return envelope.layer_envelope(
        caller=caller,
        request_id=request_id,
        generated_at=_now(now),
        count=len(rows),
        confidence=grade,
        source_mix=source_mix,
        data_sources=sorted(data_sources),
        disclosure_url=links.disclosure_url,
        exclusions=store.realestate.exclusions(),
        synthetic=synthetic,
        property_type=cohort.property_type if cohort else None,
        transaction_type=cohort.transaction_type if cohort else None,
        query=query,
        extra=extra,
    )


def _query_echo(cohort: Cohort, period: str, window: periods.PeriodWindow | None) -> dict[str, Any]:
    return {
        "sigungu_code": cohort.sigungu_code,
        "property_type": cohort.property_type,
        "transaction_type": cohort.transaction_type,
        "period": period,
        "geo_precision": cohort.geo_precision,
        "dong": cohort.dong,
        "window_from": window.window_from if window else None,
        "window_to": window.window_to if window else None,
    }


def pulse(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """GET /api/v1/real-estate/pulse."""
    cohort = _cohort(params, caller, links)
    period = p.optional(params, "period") or "last_6m"
    window = periods.resolve_pulse_period(period, _latest_month(store))
    samples: list[Mapping[str, Any]] = []
    if window.months:
        samples = list(
            store.realestate.samples(
                _codes(cohort.sigungu_code),
                window.months,
                property_type=cohort.property_type,
                transaction_type=cohort.transaction_type,
                dong=cohort.dong,
            )
        )
    label = window.label
    groups = _group(cohort, samples, {m: label for m in window.months})
    rows = sorted(
        (r for (key, per), group in groups.items() if (r := _row(cohort, key, per, group))),
        key=_order,
    )
    meta = _envelope(
        store,
        caller,
        request_id,
        now,
        links,
        rows,
        synthetic=any(s["synthetic"] for s in samples),
        cohort=cohort,
        grade=confidence.worst(r["confidence"] for r in rows),
        query=_query_echo(cohort, period, window),
    )
    if not rows:
        raise NotFound(
            f"No cohort with at least {stats.MIN_SAMPLES} transactions matches "
            f"district {cohort.sigungu_code} in {period}.",
            hint=DIMENSIONS_HINT,
            meta=meta,
        )
    return rows, meta


def series(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """GET /api/v1/real-estate/pulse/series."""
    cohort = _cohort(params, caller, links)
    requested = periods.expand_series(
        params.get("periods"), params.get("from_period"), params.get("to_period")
    )
    period_of: dict[str, str] = {}
    for label in requested:
        if "-Q" in label:
            for month in periods.parse_quarter(label).months():
                period_of[month.label] = label
        else:
            period_of[label] = label
    samples = list(
        store.realestate.samples(
            _codes(cohort.sigungu_code),
            sorted(period_of),
            property_type=cohort.property_type,
            transaction_type=cohort.transaction_type,
            dong=cohort.dong,
        )
    )
    groups = _group(cohort, samples, period_of)
    rows = sorted(
        (r for (key, per), group in groups.items() if (r := _row(cohort, key, per, group))),
        key=_order,
    )
    returned = sorted({r["period"] for r in rows})
    extra = {
        "periods_requested": list(requested),
        "periods_returned": returned,
        "missing_periods": [label for label in requested if label not in returned],
    }
    query = _query_echo(cohort, ",".join(requested), None)
    query.update(
        {
            "periods": params.get("periods"),
            "from_period": params.get("from_period"),
            "to_period": params.get("to_period"),
        }
    )
    meta = _envelope(
        store,
        caller,
        request_id,
        now,
        links,
        rows,
        synthetic=any(s["synthetic"] for s in samples),
        cohort=cohort,
        grade=confidence.worst(r["confidence"] for r in rows),
        query=query,
        extra=extra,
    )
    if not rows:
        raise NotFound(
            f"None of the {len(requested)} requested periods has a cohort with at least "
            f"{stats.MIN_SAMPLES} transactions.",
            hint=DIMENSIONS_HINT,
            meta=meta,
        )
    return rows, meta


def coverage(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """GET /api/v1/real-estate/coverage: periods with data per cohort, from the rollup."""
    code_text = p.optional(params, "sigungu_code")
    code = p.sigungu_code(code_text) if code_text is not None else None
    granularity = p.enum(params, "granularity", GRANULARITY, default="quarter") or "quarter"
    limit = p.integer(params, "limit", low=1, high=500, default=200)
    cohort = _filters(params, caller, links, code or "")
    dong_level = cohort.geo_precision == "dong"
    rollup = store.realestate.rollup(
        codes=_codes(code) if code else None,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        dong_level=dong_level,
        dong=cohort.dong,
        granularity=granularity,
    )
    per: dict[tuple[str, str, str, str], dict[str, Counter[str]]] = defaultdict(
        lambda: defaultdict(Counter)
    )
    for r in rollup:
        label = str(r["period"])
        key = (code or r["sigungu_code"], r["dong"], r["property_type"], r["transaction_type"])
        per[key][label][r["source"]] += int(r["samples"])
    rows: list[dict[str, Any]] = []
    mixes: list[Counter[str]] = []
    for (sig, dong, ptype, ttype), by_period in per.items():
        kept = {label: src for label, src in by_period.items() if sum(src.values()) >= 2}
        if not kept:
            continue
        labels = sorted(kept)
        totals = [sum(kept[label].values()) for label in labels]
        sources: Counter[str] = Counter()
        for label in labels:
            sources.update(kept[label])
        name = _name(sig)
        rows.append(
            {
                "sigungu_code": sig,
                "sigungu": name,
                "gu": name if dong_level else None,
                "dong": dong if dong_level else None,
                "property_type": ptype,
                "transaction_type": ttype,
                "earliest_period": labels[0],
                "latest_period": labels[-1],
                "period_count": len(labels),
                "periods_with_data": labels,
                "total_samples": sum(totals),
                "samples_per_period_median": int(statistics.median(totals)),
                "data_sources": sorted(sources),
            }
        )
        mixes.append(sources)
    order = sorted(
        range(len(rows)),
        key=lambda i: (
            -int(rows[i]["total_samples"]),
            str(rows[i]["sigungu_code"]),
            str(rows[i]["dong"] or ""),
            PROPERTY_TYPES.index(str(rows[i]["property_type"])),
            TRANSACTION_TYPES.index(str(rows[i]["transaction_type"])),
        ),
    )[:limit]
    mix: Counter[str] = Counter()
    for i in order:
        mix.update(mixes[i])
    rows = [rows[i] for i in order]
    query = {
        "sigungu_code": code,
        "property_type": cohort.property_type,
        "transaction_type": cohort.transaction_type,
        "geo_precision": cohort.geo_precision,
        "dong": cohort.dong,
        "granularity": granularity,
        "limit": limit,
    }
    meta = _envelope(
        store,
        caller,
        request_id,
        now,
        links,
        rows,
        synthetic=store.realestate.has_synthetic(),
        cohort=cohort,
        query=query,
        extra={"granularity": granularity, "row_cap": limit},
        source_mix=dict(mix),
    )
    return rows, meta


def indices(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """GET /api/v1/real-estate/indices: R-ONE survey statistics per district."""
    code = p.sigungu_code(p.required(params, "sigungu_code", hint=DIMENSIONS_HINT))
    property_type = p.enum(params, "property_type", PROPERTY_TYPES)
    metric_type = p.enum(params, "metric_type", METRIC_TYPES)
    period = p.optional(params, "period") or "last_4q"
    latest = store.realestate.latest_index_period()
    window = periods.resolve_index_period(period, periods.parse_quarter(latest) if latest else None)
    found = (
        store.realestate.indices(
            _codes(code), window.periods, property_type=property_type, metric_type=metric_type
        )
        if window.periods
        else []
    )
    rows = [
        {
            "sigungu_code": code,
            "sigungu": _name(code, r["sigungu"]),
            "property_type": r["property_type"],
            "metric_type": r["metric_type"],
            "period": r["period"],
            "period_end_date": r["period_end_date"],
            "value_pct": float(r["value_pct"]),
            "annualized_cap_rate": round(float(r["value_pct"]) * 4, 4)
            if r["metric_type"] == "income_yield"
            else None,
        }
        for r in found
    ]
    mix = Counter(str(r["source"]) for r in found)
    query = {
        "sigungu_code": code,
        "property_type": property_type,
        "metric_type": metric_type,
        "period": period,
        "window_from": window.window_from,
        "window_to": window.window_to,
    }
    meta = _envelope(
        store,
        caller,
        request_id,
        now,
        links,
        rows,
        synthetic=any(r["synthetic"] for r in found),
        cohort=None,
        sources={"rone_official"},
        query=query,
        source_mix=dict(mix),
    )
    if not rows:
        raise NotFound(
            f"No index values for district {code} in {period}.",
            hint="Indices exist for districts mapped from R-ONE market areas; "
            "see GET /api/v1/real-estate/coverage for districts with data.",
            meta=meta,
        )
    return rows, meta


def dimensions(
    store: Store,
    caller: Caller,
    params: Mapping[str, str],
    *,
    request_id: str,
    now: float,
    links: Links,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """GET /api/v1/real-estate/dimensions: what has data in the last 6 months."""
    geo = p.enum(params, "geo_precision", GEO, default="sigungu") or "sigungu"
    if geo == "dong":
        plans.require_tier(caller.plan, "pro", links.upgrade_url)
    window = periods.resolve_pulse_period("last_6m", _latest_month(store))
    sigungus: Counter[str] = Counter()
    ptypes: Counter[str] = Counter()
    ttypes: Counter[str] = Counter()
    mix: Counter[str] = Counter()
    if window.months:
        for r in store.realestate.rollup(month_from=window.months[0], month_to=window.months[-1]):
            n = int(r["samples"])
            sigungus[r["sigungu_code"]] += n
            ptypes[r["property_type"]] += n
            ttypes[r["transaction_type"]] += n
            mix[r["source"]] += n
    gu_dongs: Counter[tuple[str, str]] = Counter()
    if geo == "dong" and window.months:
        for r in store.realestate.rollup(
            dong_level=True, month_from=window.months[0], month_to=window.months[-1]
        ):
            gu_dongs[(r["sigungu_code"], r["dong"])] += int(r["samples"])

    def ranked(counter: Counter[Any]) -> list[tuple[Any, int]]:
        return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))

    data = {
        "sigungus": [
            {"value": _name(code), "code": code, "sample_count": n} for code, n in ranked(sigungus)
        ],
        "gu_dongs": [
            {"value": f"{_name(code)} > {dong}", "code": code, "sample_count": n}
            for (code, dong), n in ranked(gu_dongs)
        ],
        "property_types": [{"value": v, "sample_count": n} for v, n in ranked(ptypes)],
        "transaction_types": [{"value": v, "sample_count": n} for v, n in ranked(ttypes)],
    }
    meta = _envelope(
        store,
        caller,
        request_id,
        now,
        links,
        data["sigungus"],
        synthetic=store.realestate.has_synthetic(),
        cohort=None,
        query={
            "geo_precision": geo,
            "window_from": window.window_from,
            "window_to": window.window_to,
        },
        source_mix=dict(mix),
    )
    return data, meta
