"""Building type and prices per area through HTTP on the real MOLIT responses, SQLite and
PostgreSQL (issue 14).

Every figure is recomputed from the raw XML by ``realestate_support``'s independent
reading: ``building_type=unit`` and ``whole_building`` rows partition the combined row,
each equals the raw items of its type, and the per-m² (or per-pyeong) quartiles and the
land-price median equal a recomputation over contracts (issue 28: a bulk contract once,
total price over total area).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from svc_server.store import Store
from tests.http.realestate_support import (
    M2_PER_PYEONG,
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    building_type,
    contract_groups,
    contract_price,
    expected_stats,
    included,
    make_app,
    manwon,
    per_area,
    total_area,
    type_mix,
    xml_items,
)
from tests.http.test_realestate_pulse import property_type

Raw = dict[str, Any]
CASES = (("11680", "2025-06"), ("11110", "2025-05"))


def raw_deals(path: Path, month: str) -> list[Raw]:
    """The contracts of one file's included items in ``month``, as the documented
    mapping and grouping rule read them: a bulk contract once, with its total price,
    total area and total land area (issue 28)."""
    out: list[Raw] = []
    items = [
        item
        for item in included(xml_items(path))
        if f"{int(item['dealYear']):04d}-{int(item['dealMonth']):02d}" == month
    ]
    for group in contract_groups(items, path.name):
        item = group[0]
        if "excluUseAr" not in item:
            ptype, ttype, tag = property_type(item), "sale", "dealAmount"
        elif "deposit" in item:
            ptype, tag = "officetel", "deposit"
            ttype = "monthly_lease" if manwon(item["monthlyRent"]) else "chartered_lease"
        else:
            ptype, ttype, tag = "officetel", "sale", "dealAmount"
        out.append(
            {
                "items": group,
                "key": (ptype, ttype),
                "type": building_type(item),
                "price": contract_price(group, tag),
                "area": total_area(group, "buildingAr" if "buildingAr" in item else "excluUseAr"),
                "land": total_area(group, "plottageAr"),
            }
        )
    return out


def raw_of(code: str, month: str) -> list[Raw]:
    files = [NRG_GANGNAM, OFFI_TRADE, OFFI_RENT] if code == "11680" else [NRG_JONGNO_PAGE]
    return [d for path in files for d in raw_deals(path, month)]


def use_mix(deals: list[Raw]) -> dict[str, int]:
    """Samples per published building use (``unknown`` where the item has none)."""
    uses = Counter(
        item.get("buildingUse", "").strip() or "unknown" for d in deals for item in d["items"]
    )
    return dict(sorted(uses.items()))


def expected_row(deals: list[Raw], per: Fraction, unit: str = "m2") -> dict[str, Any]:
    """The row's figures, its per-area fields named for ``unit``; a lease row names its
    per-area figures for deposits (issue 28)."""
    prices = sorted(d["price"] for d in deals)
    quartiles = expected_stats(prices)
    areas = per_area(((d["price"], d["area"]) for d in deals), per=per)
    whole = [d for d in deals if d["type"] == "whole_building"]
    land = per_area(((d["price"], d["land"]) for d in whole), per=per)
    sale = deals[0]["key"][1] == "sale"
    sale_areas, lease_areas = (areas, None) if sale else (None, areas)
    return {
        "sample_count": sum(len(d["items"]) for d in deals),
        "contract_count": len(deals),
        "bulk_contracts": sum(len(d["items"]) > 1 for d in deals),
        "p25_price": quartiles["p25"],
        "median_price": quartiles["median"],
        "p75_price": quartiles["p75"],
        "building_type_mix": type_mix(item for d in deals for item in d["items"]),
        f"p25_price_per_{unit}": sale_areas[0] if sale_areas else None,
        f"median_price_per_{unit}": sale_areas[1] if sale_areas else None,
        f"p75_price_per_{unit}": sale_areas[2] if sale_areas else None,
        f"median_land_price_per_{unit}": land[1] if land and sale else None,
        f"p25_deposit_per_{unit}": lease_areas[0] if lease_areas else None,
        f"median_deposit_per_{unit}": lease_areas[1] if lease_areas else None,
        f"p75_deposit_per_{unit}": lease_areas[2] if lease_areas else None,
        "building_use_mix": use_mix(deals),
    }


def expected_rows(
    deals: list[Raw], per: Fraction, unit: str = "m2"
) -> dict[tuple[str, str], dict[str, Any]]:
    """The expected rows of contracts ``deals``: cohorts of at least 2 contracts."""
    groups: dict[tuple[str, str], list[Raw]] = {}
    for d in deals:
        groups.setdefault(d["key"], []).append(d)
    return {key: expected_row(g, per, unit) for key, g in groups.items() if len(g) >= 2}


def served(api: Api, params: dict[str, str]) -> tuple[dict[tuple[str, str], Any], Any]:
    response = api.get("pulse", params)
    if response.status_code == 404:
        return {}, response.get_json()["_meta"]
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    return {(r["property_type"], r["transaction_type"]): r for r in body["data"]}, body["_meta"]


def assert_matches(row: dict[str, Any], expected: dict[str, Any]) -> None:
    assert {name: row[name] for name in expected} == expected


@pytest.mark.parametrize(("code", "month"), CASES)
@pytest.mark.parametrize("unit", ["m2", "pyeong"])
def test_unit_and_whole_building_rows_partition_the_combined_row(
    api: Api, code: str, month: str, unit: str
) -> None:
    per = M2_PER_PYEONG if unit == "pyeong" else Fraction(1)
    deals = raw_of(code, month)
    assert {d["type"] for d in deals} == {"unit", "whole_building"} or code == "11110"
    base = {"sigungu_code": code, "period": month, "area_unit": unit}
    combined, meta = served(api, base)
    assert meta["query"]["area_unit"] == unit and meta["query"]["building_type"] is None
    assert combined.keys() == expected_rows(deals, per, unit).keys()
    for key, expected in expected_rows(deals, per, unit).items():
        assert combined[key]["building_type"] is None
        assert_matches(combined[key], expected)
    parts: dict[str, dict[tuple[str, str], Any]] = {}
    for btype in ("unit", "whole_building"):
        parts[btype], part_meta = served(api, {**base, "building_type": btype})
        assert part_meta["query"]["building_type"] == btype
        wanted = expected_rows([d for d in deals if d["type"] == btype], per, unit)
        assert parts[btype].keys() == wanted.keys()
        for key, expected in wanted.items():
            assert parts[btype][key]["building_type"] == btype
            assert not parts[btype][key]["confidence_factors"]["mixed_building_types"]
            assert_matches(parts[btype][key], expected)
    for key, row in combined.items():
        mix = row["building_type_mix"]
        assert sum(mix.values()) == row["sample_count"] and "unknown" not in mix
        for btype in ("unit", "whole_building"):
            typed = [d for d in deals if d["key"] == key and d["type"] == btype]
            part = parts[btype].get(key)
            got = (part["sample_count"], part["contract_count"]) if part else (0, 0)
            assert got == ((mix[btype], len(typed)) if len(typed) >= 2 else (0, 0))


def test_a_row_mixing_types_says_so_and_is_never_high(api: Api) -> None:
    rows, meta = served(api, {"sigungu_code": "11680", "period": "2025-06"})
    mixed = [r for r in rows.values() if len(r["building_type_mix"]) == 2]
    assert mixed, "the Gangnam sample mixes whole buildings and units"
    for row in rows.values():
        flag = row["confidence_factors"]["mixed_building_types"]
        assert flag is (row in mixed)
        if flag:
            assert row["confidence"] != "high"
            assert "whole buildings and units" in row["confidence_factors"]["ladder_reason"]
    assert any("RTMS 일반" in text for text in meta["known_limitations"])
    officetel = rows[("officetel", "sale")]
    assert officetel["building_type_mix"] == {"unit": officetel["sample_count"]}


def test_series_rows_carry_the_same_figures(api: Api) -> None:
    pulse_rows, _ = served(
        api, {"sigungu_code": "11680", "period": "2025-06", "building_type": "unit"}
    )
    body = api.ok(
        "pulse/series", {"sigungu_code": "11680", "periods": "2025-06", "building_type": "unit"}
    )
    assert {(r["property_type"], r["transaction_type"]): r for r in body["data"]} == pulse_rows
    assert body["_meta"]["query"]["building_type"] == "unit"


def test_unknown_building_types_and_area_units_are_refused(api: Api) -> None:
    for params in ({"building_type": "house"}, {"area_unit": "acre"}):
        response = api.get("pulse", {"sigungu_code": "11680", **params})
        assert_error(response, 400, "INVALID_PARAMS")


def test_the_indices_envelope_states_the_cap_rate_method(molit_store: Store) -> None:
    api = Api(make_app(molit_store))
    response = api.get("indices", {"sigungu_code": "11680", "period": "2025"})
    meta = response.get_json()["_meta"]
    assert "value_pct x 4" in meta["cap_rate_method"]
