"""Building type and prices per area (issue 14): read from every source, kept out of the
natural key, split by the pulse, and summarised per m² or per pyeong."""

from __future__ import annotations

import datetime
from collections import Counter
from fractions import Fraction
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.cohorts import stats
from svc_core.demo import realestate as demo
from svc_core.errors import InvalidParams
from svc_core.models import BUILDING_TYPES, Transaction
from svc_core.realestate import pulse, query, series
from svc_core.realestate.pulse import Deal
from svc_core.sources.rtms import parse_rtms
from svc_core.sources.rtms_csv import parse_rtms_csv
from tests.http.realestate_support import MOLIT, building_type, included, xml_items

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MONTHS = ("2025-04", "2025-05", "2025-06")


def _transaction(**changes: object) -> Transaction:
    fields: dict[str, object] = {
        "source": "rtms_official",
        "sigungu_code": "11680",
        "sigungu": "강남구",
        "dong": "역삼동",
        "property_type": "office",
        "transaction_type": "sale",
        "deal_date": datetime.date(2025, 6, 1),
        "price_krw": 10**9,
        "monthly_rent_krw": None,
        "area_m2": 100.0,
        "natural_key": "k",
        **changes,
    }
    return Transaction(**fields)  # type: ignore[arg-type]


def test_a_transaction_refuses_an_unknown_building_type_and_a_bad_land_area() -> None:
    assert _transaction(building_type="whole_building", land_area_m2=50.0).land_area_m2 == 50.0
    with pytest.raises(ValueError, match="building_type"):
        _transaction(building_type="일반")
    with pytest.raises(ValueError, match="land_area_m2"):
        _transaction(land_area_m2=0.0)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("NRG_11680_202506.xml", "commercial"),
        ("NRG_11110_202505.xml", "commercial"),
        ("OFFICETEL_11680_202506.xml", "officetel_trade"),
    ],
)
def test_rtms_building_types_follow_the_raw_items(name: str, kind: str) -> None:
    path = MOLIT / name
    items = included(xml_items(path))
    parsed = parse_rtms(path.read_bytes(), kind).transactions
    assert [t.building_type for t in parsed] == [building_type(i) for i in items]
    lands = [
        float(i["plottageAr"]) if building_type(i) == "whole_building" else None for i in items
    ]
    assert [t.land_area_m2 for t in parsed] == lands


def test_the_building_type_stays_out_of_the_natural_key() -> None:
    path = MOLIT / "NRG_11680_202506.xml"
    data = path.read_bytes()
    typed = parse_rtms(data, "commercial").transactions
    untyped = parse_rtms(data.replace("집합".encode(), b" "), "commercial").transactions
    assert [t.natural_key for t in typed] != [t.natural_key for t in untyped]  # item changed
    same = parse_rtms(data, "commercial").transactions
    assert [t.natural_key for t in typed] == [t.natural_key for t in same]
    assert {t.building_type for t in untyped} <= {"whole_building", None}


def test_rtms_csv_reads_the_type_column_and_land_area() -> None:
    path = FIXTURES / "rtms_csv" / "commercial_11680_202506_cp949.csv"
    parsed = parse_rtms_csv(path.read_bytes(), "commercial").transactions
    kinds = Counter(t.building_type for t in parsed)
    assert set(kinds) <= {"whole_building", "unit"} and kinds["unit"] > 0
    assert all(
        (t.land_area_m2 is not None) <= (t.building_type == "whole_building") for t in parsed
    )
    offi = FIXTURES / "rtms_csv" / "officetel_trade_11680_202506_cp949.csv"
    assert {
        t.building_type for t in parse_rtms_csv(offi.read_bytes(), "officetel_trade").transactions
    } == {"unit"}


def test_demo_data_splits_offices_and_keeps_officetels_units() -> None:
    records = [t for t, _ in zip(demo.demo_transactions(7), range(20_000), strict=False)]
    by_type = Counter((t.property_type, t.building_type) for t in records)
    assert by_type[("office", "whole_building")] > 0 and by_type[("office", "unit")] > 0
    assert by_type[("officetel", "whole_building")] == 0
    whole = [t for t in records if t.building_type == "whole_building"]
    assert all(t.land_area_m2 for t in whole)
    assert not any(t.land_area_m2 for t in records if t.building_type == "unit")


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=10**13),
            st.none() | st.floats(min_value=0.01, max_value=9e6),
        ),
        max_size=40,
    ),
    st.sampled_from(stats.AREA_UNITS),
)
def test_per_area_quartiles_lie_between_the_extremes(
    pairs: list[tuple[int, float | None]], unit: str
) -> None:
    found = stats.per_area_quartiles(pairs, area_unit=unit)
    per = stats.M2_PER_PYEONG if unit == "pyeong" else Fraction(1)
    ratios = [Fraction(p) * per / Fraction(repr(a)) for p, a in pairs if a]
    if not ratios:
        assert found is None
        return
    assert found is not None
    p25, mid, p75 = found
    assert round(min(ratios)) <= p25 <= mid <= p75 <= round(max(ratios))


def test_per_area_quartiles_by_hand() -> None:
    pairs = [(100, 10.0), (300, 10.0), (50, None), (900, 30.0)]
    # ratios 10, 30, 30: p25 is halfway from the first to the second (type 7)
    assert stats.per_area_quartiles(pairs) == (20, 30, 30)
    # per pyeong: 10 KRW/m² is 33.05785 KRW/pyeong
    assert stats.per_area_quartiles([(100, 10.0)], area_unit="pyeong") == (33, 33, 33)
    with pytest.raises(ValueError, match="area_unit"):
        stats.per_area_quartiles(pairs, area_unit="acre")


