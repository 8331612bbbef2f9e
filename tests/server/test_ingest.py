"""Loading source files: stored rows, exclusions, idempotency, atomicity, and ``svc ingest``.

Runs on SQLite and PostgreSQL. Expected counts come from reading the raw files with a
regular expression (``tests.http.realestate_support``), not from svc's readers.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc_core.errors import InvalidParams, SourceError
from svc_server import cli, ingest
from svc_server.commands.base import ProgressBar
from svc_server.ingest import writer
from svc_server.store import Store, migrate, open_store
from svc_server.store.loading import loading
from tests.http.realestate_support import (
    FIXTURES,
    MOLIT,
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    included,
    load,
    manwon,
    xml_items,
)


def rows(store: Store, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    with store.data.transaction(write=False) as tx:
        return tx.fetchall(sql, params)


def snapshot(store: Store) -> dict[str, Any]:
    """Everything a load may change."""
    return {
        "counts": store.realestate.counts(),
        "rollup": rows(
            store,
            "SELECT sigungu_code, dong, property_type, transaction_type, month, source, "
            "building_type, samples, contracts, bulk_contracts FROM cohort_months "
            "ORDER BY 1, 2, 3, 4, 5, 6, 7",
        ),
        "coverage": rows(
            store,
            "SELECT granularity, sigungu_code, dong, building_type, row_json "
            "FROM coverage_cohorts ORDER BY 1, 2, 3, 4, 5",
        ),
    }


def assert_rollup_matches_transactions(store: Store) -> None:
    """The rollup maintained at ingest equals counting the stored transactions, per
    building type ('' when the source does not say): samples, contracts (the rows sharing
    a contract_id are one, a row without one is its own) and contracts of several rows."""
    keys = ("sigungu_code", "dong", "property_type", "transaction_type", "month", "source")
    per_contract: Counter[tuple[tuple[str, ...], str]] = Counter()
    for r in rows(
        store,
        "SELECT sigungu_code, dong, property_type, transaction_type, month, source, "
        "building_type, contract_id, natural_key FROM transactions",
    ):
        base = (r["property_type"], r["transaction_type"], r["month"], r["source"])
        btype = r["building_type"] or ""
        contract = r["contract_id"] or r["natural_key"]
        per_contract[((r["sigungu_code"], "", *base, btype), contract)] += 1
        if r["dong"]:
            per_contract[((r["sigungu_code"], r["dong"], *base, btype), contract)] += 1
    expected: dict[tuple[str, ...], list[int]] = {}
    for (key, _), n in per_contract.items():
        counts = expected.setdefault(key, [0, 0, 0])
        counts[0] += n
        counts[1] += 1
        counts[2] += n > 1
    stored: dict[tuple[str, ...], list[int]] = {}
    for r in snapshot(store)["rollup"]:
        key = (*(r[k] for k in keys), r["building_type"])
        assert key not in stored
        stored[key] = [int(r["samples"]), int(r["contracts"]), int(r["bulk_contracts"])]
    assert stored == expected


def test_commercial_sales_are_stored_with_exclusions_counted(store: Store) -> None:
    items = xml_items(NRG_GANGNAM)
    kept = included(items)
    report = load(store, "rtms-commercial", NRG_GANGNAM)
    assert (
        (report.read, report.loaded, report.duplicate) == (len(items), len(kept), 0) == (83, 73, 0)
    )
    assert report.excluded == {"cancelled": 3, "partial_share": 7}
    assert report.rejected == {}
    stored = rows(
        store,
        "SELECT source, sigungu_code, sigungu, dong, transaction_type, deal_date, month, "
        "price_krw, monthly_rent_krw, area_m2, synthetic FROM transactions",
    )
    assert len(stored) == 73
    assert {
        (r["source"], r["sigungu_code"], r["sigungu"], r["transaction_type"], r["month"])
        for r in stored
    } == {("rtms_official", "11680", "강남구", "sale", "2025-06")}
    assert sorted(r["price_krw"] for r in stored) == sorted(manwon(i["dealAmount"]) for i in kept)
    assert sorted(float(r["area_m2"]) for r in stored) == sorted(
        float(i["buildingAr"]) for i in kept
    )
    assert Counter(r["dong"] for r in stored) == Counter(i["umdNm"] for i in kept)
    assert sorted(r["deal_date"] for r in stored) == sorted(
        f"2025-06-{int(i['dealDay']):02d}" for i in kept
    )
    assert {r["monthly_rent_krw"] for r in stored} == {None}
    assert {r["synthetic"] for r in stored} == {0}
    assert_rollup_matches_transactions(store)
    assert store.realestate.state().exclusions == {"cancelled": 3, "partial_share": 7}


LOG_ROWS = st.lists(
    st.tuples(
        st.sampled_from(["rtms-commercial", "rtms-officetel-rent", "rone-index", "samples"]),
        st.sampled_from(["a", "b", "c"]),  # the file's digest: a file read again repeats it
        st.integers(0, 5),  # loaded_at
        st.dictionaries(st.sampled_from(["cancelled", "partial_share"]), st.integers(0, 9)),
    ),
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(logged=LOG_ROWS)
def test_exclusions_count_each_files_latest_read_once(db_url: str, logged: list[Any]) -> None:
    """The totals the store states are each RTMS file's latest read (by load time, then
    id), once, whatever was read again or of another kind: an oracle over the log rows.
    (A new store object each example: its answers are cached per data version.)"""
    store = open_store(db_url)
    store.migrate()
    try:
        with loading(store) as w:
            for table in ("ingest_log", "latest_reads", "exclusion_counts"):
                w.tx.execute(f"DELETE FROM {table}")
            for n, (kind, digest, at, excluded) in enumerate(logged):
                row = {"id": f"{n:04d}", "kind": kind, "path": "f", "sha256": digest}
                row |= {"read_count": 1, "loaded": 1, "duplicate": 0, "loaded_at": at}
                w.realestate.log_ingest(w.tx, {**row, "excluded": excluded})
        assert store.realestate.state().exclusions == latest_exclusions(logged)
    finally:
        store.close()


def latest_exclusions(logged: list[Any]) -> dict[str, int]:
    """The oracle: each RTMS file's latest read (load time, then smallest id), summed."""
    latest: dict[str, tuple[int, str, dict[str, int]]] = {}
    for n, (kind, digest, at, excluded) in enumerate(logged):
        if kind.startswith("rtms-"):
            old = latest.get(digest)
            if old is None or (-at, f"{n:04d}") < (-old[0], old[1]):
                latest[digest] = (at, f"{n:04d}", excluded)
    expected: Counter[str] = Counter()
    for _, _, excluded in latest.values():
        expected.update(excluded)
    return dict(sorted(expected.items()))


