"""Issue 28 on GET /api/v1/real-estate/transactions, through HTTP on the real MOLIT
responses, SQLite and PostgreSQL: what RTMS publishes of the contract and its parties,
served on every record; contract ids, stable across loads; the ``contract_id`` filter;
and ``group=contract``, one record per contract.

Expected values come from an independent reading of the raw XML
(``realestate_support.xml_items``) and the documented mappings, written out again here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import attrs
import pytest

from svc_core import parse_transactions, rtms_kind
from svc_core.cohorts.contracts import own_contract_id
from svc_core.realestate.contract_record import CONTRACT_COLUMNS
from svc_core.realestate.record import TRANSACTION_COLUMNS, transaction_record
from svc_server.store import Store, open_store
from tests.http.realestate_support import (
    MOLIT_FILES,
    NRG_GANGNAM,
    Api,
    assert_error,
    load,
    load_molit,
    make_app,
    manwon,
    open_molit_store,
    xml_items,
)
from tests.http.test_realestate_transactions import (
    FILES,
    PULSE_QUERIES,
    LeasedApi,
    every_page,
    published,
    raw_record,
    read_csv,
    row_filters,
)

Raw = dict[str, Any]
EVERYTHING = {"sigungu_code": "11680", "period": "last_12m", "limit": "1000"}
DEAL = {"중개거래": "brokered", "직거래": "direct"}
PARTY = {"개인": "individual", "법인": "company", "공공기관": "public_body", "기타": "other"}
LEASE_KIND = {"신규": "new", "갱신": "renewal"}
DETAILS = (
    "deal_type",
    "seller_type",
    "buyer_type",
    "land_use",
    "broker_district",
    "building_name",
    "lease_kind",
    "term_start",
    "term_end",
    "renewal_right_used",
    "previous_deposit_krw",
    "previous_monthly_rent_krw",
)
"""The fields of issue 28 a record serves, after the fields it served before."""


# the independent reading ---------------------------------------------------------------------


def _text(item: Raw, tag: str) -> str | None:
    value = item.get(tag, "").strip()
    return None if value in ("", "-") else value


def _term(item: Raw) -> tuple[str | None, str | None]:
    """``contractTerm`` ``YY.MM~YY.MM`` as two ``YYYY-MM``."""
    found = re.fullmatch(r"(\d\d)\.(\d\d)~(\d\d)\.(\d\d)", item.get("contractTerm", "").strip())
    if found is None:
        return None, None
    return f"20{found[1]}-{found[2]}", f"20{found[3]}-{found[4]}"


def raw_details(item: Raw) -> Raw:
    """What a record should say of the contract and its parties, from its raw item."""
    kind = LEASE_KIND.get(item.get("contractType", "").strip())
    used = item.get("useRRRight", "").strip() == "사용"
    start, end = _term(item)
    previous = {
        tag: None if _text(item, tag) is None else manwon(item[tag])
        for tag in ("preDeposit", "preMonthlyRent")
    }
    return {
        "deal_type": DEAL.get(item.get("dealingGbn", "").strip()),
        "seller_type": PARTY.get(item.get("slerGbn", "").strip()),
        "buyer_type": PARTY.get(item.get("buyerGbn", "").strip()),
        "land_use": _text(item, "landUse"),
        "broker_district": _text(item, "estateAgentSggNm"),
        "building_name": _text(item, "offiNm"),
        "lease_kind": kind,
        "term_start": start,
        "term_end": end,
        "renewal_right_used": True if used else False if kind == "renewal" else None,
        "previous_deposit_krw": previous["preDeposit"],
        "previous_monthly_rent_krw": previous["preMonthlyRent"],
    }


def raw_items(code: str) -> list[Raw]:
    return [item for path in FILES[code] for item in xml_items(path)]


def described(record: Raw) -> tuple[Any, ...]:
    """A record's published fields, exclusion and the fields of issue 28."""
    return (*published(record), record["excluded_reason"], *(record[d] for d in DETAILS))


