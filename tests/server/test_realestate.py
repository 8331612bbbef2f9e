"""The real-estate store and service below HTTP: index use, versioned caches, precomputed
coverage, and the pure helpers (hypothesis)."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.caller import Caller
from svc_core.cohorts import stats
from svc_core.convert import to_json
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate import coverage as core_coverage
from svc_core.realestate import query
from svc_core.realestate.common import gu_name
from svc_core.realestate.coverage import type_rank
from svc_core.realestate.rollup import RollupRow
from svc_server import ingest
from svc_server.ingest import coverage as ingest_coverage
from svc_server.services import coverage as coverage_service
from svc_server.services import realestate as service
from svc_server.services import versioned
from svc_server.services.versioned import VersionedCache
from svc_server.store import Store
from tests.http.realestate_support import NRG_GANGNAM, NRG_JONGNO_PAGE, OFFI_RENT, load

CALLER = Caller(consumer_id="c", plan="pro", auth_method="api_key", rate_limit_per_minute=120)
LINKS = service.Links(disclosure_url="https://x/disclosure", upgrade_url="https://x/pricing")


PARSERS = {
    service.pulse: query.parse_pulse,
    service.series: query.parse_series,
    coverage_service.coverage: query.parse_coverage,
    service.indices: query.parse_indices,
    service.dimensions: query.parse_dimensions,
}


def call(
    store: Store, versions: VersionedCache, fn: Any, **params: str
) -> tuple[Any, dict[str, Any]]:
    parsed = PARSERS[fn](params)
    call = service.Call(
        caller=CALLER, versions=versions, request_id="req_test", now=0.0, links=LINKS
    )
    answer = fn(store, parsed, call)
    return to_json(answer.data), answer.meta


@pytest.fixture
def versions() -> VersionedCache:
    """The cache of answers per data version of one process, as the app keeps it."""
    return VersionedCache()


@pytest.fixture
def traced(sqlite_store: Store) -> Iterator[tuple[Store, list[str]]]:
    """A SQLite store whose statements (with values) are recorded."""
    statements: list[str] = []
    with sqlite_store.data.transaction(write=False):
        pass
    conn: sqlite3.Connection = sqlite_store.data._local.conn  # type: ignore[attr-defined]
    conn.set_trace_callback(statements.append)
    yield sqlite_store, statements
    conn.set_trace_callback(None)


def plan(store: Store, sql: str) -> str:
    with store.data.transaction(write=False) as tx:
        return " | ".join(str(r["detail"]) for r in tx.fetchall("EXPLAIN QUERY PLAN " + sql))


@pytest.mark.parametrize(
    ("params", "index"),
    [
        (
            {},
            "transactions_cohort (sigungu_code=? AND property_type=? AND transaction_type=? AND month=?)",
        ),
        (
            {"property_type": "office"},
            "transactions_cohort (sigungu_code=? AND property_type=? AND transaction_type=? AND month=?)",
        ),
        (
            {"transaction_type": "sale", "period": "2025-Q2"},
            "transactions_cohort (sigungu_code=? AND property_type=? AND transaction_type=? AND month=?)",
        ),
        (
            {"geo_precision": "dong", "dong": "역삼동"},
            "transactions_dong (sigungu_code=? AND dong=? AND property_type=? AND transaction_type=? AND month=?)",
        ),
    ],
)
def test_pulse_reads_its_cohort_through_an_index_on_every_column(
    traced: tuple[Store, list[str]], versions: VersionedCache, params: dict[str, str], index: str
) -> None:
    store, statements = traced
    load(store, "rtms-commercial", NRG_GANGNAM)
    statements.clear()
    call(store, versions, service.pulse, sigungu_code="11680", **params)
    # the asked period's cohort, then the previous period's and the year-earlier one's
    # (the changes over time): each read walks the index
    reads = [s for s in statements if "FROM transactions" in s]
    assert len(reads) == 3
    for sql in reads:
        assert f"SEARCH transactions USING INDEX {index}" in plan(store, sql)


def test_coverage_without_a_district_touches_neither_transactions_nor_the_rollup(
    traced: tuple[Store, list[str]], versions: VersionedCache
) -> None:
    store, statements = traced
    load(store, "rtms-commercial", NRG_GANGNAM)
    call(
        store, versions, coverage_service.coverage
    )  # the data version's state is read once and cached
    statements.clear()
    rows, _ = call(store, versions, coverage_service.coverage, limit="5", property_type="office")
    assert rows
    touched = " ".join(statements)
    assert " transactions " not in touched and "cohort_months" not in touched
    [sql] = [s for s in statements if "FROM coverage_cohorts" in s]
    assert "USING INDEX coverage_cohorts_rank" in plan(store, sql)


def test_answers_follow_each_load_through_the_versioned_cache(
    store: Store, versions: VersionedCache
) -> None:
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    first = versions.state(store)
    assert first is versions.state(store)  # cached while nothing changes
    assert first.latest_month == "2025-05"
    dims, _ = call(store, versions, service.dimensions)
    assert [d["code"] for d in dims["sigungus"]] == ["11110"]
    load(store, "rtms-officetel-rent", OFFI_RENT)
    second = versions.state(store)
    assert second.version != first.version and second.latest_month == "2025-06"
    dims, _ = call(store, versions, service.dimensions)
    assert [d["code"] for d in dims["sigungus"]] == ["11680", "11110"]
    assert second.exclusions == {"partial_share": 1}


def test_data_loaded_before_coverage_was_precomputed_is_served_and_then_rebuilt(
    store: Store, versions: VersionedCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    load(store, "rtms-commercial", NRG_GANGNAM)
    expected, _ = call(store, versions, coverage_service.coverage, granularity="month")
    with store.data.transaction() as tx:  # as a database migrated from before 0003
        tx.execute("DELETE FROM coverage_cohorts")
        tx.execute("DELETE FROM coverage_districts")
        tx.execute("UPDATE ingest_log SET loaded_at = loaded_at + 1")  # a new data version
    monkeypatch.setattr(versioned, "VERSION_TTL", 0.0)  # as later: this write bypassed loading
    assert not store.realestate.state().coverage_complete
    assert call(store, versions, coverage_service.coverage, granularity="month")[0] == expected
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)  # the next load rebuilds every district
    assert store.realestate.state().coverage_complete
    rows, _ = call(store, versions, coverage_service.coverage, granularity="month")
    assert [r for r in rows if r["sigungu_code"] == "11680"] == expected


def test_exclusions_count_each_distinct_file_once(store: Store, versions: VersionedCache) -> None:
    for _ in range(2):
        load(store, "rtms-commercial", NRG_GANGNAM)
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    load(store, "samples", NRG_GANGNAM.parents[1] / "samples" / "samples.csv")
    assert store.realestate.state().exclusions == {"cancelled": 3, "partial_share": 8}
    # an answer states its own cohorts' exclusions: Gangnam's, not Jongno's one share
    _, meta = call(store, versions, service.pulse, sigungu_code="11680")
    assert (
        "this answer's districts, months and types: 3 cancelled deals, 7 partial-share"
        in (meta["coverage_note"])
    )
    assert meta["exclusions"] == {"cancelled": 3, "partial_share": 7}
    _, meta = call(store, versions, service.pulse, sigungu_code="11110", period="2025-05")
    assert meta["exclusions"] == {"partial_share": 1}


def test_an_unknown_district_takes_the_name_its_records_carry(
    store: Store, versions: VersionedCache
) -> None:
    data = (
        '{"response":{"header":{"resultCode":"000"},"body":{"items":{"item":['
        '{"sggCd":"99990","sggNm":"가상군","umdNm":"가동","buildingUse":"업무","dealYear":2025,'
        '"dealMonth":6,"dealDay":1,"dealAmount":"1,000"},'
        '{"sggCd":"99990","sggNm":"가상군","umdNm":"가동","buildingUse":"업무","dealYear":2025,'
        '"dealMonth":6,"dealDay":2,"dealAmount":"2,000"}]}}}}'
    ).encode()
    ingest.ingest(store, "rtms-commercial", data, path="x.json", now=0)
    rows, _ = call(store, versions, coverage_service.coverage, geo_precision="dong")
    assert [(r["sigungu"], r["gu"], r["dong"]) for r in rows] == [("가상군", "가상군", "가동")]
    dims, _ = call(store, versions, service.dimensions, geo_precision="dong")
    assert dims["sigungus"][0]["value"] == "가상군"
    assert dims["gu_dongs"][0]["value"] == "가상군 > 가동"


# pure helpers ---------------------------------------------------------------------------------


@settings(max_examples=100)
@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=30))
def test_the_median_agrees_with_the_quartiles(values: list[int]) -> None:
    assert stats.median(values) == stats.quartiles(values)[1]


@given(st.text(min_size=1, max_size=20).filter(lambda t: t.strip() != ""))
def test_gu_name_is_the_last_word(name: str) -> None:
    gu = gu_name(name)
    assert gu == name.split()[-1]
    assert gu_name(f"성남시 {gu}") == gu


def test_type_rank_follows_the_enumerations() -> None:
    pairs = [(p, t) for p in PROPERTY_TYPES for t in TRANSACTION_TYPES]
    assert sorted(pairs, key=lambda pt: type_rank(*pt)) == pairs


MONTHS = [f"2025-{m:02d}" for m in range(1, 13)]


def _counted(row: dict[str, Any]) -> RollupRow:
    """A rollup row with ``bulk`` of its samples merged into one contract each: a
    contract of two rows takes two samples, so contracts <= samples."""
    samples = row.pop("samples")
    bulk = min(row.pop("bulk"), samples // 2)
    return RollupRow(
        **row, building_type="", samples=samples, contracts=samples - bulk, bulk_contracts=bulk
    )


ROLLUP = st.lists(
    st.fixed_dictionaries(
        {
            "sigungu_code": st.sampled_from(["11680", "11110"]),
            "dong": st.just(""),
            "property_type": st.sampled_from(PROPERTY_TYPES[:2]),
            "transaction_type": st.sampled_from(TRANSACTION_TYPES[:2]),
            "month": st.sampled_from(MONTHS),
            "source": st.sampled_from(["rtms_official", "public_assessment"]),
            "samples": st.integers(min_value=1, max_value=4),
            "bulk": st.integers(min_value=0, max_value=2),
        }
    ).map(_counted),
    max_size=40,
)


@settings(max_examples=60)
@given(ROLLUP, st.sampled_from(["month", "quarter"]))
def test_build_coverage_agrees_with_a_plain_count(rows: list[RollupRow], granularity: str) -> None:
    def label(month: str) -> str:
        return month if granularity == "month" else f"2025-Q{(int(month[5:]) + 2) // 3}"

    per: dict[tuple[str, str, str], Counter[str]] = {}
    deals: dict[tuple[str, str, str], Counter[str]] = {}
    bulk: dict[tuple[str, str, str], Counter[str]] = {}
    sources: dict[tuple[str, str, str, str], set[str]] = {}
    for r in rows:
        cohort = (r.sigungu_code, r.property_type, r.transaction_type)
        per.setdefault(cohort, Counter())[label(r.month)] += r.samples
        deals.setdefault(cohort, Counter())[label(r.month)] += r.contracts
        bulk.setdefault(cohort, Counter())[label(r.month)] += r.bulk_contracts
        sources.setdefault((*cohort, label(r.month)), set()).add(r.source)
    expected = {}
    for cohort, periods in per.items():
        kept = sorted(p for p in periods if deals[cohort][p] >= 2)  # 2 contracts
        if kept:
            expected[cohort] = (
                kept,
                sum(periods[p] for p in kept),
                sorted(set().union(*(sources[(*cohort, p)] for p in kept))),
                sum(deals[cohort][p] for p in kept),
                sum(bulk[cohort][p] for p in kept),
            )
    built = core_coverage.build_coverage(
        rows, (granularity,), dong_level=False, building_types=ingest_coverage.COVERAGE_TYPES
    )
    got = {
        (c.sigungu_code, c.property_type, c.transaction_type): (
            list(c.row.periods_with_data),
            c.row.total_samples,
            list(c.row.data_sources),
            c.row.contract_count,
            c.row.bulk_contracts,
        )
        for c in built
    }
    assert got == expected
    totals = [c.total_samples for c in built]
    assert totals == sorted(totals, reverse=True)
    for c in built:
        assert sum(c.source_mix.values()) == c.total_samples
        assert c.row.period_count == len(c.row.periods_with_data)
        assert (c.row.earliest_period, c.row.latest_period) == (
            c.row.periods_with_data[0],
            c.row.periods_with_data[-1],
        )


def test_a_load_by_another_process_is_seen_within_the_version_ttl(
    db_url: str, store: Store, versions: VersionedCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each process trusts its data version for VERSION_TTL seconds; a load committed
    elsewhere (here: a second store on the same database) shows once that has passed,
    and a load through the same store shows at once."""
    from svc_server.store import open_store

    monkeypatch.setattr(versioned, "VERSION_TTL", 0.2)
    load(store, "rtms-commercial", NRG_GANGNAM)
    assert call(store, versions, service.pulse, sigungu_code="11680")[0]  # served and cached
    other = open_store(db_url)
    try:
        load(other, "rtms-commercial", NRG_JONGNO_PAGE)
    finally:
        other.close()
    deadline = time.monotonic() + 0.2 + 2.0
    while time.monotonic() < deadline:
        rows, _ = call(store, versions, coverage_service.coverage, granularity="month")
        if any(r["sigungu_code"] == "11110" for r in rows):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the other store's load was never seen")
    monkeypatch.setattr(versioned, "VERSION_TTL", 3600.0)  # only this process's load shows
    load(store, "rtms-commercial", NRG_GANGNAM)  # same file again: a new version at once
    assert versions.state(store).version[0] == 3