MIGRATED_LOG = [
    ("rtms-commercial", "a", 1, {"cancelled": 2}),
    ("rtms-commercial", "a", 3, {"cancelled": 1, "partial_share": 1}),  # a's latest read
    ("rtms-commercial", "a", 2, {"cancelled": 5}),
    ("rtms-officetel-rent", "b", 4, {"partial_share": 4}),
    ("rtms-officetel-rent", "b", 4, {"partial_share": 9}),  # the same time: the first id
    ("rone-index", "c", 5, {"unmapped": 7}),  # not about deals
    ("rtms-officetel-trade", "d", 6, {}),
]


def test_migration_0022_counts_the_exclusions_of_the_logged_loads(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store upgraded with loads in its log states the exclusions it stated before, and
    the next load counts on from them."""
    every = migrate.available()
    with monkeypatch.context() as patch:
        patch.setattr(migrate, "available", lambda: [m for m in every if m.version < 22])
        old = open_store(db_url)
        old.migrate()
    try:
        with old.data.transaction() as tx:
            for n, (kind, digest, at, excluded) in enumerate(MIGRATED_LOG):
                tx.execute(
                    "INSERT INTO ingest_log (id, kind, path, sha256, read_count, loaded, "
                    "duplicate, excluded, rejected, loaded_at) VALUES (?, ?, 'f', ?, 1, 1, 0, "
                    "?, '{}', ?)",
                    (f"{n:04d}", kind, digest, json.dumps(excluded), at),
                )
    finally:
        old.close()
    store = open_store(db_url)
    try:
        assert "0022_exclusion_counts.sql" in store.migrate()
        expected = latest_exclusions(MIGRATED_LOG)
        assert expected == {"cancelled": 1, "partial_share": 5}
        assert store.realestate.state().exclusions == expected
        later = ("rtms-commercial", "a", 9, {"cancelled": 3})
        with loading(store) as w:
            row = {"id": "9999", "kind": later[0], "path": "f", "sha256": later[1]}
            row |= {"read_count": 1, "loaded": 1, "duplicate": 0, "loaded_at": later[2]}
            w.realestate.log_ingest(w.tx, {**row, "excluded": later[3]})
        assert store.realestate.state().exclusions == latest_exclusions([*MIGRATED_LOG, later])
    finally:
        store.close()


def test_loading_again_adds_nothing_and_counts_exclusions_once(store: Store) -> None:
    load(store, "rtms-commercial", NRG_GANGNAM)
    before = snapshot(store)
    again = load(store, "rtms-commercial", NRG_GANGNAM)
    assert (again.loaded, again.duplicate) == (0, 73)
    after = snapshot(store)
    assert after["rollup"] == before["rollup"] and after["coverage"] == before["coverage"]
    assert after["counts"]["transactions"] == before["counts"]["transactions"] == 73
    assert after["counts"]["ingest_log"] == before["counts"]["ingest_log"] + 1
    assert store.realestate.state().exclusions == {"cancelled": 3, "partial_share": 7}


def test_the_json_form_of_a_deal_has_the_xml_forms_key(store: Store) -> None:
    """The JSON fixture repeats the XML sample's first deal, then holds an identical twin
    of it (a second deal, told apart by its ordinal), and cancelled and partial-share
    deals."""
    load(store, "rtms-commercial", NRG_GANGNAM)
    path = FIXTURES / "rtms" / "nrg_11680_202506.json"
    report = load(store, "rtms-commercial", path)
    assert report.read == 5
    assert report.excluded == {"cancelled": 1, "partial_share": 2}
    assert (report.duplicate, report.loaded) == (1, 1)
    again = load(store, "rtms-commercial", path)
    assert (again.duplicate, again.loaded) == (2, 0)


def test_a_partial_page_loads_and_says_so(store: Store) -> None:
    kept = included(xml_items(NRG_JONGNO_PAGE))
    report = load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    assert report.is_partial and (report.total_count, report.page_no) == (32, 1)
    assert report.page_info() == "page 1 of 4 (10 of 32 items)"
    assert report.loaded == len(kept) == 9
    assert any("partial file" in line for line in ingest.summary_lines(report))


def test_officetel_sales_and_leases(store: Store) -> None:
    trade = load(store, "rtms-officetel-trade", OFFI_TRADE)
    assert (trade.read, trade.loaded, trade.excluded) == (59, 55, {"cancelled": 4})
    rent_items = xml_items(OFFI_RENT)
    rent = load(store, "rtms-officetel-rent", OFFI_RENT)
    assert rent.loaded == len(rent_items) == 339
    by_type = {
        r["transaction_type"]: (int(r["n"]), int(r["rents"]))
        for r in rows(
            store,
            "SELECT transaction_type, COUNT(*) AS n, COUNT(monthly_rent_krw) AS rents "
            "FROM transactions WHERE property_type = 'officetel' GROUP BY transaction_type",
        )
    }
    monthly = sum(1 for i in rent_items if i["monthlyRent"].strip() != "0")
    assert by_type == {
        "sale": (55, 0),
        "monthly_lease": (monthly, monthly),
        "chartered_lease": (len(rent_items) - monthly, 0),
    }
    total = rows(
        store,
        "SELECT SUM(monthly_rent_krw) AS s FROM transactions WHERE transaction_type = 'monthly_lease'",
    )[0]["s"]
    assert int(total) == sum(manwon(i["monthlyRent"]) for i in rent_items)
    assert_rollup_matches_transactions(store)


def test_a_deal_cancelled_in_a_later_report_is_retracted(store: Store) -> None:
    load(store, "rtms-commercial", NRG_GANGNAM)
    text = NRG_GANGNAM.read_text(encoding="utf-8")
    first_item = text.index("<item>")
    marked = text[:first_item] + text[first_item:].replace(
        "<cdealDay> </cdealDay><cdealType> </cdealType>",
        "<cdealDay>25.07.01</cdealDay><cdealType>O</cdealType>",
        1,
    )
    report = ingest.ingest(store, "rtms-commercial", marked.encode(), path="later.xml", now=1)
    assert report.retracted == 1
    assert report.excluded == {"cancelled": 4, "partial_share": 7}
    assert store.realestate.counts()["transactions"] == 72
    assert_rollup_matches_transactions(store)
    coverage = json.loads(
        rows(
            store,
            "SELECT row_json FROM coverage_cohorts WHERE granularity = 'month' AND dong = '' "
            "AND property_type = 'commercial_complex'",
        )[0]["row_json"]
    )
    assert coverage["total_samples"] == int(
        rows(
            store,
            "SELECT COUNT(*) AS n FROM transactions WHERE property_type = 'commercial_complex'",
        )[0]["n"]
    )
    assert any("retracted" in line for line in ingest.summary_lines(report))


def _office_contract(item: str) -> bool:
    """The 12 office floors of Nonhyeon-dong 61-3 one company bought on 2025-06-23."""
    return all(
        tag in item
        for tag in (
            "<umdNm>논현동</umdNm>",
            "<jibun>61-3</jibun>",
            "<buildingUse>업무</buildingUse>",
        )
    )


def _edited(keep: Any = None, cancel: Any = None) -> bytes:
    """The Gangnam file with only the items ``keep`` accepts, and those ``cancel``
    accepts marked cancelled (as a later report marks them)."""

    def edit(match: re.Match[str]) -> str:
        item = match.group(0)
        if keep is not None and not keep(item):
            return ""
        if cancel is not None and cancel(item):
            item = item.replace(
                "<cdealDay> </cdealDay><cdealType> </cdealType>",
                "<cdealDay>25.07.01</cdealDay><cdealType>O</cdealType>",
            )
        return item

    text = NRG_GANGNAM.read_text(encoding="utf-8")
    return re.sub(r"<item>.*?</item>", edit, text, flags=re.S).encode()


def _office_rollup(store: Store) -> tuple[int, int, int]:
    """(samples, contracts, bulk contracts) of Gangnam's June office sales."""
    [row] = rows(
        store,
        "SELECT SUM(samples) AS s, SUM(contracts) AS c, SUM(bulk_contracts) AS b "
        "FROM cohort_months WHERE sigungu_code = '11680' AND dong = '' "
        "AND property_type = 'office' AND month = '2025-06'",
    )
    return int(row["s"]), int(row["c"]), int(row["b"])


def test_the_units_of_one_contract_count_once_however_they_arrive(store: Store) -> None:
    """Half the floors of the bulk sale first, then the whole file (an overlapping page):
    the rollup counts the contract once, and bulk once it has two rows."""
    seen = 0

    def first_floors(item: str) -> bool:
        nonlocal seen
        if not _office_contract(item):
            return True
        seen += 1
        return seen == 1

    ingest.ingest(store, "rtms-commercial", _edited(keep=first_floors), path="a.xml", now=1)
    assert_rollup_matches_transactions(store)
    assert _office_rollup(store) == (13, 13, 0)
    load(store, "rtms-commercial", NRG_GANGNAM)
    assert_rollup_matches_transactions(store)
    assert _office_rollup(store) == (24, 13, 1)
    load(store, "rtms-commercial", NRG_GANGNAM)
    assert _office_rollup(store) == (24, 13, 1)


def test_retracting_units_of_a_bulk_contract_keeps_its_counts_exact(store: Store) -> None:
    load(store, "rtms-commercial", NRG_GANGNAM)
    seen = 0

    def all_but_one(item: str) -> bool:
        nonlocal seen
        if not _office_contract(item):
            return False
        seen += 1
        return seen > 1

    report = ingest.ingest(
        store, "rtms-commercial", _edited(cancel=all_but_one), path="later.xml", now=2
    )
    assert report.retracted == 11
    assert_rollup_matches_transactions(store)
    assert _office_rollup(store) == (13, 13, 0)
    report = ingest.ingest(
        store, "rtms-commercial", _edited(cancel=_office_contract), path="last.xml", now=3
    )
    assert report.retracted == 1
    assert_rollup_matches_transactions(store)
    assert _office_rollup(store) == (12, 12, 0)
    coverage = json.loads(
        rows(
            store,
            "SELECT row_json FROM coverage_cohorts WHERE granularity = 'month' AND dong = '' "
            "AND property_type = 'office' AND building_type = ''",
        )[0]["row_json"]
    )
    assert (coverage["total_samples"], coverage["contract_count"]) == (12, 12)


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("gateway.xml", (FIXTURES / "rtms" / "gateway_error.xml").read_bytes(), "gateway error"),
        ("cut.xml", NRG_GANGNAM.read_bytes()[:3000], "malformed XML"),
        (
            "cut.json",
            (FIXTURES / "rtms" / "nrg_11680_202506.json").read_text("utf-8")[:500].encode(),
            "malformed JSON",
        ),
        ("doctype.xml", b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "x">]><r/>', "DOCTYPE"),
        (
            "error.xml",
            b"<response><header><resultCode>03</resultCode><resultMsg>NO DATA"
            b"</resultMsg></header></response>",
            "API error 03",
        ),
        ("other.csv", b"a,b\r\n1,2\r\n", "no header row"),
        ("binary.csv", bytes(range(128, 256)) * 4, "not UTF-8 or CP949"),
    ],
)
def test_an_unreadable_file_changes_nothing(
    store: Store, name: str, data: bytes, says: str
) -> None:
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    before = snapshot(store)
    with pytest.raises(SourceError) as caught:
        ingest.ingest(store, "rtms-commercial", data, path=name, now=1)
    assert caught.value.message.startswith(name)
    assert says in caught.value.message
    assert snapshot(store) == before


