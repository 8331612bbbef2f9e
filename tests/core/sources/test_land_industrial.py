"""Land and factory/warehouse sales (RTMS LandTrade and InduTrade): the readers' figures
recomputed from the raw items of the real land samples by an oracle written here
(ElementTree, fractions, its own grouping), never by svc's code."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.cohorts.stats import Sample, contracts, per_area_quartiles, sample_of, summarize
from svc_core.models import Transaction
from svc_core.sources import kind, rtms
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.land import LAND_CATEGORIES, ZONES, zone_of
from tests.http.realestate_support import type7

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LAND = {month: FIXTURES / "molit" / f"LAND_41830_{month}.xml" for month in ("202408", "202409")}
INDU = FIXTURES / "molit_constructed" / "INDU_41830_202408.xml"


def raw_items(path: Path) -> list[dict[str, str]]:
    root = ET.fromstring(path.read_bytes())  # noqa: S314 - the repository's own samples
    return [{f.tag: (f.text or "") for f in item} for item in root.iter("item")]


def kept(items: list[dict[str, str]]) -> list[dict[str, str]]:
    return [
        i
        for i in items
        if i["cdealType"].strip() != "O" and i["shareDealingType"].strip() != "지분"
    ]


def cohort_samples(records: list[Transaction]) -> list[Sample]:
    return [sample_of(t) for t in records]


def oracle(items: list[dict[str, str]]) -> dict[str, object]:
    """Rows, contracts (same 읍면동 and 리, masked lot, day and deal type), and quartiles of
    the contracts' prices (KRW) and prices per m² of land."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for i in items:
        groups[(i["umdNm"], i["jibun"], i["dealDay"], i["dealingGbn"])].append(i)
    prices = [
        Fraction(sum(int(i["dealAmount"].replace(",", "")) for i in g) * 10_000)
        for g in groups.values()
    ]
    per_m2 = [
        Fraction(sum(int(i["dealAmount"].replace(",", "")) for i in g) * 10_000)
        / sum(Fraction(i["dealArea"]) for i in g)
        for g in groups.values()
    ]
    return {
        "rows": len(items),
        "contracts": len(groups),
        "price": type7(prices),
        "per_m2": type7(per_m2),
    }


@pytest.mark.parametrize(
    ("month", "read", "cancelled", "share", "both"),
    [("202408", 526, 46, 263, 17), ("202409", 510, 58, 267, 20)],
)
def test_land_exclusions_are_counted_as_the_files_show(
    month: str, read: int, cancelled: int, share: int, both: int
) -> None:
    items = raw_items(LAND[month])
    assert len(items) == read
    assert sum(i["cdealType"].strip() == "O" for i in items) == cancelled
    assert sum(i["shareDealingType"].strip() == "지분" for i in items) == share
    result = rtms.parse_rtms(LAND[month].read_bytes(), RtmsDataset.LAND)
    # a deal both cancelled and a share counts once, as cancelled
    assert result.report.excluded == {"cancelled": cancelled, "partial_share": share - both}
    assert len(result.transactions) == read - cancelled - share + both
    assert {t.property_type for t in result.transactions} == {"land"}
    assert all(t.seller_type is None and t.buyer_type is None for t in result.transactions)


@pytest.mark.parametrize("month", sorted(LAND))
def test_land_figures_by_category_and_zone_equal_the_oracle(month: str) -> None:
    items = kept(raw_items(LAND[month]))
    records = rtms.parse_rtms(LAND[month].read_bytes(), "land").transactions
    for field, raw_field, normal in (
        ("land_category", "jimok", lambda v: v),
        ("zoning", "landUse", zone_of),
    ):
        values = Counter(normal(i[raw_field]) for i in items)
        assert values == Counter(getattr(t, field) for t in records)
        for value, n in values.items():
            cohort = [t for t in records if getattr(t, field) == value]
            expected = oracle([i for i in items if normal(i[raw_field]) == value])
            assert len(cohort) == expected["rows"] == n
            summary = summarize(cohort_samples(cohort))
            if expected["contracts"] < 2:
                assert summary is None
                continue
            assert summary is not None
            assert summary.contract_count == expected["contracts"]
            prices = (summary.p25_price, summary.median_price, summary.p75_price)
            assert prices == expected["price"], (field, value)
            grouped = contracts(cohort_samples(cohort))
            per_area = per_area_quartiles((c.price, c.area) for c in grouped)
            assert per_area == expected["per_m2"], (field, value)


def test_every_land_category_and_zone_of_the_samples_is_a_known_one() -> None:
    for path in LAND.values():
        items = raw_items(path)
        assert {i["jimok"] for i in items} <= set(LAND_CATEGORIES)
        assert {zone_of(i["landUse"]) for i in items} <= set(ZONES)
    # the land service's 자연환경보전 has no suffix, the commercial service none either
    assert zone_of("자연환경보전") == zone_of("자연환경보전지역") == "자연환경보전지역"


@given(st.sampled_from(ZONES), st.sampled_from(["", " ", "  "]))
def test_short_and_long_forms_name_one_zone(zone: str, pad: str) -> None:
    short = zone.removesuffix("지역").removesuffix("구역")
    assert zone_of(pad + short + pad) == zone_of(zone) == zone
    assert zone_of(zone_of(short)) == zone


@given(st.text(min_size=1, max_size=12))
def test_an_unknown_zone_is_kept_as_published(text: str) -> None:
    found = zone_of(text)
    stripped = "".join(text.split())
    assert found is None if not stripped else found in (*ZONES, stripped)


def test_a_factory_file_cannot_be_told_from_a_commercial_one_by_content() -> None:
    data = INDU.read_bytes()
    nrg = (FIXTURES / "molit" / "NRG_11680_202506.xml").read_bytes()
    both = (RtmsDataset.COMMERCIAL.ingest_kind, RtmsDataset.INDUSTRIAL.ingest_kind)
    assert kind.candidates(data) == kind.candidates(nrg) == both
    assert kind.recognise(data) is None
    assert kind.recognise(nrg) is None
    # MOLIT's file names tell them apart; another name does not
    assert kind.recognise(data, "INDU_41830_202408.xml") == "rtms-industrial"
    assert kind.recognise(nrg, "NRG_11680_202506.xml") == "rtms-commercial"
    assert kind.recognise(data, "factories.xml") is None
    line = kind.undecided(both, "factories.xml")
    assert "\n" not in line
    assert "rtms-commercial" in line and "rtms-industrial" in line


def test_factory_and_warehouse_sales_read_with_their_use() -> None:
    result = rtms.parse_rtms(INDU.read_bytes(), RtmsDataset.INDUSTRIAL)
    items = raw_items(INDU)
    assert result.report.read == len(items) == 14
    assert result.report.excluded == {"cancelled": 1, "partial_share": 1}
    records = result.transactions
    assert {t.property_type for t in records} == {"industrial"}
    uses = Counter(t.industrial_use for t in records)
    assert uses == {"factory": 5, "warehouse": 5, "other": 2}
    whole = [t for t in records if t.building_type == "whole_building"]
    assert all(t.land_area_m2 is not None for t in whole)
    assert {t.building_type for t in records} == {"whole_building", "unit"}
    assert {t.zoning for t in records} >= {"계획관리지역", "보전관리지역"}
    # the same bytes read as commercial sales are other property types: never both
    as_commercial = rtms.parse_rtms(INDU.read_bytes(), RtmsDataset.COMMERCIAL).transactions
    assert "industrial" not in {t.property_type for t in as_commercial}
