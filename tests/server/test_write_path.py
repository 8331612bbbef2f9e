"""Every writer of public data goes through the one commit (``svc_server.ingest.writer``).

Two ways: the code (the writes of public data live only on the writers
``store.loading`` hands the commit: the objects services read through have none), and
the result of each real writer on both backends
(``svc ingest`` of every kind, ``svc sync rtms``, ``svc sync rone``, ``svc demo-data``):
one new ingest-log row of its kind, whose id the new records carry; the precomputed
coverage of the districts it touched is exactly what a rebuild gives; and on PostgreSQL
the planner's statistics of ``transactions`` were refreshed after a load of deals.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_server import cli
from svc_server.ingest.coverage import refresh_coverage
from svc_server.store import Store, open_store
from svc_server.store.loading import RealEstateWriter, loading
from svc_server.store.markets import MarketWrites
from svc_server.store.sync import SyncWrites
from tests.http.realestate_support import MOLIT
from tests.server import rone_standin, rtms_standin
from tests.server.test_demo_load import small_demo  # noqa: F401  # the fixture
from tests.server.test_sync import rows
from tests.svc_cli import run_svc

SRC = Path(__file__).resolve().parents[2] / "src" / "svc_server"
SVC = Path(sys.executable).with_name("svc")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_the_objects_services_read_through_have_no_write_of_public_data(store: Store) -> None:
    """The writes live on the writers ``store.loading.loading`` hands the one commit;
    ``store.realestate``, ``store.markets`` and ``store.sync`` have none of them, so a
    service calling one does not type-check (and ``only-ingest-loads``, an import-linter
    contract, keeps every module but ``ingest`` from importing ``store.loading``)."""
    pairs = (
        (store.realestate, RealEstateWriter),
        (store.markets, MarketWrites),
        (store.sync, SyncWrites),
    )
    for reader, writer in pairs:
        writes = {n for n in dir(writer) if not n.startswith("__")} - set(dir(type(reader)))
        assert writes, writer
        assert not {n for n in writes if hasattr(reader, n)}, type(reader)
    with loading(store) as w:
        assert callable(w.realestate.insert_transactions) and callable(w.sync.record)
        assert callable(w.markets.upsert_listings)
    assert not hasattr(store.realestate, "insert_transactions")


# --- what each writer leaves behind ------------------------------------------------------


class _Rollback(Exception):
    pass


COVERAGE = (
    "SELECT granularity, sigungu_code, dong, property_type, transaction_type, building_type, "
    "type_rank, total_samples, row_json, source_mix FROM coverage_cohorts "
    "ORDER BY granularity, sigungu_code, dong, property_type, transaction_type, building_type"
)


def assert_coverage_is_fresh(url: str, codes: set[str]) -> None:
    """The stored coverage equals a rebuild of ``codes`` from the roll-up (rolled back)."""
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            stored = tx.fetchall(COVERAGE)
        rebuilt: list[dict[str, Any]] = []
        try:
            with loading(store) as w:
                refresh_coverage(w, codes)
                rebuilt = w.tx.fetchall(COVERAGE)
                raise _Rollback
        except _Rollback:
            pass
    finally:
        store.close()
    assert {r["sigungu_code"] for r in stored} >= codes
    assert stored == rebuilt


USES = (
    "SELECT sigungu_code, property_type, month, building_use, samples FROM use_months "
    "ORDER BY sigungu_code, property_type, month, building_use"
)
RECOUNT = (
    "SELECT sigungu_code, property_type, month, COALESCE(building_use, '') AS building_use, "
    "COUNT(*) AS samples FROM transactions GROUP BY sigungu_code, property_type, month, "
    "COALESCE(building_use, '') ORDER BY sigungu_code, property_type, month, building_use"
)


def assert_uses_are_fresh(url: str) -> None:
    """The building-use counts equal a count of the stored records, and every district
    with records has a change stamp."""
    stored = rows(url, USES)
    assert stored and [{**r, "samples": int(r["samples"])} for r in stored] == [
        {**r, "samples": int(r["samples"])} for r in rows(url, RECOUNT)
    ]
    stamped = rows(url, "SELECT sigungu_code FROM data_changes WHERE dataset = 'transactions'")
    assert {r["sigungu_code"] for r in stamped} == {r["sigungu_code"] for r in stored}


def assert_one_new_load(url: str, before: set[str], kind: str) -> str:
    logged = rows(url, "SELECT id, kind FROM ingest_log")
    new = [r for r in logged if r["id"] not in before]
    assert [r["kind"] for r in new] == [kind]
    return str(new[0]["id"])


def load_ids(url: str) -> set[str]:
    return {r["id"] for r in rows(url, "SELECT id FROM ingest_log")}


def assert_statistics_refreshed(url: str) -> None:
    if not url.startswith("postgresql"):
        return
    [stat] = rows(
        url,
        "SELECT last_analyze FROM pg_stat_user_tables WHERE relid = 'transactions'::regclass",
    )
    assert stat["last_analyze"] is not None


def run(url: str, *args: str, **env: str) -> None:
    done = run_svc(*args, env={"SVC_DATABASE_URL": url, **env})
    assert done.returncode == 0, done.stderr


@pytest.fixture
def rtms() -> Iterator[rtms_standin.StandIn]:
    with rtms_standin.serve() as state:
        yield state


@pytest.fixture
def rone() -> Iterator[rone_standin.RoneStandIn]:
    with rone_standin.serve(area_limit=4) as state:  # a few areas a class: fewer rows
        yield state


def test_svc_ingest_of_deals_commits_through_the_writer(db_url: str) -> None:
    run(db_url, "init")
    before = load_ids(db_url)
    run(db_url, "ingest", "rtms-commercial", str(MOLIT / "NRG_11680_202506.xml"))  # 73 deals
    load_id = assert_one_new_load(db_url, before, "rtms-commercial")
    carried = rows(db_url, "SELECT DISTINCT load_id FROM transactions")
    assert carried == [{"load_id": load_id}]
    assert rows(db_url, "SELECT sigungu_code, month FROM source_months") == [
        {"sigungu_code": "11680", "month": "2025-06"}
    ]
    assert_coverage_is_fresh(db_url, {"11680"})
    assert_uses_are_fresh(db_url)
    assert_statistics_refreshed(db_url)


def test_svc_sync_rtms_commits_through_the_writer(db_url: str, rtms: rtms_standin.StandIn) -> None:
    run(db_url, "init")
    run(
        db_url,
        "sync",
        "rtms",
        "--kinds",
        "commercial",
        "--sigungu",
        "11680",
        "--from",
        "2025-06",
        "--to",
        "2025-06",
        "--backoff",
        "0",
        SVC_RTMS_BASE_URL=rtms.url,
        SVC_DATA_GO_KR_KEY=rtms_standin.KEY,
    )
    load_id = assert_one_new_load(db_url, set(), "rtms-commercial")
    assert rows(db_url, "SELECT DISTINCT load_id FROM transactions") == [{"load_id": load_id}]
    [state] = rows(db_url, "SELECT kind, status FROM sync_months")
    assert state == {"kind": "commercial", "status": "complete"}
    assert_coverage_is_fresh(db_url, {"11680"})
    assert_uses_are_fresh(db_url)
    assert_statistics_refreshed(db_url)


def test_svc_sync_rone_commits_through_the_writer(
    db_url: str, rone: rone_standin.RoneStandIn
) -> None:
    run(db_url, "init")
    run(
        db_url,
        "sync",
        "rone",
        "--backoff",
        "0",
        SVC_RONE_BASE_URL=rone.url,
        SVC_RONE_KEY=rone_standin.KEY,
    )
    logged = rows(db_url, "SELECT kind FROM ingest_log")
    tables = rows(db_url, "SELECT status FROM sync_tables WHERE status <> 'not_read'")
    assert logged and {r["kind"] for r in logged} == {"rone-index"}
    assert len(logged) == len(tables) and {t["status"] for t in tables} == {"complete"}
    assert rows(db_url, "SELECT COUNT(*) AS n FROM index_observations")[0]["n"] > 0
    assert rows(db_url, "SELECT COUNT(*) AS n FROM data_changes WHERE dataset = 'indices'")[0]["n"]


@pytest.mark.parametrize("kind", ["market-listings", "market-activity", "rone-index"])
def test_svc_ingest_of_other_kinds_commits_through_the_writer(db_url: str, kind: str) -> None:
    run(db_url, "init")
    if kind == "market-activity":
        run(db_url, "ingest", "market-listings", str(FIXTURES / "markets" / "listings.csv"))
    before = load_ids(db_url)
    files = {
        "market-listings": FIXTURES / "markets" / "listings.csv",
        "market-activity": FIXTURES / "markets" / "activity.csv",
        "rone-index": FIXTURES / "rone" / "indices.csv",
    }
    run(db_url, "ingest", kind, str(files[kind]))
    assert_one_new_load(db_url, before, kind)
    if kind == "market-activity":  # listings alone publish nothing
        assert rows(db_url, "SELECT COUNT(*) AS n FROM market_rows")[0]["n"] > 0


@pytest.mark.usefixtures("small_demo")
def test_svc_demo_data_commits_through_the_writer(db_url: str) -> None:
    assert cli.main(["init", "--database-url", db_url]) == 0
    assert cli.main(["demo-data", "--database-url", db_url]) == 0
    load_id = assert_one_new_load(db_url, set(), "demo")
    assert rows(db_url, "SELECT DISTINCT load_id FROM transactions") == [{"load_id": load_id}]
    codes = {
        r["sigungu_code"] for r in rows(db_url, "SELECT DISTINCT sigungu_code FROM transactions")
    }
    assert_coverage_is_fresh(db_url, codes)
    assert_uses_are_fresh(db_url)
    assert_statistics_refreshed(db_url)  # the demo skipped this before the one write path