def test_malformed_xml_names_its_line(store: Store) -> None:
    data = b"<response>\n<header>\n<resultCode>000</resultCode>\n</header>\n<body><items>\n<item>\n</items>"
    with pytest.raises(SourceError) as caught:
        ingest.ingest(store, "rtms-commercial", data, path="bad.xml", now=1)
    assert caught.value.line == 7
    assert caught.value.message.startswith("bad.xml:7: ")


def test_a_failure_while_writing_rolls_the_whole_file_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    load(store, "rtms-commercial", NRG_JONGNO_PAGE)
    before = snapshot(store)

    def boom(*args: object, **kwargs: object) -> int:
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer, "refresh_coverage", boom)
    with pytest.raises(RuntimeError):
        load(store, "rtms-commercial", NRG_GANGNAM)
    assert snapshot(store) == before


def test_the_web_csv_exports(store: Store) -> None:
    commercial = load(
        store, "rtms-commercial", FIXTURES / "rtms_csv" / "commercial_11680_202506_cp949.csv"
    )
    assert commercial.excluded == {"cancelled": 1, "partial_share": 1}
    assert set(commercial.rejected) == {"invalid_amount"}  # 강원 춘천시 is a district now
    assert [r.line for r in commercial.rejections] == sorted(r.line for r in commercial.rejections)
    assert (
        commercial.loaded == commercial.read - commercial.excluded_total - commercial.rejected_total
    )
    trade = load(
        store,
        "rtms-officetel-trade",
        FIXTURES / "rtms_csv" / "officetel_trade_11680_202506_cp949.csv",
    )
    rent = load(
        store,
        "rtms-officetel-rent",
        FIXTURES / "rtms_csv" / "officetel_rent_11680_202103_old_utf8.csv",
    )
    assert trade.loaded > 0 and rent.loaded > 0
    assert (
        store.realestate.counts()["transactions"] == commercial.loaded + trade.loaded + rent.loaded
    )
    again = load(
        store,
        "rtms-officetel-rent",
        FIXTURES / "rtms_csv" / "officetel_rent_11680_202103_old_utf8.csv",
    )
    assert (again.loaded, again.duplicate) == (0, rent.loaded)
    assert_rollup_matches_transactions(store)


