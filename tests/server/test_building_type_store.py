"""Migrations 0008 and 0010 and the stored building type: existing officetels become
units, other records stay unknown until their file is loaded again, which fills the type
in and moves them in the rollup (by building type since 0010)."""

from __future__ import annotations

import pytest

from svc_server.store import Store, migrate, open_store
from svc_server.store.loading import RealEstateWriter
from svc_server.store.realestate_rows import row_keys
from tests.http.realestate_support import NRG_JONGNO_PAGE, load
from tests.server.test_ingest import assert_rollup_matches_transactions

_OLD_ROW = (
    "INSERT INTO transactions (natural_key, source, sigungu_code, sigungu, dong, "
    "property_type, transaction_type, deal_date, month, price_krw, monthly_rent_krw, "
    "area_m2) VALUES (?, 'rtms_official', '11680', '강남구', NULL, ?, 'sale', "
    "'2025-06-01', '2025-06', 100000000, NULL, 30.0)"
)


def test_the_migration_makes_stored_officetels_units_and_leaves_others_unknown(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 8])
    old = open_store(db_url)
    old.migrate()
    with old.data.transaction() as tx:
        tx.execute(_OLD_ROW, ("k:offi", "officetel"))
        tx.execute(_OLD_ROW, ("k:office", "office"))
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version <= 8])
    store = open_store(db_url)
    try:
        assert store.migrate()[0] == "0008_building_type.sql"
        with store.data.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT natural_key, building_type, land_area_m2 FROM transactions "
                "ORDER BY natural_key"
            )
        assert [(r["natural_key"], r["building_type"], r["land_area_m2"]) for r in rows] == [
            ("k:offi", "unit", None),
            ("k:office", None, None),
        ]
    finally:
        store.close()


def _types(store: Store) -> list[tuple[str, str | None, float | None]]:
    with store.data.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT natural_key, building_type, land_area_m2 FROM transactions ORDER BY natural_key"
        )
    return [(r["natural_key"], r["building_type"], r["land_area_m2"]) for r in rows]


def test_loading_a_file_again_fills_in_the_types_of_records_stored_without(
    store: Store,
) -> None:
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    typed = _types(store)
    assert "whole_building" in {t for _, t, _ in typed}
    assert any(land for _, _, land in typed)
    with store.data.transaction() as tx:
        tx.execute("UPDATE transactions SET building_type = NULL, land_area_m2 = NULL")
    assert {t for _, t, _ in _types(store)} == {None}
    before = store.realestate.counts()["transactions"]
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    assert store.realestate.counts()["transactions"] == before
    assert _types(store) == typed


_TYPED_ROW = (
    "INSERT INTO transactions (natural_key, source, sigungu_code, sigungu, dong, "
    "property_type, transaction_type, deal_date, month, price_krw, monthly_rent_krw, "
    "area_m2, building_type) VALUES (?, 'rtms_official', '11680', '강남구', ?, 'office', "
    "'sale', '2025-06-01', '2025-06', 100000000, NULL, 30.0, ?)"
)
_OLD_ROLLUP = (
    "INSERT INTO cohort_months (sigungu_code, dong, property_type, transaction_type, month, "
    "source, samples) VALUES ('11680', ?, 'office', 'sale', '2025-06', 'rtms_official', ?)"
)
_SYNC_ROW = (
    "INSERT INTO sync_months (kind, sigungu_code, month, status, fetched_at, total_count, "
    "pages, digest, attempt, attempted_at, detail) VALUES ('commercial', '11680', ?, ?, "
    "NULL, 40, 1, NULL, ?, 0, '')"
)


def test_migration_0010_rebuilds_the_rollup_by_building_type(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 10])
    old = open_store(db_url)
    old.migrate()
    deals = [
        ("a", "역삼동", "whole_building"),
        ("b", "역삼동", "unit"),
        ("c", None, "unit"),
        ("d", "삼성동", None),
    ]
    with old.data.transaction() as tx:
        for key, dong, btype in deals:
            tx.execute(_TYPED_ROW, (key, dong, btype))
        for dong, n in (("", 4), ("역삼동", 2), ("삼성동", 1)):
            tx.execute(_OLD_ROLLUP, (dong, n))
        tx.execute(_SYNC_ROW, ("2025-05", "partial", "partial"))
        tx.execute(_SYNC_ROW, ("2025-06", "complete", "complete"))
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version <= 10])
    store = open_store(db_url)
    try:
        assert store.migrate() == ["0010_cohort_building_type.sql"]
        with store.data.transaction(write=False) as tx:  # the table as 0010 left it
            stored = tx.fetchall("SELECT dong, building_type, samples FROM cohort_months")
        rollup = {(r["dong"], r["building_type"]): r["samples"] for r in stored}
        assert rollup == {
            ("", "whole_building"): 1,
            ("", "unit"): 2,
            ("", ""): 1,
            ("역삼동", "whole_building"): 1,
            ("역삼동", "unit"): 1,
            ("삼성동", ""): 1,
        }
        with store.data.transaction(write=False) as tx:  # what state() reads of them
            # every district is rebuilt by the next load
            assert store.realestate.stale_coverage_districts(tx)
            incomplete = store.realestate.incomplete_months(tx)
            assert incomplete == {("commercial", "11680", "2025-05")}
            whole = store.realestate.month_reads(tx, [("commercial", "11680", "2025-06")])
        assert [r.complete for r in whole.values()] == [True]
    finally:
        store.close()


def test_records_that_get_their_type_move_in_the_rollup(store: Store) -> None:
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    with store.data.transaction() as tx:  # as a store migrated from before 0008 holds them
        tx.execute("UPDATE transactions SET building_type = NULL, land_area_m2 = NULL")
        tx.execute("DELETE FROM cohort_months")
        tx.execute("DELETE FROM coverage_cohorts")
        rows = tx.fetchall(
            "SELECT sigungu_code, dong, property_type, transaction_type, month, source, "
            "building_type FROM transactions"
        )
        RealEstateWriter(store.realestate)._bump_rollup(tx, row_keys(rows))
    assert {r.building_type for r in store.realestate.rollup(dong_level=None)} == {""}
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    assert_rollup_matches_transactions(store)
    assert {r.building_type for r in store.realestate.rollup()} == {"unit", "whole_building"}
    with store.data.transaction(write=False) as tx:
        types = tx.fetchall("SELECT DISTINCT building_type FROM coverage_cohorts")
    assert {r["building_type"] for r in types} == {"", "unit", "whole_building"}
