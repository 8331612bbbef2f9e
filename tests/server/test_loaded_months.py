"""What loads record as loaded (issue 28), in the store, on SQLite and PostgreSQL: the web
CSV export records the months it holds (and ``svc sync status`` still says no total was
stated), paging outranks it, and migration 0017 records the months an older store
holds deals of."""

from __future__ import annotations

import datetime

import pytest

from svc_core.models import Transaction
from svc_core.realestate import freshness
from svc_server import ingest
from svc_server.store import Store, migrate, open_store
from svc_server.store.loading import RealEstateWriter
from tests.http.realestate_support import FIXTURES, NRG_JONGNO_PAGE, load

EXPORT = FIXTURES / "rtms_csv" / "commercial_11680_202506_cp949.csv"


def reads(store: Store) -> dict[freshness.MonthKey, freshness.MonthRead]:
    with store.data.transaction(write=False) as tx:
        keys = [
            (r["kind"], r["sigungu_code"], r["month"])
            for r in tx.fetchall("SELECT kind, sigungu_code, month FROM source_months")
        ]
        return store.realestate.month_reads(tx, keys)


def test_a_csv_export_loads_the_district_months_it_holds(store: Store) -> None:
    load(store, "rtms-commercial", EXPORT)
    with store.data.transaction(write=False) as tx:
        held = tx.fetchall(
            "SELECT sigungu_code, month, COUNT(*) AS n FROM transactions "
            "GROUP BY sigungu_code, month"
        )
        excluded = tx.fetchall(
            "SELECT sigungu_code, month, COUNT(*) AS n FROM excluded_transactions "
            "GROUP BY sigungu_code, month"
        )
    expected: dict[freshness.MonthKey, int] = {}
    for row in [*held, *excluded]:
        key = ("commercial", row["sigungu_code"], row["month"])
        expected[key] = expected.get(key, 0) + int(row["n"])
    found = reads(store)
    assert found == {key: freshness.file_read(n) for key, n in expected.items()}
    assert all(r.complete and r.by_file for r in found.values())
    assert store.realestate.loaded_months(["11680"], ["2025-05", "2025-06"], ["commercial"]) == {
        ("commercial", "11680", "2025-06")
    }
    [june] = [m for m in store.sync.ingested(codes=["11680"]) if m.month.label == "2025-06"]
    assert june.complete is None  # loaded, but the export states no total


def test_a_file_without_paging_never_replaces_a_page(store: Store) -> None:
    """Jongno's May is page 1 of 4: a samples file holding May deals of Jongno leaves it
    incomplete; a month the page does not touch is loaded by the file."""
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    key = ("commercial", "11110", "2025-05")
    page = reads(store)[key]
    assert not page.complete
    samples = (
        b"source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
        b"monthly_rent_krw,area_m2\r\n"
        b"public_assessment,11110,,office,sale,2025-05-02,3000000000,,120\r\n"
        b"public_assessment,11110,,office,sale,2025-04-02,3000000000,,120\r\n"
    )
    ingest.ingest(store, "samples", samples, path="s.csv", now=0)
    found = reads(store)
    assert found[key] == page
    assert found[("commercial", "11110", "2025-04")] == freshness.file_read(1)
    assert store.realestate.state().incomplete == {key}


def _deal(key: str, code: str, ptype: str, ttype: str, month: int) -> Transaction:
    return Transaction(
        source="rtms_official",
        sigungu_code=code,
        sigungu="구",
        dong=None,
        property_type=ptype,
        transaction_type=ttype,
        deal_date=datetime.date(2024, month, 3),
        price_krw=100_000_000,
        monthly_rent_krw=1_000_000 if ttype == "monthly_lease" else None,
        area_m2=30.0,
        natural_key=key,
    )


def test_migration_0017_records_the_months_an_older_store_holds(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 17])
    old = open_store(db_url)
    old.migrate()
    deals = [
        _deal("a", "11680", "office", "sale", 5),
        _deal("b", "11680", "retail", "sale", 5),
        _deal("c", "11680", "officetel", "sale", 5),
        _deal("d", "11680", "officetel", "monthly_lease", 6),
        _deal("e", "11680", "office", "monthly_lease", 6),
        _deal("f", "11110", "office", "sale", 6),
    ]
    partial = freshness.add_page(None, total_count=40, page_no=1, items=10)
    with old.data.transaction() as tx:  # as stored before: no record of the deals' months
        for d in deals:  # the rollup as an older store keeps it (the migration reads it)
            tx.execute(
                "INSERT INTO cohort_months (sigungu_code, dong, property_type, "
                "transaction_type, month, source, building_type, samples) "
                "VALUES (?, '', ?, ?, ?, ?, '', 1) ON CONFLICT (sigungu_code, dong, "
                "property_type, transaction_type, month, source, building_type) "
                "DO UPDATE SET samples = cohort_months.samples + 1",
                (d.sigungu_code, d.property_type, d.transaction_type, d.period_month, d.source),
            )
        RealEstateWriter(old.realestate).save_month_reads(
            tx, {("commercial", "11110", "2024-06"): partial}, now=0
        )
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: every)
    store = open_store(db_url)
    try:
        assert "0017_loaded_months.sql" in store.migrate()
        assert reads(store) == {
            ("commercial", "11680", "2024-05"): freshness.file_read(2),
            ("officetel-trade", "11680", "2024-05"): freshness.file_read(1),
            ("officetel-rent", "11680", "2024-06"): freshness.file_read(1),
            (freshness.OTHER_KIND, "11680", "2024-06"): freshness.file_read(1),
            ("commercial", "11110", "2024-06"): partial,  # a recorded read is left alone
        }
    finally:
        store.close()
