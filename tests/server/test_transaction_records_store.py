"""Migration 0011 and the stored records: published details and load ids, filled in for
records stored before it when their file is loaded again, and excluded records kept
once per key with the reason of the latest load."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_server.store import Store, migrate, open_store
from tests.http.realestate_support import NRG_GANGNAM, NRG_JONGNO_PAGE, OFFI_RENT, load

DETAILS = "building_use, floor, build_year, jibun, load_id"


def _details(store: Store) -> dict[str, tuple[object, ...]]:
    with store.data.transaction(write=False) as tx:
        rows = tx.fetchall(f"SELECT natural_key, {DETAILS} FROM transactions")
    return {r["natural_key"]: tuple(r[c.strip()] for c in DETAILS.split(",")) for r in rows}


def _excluded(store: Store) -> list[tuple[str, str, str]]:
    with store.data.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT natural_key, reason, load_id FROM excluded_transactions ORDER BY natural_key"
        )
    return [(r["natural_key"], r["reason"], r["load_id"]) for r in rows]


def _load_ids(store: Store) -> list[str]:
    with store.data.transaction(write=False) as tx:
        return [r["id"] for r in tx.fetchall("SELECT id FROM ingest_log ORDER BY loaded_at, id")]


def test_records_carry_their_load_and_reloading_fills_in_what_was_stored_without(
    store: Store,
) -> None:
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    (first,) = _load_ids(store)
    stored = _details(store)
    assert {d[-1] for d in stored.values()} == {first}
    assert all(d[0] for d in stored.values()) and any(d[2] for d in stored.values())
    with store.data.transaction() as tx:
        tx.execute(
            "UPDATE transactions SET building_use = NULL, floor = NULL, build_year = NULL, "
            "jibun = NULL, load_id = NULL"
        )
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    second = next(i for i in _load_ids(store) if i != first)
    again = _details(store)
    assert again.keys() == stored.keys()
    assert {k: d[:-1] for k, d in again.items()} == {k: d[:-1] for k, d in stored.items()}
    assert {d[-1] for d in again.values()} == {second}


def test_excluded_records_are_kept_once_with_their_first_load(store: Store) -> None:
    report = load(store, "rtms-commercial", NRG_GANGNAM)
    excluded = _excluded(store)
    assert len(excluded) == report.excluded_total > 0
    reasons: dict[str, int] = {}
    for _, reason, _ in excluded:
        reasons[reason] = reasons.get(reason, 0) + 1
    assert reasons == report.excluded
    load(store, "rtms-commercial", NRG_GANGNAM)
    assert _excluded(store) == excluded
    with store.data.transaction(write=False) as tx:
        kept = {r["natural_key"] for r in tx.fetchall("SELECT natural_key FROM transactions")}
    assert kept.isdisjoint(k for k, _, _ in excluded)


def test_a_partial_share_reported_cancelled_later_takes_the_new_reason(
    store: Store, tmp_path: Path
) -> None:
    text = NRG_JONGNO_PAGE.read_text(encoding="utf-8")
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    [(key, reason, first)] = _excluded(store)
    assert reason == "partial_share"
    start = text.index("<shareDealingType>지분</shareDealingType>")
    item_start = text.rindex("<item>", 0, start)
    item_end = text.index("</item>", start)
    item = text[item_start:item_end]
    cancelled = item.replace("<cdealType> </cdealType>", "<cdealType>O</cdealType>")
    assert cancelled != item
    later = tmp_path / "cancelled.xml"
    later.write_text(text.replace(item, cancelled), encoding="utf-8")
    load(store, "rtms-commercial", later)
    [(same, reason, load_id)] = _excluded(store)
    assert (same, reason) == (key, "cancelled") and load_id != first


def test_the_migration_adds_the_columns_to_stored_rows(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrate.available()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version < 11])
    old = open_store(db_url)
    old.migrate()
    old.close()
    monkeypatch.setattr(migrate, "available", lambda: [m for m in every if m.version <= 11])
    store = open_store(db_url)
    try:
        assert store.migrate() == ["0011_transaction_records.sql"]
        assert "excluded_transactions" in store.data.table_names()
    finally:
        store.close()


CONTRACT = (
    "deal_type, seller_type, buyer_type, land_use, broker_district, building_name, "
    "lease_kind, term_start, renewal_right_used, previous_deposit_krw, contract_id"
)


def _contract_columns(store: Store) -> dict[str, tuple[object, ...]]:
    with store.data.transaction(write=False) as tx:
        rows = tx.fetchall(f"SELECT natural_key, {CONTRACT} FROM transactions")
    return {r["natural_key"]: tuple(r[c.strip()] for c in CONTRACT.split(",")) for r in rows}


def test_migration_0016_columns_are_stored_and_filled_in_for_records_stored_before(
    store: Store,
) -> None:
    load(store, "rtms-commercial", NRG_GANGNAM)
    load(store, "rtms-officetel-rent", OFFI_RENT)
    stored = _contract_columns(store)
    assert all(c[-1] for c in stored.values())  # every row names its contract
    assert {c[0] for c in stored.values()} >= {"brokered", "direct", None}
    assert {c[6] for c in stored.values()} == {None, "new", "renewal"}
    assert {c[8] for c in stored.values()} == {None, 0, 1}
    nonhyeon = [c[-1] for c in stored.values() if c[2] == "company" and c[0] == "direct"]
    assert len(nonhyeon) > len(set(nonhyeon))  # units of one sale share a contract
    with store.data.transaction() as tx:  # as a store migrated from before 0016 holds them
        tx.execute(
            "UPDATE transactions SET " + ", ".join(f"{c} = NULL" for c in CONTRACT.split(","))
        )
    load(store, "rtms-commercial", NRG_GANGNAM)
    load(store, "rtms-officetel-rent", OFFI_RENT)
    assert _contract_columns(store) == stored
