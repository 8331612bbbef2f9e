"""One name per RTMS dataset (``svc_core.sources.datasets.RtmsDataset``): the reader, the sync
and kind detection use the same three datasets, and a file each recognises is read by
the reader of that dataset into records of the dataset's types."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_core.sources import kind, rtms, rtms_csv
from svc_core.sources.datasets import RtmsDataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILES = {
    "molit/NRG_11680_202506.xml": RtmsDataset.COMMERCIAL,
    "molit/OFFICETEL_11680_202506.xml": RtmsDataset.OFFICETEL_TRADE,
    "molit/OFFICETEL_RENT_11680_202506.xml": RtmsDataset.OFFICETEL_RENT,
    "rtms/nrg_11680_202506.json": RtmsDataset.COMMERCIAL,
    "rtms_csv/commercial_11680_202506_cp949.csv": RtmsDataset.COMMERCIAL,
    "rtms_csv/officetel_trade_11680_202506_cp949.csv": RtmsDataset.OFFICETEL_TRADE,
    "rtms_csv/officetel_rent_11680_202103_old_utf8.csv": RtmsDataset.OFFICETEL_RENT,
    "molit/LAND_41830_202408.xml": RtmsDataset.LAND,
    "molit_constructed/INDU_41830_202408.xml": RtmsDataset.INDUSTRIAL,
}


def test_every_name_of_a_dataset_leads_back_to_it() -> None:
    datasets = list(RtmsDataset)
    assert [d.sync_name for d in datasets] == [
        "commercial",
        "officetel-trade",
        "officetel-rent",
        "industrial",
        "land",
    ]
    assert [d.ingest_kind for d in datasets] == [k for k in kind.KINDS if k.startswith("rtms-")]
    assert RtmsDataset.OFFICETEL_RENT.operation == "RTMSDataSvcOffiRent/getRTMSDataSvcOffiRent"
    for d in datasets:
        assert RtmsDataset.of_sync_name(d.sync_name) is d
        assert RtmsDataset.of_ingest_kind(d.ingest_kind) is d
        assert RtmsDataset.of_parse_kind(d.parse_kind) is d
        assert RtmsDataset.of_parse_kind(d) is d
        assert RtmsDataset.of_file_name(f"{d.file_prefix}11680_202506.xml") is d
        assert kind.describe(d.ingest_kind) == d.description
    # every name is someone's and no two datasets share one
    for field in ("sync_name", "ingest_kind", "parse_kind", "operation", "description"):
        assert len({getattr(d, field) for d in datasets}) == len(datasets), field
    assert RtmsDataset.of_ingest_kind("samples") is None
    assert RtmsDataset.of_file_name("samples.csv") is None
    with pytest.raises(ValueError, match="commercial, officetel-trade, officetel-rent, industrial"):
        RtmsDataset.of_sync_name("officetel_rent")


def test_a_dataset_cannot_be_changed() -> None:
    with pytest.raises(AttributeError):
        RtmsDataset.COMMERCIAL.parse_kind = "officetel_trade"  # type: ignore[misc]
    assert RtmsDataset.COMMERCIAL.parse_kind == "commercial"


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_recognised_file_reads_as_its_datasets_records(name: str) -> None:
    dataset = FILES[name]
    data = (FIXTURES / name).read_bytes()
    assert kind.recognise(data, Path(name).name) == dataset.ingest_kind or (
        dataset.ingest_kind in kind.candidates(data) == kind.SHARED_FIELDS
    )
    reader = rtms_csv.parse_rtms_csv if name.endswith(".csv") else rtms.parse_rtms
    result = reader(data, dataset.parse_kind, path=name)
    assert result.transactions
    assert {r.property_type for r in result.transactions} <= set(dataset.property_types)
    assert {r.transaction_type for r in result.transactions} <= set(dataset.transaction_types)


def test_an_unknown_reader_kind_is_refused() -> None:
    assert RtmsDataset.of_parse_kind("officetel_rent") is RtmsDataset.OFFICETEL_RENT
    for reader in (rtms.parse_rtms, rtms_csv.parse_rtms_csv):
        with pytest.raises(ValueError, match="commercial, officetel_trade, officetel_rent"):
            reader(b"", "officetel-rent")
