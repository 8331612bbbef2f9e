"""Migration 0019: ``cohort_months`` gains the contracts and bulk contracts of its
samples, counted from the stored transactions, on SQLite and PostgreSQL (issue 28)."""

from __future__ import annotations

import pytest

from svc_server.store import migrate, open_store

_ROW = (
    "INSERT INTO transactions (natural_key, source, sigungu_code, sigungu, dong, "
    "property_type, transaction_type, deal_date, month, price_krw, monthly_rent_krw, "
    "area_m2, building_type, contract_id) VALUES (?, 'rtms_official', '11680', '강남구', ?, "
    "'office', 'sale', '2025-06-23', '2025-06', 100000000, NULL, 30.0, 'unit', ?)"
)
_ROLLUP = (
    "INSERT INTO cohort_months (sigungu_code, dong, property_type, transaction_type, month, "
    "source, building_type, samples) VALUES ('11680', ?, 'office', 'sale', '2025-06', "
    "'rtms_official', 'unit', ?)"
)


def test_migration_0019_counts_the_contracts_of_the_stored_rollup(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 19])
    old = open_store(db_url)
    old.migrate()
    rows = [
        ("a", "역삼동", "c1"),  # two floors of one contract
        ("b", "역삼동", "c1"),
        ("c", "역삼동", None),  # stored before 0016: a contract of its own
        ("d", None, "c2"),  # no dong: counted for the district only
    ]
    with old.data.transaction() as tx:
        for key, dong, contract in rows:
            tx.execute(_ROW, (key, dong, contract))
        for dong, n in (("", 4), ("역삼동", 3)):
            tx.execute(_ROLLUP, (dong, n))
        tx.execute("INSERT INTO coverage_districts (sigungu_code) VALUES ('11680')")
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: every)
    store = open_store(db_url)
    try:
        assert "0019_rollup_contracts.sql" in store.migrate()
        got = {
            r.dong: (r.samples, r.contracts, r.bulk_contracts)
            for r in store.realestate.rollup(dong_level=None)
        }
        assert got == {"": (4, 3, 1), "역삼동": (3, 2, 1)}
        assert not store.realestate.state().coverage_complete  # rebuilt by the next load
    finally:
        store.close()
