"""Recognising a source file's kind from its content (``svc_core.sources.kind``)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.kind import (
    KINDS,
    SHARED_FIELDS,
    candidates,
    describe,
    item_kinds,
    layout,
    recognise,
)
from svc_core.sources.markets import ACTIVITY_COLUMNS, LISTING_COLUMNS
from svc_core.sources.samples import HEADER as SAMPLES_HEADER

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TRUE_KINDS = {
    "molit/NRG_11110_202505.xml": "rtms-commercial",
    "molit/NRG_11680_202506.xml": "rtms-commercial",
    "molit/OFFICETEL_11680_202506.xml": "rtms-officetel-trade",
    "molit/OFFICETEL_RENT_11680_202506.xml": "rtms-officetel-rent",
    "molit/LAND_41830_202408.xml": "rtms-land",
    "molit/LAND_41830_202409.xml": "rtms-land",
    "molit_constructed/INDU_41830_202408.xml": "rtms-industrial",
    "rtms/nrg_11110_quirks.xml": "rtms-commercial",
    "rtms/nrg_11680_202506.json": "rtms-commercial",
    "rtms/nrg_old_korean_tags.xml": "rtms-commercial",
    "rtms/offi_trade_single_item.json": "rtms-officetel-trade",
    "rtms_csv/commercial_11680_202506_cp949.csv": "rtms-commercial",
    "rtms_csv/officetel_trade_11680_202506_cp949.csv": "rtms-officetel-trade",
    "rtms_csv/officetel_rent_11680_202103_old_utf8.csv": "rtms-officetel-rent",
    "rone/indices.csv": "rone-index",
    "rone/office_vacancy_openapi.json": "rone-index",
    "rone/no_data_openapi.json": "rone-index",
    "samples/samples.csv": "samples",
    "markets/listings.csv": "market-listings",
    "markets/listings_bom_reordered.csv": "market-listings",
    "markets/activity.csv": "market-activity",
}
ITEM = re.compile(rb"<item>.*?</item>", re.S)


@pytest.mark.parametrize(("name", "kind"), sorted(TRUE_KINDS.items()))
def test_every_fixture_is_recognised_as_its_true_kind(name: str, kind: str) -> None:
    data = (FIXTURES / name).read_bytes()
    if kind in SHARED_FIELDS:  # NrgTrade's fields: the content allows both, names neither
        assert candidates(data) == SHARED_FIELDS
        assert recognise(data) is None
        molit_name = RtmsDataset.of_ingest_kind(kind).file_prefix + "11680_202506.xml"
        assert recognise(data, molit_name) == kind
        assert recognise(data, "deals.xml") is None
    else:
        assert candidates(data) == (kind,)
        assert recognise(data) == recognise(data, "NRG_11680_202506.xml") == kind


def shows(data: bytes) -> str | None:
    """The kind standing for what the content allows (``layout``)."""
    found = candidates(data)
    return found[0] if found else None


@pytest.mark.parametrize("name", ["rtms/gateway_error.xml", "rtms/offi_rent_empty.json"])
def test_content_that_shows_no_kind_is_none(name: str) -> None:
    assert recognise((FIXTURES / name).read_bytes()) is None


def _page(items: list[bytes]) -> bytes:
    return (
        b"<response><header><resultCode>000</resultCode></header><body><items>"
        + b"".join(items)
        + b"</items></body></response>"
    )


SAMPLE_ITEMS = {
    kind: ITEM.findall((FIXTURES / "molit" / name).read_bytes())
    for kind, name in (
        ("rtms-commercial", "NRG_11680_202506.xml"),
        ("rtms-officetel-trade", "OFFICETEL_11680_202506.xml"),
        ("rtms-officetel-rent", "OFFICETEL_RENT_11680_202506.xml"),
        ("rtms-land", "LAND_41830_202408.xml"),
    )
}


@given(
    kind=st.sampled_from(sorted(SAMPLE_ITEMS)),
    picks=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=5),
)
def test_any_page_of_real_items_shows_its_kind(kind: str, picks: list[int]) -> None:
    items = SAMPLE_ITEMS[kind]
    assert shows(_page([items[i % len(items)] for i in picks])) == layout(kind)


@given(
    kind=st.sampled_from(sorted(SAMPLE_ITEMS)),
    index=st.integers(min_value=0, max_value=10_000),
)
def test_the_json_form_of_an_item_shows_the_same_kind(kind: str, index: int) -> None:
    item = SAMPLE_ITEMS[kind][index % len(SAMPLE_ITEMS[kind])].decode()
    fields = dict(re.findall(r"<([A-Za-z]+)>([^<]*)</\1>", item))
    doc = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": [fields]}}}}
    assert shows(json.dumps(doc, ensure_ascii=False).encode()) == layout(kind)


@given(
    columns=st.permutations(LISTING_COLUMNS) | st.permutations(ACTIVITY_COLUMNS),
    bom=st.booleans(),
)
def test_marketplace_headers_in_any_order(columns: list[str], bom: bool) -> None:
    data = ("\ufeff" if bom else "") + ",".join(columns) + "\r\nx,y\r\n"
    expected = "market-listings" if "list_price" in columns else "market-activity"
    assert recognise(data.encode()) == expected


def test_a_samples_header_with_a_column_missing_is_not_samples() -> None:
    assert recognise(",".join(SAMPLES_HEADER).encode()) == "samples"
    assert recognise(",".join(SAMPLES_HEADER[:-1]).encode()) is None


@given(st.binary(max_size=2000))
def test_any_bytes_give_a_kind_or_none_and_never_raise(data: bytes) -> None:
    assert recognise(data) in (*KINDS, None)


def test_every_kind_is_described() -> None:
    assert all(describe(k) != k for k in KINDS)
    assert describe("other") == "other"


# Item by item -------------------------------------------------------------------------


def _items(name: str) -> list[bytes]:
    return ITEM.findall((FIXTURES / "molit" / name).read_bytes())


SAMPLE_ITEMS = {
    "rtms-commercial": _items("NRG_11680_202506.xml"),
    "rtms-officetel-trade": _items("OFFICETEL_11680_202506.xml"),
    "rtms-officetel-rent": _items("OFFICETEL_RENT_11680_202506.xml"),
    "rtms-land": _items("LAND_41830_202408.xml"),
}


@pytest.mark.parametrize(("path", "kind"), sorted(TRUE_KINDS.items()))
def test_every_real_file_shows_at_most_its_own_kind_item_by_item(path: str, kind: str) -> None:
    shown = item_kinds((FIXTURES / path).read_bytes())
    assert set(shown) <= {layout(kind)}


@given(
    picks=st.lists(
        st.tuples(st.sampled_from(sorted(SAMPLE_ITEMS)), st.integers(0, 50)), max_size=12
    ),
    as_json=st.booleans(),
)
def test_item_kinds_counts_each_item_by_its_own_tags(
    picks: list[tuple[str, int]], as_json: bool
) -> None:
    chosen = [(kind, SAMPLE_ITEMS[kind][i % len(SAMPLE_ITEMS[kind])]) for kind, i in picks]
    if as_json:
        items = [
            {c.tag: c.text or "" for c in ET.fromstring(raw)}  # noqa: S314 - own fixtures
            for _, raw in chosen
        ]
        doc = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": items}}}}
        data = json.dumps(doc, ensure_ascii=False).encode()
    else:
        data = b"<response><body><items>" + b"".join(r for _, r in chosen) + b"</items></body>"
    expected: dict[str, int] = {}
    for kind, _ in chosen:
        expected[kind] = expected.get(kind, 0) + 1
    assert item_kinds(data) == expected
    if len(expected) == 1:
        assert shows(data) == next(iter(expected))
