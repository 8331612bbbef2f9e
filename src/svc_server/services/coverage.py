"""Real-estate coverage: the ``GET /api/v1/real-estate/coverage`` use case. Without a
district it reads the rows precomputed at load time (``svc_server.ingest.coverage``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from svc_core.envelope import Answer
from svc_core.realestate import coverage as core_coverage
from svc_core.realestate import freshness
from svc_core.realestate import query as q
from svc_core.realestate.common import codes_of, gate
from svc_core.realestate.coverage import CoverageRow
from svc_core.realestate.query import CoverageQuery
from svc_core.realestate.rollup import RollupRow, rollup_of
from svc_server.services.realestate import Call, answer_context, cohort_samples
from svc_server.services.versioned import VersionedCache
from svc_server.store import Store
from svc_server.store.realestate import DataState
from svc_server.store.rollup import district_codes

COVERAGE_COLUMNS = tuple(f.name for f in CoverageRow.__attrs_attrs__)
"""CSV columns: the row fields in SPEC order, then issue 14's."""


def _coverage_rows(
    store: Store, versions: VersionedCache, state: DataState, query: CoverageQuery
) -> list[tuple[CoverageRow, Mapping[str, int]]]:
    cohort = query.cohort
    if cohort.sigungu_code or not state.coverage_complete or any(cohort.land_filters().values()):
        # One district (with its aliases) is small: build it from the rollup. The whole
        # table is built here only for data loaded before coverage was precomputed, or
        # for a land filter, which the precomputed rows do not split by.
        def build() -> list[core_coverage.CoverageCohort]:
            rollup = store.realestate.rollup(
                codes=codes_of(cohort.sigungu_code) if cohort.sigungu_code else None,
                property_type=cohort.property_type,
                transaction_type=cohort.transaction_type,
                dong_level=cohort.dong_level,
                dong=cohort.dong,
            )
            if any(cohort.land_filters().values()):
                rollup = _land_rollup(store, cohort, rollup)
            codes = {cohort.sigungu_code} if cohort.sigungu_code else district_codes(rollup)
            return core_coverage.build_coverage(
                rollup,
                (query.granularity,),
                dong_level=cohort.dong_level,
                merge_code=cohort.sigungu_code or None,
                names=store.realestate.district_names(codes),
                building_types=(cohort.building_type,),
            )

        built = versions.get(("coverage", cohort, query.granularity), build, version=state.version)
        return [(c.row, c.source_mix) for c in built[: query.limit]]

    def top() -> list[tuple[CoverageRow, Mapping[str, int]]]:
        return store.realestate.coverage(
            granularity=query.granularity,
            dong_level=cohort.dong_level,
            limit=q.COVERAGE_LIMIT_MAX,
            property_type=cohort.property_type,
            transaction_type=cohort.transaction_type,
            dong=cohort.dong,
            building_type=cohort.building_type,
        )

    # The largest answer is read and typed once per data version and filters, and each
    # limit takes its head (the order is total): a hit reads nothing. Keys leave the
    # limit out, so the entries stay few and each holds at most COVERAGE_LIMIT_MAX rows.
    key = ("coverage-top", cohort, query.granularity)
    return versions.get(key, top, version=state.version)[: query.limit]


def _land_rollup(store: Store, cohort: q.Cohort, rollup: list[RollupRow]) -> list[RollupRow]:
    """The rollup rows of ``cohort``'s deals of one industrial use, land category or zone:
    the stored rollup does not count by them, so they are counted from the cohort's
    transactions in the district-months ``rollup`` (the cohort's, unfiltered) has data
    (coverage takes no contract filters: those of the cohort are None)."""
    codes = sorted(district_codes(rollup))
    months = sorted({r.month for r in rollup})
    chosen = cohort_samples(store, cohort, codes, months)
    return rollup_of(chosen, dong_level=cohort.dong_level)


def coverage(store: Store, query: CoverageQuery, call: Call) -> Answer:
    """GET /api/v1/real-estate/coverage: which cohorts have data in which periods.

    Rows are ordered by ``total_samples`` descending (then code, dong and types); an
    empty answer is a 200 with no rows. A row is ``complete`` when every month of its
    periods with data was loaded completely (as pulse rows). Without a district the rows come precomputed
    (maintained at ingest), so the call reads at most ``COVERAGE_LIMIT_MAX`` rows
    whatever the table size, once per data version and filters.
    """
    gate(call.caller, query.cohort.geo_precision, call.links)
    versions = call.versions
    state = versions.state(store)
    found = _coverage_rows(store, versions, state, query)
    context = answer_context(state, call, code=query.cohort.sigungu_code or None)
    return core_coverage.coverage_answer(
        found,
        query,
        context,
        synthetic=state.synthetic,
        loaded=_loaded(store, versions, state, query, found),
        incomplete=state.incomplete,
    )


def _loaded(
    store: Store,
    versions: VersionedCache,
    state: DataState,
    query: CoverageQuery,
    found: list[tuple[CoverageRow, Mapping[str, int]]],
) -> frozenset[freshness.MonthKey]:
    """The loaded district-months behind ``found`` (their districts × the months of
    their periods with data × the kinds of their types), read once per data version and
    query: one walk of ``source_months``' primary key."""

    def read() -> frozenset[freshness.MonthKey]:
        codes, months, kinds = _loaded_keys(row for row, _ in found)
        return store.realestate.loaded_months(codes, months, kinds)

    key = ("coverage-loaded", query.cohort, query.granularity, query.limit)
    return versions.get(key, read, version=state.version)


def _loaded_keys(
    rows: Iterable[CoverageRow],
) -> tuple[list[str], list[str], list[str]]:
    """The district codes (with their renumbering aliases), months and kinds whose loaded
    district-months decide the rows' ``complete``: what the server reads of
    ``source_months`` for them."""
    codes: set[str] = set()
    months: set[str] = set()
    kinds: set[str] = set()
    for row in rows:
        codes.update(codes_of(row.sigungu_code))
        kinds.update(freshness.load_kinds(row.property_type, row.transaction_type))
        for label in row.periods_with_data:
            months.update(freshness.label_months(label))
    return sorted(codes), sorted(months), sorted(kinds)
