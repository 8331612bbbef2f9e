"""The precomputed coverage of a run of loads is rebuilt once per district, at the end
(issue 32, the national load): ``svc ingest`` of several files and ``svc sync rtms``
leave each district they write stale and rebuild it when done, a few districts a
transaction, instead of rebuilding a district's whole coverage after each of its files
or months. Meanwhile answers stay right: a stale district's rows are built from the
rollup.

The reference is the same files loaded one at a time (each rebuilding at once), on the
real MOLIT samples, SQLite and PostgreSQL.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from svc_server import ingest
from svc_server.ingest.coverage import refresh_stale
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW
from tests.http.realestate_support import MOLIT_FILES, Api, make_app
from tests.svc_cli import run_svc

QUERIES: tuple[dict[str, str], ...] = (
    {},
    {"granularity": "month"},
    {"geo_precision": "dong", "limit": "500"},
    {"property_type": "officetel"},
    {"building_type": "unit"},
)


def answers(store: Store) -> list[Any]:
    api = Api(make_app(store))
    return [api.ok("coverage", query)["data"] for query in QUERIES]


def precomputed(store: Store) -> list[tuple[Any, ...]]:
    with store.data.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT granularity, sigungu_code, dong, property_type, transaction_type, "
            "building_type, row_json FROM coverage_cohorts ORDER BY granularity, "
            "sigungu_code, dong, property_type, transaction_type, building_type"
        )
    return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]


def one_at_a_time(url: str) -> Store:
    store = open_store(url)
    store.migrate()
    for kind, path in MOLIT_FILES:
        ingest.ingest(store, kind, path.read_bytes(), path=str(path), now=RE_NOW)
    return store


def test_a_deferred_run_answers_as_loads_one_at_a_time(db_url: str, tmp_path: Path) -> None:
    deferred = open_store(db_url)
    deferred.migrate()
    reference = one_at_a_time(f"sqlite:///{tmp_path / 'reference.db'}")
    try:
        expected = answers(reference)
        assert all(expected), "every query has rows on the samples"
        for kind, path in MOLIT_FILES:
            ingest.ingest(
                deferred, kind, path.read_bytes(), path=str(path), now=RE_NOW, defer_coverage=True
            )
        with deferred.data.transaction(write=False) as tx:
            stale = deferred.realestate.stale_coverage_districts(tx)
        assert stale == {"11680", "11110"}
        assert answers(deferred) == expected  # built from the rollup meanwhile
        assert refresh_stale(deferred) == 2
        with deferred.data.transaction(write=False) as tx:
            assert deferred.realestate.stale_coverage_districts(tx) == set()
        assert answers(deferred) == expected  # now read from the precomputed rows
        assert precomputed(deferred) == precomputed(reference)
        assert refresh_stale(deferred) == 0  # nothing left
    finally:
        deferred.close()
        reference.close()


def test_svc_ingest_of_a_folder_leaves_no_district_stale(db_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    for _, path in MOLIT_FILES:
        shutil.copy(path, folder / path.name)
    done = run_svc("ingest", str(folder), env={"SVC_DATABASE_URL": db_url})
    assert done.returncode == 0, done.stderr
    store = open_store(db_url)
    reference = one_at_a_time(f"sqlite:///{tmp_path / 'reference.db'}")
    try:
        with store.data.transaction(write=False) as tx:
            assert store.realestate.stale_coverage_districts(tx) == set()
        assert precomputed(store) == precomputed(reference)
        assert answers(store) == answers(reference)
    finally:
        store.close()
        reference.close()
