"""A SQLite deployment's two files: the public data in ``<name>-data.db`` beside the
accounts' file, so a load never holds the write lock counted calls take; a file from
before the split is moved at the next ``migrate`` with every answer unchanged."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import ConfigError
from svc_server import cli
from svc_server.ingest import demo
from svc_server.store import Store, migrate, open_database, open_store, sqlite_data_url
from svc_server.store.sqlite import sqlite_path
from tests.conftest import RE_NOW
from tests.http import multihost_support as mh
from tests.server.test_demo_load import small_demo  # noqa: F401  (a fixture)


def test_each_sqlite_file_holds_exactly_its_tables(sqlite_store: Store) -> None:
    main = set(sqlite_store.db.table_names())
    data = set(sqlite_store.data.table_names())
    assert main.isdisjoint(migrate.DATA_TABLES)
    assert {"consumers", "api_keys", "rate_counts", "deliveries"} <= main
    assert data == migrate.DATA_TABLES | {"schema_version"}
    newest = max(m.version for m in migrate.available())
    assert migrate.current_version(sqlite_store.db) == newest
    assert migrate.current_version(sqlite_store.data) == newest


@pytest.mark.postgres
def test_postgresql_keeps_one_database(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        store.migrate()
        assert store.data is store.db
        assert set(store.db.table_names()) >= migrate.DATA_TABLES
    finally:
        store.close()


def test_every_migration_statement_names_the_table_it_belongs_with() -> None:
    for migration in migrate.available():
        for statement in migrate.statements(migration.sql):
            table = migrate.statement_table(statement)  # raises for a form not taught
            if table in migrate.DATA_TABLES:
                assert migrate.data_statement(statement)
            assert migrate.account_statement(statement) != migrate.data_statement(statement)


def test_a_statement_of_an_unknown_form_is_refused() -> None:
    with pytest.raises(ValueError, match="names no table"):
        migrate.statement_table("CREATE VIEW recent AS SELECT 1")


_NAME = st.text(st.characters(categories=["L", "N"], include_characters="._-"), min_size=1)


@given(folder=st.lists(_NAME.filter(lambda p: p not in (".", "..")), max_size=3), name=_NAME)
def test_the_data_file_sits_beside_the_accounts_file(folder: list[str], name: str) -> None:
    path = "/".join([*folder, name])
    if path == ":memory:":
        return
    url = f"sqlite:///{path}"
    data_url = sqlite_data_url(url)
    assert data_url is not None
    data = sqlite_path(data_url)
    assert data != path
    assert data.rpartition("/")[0] == path.rpartition("/")[0]  # the same folder
    assert "-data" in data.rpartition("/")[2]
    assert sqlite_data_url(data_url) != data_url


def test_data_file_names() -> None:
    assert sqlite_data_url("sqlite:///svc.db") == "sqlite:///svc-data.db"
    assert sqlite_data_url("sqlite:////var/lib/svc/prod.sqlite") == (
        "sqlite:////var/lib/svc/prod-data.sqlite"
    )
    assert sqlite_data_url("sqlite:///dir.v2/svc") == "sqlite:///dir.v2/svc-data"
    assert sqlite_data_url("sqlite:///:memory:") is None
    with pytest.raises(ConfigError):
        sqlite_data_url("sqlite:///")


def _answers(store: Store) -> dict[str, Any]:
    """What the data serves, from every data area, and the accounts beside it."""
    with store.db.transaction(write=False) as tx:
        consumers = tx.fetchall(
            "SELECT id, plan, monthly_quota_override FROM consumers ORDER BY id"
        )
    return {
        "counts": store.realestate.counts(),
        "rollup": sorted(map(str, store.realestate.rollup(dong_level=None))),
        "markets": sorted(map(repr, store.markets.rows())),
        "incomplete": store.realestate.state().incomplete,
        "consumers": consumers,
    }


def single_file_store(url: str) -> tuple[Store, str]:
    """A SQLite file as svc kept it before the split (every table in it), with the demo
    data loaded and one consumer: the open store and the consumer's API key."""
    whole = Store(open_database(url))
    whole.migrate()
    demo.load_demo(whole, seed=1, now=RE_NOW)
    _, key = mh.consumer(whole, "old@example.com", monthly_quota=1_000, rate_limit=1_000)
    assert set(whole.db.table_names()) >= migrate.DATA_TABLES
    return whole, key


def _single_file(url: str) -> dict[str, Any]:
    """``single_file_store``'s answers, the store closed."""
    whole, _ = single_file_store(url)
    try:
        return _answers(whole)
    finally:
        whole.close()


@pytest.mark.usefixtures("small_demo")
def test_a_file_from_before_the_split_moves_its_data_with_answers_unchanged(
    sqlite_url: str,
) -> None:
    before = _single_file(sqlite_url)
    assert before["counts"]["transactions"] > 0 and before["markets"]
    store = open_store(sqlite_url)
    try:
        assert store.migrate() == []  # a move: the store had every migration already
        assert set(store.db.table_names()).isdisjoint(migrate.DATA_TABLES)
        assert _answers(store) == before
        assert store.migrate() == []
        assert _answers(store) == before
    finally:
        store.close()


@pytest.mark.usefixtures("small_demo")
def test_a_move_cut_short_between_copy_and_drop_resumes(sqlite_url: str) -> None:
    before = _single_file(sqlite_url)
    main = Path(sqlite_path(sqlite_url))
    kept = main.with_name("kept.db")
    shutil.copyfile(main, kept)  # the file checkpointed at close: its WAL is empty
    moved = open_store(sqlite_url)
    moved.migrate()
    moved.close()
    # The data file holds the copy; the main file has its tables back, as when a
    # process died after the copy committed and before the drop did.
    shutil.copyfile(kept, main)
    store = open_store(sqlite_url)
    try:
        assert set(store.db.table_names()) >= migrate.DATA_TABLES
        store.migrate()
        assert set(store.db.table_names()).isdisjoint(migrate.DATA_TABLES)
        assert _answers(store) == before  # nothing copied twice
    finally:
        store.close()


@pytest.mark.usefixtures("small_demo")
def test_two_processes_starting_on_a_file_from_before_the_split_both_start(
    sqlite_url: str,
) -> None:
    """Each worker of ``svc serve`` migrates at start: two moves at once both succeed,
    the data is there once, and the main file is vacuumed back to its accounts."""
    before = _single_file(sqlite_url)
    size = Path(sqlite_path(sqlite_url)).stat().st_size
    stores = [open_store(sqlite_url) for _ in range(2)]
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def run(store: Store) -> None:
        start.wait()
        try:
            store.migrate()
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for store in stores:
        store.close()
    assert failures == []
    store = open_store(sqlite_url)
    try:
        assert set(store.db.table_names()).isdisjoint(migrate.DATA_TABLES)
        assert _answers(store) == before
    finally:
        store.close()
    assert Path(sqlite_path(sqlite_url)).stat().st_size < size / 4


@pytest.mark.usefixtures("small_demo")
def test_svc_init_says_it_moved_the_data(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _single_file(sqlite_url)
    assert cli.main(["init", "--database-url", sqlite_url]) == 0
    out = capsys.readouterr().out
    assert f"moved the public data into {sqlite_data_url(sqlite_url)}" in out
    assert "schema is up to date" in out
    assert cli.main(["init", "--database-url", sqlite_url]) == 0
    assert "moved" not in capsys.readouterr().out
