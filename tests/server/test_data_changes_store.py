"""Migration 0018 on a store that already holds data: every district gets the building
uses of its records and a change stamp at the latest load of its dataset (what
``data_as_of`` said before), so the upgrade itself changes no answer."""

from __future__ import annotations

import pytest

from svc_server.store import migrate, open_store

_ROW = (
    "INSERT INTO transactions (natural_key, source, sigungu_code, sigungu, dong, "
    "property_type, transaction_type, deal_date, month, price_krw, monthly_rent_krw, "
    "area_m2, building_type, building_use) VALUES (?, 'rtms_official', ?, '구', NULL, ?, "
    "'sale', '2025-06-01', '2025-06', 100000000, NULL, 30.0, 'unit', ?)"
)
_ROLLUP = (
    "INSERT INTO cohort_months (sigungu_code, dong, property_type, transaction_type, month, "
    "source, building_type, samples) VALUES (?, '', 'office', 'sale', '2025-06', "
    "'rtms_official', 'unit', 1)"
)
_INDEX = (
    "INSERT INTO index_observations (natural_key, sigungu_code, sigungu, property_type, "
    "metric_type, period, period_end_date, value_pct, source) VALUES ('i1', '11680', '강남구', "
    "'office', 'vacancy_rate', '2025-Q1', '2025-03-31', 5.9, 'rone_official')"
)
_LOG = (
    "INSERT INTO ingest_log (id, kind, path, sha256, read_count, loaded, duplicate, excluded, "
    "rejected, loaded_at) VALUES (?, ?, 'f', 'x', 1, 1, 0, '{}', '{}', ?)"
)


def test_the_migration_counts_uses_and_stamps_every_district(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 18])
    old = open_store(db_url)
    old.migrate()
    with old.data.transaction() as tx:
        for key, code, ptype, use in (
            ("a", "11680", "office", "업무"),
            ("b", "11680", "mixed_use", "기타"),
            ("c", "11680", "mixed_use", "기타"),
            ("d", "11110", "officetel", None),
        ):
            tx.execute(_ROW, (key, code, ptype, use))
        for code in ("11680", "11110"):
            tx.execute(_ROLLUP, (code,))
        tx.execute(_INDEX)
        tx.execute(_LOG, ("l1", "rtms-commercial", 1_000))
        tx.execute(_LOG, ("l2", "rtms-commercial", 2_000))
        tx.execute(_LOG, ("l3", "rone-index", 3_000))
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: every)
    store = open_store(db_url)
    try:
        assert "0018_truthful_names.sql" in store.migrate()
        with store.data.transaction(write=False) as tx:
            uses = tx.fetchall(
                "SELECT sigungu_code, property_type, building_use, samples FROM use_months "
                "ORDER BY sigungu_code, property_type, building_use"
            )
        assert [tuple(r.values()) for r in uses] == [
            ("11110", "officetel", "", 1),
            ("11680", "mixed_use", "기타", 2),
            ("11680", "office", "업무", 1),
        ]
        state = store.realestate.state()
        assert state.transactions_changed == {"11680": 2_000, "11110": 2_000}
        assert state.indices_changed == {"11680": 3_000}
    finally:
        store.close()
