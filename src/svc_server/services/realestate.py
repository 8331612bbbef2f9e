"""Real-estate use cases: pulse, series, indices, dimensions (coverage, and its rows
precomputed at ingest, in ``svc_server.services.coverage``).

Each reads the store and hands the records to the pure functions of
``svc_core.realestate``, which compute the rows and the envelope; an empty answer where
SPEC wants a 404 raises ``NotFound`` carrying the same envelope. Each takes the store, a
typed query (``svc_core.realestate.query``) and the ``Call`` (the caller, the request's
id, clock and links, and the ``services.versioned`` cache: answers that change only when
a load commits are kept per data version), and returns an ``Answer``.

Queries by a district code also find the records stored under its renumbering aliases
(``svc_core.regions.aliases``); the rows are reported under the requested code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

import attrs

from svc_core import periods
from svc_core.caller import Caller
from svc_core.envelope import Answer
from svc_core.envelope import Links as Links  # re-exported: handlers and tests build it here
from svc_core.realestate import dimensions as core_dimensions
from svc_core.realestate import freshness, traces
from svc_core.realestate import indices as core_indices
from svc_core.realestate import pulse as core_pulse
from svc_core.realestate import query as q
from svc_core.realestate import series as core_series
from svc_core.realestate.building_uses import UseRow
from svc_core.realestate.changes_over_time import Baseline, Comparison, comparison, with_changes
from svc_core.realestate.common import Context, codes_of, data_as_of, data_version, gate
from svc_core.realestate.deal import Deal
from svc_core.realestate.loaded import Gaps, row_gaps
from svc_core.realestate.pulse import PulseRow
from svc_core.realestate.query import (
    DimensionsQuery,
    IndicesQuery,
    PulseQuery,
    SeriesQuery,
)
from svc_core.realestate.rollup import RollupRow
from svc_server.services.versioned import VersionedCache
from svc_server.store import Store
from svc_server.store.realestate import DataState
from svc_server.store.rollup import district_codes

PULSE_COLUMNS = core_pulse.row_columns("m2")
INDEX_COLUMNS = tuple(f.name for f in core_indices.IndexRow.__attrs_attrs__)
"""CSV columns: the row fields in SPEC order (pulse rows in m²)."""


@attrs.frozen(kw_only=True)
class Call:
    """What a real-estate use case is called with besides the store and its query: who
    asks, the request's id, clock (unix seconds) and links, and the process's cache of
    answers per data version."""

    caller: Caller
    versions: VersionedCache
    request_id: str
    now: float
    links: Links


def pulse_columns(query: PulseQuery | SeriesQuery) -> tuple[str, ...]:
    """The CSV columns of a pulse or series answer: per-area fields named in the query's
    ``area_unit``, as its JSON keys are."""
    return core_pulse.row_columns(query.area_unit)


class Trace(NamedTuple):
    """What loads left out of a cohort: records excluded by rule, by reason, and records
    rejected as malformed, per district-month (``traces.rejected_rows``)."""

    exclusions: dict[str, int]
    rejected_rows: tuple[dict[str, object], ...]


def cohort_trace(
    store: Store,
    versions: VersionedCache,
    state: DataState,
    code: str,
    months: Sequence[str] | None,
    property_type: str | None,
    transaction_type: str | None,
) -> Trace:
    """The ``Trace`` of district ``code`` (and its aliases) over ``months`` (None: every
    month) and the types, once per data version."""
    codes = codes_of(code)

    def compute() -> Trace:
        kinds = {"property_type": property_type, "transaction_type": transaction_type}
        excluded = store.realestate.cohort_exclusions(codes, months, **kinds)
        counts = store.realestate.rejected_counts(codes, months, **kinds)
        rows = traces.rejected_rows(counts)
        return Trace(exclusions=excluded, rejected_rows=tuple(rows))

    key = (
        "trace",
        code,
        None if months is None else tuple(months),
        property_type,
        transaction_type,
    )
    return versions.get(key, compute, version=state.version)


def answer_context(
    state: DataState,
    call: Call,
    *,
    code: str | None = None,
    indices: bool = False,
    trace: Trace | None = None,
) -> Context:
    """The context of an answer about district ``code`` (and its renumbering aliases;
    None: every district): its ``data_as_of`` is when their data last changed and its
    ``data_version`` the latest change behind it, of their deals or (``indices``) their
    index values. With the ``trace`` of the answer's cohorts, its exclusions are theirs
    (else the store's)."""
    stamps = state.indices_changed if indices else state.transactions_changed
    versions = state.indices_versions if indices else state.transactions_versions
    codes = codes_of(code) if code else None
    return Context(
        caller=call.caller,
        request_id=call.request_id,
        generated_at=datetime.fromtimestamp(call.now, UTC),
        links=call.links,
        exclusions=state.exclusions if trace is None else trace.exclusions,
        data_as_of=data_as_of(stamps, codes),
        data_version=data_version(versions, codes),
        cohort_scoped=trace is not None,
        rejected_rows=() if trace is None else trace.rejected_rows,
    )


def cohort_context(
    store: Store,
    state: DataState,
    call: Call,
    *,
    cohort: q.Cohort,
    months: Sequence[str] | None,
) -> Context:
    """``answer_context`` of an answer about ``cohort`` over ``months``, its exclusions
    and rejected records those of the cohort."""
    trace = cohort_trace(
        store,
        call.versions,
        state,
        cohort.sigungu_code,
        months,
        cohort.property_type,
        cohort.transaction_type,
    )
    return answer_context(state, call, code=cohort.sigungu_code, trace=trace)


def _month(label: str | None) -> periods.Month | None:
    return periods.parse_month(label) if label else None


class CohortRows(NamedTuple):
    """A cohort's rows over some months, as computed once per data version: whether they
    are synthetic, the district-months loaded among the cohort's (district codes ×
    months × kinds of its types) and each row's ``Gap`` (the months not loaded)."""

    rows: list[PulseRow]
    synthetic: bool
    loaded: frozenset[freshness.MonthKey]
    gaps: Gaps


def cohort_samples(
    store: Store, cohort: q.Cohort, codes: Sequence[str], months: Sequence[str]
) -> list[Deal]:
    """The deals of ``cohort``'s types and filters in districts ``codes`` over
    ``months``."""
    return store.realestate.samples(
        codes,
        months,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        dong=cohort.dong,
        building_type=cohort.building_type,
        lease_kind=cohort.lease_kind,
        deal_type=cohort.deal_type,
        buyer_type=cohort.buyer_type,
        **cohort.land_filters(),
    )


@attrs.frozen
class _CohortReader:
    """How the rows of ``cohort`` in ``area_unit`` are read at the store's data version
    ``state``, each set of them computed once per data version (the rows are shared and
    frozen)."""

    store: Store
    versions: VersionedCache
    state: DataState
    cohort: q.Cohort
    area_unit: str

    def rows(self, period_of: Mapping[str, str]) -> CohortRows:
        """The pulse rows over the months in ``period_of`` and what was loaded of them.

        A cache hit costs no query: at 2M transactions a busy district's window holds
        thousands of samples, and reading and summarizing them is most of a pulse call.
        What was loaded is read for the cohort's district-months only, however many the
        store holds (``source_months`` by its primary key).
        """
        store, state, cohort = self.store, self.state, self.cohort

        def compute() -> CohortRows:
            codes = codes_of(cohort.sigungu_code)
            months = sorted(period_of)
            samples = cohort_samples(store, cohort, codes, months)
            rows = core_pulse.group_rows(cohort, samples, period_of, area_unit=self.area_unit)
            kinds = freshness.cohort_kinds(cohort.property_type, cohort.transaction_type)
            loaded = store.realestate.loaded_months(codes, months, kinds)
            return CohortRows(
                rows=rows,
                synthetic=any(s.synthetic for s in samples) if samples else state.synthetic,
                loaded=loaded,
                gaps=row_gaps(rows, period_of, loaded=loaded, incomplete=state.incomplete),
            )

        key = ("pulse", cohort, self.area_unit, tuple(sorted(period_of.items())))
        return self.versions.get(key, compute, version=state.version)

    def changed(self, period_of: Mapping[str, str]) -> CohortRows:
        """``rows`` with each row's changes against the previous period and a year
        earlier (``svc_core.realestate.changes_over_time``), the base periods' rows read
        as any cohort's rows."""
        found = self.rows(period_of)

        def compute() -> CohortRows:
            previous, year_ago = (
                self.baseline(base)
                for base in (comparison(period_of, year=False), comparison(period_of, year=True))
            )
            rows = with_changes(found.rows, found.gaps, previous=previous, year_ago=year_ago)
            return found._replace(rows=rows)

        key = ("changes", self.cohort, self.area_unit, tuple(sorted(period_of.items())))
        return self.versions.get(key, compute, version=self.state.version)

    def baseline(self, base: Comparison) -> Baseline:
        """The rows of ``base``'s periods and what was loaded of them (nothing to read
        when the base periods fall before the calendar)."""
        if not base.period_of:
            return Baseline(comparison=base, rows=(), loaded=frozenset())
        found = self.rows(base.period_of)
        return Baseline(
            comparison=base, rows=found.rows, loaded=found.loaded, incomplete=self.state.incomplete
        )


def _cohort_answer(
    store: Store,
    state: DataState,
    call: Call,
    query: PulseQuery | SeriesQuery,
    period_of: Mapping[str, str],
    months: Sequence[str],
) -> tuple[list[PulseRow], CohortRows, Context]:
    """What a pulse or series answer of ``query``'s cohort over the months in
    ``period_of`` is built from: its rows (with their changes over time, and what follows
    the clock and the address: ``provisional`` and ``transactions_url``, and ``complete``,
    ``months_loaded`` and ``months_expected`` from their gaps), the cached rows they were
    finished from and the context of the cohort over ``months``."""
    reader = _CohortReader(store, call.versions, state, query.cohort, query.area_unit)
    found = reader.changed(period_of)
    context = cohort_context(store, state, call, cohort=query.cohort, months=months)
    rows = core_pulse.finish_rows(
        found.rows,
        found.gaps,
        today=context.generated_at.date(),
        transactions_url=context.links.transactions_url,
    )
    return rows, found, context


def pulse(store: Store, query: PulseQuery, call: Call) -> Answer:
    """GET /api/v1/real-estate/pulse: one row per cohort over one period."""
    state = call.versions.state(store)
    window = periods.resolve_pulse_period(query.period, _month(state.latest_month))
    gate(call.caller, query.cohort.geo_precision, call.links)
    period_of = {m: window.label for m in window.months}
    rows, found, context = _cohort_answer(store, state, call, query, period_of, window.months)
    return core_pulse.pulse_answer(
        rows,
        query,
        window,
        context,
        synthetic=found.synthetic,
        gaps=found.gaps,
        loaded=found.loaded,
    )


def series(store: Store, query: SeriesQuery, call: Call) -> Answer:
    """GET /api/v1/real-estate/pulse/series: pulse rows for up to 12 calendar periods."""
    gate(call.caller, query.cohort.geo_precision, call.links)
    state = call.versions.state(store)
    period_of = core_series.series_months(query.periods)
    rows, found, context = _cohort_answer(store, state, call, query, period_of, sorted(period_of))
    return core_series.series_answer(
        rows, query, context, synthetic=found.synthetic, gaps=found.gaps, loaded=found.loaded
    )


def indices(store: Store, query: IndicesQuery, call: Call) -> Answer:
    """GET /api/v1/real-estate/indices: R-ONE survey statistics of a district."""
    state = call.versions.state(store)
    latest = periods.parse_quarter(state.latest_index_period) if state.latest_index_period else None
    window = periods.resolve_index_period(query.period, latest)
    values = store.realestate.indices(
        codes_of(query.sigungu_code),
        window.periods,
        property_type=query.property_type,
        metric_type=query.metric_type,
    )
    context = answer_context(state, call, code=query.sigungu_code, indices=True)
    return core_indices.indices_answer(
        values,
        query,
        window,
        context,
        synthetic=state.synthetic,
        loaded=state.latest_index_period is not None or bool(state.indices_changed),
    )


def _dimensions_data(
    store: Store, geo: str, window: periods.PeriodWindow
) -> tuple[core_dimensions.Dimensions, dict[str, int]]:
    districts: list[RollupRow] = []
    dongs: list[RollupRow] = []
    uses: list[UseRow] = []
    if window.months:
        first, last = window.months[0], window.months[-1]
        districts = store.realestate.rollup(month_from=first, month_to=last)
        uses = store.realestate.uses(month_from=first, month_to=last)
        if geo == "dong":
            dongs = store.realestate.rollup(dong_level=True, month_from=first, month_to=last)
    codes = district_codes(districts)
    names = store.realestate.district_names(codes)
    kinds = store.realestate.contract_kinds(sorted(codes), window.months)
    return core_dimensions.dimension_counts(districts, dongs, names, kinds, uses)


def dimensions(store: Store, query: DimensionsQuery, call: Call) -> Answer:
    """GET /api/v1/real-estate/dimensions: what has data in the ``last_6m`` window.

    Items are ordered by ``sample_count`` descending. ``gu_dongs`` is filled only for
    ``geo_precision=dong``; ``_meta.count`` is the number of ``sigungus``.
    """
    gate(call.caller, query.geo_precision, call.links)
    state = call.versions.state(store)
    window = periods.resolve_pulse_period(core_dimensions.WINDOW, _month(state.latest_month))
    data, mix = call.versions.get(
        ("dimensions", query.geo_precision, window.months),
        lambda: _dimensions_data(store, query.geo_precision, window),
        version=state.version,
    )
    context = answer_context(state, call)
    return core_dimensions.dimensions_answer(
        data, mix, query, window, context, synthetic=state.synthetic
    )