def test_the_samples_csv_reports_rejected_lines(store: Store) -> None:
    report = load(store, "samples", FIXTURES / "samples" / "samples.csv")
    assert report.loaded == 6
    assert report.rejected["invalid_rent"] == 2
    lines = {r.reason: r.line for r in report.rejections}
    assert lines["unknown_district"] == 8
    summary = "\n".join(ingest.summary_lines(report))
    assert (
        "rejected unknown_district: 1 (line 8: sigungu_code 99999 is not in the table)" in summary
    )
    sources = {r["source"] for r in rows(store, "SELECT DISTINCT source FROM transactions")}
    assert sources == {"public_assessment", "rone_index_derived", "broker_survey_2025"}


def test_r_one_indices_from_csv_and_json(store: Store) -> None:
    first = load(store, "rone-index", FIXTURES / "rone" / "indices.csv")
    assert first.excluded == {"no_value": 1, "unmapped_area": 1}
    assert first.loaded == 10  # 서울>도심 and 서울>강남 rows stand for two districts each
    office = load(
        store,
        "rone-index",
        FIXTURES / "rone" / "office_vacancy_openapi.json",
        property_type="office",
    )
    assert office.duplicate == 2  # 도심 2025-Q1 vacancy, also in the CSV
    again = load(store, "rone-index", FIXTURES / "rone" / "indices.csv")
    assert (again.loaded, again.duplicate) == (0, 10)
    stored = rows(
        store,
        "SELECT sigungu_code, property_type, metric_type, period, value_pct, source FROM "
        "index_observations WHERE metric_type = 'income_yield'",
    )
    assert {(r["sigungu_code"], r["period"], float(r["value_pct"])) for r in stored} == {
        ("11680", "2025-Q1", 1.05),
        ("11650", "2025-Q1", 1.05),
    }
    assert {r["source"] for r in stored} == {"rone_official"}
    empty = load(store, "rone-index", FIXTURES / "rone" / "no_data_openapi.json")
    assert (empty.read, empty.loaded) == (0, 0)


