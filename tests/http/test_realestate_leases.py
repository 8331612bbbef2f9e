"""Leases like with like and the contract filters through HTTP on the real MOLIT responses,
SQLite and PostgreSQL (issue 28 items 3 and 4).

Every figure is recomputed from the raw XML by an independent reading: the officetel
lease sample's ``lease_kind=new`` and ``renewal`` rows partition the combined row (counts,
and the deals each row's ``transactions_url`` lists), converted deposits equal the law as
``tests.rent_law`` restates it applied to each item's deposit, rent and contract date,
and the Gangnam commercial sample's ``deal_type``/``buyer_type`` rows count its
``dealingGbn``/``buyerGbn``.
"""

from __future__ import annotations

import datetime
import statistics
from collections import Counter
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests import rent_law
from tests.http.realestate_support import (
    LEASE_FIELDS,
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    included,
    manwon,
    per_area,
    xml_items,
)
from tests.http.test_realestate_pulse import property_type

Raw = dict[str, Any]
KINDS = {"신규": "new", "갱신": "renewal"}
DEAL_TYPES = {"중개거래": "brokered", "직거래": "direct"}
PARTIES = {"개인": "individual", "법인": "company", "공공기관": "public_body", "기타": "other"}
LEASE = {"sigungu_code": "11680", "period": "2025-06", "property_type": "officetel"}
LEASE_TYPES = ("chartered_lease", "monthly_lease")
LEASE_FIGURES = LEASE_FIELDS[4:]
"""The per-area deposits and converted deposits among the lease fields."""


def raw_leases() -> list[Raw]:
    """The officetel leases as the documented mapping reads them."""
    out: list[Raw] = []
    for item in included(xml_items(OFFI_RENT)):
        rent = manwon(item["monthlyRent"])
        day = datetime.date(int(item["dealYear"]), int(item["dealMonth"]), int(item["dealDay"]))
        out.append(
            {
                "ttype": "monthly_lease" if rent else "chartered_lease",
                "kind": KINDS.get(item["contractType"].strip()),
                "deposit": manwon(item["deposit"]),
                "rent": rent,
                "day": day,
                "area": item["excluUseAr"],
            }
        )
    return out


def quartiles(values: list[int]) -> dict[str, int | None]:
    """Mean and type-7 quartiles, rounded half to even (None when there are none)."""
    if not values:
        return {"avg": None, "p25": None, "median": None, "p75": None}
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return {
        "avg": round(Fraction(sum(values), len(values))),
        "p25": round(Fraction(q[0])),
        "median": round(Fraction(q[1])),
        "p75": round(Fraction(q[2])),
    }


def expected_lease_row(leases: list[Raw]) -> dict[str, Any]:
    converted = [rent_law.converted(d["deposit"], d["rent"], d["day"]) for d in leases]
    assert None not in converted  # 2025 contracts all have a statutory rate
    values = [c for c in converted if c is not None]
    stats = quartiles(values)
    deposits = per_area((d["deposit"], d["area"]) for d in leases)
    per_m2 = per_area(zip(values, (d["area"] for d in leases), strict=True))
    assert deposits and per_m2
    return {
        "sample_count": len(leases),
        "lease_kind_mix": dict(sorted(Counter(d["kind"] or "unknown" for d in leases).items())),
        "p25_deposit_per_m2": deposits[0],
        "median_deposit_per_m2": deposits[1],
        "p75_deposit_per_m2": deposits[2],
        "avg_converted_deposit": stats["avg"],
        "p25_converted_deposit": stats["p25"],
        "median_converted_deposit": stats["median"],
        "p75_converted_deposit": stats["p75"],
        "p25_converted_deposit_per_m2": per_m2[0],
        "median_converted_deposit_per_m2": per_m2[1],
        "p75_converted_deposit_per_m2": per_m2[2],
        "p25_price_per_m2": None,
        "median_price_per_m2": None,
        "p75_price_per_m2": None,
        "median_land_price_per_m2": None,
    }


def rows_of(api: Api, params: dict[str, str]) -> dict[str, Raw]:
    response = api.get("pulse", params)
    if response.status_code == 404:
        return {}
    assert response.status_code == 200, response.get_data(as_text=True)
    return {r["transaction_type"]: r for r in response.get_json()["data"]}