def raw_contract(item: Raw) -> tuple[Any, ...] | None:
    """The documented contract of a raw sale item: the fields its units agree on (None
    for a lease or a sale naming no lot, a contract of its own)."""
    record = raw_record(item)
    if record["transaction_type"] != "sale" or record["jibun"] is None:
        return None
    return (
        item["sggCd"].strip(),
        record["dong"],
        record["jibun"],
        record["contract_date"],
        *(item.get(tag, "").strip() for tag in ("dealingGbn", "slerGbn", "buyerGbn")),
        record["building_use"],
        record["build_year"],
        record["property_type"],
        record["building_type"],
    )


# fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def api(molit_store: Store) -> Iterator[Api]:
    """A caller whose per-minute limit lets a test page through contracts 3 at a time,
    and whose limits lease: its hundreds of calls write no admission each."""
    api = LeasedApi(make_app(molit_store), plan="enterprise")
    yield api
    api.app.close()


def every_record(api: Api, code: str) -> list[Raw]:
    """Every record of a sample district, excluded ones too."""
    params = {**EVERYTHING, "sigungu_code": code, "include_excluded": "true"}
    return every_page(api, params)[0]


def contract_ids(api: Api, codes: tuple[str, ...] = ("11680",)) -> dict[str, str]:
    """natural key → contract id of every record of sample districts (excluded ones too)."""
    return {r["natural_key"]: r["contract_id"] for c in codes for r in every_record(api, c)}


# the fields ----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["11680", "11110"])
def test_every_record_says_what_the_source_published_of_the_contract_and_its_parties(
    api: Api, code: str
) -> None:
    records = every_record(api, code)
    assert tuple(records[0]) == TRANSACTION_COLUMNS
    # the contract and its parties, then the cancellation date, then issue 45's columns
    assert TRANSACTION_COLUMNS[-len(DETAILS) - 5 :] == (
        "contract_id",
        *DETAILS,
        "cancellation_date",
        "industrial_use",
        "land_category",
        "zoning",
    )
    assert Counter(described(r) for r in records) == Counter(
        described({**raw_record(i), **raw_details(i)}) for i in raw_items(code)
    )
    for record in records:
        assert re.fullmatch(r"c[0-9a-f]{24}", record["contract_id"])
        lease = record["transaction_type"] != "sale"
        assert (record["lease_kind"] is not None) == lease
        assert record["deal_type"] is None or not lease


def test_the_samples_exercise_every_field(api: Api) -> None:
    records = every_record(api, "11680")
    for name in DETAILS:
        assert any(r[name] is not None for r in records), name
    assert {r["renewal_right_used"] for r in records} == {True, False, None}
    assert {r["deal_type"] for r in records} == {"brokered", "direct", None}
    assert any("," in (r["broker_district"] or "") for r in records)


def test_the_library_makes_the_records_the_api_serves(api: Api) -> None:
    served: dict[str, Raw] = {}
    for code in FILES:
        records = every_record(api, code)
        served |= {r["natural_key"]: {**r, "load_id": None} for r in records}
    made: dict[str, Raw] = {}
    for _, path in MOLIT_FILES:
        result = parse_transactions(path.read_bytes(), rtms_kind(path.name), path=str(path))
        for tx in result.transactions:
            made[tx.natural_key] = attrs.asdict(transaction_record(tx))
        for item in result.excluded:
            record = transaction_record(
                item.record, excluded_reason=item.reason, cancelled_on=item.cancelled_on
            )
            made[record.natural_key] = attrs.asdict(record)
    assert made == served


# contract ids --------------------------------------------------------------------------------


def test_records_of_a_contract_share_its_id_and_no_other_record_does(api: Api) -> None:
    for code in FILES:
        records = every_record(api, code)
        expected = Counter(raw_contract(i) or ("row", n) for n, i in enumerate(raw_items(code)))
        served = Counter(r["contract_id"] for r in records)
        assert sorted(served.values()) == sorted(expected.values()), code


def test_contract_ids_are_the_same_on_every_load_of_the_same_data(
    molit_store: Store, api: Api, tmp_path: Path
) -> None:
    first = contract_ids(api, tuple(FILES))
    fresh = open_store(f"sqlite:///{tmp_path / 'again.db'}")
    fresh.migrate()
    try:
        load_molit(fresh)
        again = Api(make_app(fresh))
        second = contract_ids(again, tuple(FILES))
    finally:
        fresh.close()
    assert second == first
    for kind, path in MOLIT_FILES:  # the same files again, into the same store
        load(molit_store, kind, path)
    assert contract_ids(api, tuple(FILES)) == first


