"""Real-estate coverage: the ``GET /api/v1/real-estate/coverage`` use case and the
coverage rows precomputed at ingest (``refresh_coverage``, inside the load's
transaction) for every district a load touches, at both granularities and for every
building-type filter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from svc_core.caller import Caller
from svc_core.envelope import Answer
from svc_core.models import BUILDING_TYPES
from svc_core.realestate import coverage as core_coverage
from svc_core.realestate import query as q
from svc_core.realestate.common import codes_of, gate
from svc_core.realestate.coverage import CoverageRow
from svc_core.realestate.query import CoverageQuery
from svc_server.services.realestate import Links, answer_context, district_names
from svc_server.store import Store
from svc_server.store.base import Row, Tx
from svc_server.store.realestate import CoverageRecord, DataState

GRANULARITY = q.GRANULARITIES
COVERAGE_TYPES: tuple[str | None, ...] = (None, *BUILDING_TYPES)
"""The building-type filters coverage is precomputed for (None: every deal)."""
COVERAGE_COLUMNS = tuple(f.name for f in CoverageRow.__attrs_attrs__)
"""CSV columns: the row fields in SPEC order, then issue 14's."""


def _record(c: core_coverage.CoverageCohort) -> CoverageRecord:
    return CoverageRecord(
        granularity=c.granularity,
        sigungu_code=c.sigungu_code,
        dong=c.dong,
        property_type=c.property_type,
        transaction_type=c.transaction_type,
        building_type=c.building_type,
        type_rank=c.type_rank,
        total_samples=c.total_samples,
        row=core_coverage.stored_form(c.row),
        source_mix=c.source_mix,
    )


def build_coverage(
    rollup: Iterable[Row],
    granularities: Sequence[str],
    *,
    dong_level: bool,
    merge_code: str | None = None,
    names: Mapping[str, str] | None = None,
) -> list[CoverageRecord]:
    """``svc_core.realestate.coverage.build_coverage`` as the store keeps it (rows in
    their JSON form), for every building-type filter (``COVERAGE_TYPES``)."""
    built = core_coverage.build_coverage(
        rollup,
        granularities,
        dong_level=dong_level,
        merge_code=merge_code,
        names=names,
        building_types=COVERAGE_TYPES,
    )
    return [_record(c) for c in built]


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
    store: Store, state: DataState, query: CoverageQuery
) -> list[tuple[CoverageRow, Mapping[str, int]]]:
    cohort = query.cohort
    if cohort.sigungu_code or not state.coverage_complete:
        # One district (with its aliases) is small: build it from the rollup. The whole
        # table is built here only for data loaded before coverage was precomputed.
        def build() -> list[core_coverage.CoverageCohort]:
            rollup = store.realestate.rollup(
                codes=codes_of(cohort.sigungu_code) if cohort.sigungu_code else None,
                property_type=cohort.property_type,
                transaction_type=cohort.transaction_type,
                dong_level=cohort.dong_level,
                dong=cohort.dong,
            )
            codes = (
                {cohort.sigungu_code}
                if cohort.sigungu_code
                else {r["sigungu_code"] for r in rollup}
            )
            return core_coverage.build_coverage(
                rollup,
                (query.granularity,),
                dong_level=cohort.dong_level,
                merge_code=cohort.sigungu_code or None,
                names=district_names(store, codes),
                building_types=(cohort.building_type,),
            )

        built = store.realestate.cached(
            ("coverage", cohort, query.granularity), build, version=state.version
        )
        return [(c.row, c.source_mix) for c in built[: query.limit]]

    def top() -> list[tuple[CoverageRow, Mapping[str, int]]]:
        stored = store.realestate.coverage(
            granularity=query.granularity,
            dong_level=cohort.dong_level,
            limit=q.COVERAGE_LIMIT_MAX,
            property_type=cohort.property_type,
            transaction_type=cohort.transaction_type,
            dong=cohort.dong,
            building_type=cohort.building_type,
        )
        return [(core_coverage.coverage_row(row), mix) for row, mix in stored]

    # The largest answer is read and typed once per data version and filters, and each
    # limit takes its head (the order is total): a hit reads nothing. Keys leave the
    # limit out, so the entries stay few and each holds at most COVERAGE_LIMIT_MAX rows.
    key = ("coverage-top", cohort, query.granularity)
    return store.realestate.cached(key, top, version=state.version)[: query.limit]


def coverage(
    store: Store,
    query: CoverageQuery,
    caller: Caller,
    *,
    request_id: str,
    now: float,
    links: Links,
) -> Answer:
    """GET /api/v1/real-estate/coverage: which cohorts have data in which periods.

    Rows are ordered by ``total_samples`` descending (then code, dong and types); an
    empty answer is a 200 with no rows. Without a district the rows come precomputed
    (maintained at ingest), so the call reads at most ``COVERAGE_LIMIT_MAX`` rows
    whatever the table size, once per data version and filters.
    """
    gate(caller, query.cohort.geo_precision, links)
    state = store.realestate.state()
    found = _coverage_rows(store, state, query)
    context = answer_context(state, caller, request_id, now, links)
    return core_coverage.coverage_answer(
        found, query, context, synthetic=state.synthetic, incomplete=state.incomplete
    )