def listed(api: Api, url: str) -> set[str]:
    """The natural keys of every record a ``transactions_url`` lists, page after page."""
    parts = urlsplit(url)
    assert parts.path == "/api/v1/real-estate/transactions"
    params = dict(parse_qsl(parts.query))
    keys: list[str] = []
    cursor: str | None = None
    while True:
        body = api.ok("transactions", {**params, **({"cursor": cursor} if cursor else {})})
        keys += [r["natural_key"] for r in body["data"]]
        cursor = body["_meta"]["next_cursor"]
        if cursor is None:
            assert len(set(keys)) == len(keys)
            return set(keys)


def test_lease_kinds_partition_the_combined_lease_rows(api: Api) -> None:
    leases = raw_leases()
    combined = rows_of(api, LEASE)
    assert set(LEASE_TYPES) <= set(combined)
    for ttype in LEASE_TYPES:
        row = combined[ttype]
        mine = [d for d in leases if d["ttype"] == ttype]
        assert row["lease_kind"] is None
        assert row["lease_kind_mix"] == expected_lease_row(mine)["lease_kind_mix"]
        assert set(row["lease_kind_mix"]) == {"new", "renewal"}, "the sample holds both"
        everything = listed(api, row["transactions_url"])
        assert len(everything) == row["sample_count"] == len(mine)
        parts: list[set[str]] = []
        for kind in ("new", "renewal"):
            part = rows_of(api, {**LEASE, "lease_kind": kind, "transaction_type": ttype})[ttype]
            assert part["lease_kind"] == kind
            assert part["lease_kind_mix"] == {kind: row["lease_kind_mix"][kind]}
            assert part["sample_count"] == row["lease_kind_mix"][kind]
            assert "lease_kind=" + kind in part["transactions_url"]
            parts.append(listed(api, part["transactions_url"]))
        assert not parts[0] & parts[1]
        assert parts[0] | parts[1] == everything


@pytest.mark.parametrize("kind", [None, "new", "renewal"])
def test_converted_deposits_are_the_law_applied_to_each_lease(api: Api, kind: str | None) -> None:
    params = {**LEASE, **({"lease_kind": kind} if kind else {})}
    rows = rows_of(api, params)
    for ttype in LEASE_TYPES:
        mine = [d for d in raw_leases() if d["ttype"] == ttype and kind in (None, d["kind"])]
        expected = expected_lease_row(mine)
        assert {name: rows[ttype][name] for name in expected} == expected
    chartered = rows["chartered_lease"]
    assert chartered["median_converted_deposit"] == chartered["median_price"]
    monthly = rows["monthly_lease"]
    assert monthly["median_converted_deposit"] > monthly["median_price"]


def test_pyeong_converts_the_lease_figures_per_area(api: Api) -> None:
    rows = rows_of(api, {**LEASE, "transaction_type": "monthly_lease", "area_unit": "pyeong"})
    mine = [d for d in raw_leases() if d["ttype"] == "monthly_lease"]
    per = Fraction("3.305785")
    values = [rent_law.converted(d["deposit"], d["rent"], d["day"]) for d in mine]
    pairs = zip((v for v in values if v is not None), (d["area"] for d in mine), strict=True)
    monthly = rows["monthly_lease"]
    assert "median_converted_deposit_per_m2" not in monthly
    assert monthly["median_converted_deposit_per_pyeong"] == per_area(pairs, per=per)[1]  # type: ignore[index]


def test_a_pooled_row_says_so_and_sale_rows_have_no_lease_figures(api: Api) -> None:
    body = api.ok("pulse", {"sigungu_code": "11680", "period": "2025-06"})
    limitations = body["_meta"]["known_limitations"]
    assert any("renewals (갱신)" in text for text in limitations)
    assert not any("assumed unchanged" in text for text in limitations)  # 2025-06: checked
    for row in body["data"]:
        if row["transaction_type"] == "sale":
            assert row["lease_kind_mix"] == {}
            assert all(row[name] is None for name in LEASE_FIGURES)
            assert row["median_price_per_m2"] is not None
        else:
            assert row["median_price_per_m2"] is None
            assert row["median_deposit_per_m2"] is not None
    one_kind = api.ok("pulse", {**LEASE, "lease_kind": "new"})
    assert one_kind["_meta"]["query"]["lease_kind"] == "new"
    assert not any("renewals (갱신)" in t for t in one_kind["_meta"]["known_limitations"])