def test_a_market_area_table_maps_r_one_areas(store: Store) -> None:
    table = ingest.parse_area_map(
        "market_area,sigungu_code\n부산>서면,26230\n서울>도심,11110\n".encode(), path="map.csv"
    )
    assert table == {"부산>서면": ("26230",), "서울>도심": ("11110",)}
    report = load(store, "rone-index", FIXTURES / "rone" / "indices.csv", area_map=table)
    codes = {r["sigungu_code"] for r in rows(store, "SELECT sigungu_code FROM index_observations")}
    assert codes == {"26230", "11110"}
    assert report.excluded["unmapped_area"] == 3  # 서울>강남 twice, 서울>여의도마포
    for bad, line in (
        (b"area,code\n", 1),
        (b"market_area,sigungu_code\n\xec\x84\x9c\xec\x9a\xb8,99999\n", 2),
        (b"market_area,sigungu_code\nx\n", 2),
    ):
        with pytest.raises(SourceError) as caught:
            ingest.parse_area_map(bad, path="map.csv")
        assert caught.value.line == line


def test_options_of_another_kind_are_refused(store: Store) -> None:
    with pytest.raises(InvalidParams):
        load(store, "samples", FIXTURES / "samples" / "samples.csv", property_type="office")
    with pytest.raises(InvalidParams):
        ingest.ingest(store, "rtms-apartment", b"", path="x", now=0)


