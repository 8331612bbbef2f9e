"""Changes over time through HTTP (issue 46, item 2), on the real MOLIT samples.

The samples hold one month per district, so the year-earlier side is the real Gangnam
commercial file re-dated to June 2024 with every other item kept (an illustrative
file, built here: the items unmodified but ``dealYear`` and ``totalCount``), and an
officetel-sales copy re-dated to 2024 that claims more items than it holds (one page of
several: incomplete). Expected figures come from the raw XML (``realestate_support``),
never from svc's statistics.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from svc_server import ingest
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    CHANGE_FIELDS,
    NRG_GANGNAM,
    OFFI_TRADE,
    Api,
    contract_groups,
    contract_price,
    expected_stats,
    included,
    load_molit,
    make_app,
    per_area,
    total_area,
)
from tests.http.test_realestate_pulse import property_type

OFFICE_SALE = {"sigungu_code": "11680", "property_type": "office", "transaction_type": "sale"}


def redated(path: Path, *, keep: int, extra_total: int = 0) -> tuple[bytes, list[dict[str, str]]]:
    """``path``'s response re-dated a year earlier, keeping every ``keep``-th item, its
    ``totalCount`` the items kept plus ``extra_total``; and the kept items as tags."""
    text = path.read_text(encoding="utf-8")
    items = re.findall(r"<item>.*?</item>", text, flags=re.S)
    kept = [
        item.replace("<dealYear>2025</dealYear>", "<dealYear>2024</dealYear>")
        for item in items[::keep]
    ]
    body = re.sub(
        r"<items>.*</items>", lambda _: "<items>" + "".join(kept) + "</items>", text, flags=re.S
    )
    body = re.sub(
        r"<totalCount>\d+</totalCount>", f"<totalCount>{len(kept) + extra_total}</totalCount>", body
    )
    tags = [dict(re.findall(r"<(\w+)>([^<]*)</\1>", item)) for item in kept]
    return body.encode("utf-8"), tags


GANGNAM_ITEMS = [
    dict(re.findall(r"<(\w+)>([^<]*)</\1>", item))
    for item in re.findall(r"<item>(.*?)</item>", NRG_GANGNAM.read_text(encoding="utf-8"), re.S)
]
LAST_YEAR, LAST_YEAR_ITEMS = redated(NRG_GANGNAM, keep=2)
OFFI_LAST_YEAR, _ = redated(OFFI_TRADE, keep=2, extra_total=5)


def contracts_of(items: list[dict[str, str]], kind: str) -> list[list[dict[str, str]]]:
    """The sale contracts of one property type among raw commercial items."""
    return [g for g in contract_groups(included(items), "NRG") if property_type(g[0]) == kind]


def medians(groups: list[list[dict[str, str]]]) -> tuple[int, int]:
    """The median price and median price per m² of contracts, by hand."""
    price = expected_stats(sorted(contract_price(g) for g in groups))["median"]
    area = per_area((contract_price(g), total_area(g, "buildingAr")) for g in groups)
    assert area is not None
    return price, area[1]


def pct(now: int, then: int) -> float:
    return float(round((Fraction(now, then) - 1) * 100, 2))


def load_all(store: Store) -> None:
    load_molit(store)
    ingest.ingest(store, "rtms-commercial", LAST_YEAR, path="NRG_11680_202406.xml", now=RE_NOW)
    ingest.ingest(
        store, "rtms-officetel-trade", OFFI_LAST_YEAR, path="OFFICETEL_11680_202406.xml", now=RE_NOW
    )


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('changes') / 'svc.db'}"
    store = open_store(url, pool_size=4)
    store.migrate()
    load_all(store)
    store.close()
    yield url


@pytest.fixture
def api(store_url: str) -> Iterator[Api]:
    store = open_store(store_url, pool_size=4)
    try:
        yield Api(make_app(store))
    finally:
        store.close()


def row_of(api: Api, **params: str) -> dict[str, Any]:
    [row] = api.ok("pulse", {**OFFICE_SALE, "period": "2025-06", **params})["data"]
    return dict(row)


@pytest.mark.parametrize("kind", ["office", "retail", "commercial_complex"])
def test_the_year_change_is_this_median_over_last_years_minus_one(api: Api, kind: str) -> None:
    """Office: 13 contracts against 5 (too few to bound last year's median: no interval);
    retail 14 against 10 and commercial complexes 26 against 13: an interval holding the
    change."""
    now_groups, then_groups = contracts_of(GANGNAM_ITEMS, kind), contracts_of(LAST_YEAR_ITEMS, kind)
    now_price, now_area = medians(now_groups)
    then_price, then_area = medians(then_groups)
    row = row_of(api, property_type=kind)
    assert (row["median_price"], row["median_price_per_m2"]) == (now_price, now_area)
    change = row["change_vs_year_ago"]
    assert change["base_period"] == "2024-06"
    assert (change["value"], change["base_value"]) == (now_price, then_price)
    assert change["change_pct"] == pct(now_price, then_price)
    counts = (len(now_groups), len(then_groups))
    assert (change["contract_count"], change["base_contract_count"]) == counts
    assert change["reason"] is None
    per_m2 = row["change_vs_year_ago_per_m2"]
    assert (per_m2["value"], per_m2["base_value"]) == (now_area, then_area)
    assert per_m2["change_pct"] == pct(now_area, then_area)
    for c in (change, per_m2):
        if min(counts) < 7:
            assert c["interval_reason"] == "too_few_contracts"
            assert (c["interval_low_pct"], c["interval_high_pct"], c["significant"]) == (
                None,
                None,
                False,
            )
            continue
        assert c["interval_reason"] is None
        assert c["interval_low_pct"] <= c["change_pct"] <= c["interval_high_pct"]
        assert c["significant"] == (c["interval_low_pct"] > 0 or c["interval_high_pct"] < 0)
    # the year-earlier row itself says the same figures, and has no year before it
    [then_row] = api.ok("pulse", {**OFFICE_SALE, "property_type": kind, "period": "2024-06"})[
        "data"
    ]
    assert (then_row["median_price"], then_row["median_price_per_m2"]) == (then_price, then_area)
    assert then_row["change_vs_year_ago"]["reason"] == "not_loaded"


def test_a_change_is_null_with_its_reason(api: Api) -> None:
    row = row_of(api)
    for name in ("change_vs_previous", "change_vs_previous_per_m2"):  # 2025-05 never loaded
        assert row[name]["base_period"] == "2025-05"
        assert (row[name]["change_pct"], row[name]["reason"]) == (None, "not_loaded")
        assert row[name]["significant"] is False
    body = api.ok(
        "pulse", {"sigungu_code": "11680", "property_type": "officetel", "period": "2025-06"}
    )
    by_type = {r["transaction_type"]: r for r in body["data"]}
    # officetel sales of 2024-06: one page of several, incomplete
    assert by_type["sale"]["change_vs_year_ago"]["reason"] == "incomplete"
    assert by_type["sale"]["change_vs_year_ago"]["change_pct"] is None
    # officetel leases of 2024-06: never loaded
    lease = by_type["monthly_lease"]["change_vs_year_ago"]
    assert (lease["reason"], lease["base_value"], lease["change_pct"]) == ("not_loaded", None, None)
    # Jongno's May 2025 page is itself incomplete; its previous month was never loaded
    jongno = api.ok("pulse", {"sigungu_code": "11110", "period": "2025-05"})["data"]
    assert jongno and all(r["change_vs_previous"]["reason"] == "not_loaded" for r in jongno)


def test_pyeong_answers_name_the_per_area_changes_for_their_unit(api: Api) -> None:
    row = row_of(api, area_unit="pyeong")
    assert "change_vs_year_ago_per_m2" not in row
    change = row["change_vs_year_ago_per_pyeong"]
    assert change["value"] == row["median_price_per_pyeong"]
    assert change["change_pct"] is not None


def test_series_rows_carry_the_same_changes(api: Api) -> None:
    pulse = row_of(api)
    [series] = [
        r
        for r in api.ok("pulse/series", {**OFFICE_SALE, "periods": "2024-06,2025-06"})["data"]
        if r["period"] == "2025-06"
    ]
    assert {f: series[f] for f in CHANGE_FIELDS} == {f: pulse[f] for f in CHANGE_FIELDS}


def test_the_changes_are_the_same_on_a_second_call_and_after_a_restart(store_url: str) -> None:
    store = open_store(store_url, pool_size=4)
    try:
        api = Api(make_app(store))
        first = {f: row_of(api)[f] for f in CHANGE_FIELDS}
        assert {f: row_of(api)[f] for f in CHANGE_FIELDS} == first
    finally:
        store.close()
    store = open_store(store_url, pool_size=4)  # a new process's store and caches
    try:
        assert {f: row_of(Api(make_app(store)))[f] for f in CHANGE_FIELDS} == first
    finally:
        store.close()


def test_csv_columns_carry_the_changes(api: Api) -> None:
    response = api.get("pulse", {**OFFICE_SALE, "period": "2025-06", "format": "csv"})
    header = response.get_data(as_text=True).lstrip("\ufeff").splitlines()[0].split(",")
    assert header[-4:] == list(CHANGE_FIELDS)