def test_series_rows_carry_the_same_lease_figures(api: Api) -> None:
    pulse_rows = rows_of(api, {**LEASE, "lease_kind": "renewal"})
    body = api.ok(
        "pulse/series",
        {
            "sigungu_code": "11680",
            "periods": "2025-06",
            "property_type": "officetel",
            "lease_kind": "renewal",
        },
    )
    assert {r["transaction_type"]: r for r in body["data"]} == pulse_rows
    assert body["_meta"]["query"]["lease_kind"] == "renewal"


def raw_sales() -> list[Raw]:
    return [
        {
            "key": property_type(item),
            "deal_type": DEAL_TYPES.get(item.get("dealingGbn", "").strip()),
            "buyer_type": PARTIES.get(item.get("buyerGbn", "").strip()),
        }
        for item in included(xml_items(NRG_GANGNAM))
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("deal_type", "brokered"),
        ("deal_type", "direct"),
        ("buyer_type", "individual"),
        ("buyer_type", "company"),
    ],
)
def test_deal_and_buyer_types_keep_the_deals_rtms_says(api: Api, name: str, value: str) -> None:
    base = {"sigungu_code": "11680", "period": "2025-06", "transaction_type": "sale"}
    body = api.ok("pulse", {**base, name: value})
    assert body["_meta"]["query"][name] == value
    served = {r["property_type"]: r for r in body["data"] if r["property_type"] != "officetel"}
    counts = Counter(d["key"] for d in raw_sales() if d[name] == value)
    assert {k: r["sample_count"] for k, r in served.items()} == {
        k: n for k, n in counts.items() if n >= 2
    }
    for ptype, row in served.items():
        assert row[name] == value
        assert len(listed(api, row["transactions_url"])) == counts[ptype]
    records = api.ok(
        "transactions",
        {**base, "property_type": "office", name: value, "limit": "1000"},
    )["data"]
    assert len(records) == counts["office"]


def test_dimensions_count_lease_kinds_deal_and_buyer_types(api: Api) -> None:
    data = api.ok("dimensions", {})["data"]
    leases = Counter(
        KINDS.get(i["contractType"].strip(), "unknown") for i in included(xml_items(OFFI_RENT))
    )
    sales = [
        i for path in (NRG_GANGNAM, NRG_JONGNO_PAGE, OFFI_TRADE) for i in included(xml_items(path))
    ]
    deal_types = Counter(DEAL_TYPES.get(i.get("dealingGbn", "").strip(), "unknown") for i in sales)
    buyers = Counter(PARTIES.get(i.get("buyerGbn", "").strip(), "unknown") for i in sales)

    def ranked(counter: Counter[str]) -> list[dict[str, Any]]:
        items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
        return [{"value": v, "sample_count": n} for v, n in items]

    assert data["lease_kinds"] == ranked(leases)
    assert data["deal_types"] == ranked(deal_types)
    assert data["buyer_types"] == ranked(buyers)


@pytest.mark.parametrize("endpoint", ["pulse", "pulse/series", "transactions"])
@pytest.mark.parametrize(
    "params",
    [
        {"lease_kind": "first"},
        {"deal_type": "agent"},
        {"buyer_type": "person"},
        {"lease_kind": "new", "transaction_type": "sale"},
        {"deal_type": "direct", "transaction_type": "chartered_lease"},
        {"lease_kind": "renewal", "buyer_type": "company"},
    ],
)
def test_bad_or_contradictory_contract_filters_are_400(
    api: Api, endpoint: str, params: dict[str, str]
) -> None:
    period = {"periods": "2025-06"} if endpoint == "pulse/series" else {"period": "2025-06"}
    response = api.get(endpoint, {"sigungu_code": "11680", **period, **params})
    error = assert_error(response, 400, "INVALID_PARAMS")
    assert error["hint"]