@st.composite
def typed_deals(draw: st.DrawFn) -> Deal:
    btype = draw(st.sampled_from(BUILDING_TYPES))
    return Deal(
        price=draw(st.integers(min_value=1, max_value=10**11)),
        monthly_rent=None,
        area=draw(st.none() | st.floats(min_value=1, max_value=5000)),
        source=draw(st.sampled_from(("rtms_official", "public_assessment"))),
        sigungu_code="11680",
        sigungu="강남구",
        dong=None,
        property_type=draw(st.sampled_from(("office", "retail"))),
        transaction_type="sale",
        month=draw(st.sampled_from(MONTHS)),
        building_type=btype,
        land_area=draw(st.none() | st.floats(min_value=1, max_value=5000))
        if btype == "whole_building"
        else None,
    )


@settings(max_examples=60)
@given(st.lists(typed_deals(), max_size=50))
def test_unit_and_whole_building_rows_partition_the_combined_row(items: list[Deal]) -> None:
    def rows(**params: str) -> dict[tuple[str, str], pulse.PulseRow]:
        q = query.parse_pulse({"sigungu_code": "11680", "period": "2025-Q2", **params})
        return {(r.property_type, r.transaction_type): r for r in pulse.pulse_rows(items, q)}

    combined = rows()
    split = {b: rows(building_type=b) for b in BUILDING_TYPES}
    for key, row in combined.items():
        assert row.building_type is None
        assert sum(row.building_type_mix.values()) == row.sample_count
        for b in BUILDING_TYPES:
            part = split[b].get(key)
            count = row.building_type_mix.get(b, 0)
            # a part below the 2-sample minimum has no row
            assert (part.sample_count if part else 0) == (count if count >= 2 else 0)
            if part:
                assert part.building_type == b and part.building_type_mix == {b: count}
                assert not part.confidence_factors.mixed_building_types
        mixed = len(row.building_type_mix) == 2
        assert row.confidence_factors.mixed_building_types is mixed
        if mixed:
            assert row.confidence != "high"


def test_a_mixed_row_names_the_mix_in_the_envelope_and_series_agree() -> None:
    def deal(price: int, btype: str) -> Deal:
        return Deal(
            price=price,
            monthly_rent=None,
            area=100.0,
            source="rtms_official",
            sigungu_code="11680",
            sigungu="강남구",
            dong=None,
            property_type="office",
            transaction_type="sale",
            month="2025-06",
            building_type=btype,
            land_area=50.0 if btype == "whole_building" else None,
        )

    items = [deal(10**9, "unit"), deal(3 * 10**9, "unit"), deal(5 * 10**10, "whole_building")]
    q = query.parse_pulse({"sigungu_code": "11680", "period": "2025-06"})
    [row] = pulse.pulse_rows(items, q)
    assert row.building_type_mix == {"unit": 2, "whole_building": 1}
    assert row.median_price_per_m2 == 3 * 10**7
    assert row.median_land_price_per_m2 == 10**9
    assert MIX_TEXT in pulse.MIX_LIMITATION
    sq = query.parse_series({"sigungu_code": "11680", "periods": "2025-06", "area_unit": "pyeong"})
    [per_pyeong] = series.series_rows(items, sq)
    assert per_pyeong.median_price_per_m2 == round(3 * 10**7 * stats.M2_PER_PYEONG)
    assert (row.area_unit, per_pyeong.area_unit) == ("m2", "pyeong")
    assert (
        attrs.evolve(
            per_pyeong,
            median_price_per_m2=row.median_price_per_m2,
            p25_price_per_m2=row.p25_price_per_m2,
            p75_price_per_m2=row.p75_price_per_m2,
            median_land_price_per_m2=row.median_land_price_per_m2,
            area_unit="m2",
        )
        == row
    )


MIX_TEXT = "mixes whole buildings"


def test_queries_refuse_unknown_building_types_and_area_units() -> None:
    with pytest.raises(InvalidParams, match="building_type"):
        query.parse_pulse({"sigungu_code": "11680", "building_type": "house"})
    with pytest.raises(InvalidParams, match="area_unit"):
        query.parse_series({"sigungu_code": "11680", "periods": "2025-06", "area_unit": "ft2"})
    q = query.parse_pulse({"sigungu_code": "11680", "building_type": "unit"})
    assert q.cohort.building_type == "unit" and q.area_unit == "m2"


# Areas close to each other (a few units in the last place apart) and prices that make
# exactly equal ratios with different pairs: where ordering by float could go wrong.
near_areas = st.sampled_from(
    [10.0, 10.000000000000002, 9.999999999999998, 20.0, 3.3, 6.6, 0.1, 0.30000000000000004]
)


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=10**13) | st.sampled_from([1, 2, 3, 33, 66]),
            st.none() | near_areas | st.floats(min_value=0.01, max_value=9e6),
        ),
        max_size=60,
    ),
    st.sampled_from(stats.AREA_UNITS),
)
def test_per_area_quartiles_are_those_of_the_exact_ratios(
    pairs: list[tuple[int, float | None]], unit: str
) -> None:
    """Ordered by float ratios with near ties ordered exactly, the quartiles are always
    those of every exact ratio sorted (what per_area_quartiles computed before)."""
    per = stats.M2_PER_PYEONG if unit == "pyeong" else Fraction(1)
    ratios = sorted(Fraction(p) * per / Fraction(repr(a)) for p, a in pairs if a)
    expected = (
        tuple(round(stats.quantile_exact(ratios, q)) for q in stats.QUARTERS) if ratios else None
    )
    assert stats.per_area_quartiles(pairs, area_unit=unit) == expected
    # and every position reads as the exact ratio sorted there (the rounding above
    # would hide a near tie put in the wrong order)
    assert list(stats._Ratios(pairs, per)) == ratios