# the command ---------------------------------------------------------------------------------


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    """``svc`` as a real process (exit status, streams, no traceback)."""
    return subprocess.run(
        [sys.executable, "-m", "svc_server", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``svc`` in this process (faster): (exit status, stdout, stderr)."""
    status = cli.main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_svc_ingest_prints_a_summary_per_file_and_totals(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(
        capsys,
        "ingest",
        "rtms-commercial",
        str(NRG_GANGNAM),
        str(NRG_JONGNO_PAGE),
        "--database-url",
        sqlite_url,
    )
    assert status == 0, err
    assert f"{NRG_GANGNAM}: read 83, loaded 73, duplicate 0, excluded 10, rejected 0" in out
    assert "  excluded cancelled: 3" in out and "  excluded partial_share: 7" in out
    assert "partial file: page 1 of 4 (10 of 32 items)" in out
    assert (
        "total (2 of 2 files loaded): read 93, loaded 82, duplicate 0, excluded 11, rejected 0"
        in out
    )
    assert err == ""  # no progress bar when stderr is not a terminal
    _, again, _ = run(
        capsys, "ingest", "rtms-commercial", str(NRG_GANGNAM), "--database-url", sqlite_url
    )
    assert "loaded 0, duplicate 73" in again


def test_svc_ingest_names_file_and_line_of_bad_input_and_loads_the_rest(
    sqlite_url: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(
        b"<response>\n<header>\n<resultCode>000</resultCode>\n</header>\n<body><items>\n<item>\n</items>"
    )
    done = svc(
        "ingest",
        "rtms-commercial",
        str(bad),
        str(tmp_path / "missing.xml"),
        str(NRG_JONGNO_PAGE),
        "--database-url",
        sqlite_url,
    )
    assert done.returncode == 1
    assert f"svc: error: {bad}:7: malformed XML" in done.stderr
    assert f"svc: error: {tmp_path / 'missing.xml'}: No such file or directory" in done.stderr
    assert "2 file(s) not loaded (nothing from them was written)" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert f"{NRG_JONGNO_PAGE}: read 10, loaded 9" in done.stdout


def test_svc_ingest_rejected_rows_show_their_first_lines(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = str(FIXTURES / "samples" / "samples.csv")
    status, out, _ = run(capsys, "ingest", "samples", samples, "--database-url", sqlite_url)
    assert status == 0
    assert "rejected invalid_rent: 2 (line 9: " in out
    vacancy = str(FIXTURES / "rone" / "office_vacancy_openapi.json")
    status, out, err = run(
        capsys,
        "ingest",
        "rone-index",
        "--property-type",
        "office",
        vacancy,
        "--database-url",
        sqlite_url,
    )
    assert status == 0, err
    # six rows of areas of two districts, and every row under its area's CLS_ID
    assert "read 10, loaded 21" in out


def test_svc_ingest_with_a_bad_area_map_stops_before_loading(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "areas.csv"
    table.write_text("market_area,sigungu_code\n서울>도심,1111\n", encoding="utf-8")
    indices = str(FIXTURES / "rone" / "indices.csv")
    args = ("ingest", "rone-index", "--area-map", str(table), indices, "--database-url", sqlite_url)
    status, _, err = run(capsys, *args)
    assert status == 2
    assert f"svc: error: {table}:2: '1111' is not a known district code" in err


def test_the_progress_bar_draws_on_a_terminal_and_writes_lines_only_to_a_log() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen, log = Terminal(), io.StringIO()
    bar = ProgressBar(screen, lines=Terminal())  # lines to a terminal: the bar is enough
    bar.show(50, 100, "file 1/2 NRG_11680_202506.xml")
    bar.show(100, 100, "file 1/2 NRG_11680_202506.xml")
    bar.step("not written")
    bar.clear()
    drawn = screen.getvalue()
    assert "[##############--------------] 50/100 file 1/2 NRG_11680_202506.xml" in drawn
    assert "100/100" in drawn and drawn.endswith("\r") and "not written" not in drawn
    quiet = io.StringIO()
    logged = ProgressBar(quiet, lines=log)
    logged.show(1, 2, "x.xml")
    logged.step("month 1/2 done")
    assert quiet.getvalue() == "" and log.getvalue() == "month 1/2 done\n"


# kinds recognised from content ---------------------------------------------------------------


SAMPLE_KINDS = {
    "NRG_11110_202505.xml": ("rtms-commercial", "commercial"),
    "NRG_11680_202506.xml": ("rtms-commercial", "commercial"),
    "OFFICETEL_11680_202506.xml": ("rtms-officetel-trade", "officetel_trade"),
    "OFFICETEL_RENT_11680_202506.xml": ("rtms-officetel-rent", "officetel_rent"),
    "LAND_41830_202408.xml": ("rtms-land", "land"),
    "LAND_41830_202409.xml": ("rtms-land", "land"),
}


def test_a_file_of_another_kind_is_refused_and_nothing_is_written(sqlite_url: str) -> None:
    """An officetel sale file given as commercial once became 55 mixed_use sales."""
    store = open_store(sqlite_url)
    store.migrate()
    before = snapshot(store)
    done = svc("ingest", "rtms-commercial", str(OFFI_TRADE), "--database-url", sqlite_url)
    assert done.returncode == 1
    assert (
        f"svc: error: {OFFI_TRADE}: this looks like an officetel sale file (RTMS OffiTrade) "
        "(rtms-officetel-trade), not rtms-commercial; nothing loaded"
    ) in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(SourceError, match="officetel lease"):
        load(store, "rtms-officetel-trade", OFFI_RENT)
    with pytest.raises(SourceError, match="svc samples CSV"):
        load(store, "rtms-commercial", FIXTURES / "samples" / "samples.csv")
    assert snapshot(store) == before
    store.close()


def test_without_kind_every_molit_sample_loads_as_its_true_kind(sqlite_url: str) -> None:
    paths = sorted(MOLIT.glob("*.xml"))
    assert sorted(p.name for p in paths) == sorted(SAMPLE_KINDS)
    done = svc("ingest", *map(str, paths), "--database-url", sqlite_url)
    assert done.returncode == 0, done.stderr
    store = open_store(sqlite_url)
    try:
        kinds = Counter(r["kind"] for r in rows(store, "SELECT kind FROM ingest_log"))
        keys = rows(store, "SELECT natural_key, property_type FROM transactions")
    finally:
        store.close()
    assert kinds == Counter(kind for kind, _ in SAMPLE_KINDS.values())
    prefixes = {k["natural_key"].split(":")[1] for k in keys}
    assert prefixes == {"commercial", "officetel_trade", "officetel_rent", "land"}
    officetel = [k for k in keys if k["natural_key"].startswith("rtms:officetel")]
    assert {k["property_type"] for k in officetel} == {"officetel"}


def test_content_that_shows_no_kind_needs_one(sqlite_url: str, tmp_path: Path) -> None:
    empty = FIXTURES / "rtms" / "offi_rent_empty.json"
    done = svc("ingest", str(empty), "--database-url", sqlite_url)
    assert done.returncode == 1
    assert "cannot tell what kind of file this is; give its KIND" in done.stderr
    done = svc("ingest", "rtms-officetel-rent", str(empty), "--database-url", sqlite_url)
    assert done.returncode == 0, done.stderr


def test_a_file_whose_every_record_is_rejected_exits_non_zero(
    sqlite_url: str, tmp_path: Path
) -> None:
    store = open_store(sqlite_url)
    store.migrate()
    bad = tmp_path / "bad.csv"
    text = (FIXTURES / "samples" / "samples.csv").read_text("utf-8").splitlines()
    wrong = [re.sub(r",[0-9]{5},", ",99999,", line, count=1) for line in text[1:]]
    bad.write_text("\n".join([text[0], *wrong]) + "\n")
    before = snapshot(store)
    done = svc("ingest", str(bad), "--database-url", sqlite_url)
    assert done.returncode == 1
    assert "records was rejected" in done.stderr and "nothing loaded" in done.stderr
    assert snapshot(store) == before
    store.close()


def test_a_load_that_changes_much_of_the_table_refreshes_postgresql_statistics(
    store: Store,
) -> None:
    """On PostgreSQL a load that changes a tenth of the table (and 50 rows) leaves the
    planner statistics of what it loaded at once, autovacuum on or off; a small load
    into a large table does not pay for an ANALYZE. SQLite has nothing to refresh."""
    report = load(store, "rtms-commercial", NRG_GANGNAM)  # 73 rows into an empty table
    if store.data.dialect != "postgresql":
        assert not store.realestate.refresh_statistics(report.loaded)
        return
    sql = (
        "SELECT s.last_analyze, c.reltuples FROM pg_stat_user_tables s "
        "JOIN pg_class c ON c.oid = s.relid WHERE s.relid = 'transactions'::regclass"
    )
    [stats] = rows(store, sql)
    assert stats["last_analyze"] is not None and stats["reltuples"] == report.loaded == 73
    assert not store.realestate.refresh_statistics(5)  # 5 of 73: under 50 + 10 %
    assert rows(store, sql) == [stats]


def test_svc_ingest_of_a_directory_loads_what_it_recognises_and_says_what_it_skipped(
    db_url: str, tmp_path: Path
) -> None:
    drop = tmp_path / "drop"
    (drop / "older").mkdir(parents=True)
    csv_export = FIXTURES / "rtms_csv" / "officetel_rent_11680_202103_old_utf8.csv"
    for source in (NRG_JONGNO_PAGE, csv_export):
        (drop / source.name).write_bytes(source.read_bytes())
    (drop / "older" / OFFI_TRADE.name).write_bytes(OFFI_TRADE.read_bytes())
    (drop / "notes.txt").write_text("to do: ask for the June files\n")
    (drop / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    (drop / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")

    done = svc("ingest", str(drop), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"svc: skipped {drop / '.DS_Store'}: a hidden file",
        f"svc: skipped {drop / 'chart.png'}: this is a PNG image, not a data file svc reads",
        f"svc: skipped {drop / 'notes.txt'}: svc cannot tell what kind of file this is (name "
        "it with its KIND to load it)",
        f"svc: skipped {drop / 'older'}: a directory (not descended into: name it to load its "
        "files)",
    ]
    assert f"{drop / NRG_JONGNO_PAGE.name}: read 10, loaded 9" in done.stdout
    assert f"{drop / csv_export.name}: read " in done.stdout
    assert "total (2 of 2 files loaded, 4 skipped)" in done.stdout
    store = open_store(db_url)
    try:
        logged = sorted(r["kind"] for r in rows(store, "SELECT kind FROM ingest_log"))
        trades = rows(store, "SELECT natural_key FROM transactions WHERE natural_key LIKE ?",
                      ("rtms:officetel_trade%",))  # fmt: skip
    finally:
        store.close()
    assert logged == ["rtms-commercial", "rtms-officetel-rent"] and trades == []

    # a KIND applies to every file of the directory: the others are skipped, saying why
    again = svc("ingest", "rtms-commercial", str(drop), "--database-url", db_url)
    assert again.returncode == 0, again.stderr
    assert (
        f"svc: skipped {drop / csv_export.name}: this looks like an officetel lease file "
        "(RTMS OffiRent) (rtms-officetel-rent), not rtms-commercial\n"
    ) in again.stderr
    assert len(again.stderr.splitlines()) == 5
    assert "loaded 0, duplicate 9" in again.stdout

    # svc sync status shows the months ingest loaded, with their files
    status = svc("sync", "status", "--json", "--database-url", db_url)
    assert status.returncode == 0, status.stderr
    by_pair = {(d["kind"], d["sigungu_code"]): d for d in json.loads(status.stdout)["districts"]}
    jongno = by_pair[("commercial", "11110")]
    assert jongno["ingested"] == [
        {"month": "2025-05", "sources": [str(drop / NRG_JONGNO_PAGE.name)], "complete": False}
    ]
    assert jongno["missing"] == [] and jongno["complete"] == []
    rent = by_pair[("officetel-rent", "11680")]
    assert {m["sources"][0] for m in rent["ingested"]} == {str(drop / csv_export.name)}
    assert {m["complete"] for m in rent["ingested"]} == {None}  # a CSV export states no total
    narrowed = svc("sync", "status", "--sigungu", "11110", "--kinds", "commercial", "--from",
                   "2025-04", "--to", "2025-05", "--database-url", db_url)  # fmt: skip
    assert narrowed.stdout == (
        "commercial 11110 종로구: complete 0, partial 0, failed 0, missing 1 (2025-04), "
        f"ingested 1 (2025-05 from {drop / NRG_JONGNO_PAGE.name}, incomplete); last sync never\n"
    )


INDU = FIXTURES / "molit_constructed" / "INDU_41830_202408.xml"


def test_a_factory_file_without_a_kind_is_refused_and_with_it_loads_apart(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A factory/warehouse answer carries NrgTrade's fields: without a kind (and without
    MOLIT's file name) it is refused in one line naming the choice; with the kind it
    loads as industrial sales and no commercial cohort changes."""
    done = svc("ingest", str(MOLIT / "NRG_11680_202506.xml"), "--database-url", sqlite_url)
    assert done.returncode == 0, done.stderr
    store = open_store(sqlite_url)
    commercial_sql = (
        "SELECT property_type, COUNT(*) AS n FROM transactions GROUP BY property_type "
        "ORDER BY property_type"
    )
    try:
        before = rows(store, commercial_sql)
    finally:
        store.close()
    unnamed = tmp_path / "factories.xml"
    unnamed.write_bytes(INDU.read_bytes())
    done = svc("ingest", str(unnamed), "--database-url", sqlite_url)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line == (
        f"svc: error: {unnamed}: this is a commercial-building sale file (RTMS NrgTrade) "
        "(rtms-commercial) or a factory/warehouse sale file (RTMS InduTrade) "
        "(rtms-industrial): their fields are the same, so the content cannot tell; give "
        f"its KIND (svc ingest rtms-industrial {unnamed})"
    )
    done = svc("ingest", "rtms-industrial", str(unnamed), "--database-url", sqlite_url)
    assert done.returncode == 0, done.stderr
    assert f"{unnamed}: read 14, loaded 12, duplicate 0, excluded 2, rejected 0" in done.stdout
    assert "excluded cancelled: 1\n  excluded partial_share: 1" in done.stdout
    store = open_store(sqlite_url)
    try:
        after = rows(store, commercial_sql)
        uses = rows(
            store,
            "SELECT industrial_use, COUNT(*) AS n FROM transactions "
            "WHERE property_type = 'industrial' GROUP BY industrial_use ORDER BY industrial_use",
        )
    finally:
        store.close()
    assert [r for r in after if r["property_type"] != "industrial"] == before
    assert uses == [
        {"industrial_use": "factory", "n": 5},
        {"industrial_use": "other", "n": 2},
        {"industrial_use": "warehouse", "n": 5},
    ]
