"""``svc sync rone`` through the real ``svc`` command against a local R-ONE stand-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_core.sync import CONNECT_FAILURE_LIMIT
from svc_server.store import open_store
from tests.server.rone_standin import (
    FIXTURES,
    KEY,
    TABLES,
    VACANCY,
    YIELDS,
    RoneStandIn,
    serve,
)
from tests.server.rtms_standin import closed_port_url

SVC = Path(sys.executable).with_name("svc")


@pytest.fixture
def standin() -> Iterator[RoneStandIn]:
    with serve() as state:
        yield state


def svc(
    url: str, standin: RoneStandIn, *args: str, key: str = KEY
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SVC_RONE_BASE_URL": standin.url,
        "SVC_DATABASE_URL": url,
        "SVC_RONE_KEY": key,
    }
    return subprocess.run(
        [str(SVC), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def rows(url: str, sql: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            return tx.fetchall(sql)
    finally:
        store.close()


OBSERVATIONS = (
    "SELECT natural_key, sigungu_code, property_type, metric_type, period, value_pct "
    "FROM index_observations ORDER BY natural_key"
)


def test_the_survey_tables_load_by_name_paged_and_one_era_only(
    db_url: str, standin: RoneStandIn, tmp_path: Path
) -> None:
    done = svc(db_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    data_calls = [c for c in standin.calls if c["path"].endswith("SttsApiTblData.do")]
    assert [(c["STATBL_ID"], c["pIndex"]) for c in data_calls] == [
        (VACANCY, "1"),
        (VACANCY, "2"),  # 1,050 rows: two pages of 1,000
        (YIELDS, "1"),
    ]
    assert {c["pSize"] for c in standin.calls} == {"1000"}
    assert "Z_HOUSING" not in {c.get("STATBL_ID") for c in standin.calls}
    assert "1040 of the other era" in done.stdout
    tables = rows(
        db_url,
        "SELECT table_id, era, status, total_count, pages FROM sync_tables ORDER BY table_id",
    )
    assert [
        (t["table_id"], t["era"], t["status"], t["total_count"], t["pages"]) for t in tables
    ] == [
        (VACANCY, "from-2024Q3", "complete", 1050, 2),
        (YIELDS, "from-2024Q3", "complete", 7, 1),
    ]
    # the same values as svc ingest of the fixture files (old-era rows left out)
    other = f"sqlite:///{tmp_path / 'ingested.db'}"
    for name, table in (
        ("office_vacancy_openapi.json", TABLES[0]),
        ("retail_yields_openapi.json", TABLES[2]),
    ):
        loaded = svc(
            other,
            standin,
            "ingest",
            "rone-index",
            "--table-name",
            table["STATBL_NM"],
            str(FIXTURES / name),
        )
        assert loaded.returncode == 0, loaded.stderr
    status = svc(db_url, standin, "sync", "status", "--json")
    listed = json.loads(status.stdout)["rone_tables"]
    assert [(t["table_id"], t["era"], t["status"], t["loaded"]) for t in listed] == [
        (VACANCY, "from-2024Q3", "complete", 12),  # six areas of two districts
        (YIELDS, "from-2024Q3", "complete", 10),
    ]
    assert all(t["fetched_at"].endswith("Z") for t in listed)
    synced = rows(db_url, OBSERVATIONS)
    assert synced and synced == rows(other, OBSERVATIONS)
    assert all(r["period"] >= "2024" for r in synced)


def test_a_refused_key_writes_nothing(sqlite_url: str, standin: RoneStandIn) -> None:
    done = svc(sqlite_url, standin, "sync", "rone", key="wrong")
    assert done.returncode == 2
    assert done.stderr.startswith("svc: error: R-ONE refused the key")
    assert rows(sqlite_url, "SELECT COUNT(*) AS n FROM index_observations")[0]["n"] == 0


def test_the_daily_limit_stops_with_its_own_code(sqlite_url: str, standin: RoneStandIn) -> None:
    standin.fail.extend(["", "", "", "limit"])  # list, vacancy x2, then the yields table
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 3, done.stderr
    states = rows(sqlite_url, "SELECT table_id, status FROM sync_tables")
    assert states == [{"table_id": VACANCY, "status": "complete"}]


def test_a_failing_table_is_recorded_and_the_others_load(
    sqlite_url: str, standin: RoneStandIn
) -> None:
    standin.fail.extend(["", "500", "500"])  # the vacancy table's first page keeps failing
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0", "--retries", "1")
    assert done.returncode == 1, done.stderr
    states = {r["table_id"]: r["status"] for r in rows(sqlite_url, "SELECT * FROM sync_tables")}
    assert states == {VACANCY: "failed", YIELDS: "complete"}


def test_an_unreachable_r_one_stops_after_a_few_calls_and_writes_nothing(db_url: str) -> None:
    url = closed_port_url("/r-one/openapi")
    env = {**os.environ, "SVC_RONE_BASE_URL": url, "SVC_DATABASE_URL": db_url, "SVC_RONE_KEY": KEY}
    done = subprocess.run(
        [str(SVC), "sync", "rone", "--backoff", "0.2"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert (
        done.stderr == f"svc: error: cannot reach {url}: check the network or SVC_RONE_BASE_URL\n"
    )
    assert f"sync rone (from-2024Q3): {CONNECT_FAILURE_LIMIT} calls; tables: 0 complete" in (
        done.stdout
    )
    for table in ("sync_tables", "index_observations", "ingest_log"):
        assert rows(db_url, f"SELECT * FROM {table}") == [], table


def test_a_sync_of_r_one_writes_a_progress_line_per_table(
    sqlite_url: str, standin: RoneStandIn
) -> None:
    done = svc(sqlite_url, standin, "sync", "rone", "--backoff", "0")
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stdout.splitlines() if line.startswith("  ")]
    assert [line.split()[0] for line in progress] == ["1/2", "2/2"]
    assert all(": complete, " in line for line in progress)