def test_records_stored_before_contracts_were_kept_are_contracts_of_their_own_until_reloaded(
    db_url: str,
) -> None:
    with open_molit_store(db_url) as store:
        api = Api(make_app(store))
        before = contract_ids(api)
        with store.data.transaction() as tx:
            for table in ("transactions", "excluded_transactions"):
                tx.execute(f"UPDATE {table} SET contract_id = NULL, deal_type = NULL")
        legacy = contract_ids(api)
        assert legacy == {key: own_contract_id(key) for key in before}
        shared = Counter(before.values()).most_common(1)[0][0]
        unit = next(k for k, c in before.items() if c == shared)
        one, _ = every_page(
            api, {**EVERYTHING, "contract_id": own_contract_id(unit), "include_excluded": "true"}
        )
        assert [r["natural_key"] for r in one] == [unit]
        grouped, _ = every_page(api, {**EVERYTHING, "group": "contract", "limit": "7"})
        kept, _ = every_page(api, EVERYTHING)
        assert len(grouped) == len(kept) and {c["units"] for c in grouped} == {1}
        assert {c["contract_id"] for c in grouped} == {r["contract_id"] for r in kept}
        for kind, path in MOLIT_FILES:
            load(store, kind, path)
        assert contract_ids(api) == before
        records, _ = every_page(api, {**EVERYTHING, "include_excluded": "true"})
        assert any(r["deal_type"] for r in records if r["excluded"])


# the contract_id filter and group=contract ---------------------------------------------------

NONHYEON = {"sigungu_code": "11680", "period": "2025-06", "property_type": "office"}


def test_the_nonhyeon_dong_office_floors_are_one_contract_of_12_units(api: Api) -> None:
    items = [
        i
        for i in xml_items(NRG_GANGNAM)
        if i["umdNm"] == "논현동"
        and i["jibun"] == "61-3"
        and i["dealDay"].strip() == "23"
        and i["buildingUse"] == "업무"
    ]
    assert len(items) == 12
    contracts, _ = every_page(api, {**NONHYEON, "group": "contract"})
    assert tuple(contracts[0]) == CONTRACT_COLUMNS
    (bulk,) = [c for c in contracts if c["jibun"] == "61-3"]
    prices = [manwon(i["dealAmount"]) for i in items]
    area = sum(Fraction(i["buildingAr"]) for i in items)
    assert bulk["units"] == 12 and bulk["contract_date"] == "2025-06-23"
    assert bulk["dong"] == "논현동" and bulk["building_type"] == "unit"
    assert (bulk["deal_type"], bulk["seller_type"], bulk["buyer_type"]) == (
        "direct",
        "company",
        "company",
    )
    assert bulk["price_krw"] == sum(prices)
    assert Fraction(str(bulk["area_m2"])) == area
    assert bulk["price_per_m2"] == round(Fraction(sum(prices)) / area)
    assert bulk["floors"] == sorted(int(i["floor"]) for i in items if i["floor"].strip())
    url = urlsplit(bulk["transactions_url"])
    assert url.path == "/api/v1/real-estate/transactions"
    link = dict(parse_qsl(url.query))
    assert link == {
        "sigungu_code": "11680",
        "period": "2025-06",
        "contract_id": bulk["contract_id"],
    }
    rows, _ = every_page(api, link)
    assert len(rows) == 12 and {r["contract_id"] for r in rows} == {bulk["contract_id"]}
    assert sorted(r["natural_key"] for r in rows) == bulk["natural_keys"]
    assert sorted(r["price_krw"] for r in rows) == sorted(prices)
    others = [c for c in contracts if c is not bulk]
    assert all(c["units"] == 1 for c in others)


