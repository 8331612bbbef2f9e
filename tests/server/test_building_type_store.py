"""Migration 0008 and the stored building type: existing officetels become units, other
records stay unknown until their file is loaded again, which fills the type in."""

from __future__ import annotations

import pytest

from svc_server.store import Store, migrate, open_store
from tests.http.realestate_support import NRG_JONGNO_PAGE, load

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
    with old.db.transaction() as tx:
        tx.execute(_OLD_ROW, ("k:offi", "officetel"))
        tx.execute(_OLD_ROW, ("k:office", "office"))
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version <= 8])
    store = open_store(db_url)
    try:
        assert store.migrate() == ["0008_building_type.sql"]
        with store.db.transaction(write=False) as tx:
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
    with store.db.transaction(write=False) as tx:
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
    with store.db.transaction() as tx:
        tx.execute("UPDATE transactions SET building_type = NULL, land_area_m2 = NULL")
    assert {t for _, t, _ in _types(store)} == {None}
    before = store.realestate.counts()["transactions"]
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    assert store.realestate.counts()["transactions"] == before
    assert _types(store) == typed