@pytest.mark.parametrize("query", PULSE_QUERIES, ids=lambda q: "-".join(q.values()))
def test_group_contract_returns_each_contract_of_a_pulse_row_once(
    api: Api, query: dict[str, str]
) -> None:
    for row in api.ok("pulse", query)["data"]:
        filters = row_filters(row, query)
        records, _ = every_page(api, {**filters, "limit": "1000"})
        contracts, pages = every_page(api, {**filters, "group": "contract", "limit": "3"})
        ids = [c["contract_id"] for c in contracts]
        assert len(ids) == len(set(ids)) == len({r["contract_id"] for r in records}), filters
        assert len(ids) == row["contract_count"]  # issue 28's acceptance: one per contract
        link = dict(parse_qsl(urlsplit(row["transactions_url"]).query))
        linked, _ = every_page(api, {**link, "group": "contract", "limit": "1000"})
        assert [c["contract_id"] for c in linked] == ids
        assert pages == max(1, -(-len(ids) // 3))
        order = [(c["contract_date"], c["contract_id"]) for c in contracts]
        assert order == sorted(order)
        assert sum(c["units"] for c in contracts) == row["sample_count"] == len(records)
        price = "price_krw" if row["transaction_type"] == "sale" else "deposit_krw"
        assert sum(c[price] for c in contracts) == sum(r[price] for r in records)
        by_id: dict[str, list[Raw]] = {}
        for record in records:
            by_id.setdefault(record["contract_id"], []).append(record)
        for contract in contracts:
            mine = by_id[contract["contract_id"]]
            assert contract["natural_keys"] == sorted(r["natural_key"] for r in mine)
            assert {r["contract_date"] for r in mine} == {contract["contract_date"]}


def test_the_contract_id_filter_lists_one_contracts_records(api: Api) -> None:
    ids = contract_ids(api)
    for wanted, n in Counter(ids.values()).most_common(3):
        rows, _ = every_page(api, {**EVERYTHING, "contract_id": wanted, "include_excluded": "true"})
        assert len(rows) == n and {r["contract_id"] for r in rows} == {wanted}
    absent = api.ok("transactions", {**EVERYTHING, "contract_id": "c" + "0" * 24})
    assert absent["data"] == [] and absent["_meta"]["query"]["contract_id"] == "c" + "0" * 24


def test_group_contract_refuses_include_excluded_and_bad_values(api: Api) -> None:
    base = {"sigungu_code": "11680", "period": "2025-06"}
    error = assert_error(
        api.get("transactions", {**base, "group": "contract", "include_excluded": "true"}),
        400,
        "INVALID_PARAMS",
    )
    assert "include_excluded" in error["message"] and error["hint"]
    for bad in (
        {"group": "contracts"},
        {"contract_id": "c123"},
        {"contract_id": "C" + "a" * 24},
        {"contract_id": ""},
    ):
        assert_error(api.get("transactions", {**base, **bad}), 400, "INVALID_PARAMS")
    plain = api.ok("transactions", {**base, "limit": "2"})["_meta"]["next_cursor"]
    grouped = {**base, "group": "contract", "limit": "2"}
    assert_error(api.get("transactions", {**grouped, "cursor": plain}), 400, "INVALID_PARAMS")
    assert api.ok("transactions", {**grouped, "group": "record", "cursor": plain})["data"]


def test_both_shapes_stream_as_csv_with_the_json_fields_as_columns(api: Api) -> None:
    for group, columns in (("record", TRANSACTION_COLUMNS), ("contract", CONTRACT_COLUMNS)):
        params = {**EVERYTHING, "group": group}
        records, _ = every_page(api, params)
        response = api.get("transactions", {**params, "format": "csv"})
        assert response.status_code == 200
        assert response.headers["X-Svc-Count"] == str(len(records))
        rows = read_csv(response, columns)
        assert tuple(records[0]) == columns
        assert [r["contract_id"] for r in rows] == [r["contract_id"] for r in records]
        if group == "contract":
            assert [r["units"] for r in rows] == [str(r["units"]) for r in records]
            assert [r["natural_keys"] for r in rows][:1] == [
                '["' + '","'.join(records[0]["natural_keys"]) + '"]'
            ]
        else:
            used = {r["renewal_right_used"] for r in rows}
            assert used == {"true", "false", ""}
