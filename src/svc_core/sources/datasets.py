"""The MOLIT RTMS datasets svc reads, each named once: a new RTMS service is one member.

A member carries every per-dataset fact svc uses: its name in ``svc sync rtms --kinds``
(``sync_name``, also the ``sync_months`` column and the kind of its district-months in
``source_months``), the kind ``svc ingest`` loads its files as (``ingest_kind``,
recognised by ``svc_core.sources.kind``), its readers' kind (``parse_kind``, the second
part of its records' natural keys; both follow from the sync name), the open API operation under the gateway's base URL
(``operation``), the prefix of MOLIT's file names (``file_prefix``), the columns of its
web CSV export (``csv_columns``), and the property and transaction types its records can
have, whether its deals can be partial shares (``partial_shares``: ``shareDealingType``
``지분``, excluded), and whether ``svc sync rtms`` reads it without ``--kinds``
(``synced_by_default``: factory/warehouse and land sales are read when named, so a sync
set up before they existed keeps its calls and its budget). Code passes members; the names are strings only where they are read from or
written to a command line, a file, a column or a key, through the ``of_*`` lookups.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class _Facts(NamedTuple):
    sync_name: str
    operation: str
    file_prefix: str
    description: str
    csv_columns: tuple[tuple[str, tuple[str, ...]], ...]
    """(role, the column names that can hold it) of each column a web CSV export needs."""
    property_types: tuple[str, ...]
    transaction_types: tuple[str, ...]
    partial_shares: bool
    synced_by_default: bool


_ADDRESS = ("address", ("시군구",))
"""The first column every web export needs: the full address."""
_CONTRACT_DAY = (("month", ("계약년월",)), ("day", ("계약일",)))
"""The last columns every web export needs: the contract's month and day."""
_SALE_AMOUNT = ("amount", ("거래금액(만원)",))
_BUILDING_SALE_COLUMNS = (
    _ADDRESS,
    ("buildingtype", ("유형",)),
    ("buildinguse", ("건축물주용도", "건물주용도")),
    ("area", ("전용/연면적(㎡)", "연면적(㎡)", "건물면적(㎡)")),
    _SALE_AMOUNT,
    *_CONTRACT_DAY,
)
"""The web export's columns of a building sale: commercial and factory/warehouse sales
publish the same 22 fields."""


class RtmsDataset(_Facts, enum.Enum):
    """One RTMS dataset: its names, what its files are, and the property and transaction
    types its records can have. Members are tuples: nothing about one can be changed."""

    COMMERCIAL = _Facts(
        sync_name="commercial",
        operation="RTMSDataSvcNrgTrade/getRTMSDataSvcNrgTrade",
        file_prefix="NRG_",
        description="a commercial-building sale file (RTMS NrgTrade)",
        csv_columns=_BUILDING_SALE_COLUMNS,
        property_types=("office", "retail", "commercial_complex", "mixed_use"),
        transaction_types=("sale",),
        partial_shares=True,
        synced_by_default=True,
    )
    OFFICETEL_TRADE = _Facts(
        sync_name="officetel-trade",
        operation="RTMSDataSvcOffiTrade/getRTMSDataSvcOffiTrade",
        file_prefix="OFFICETEL_",
        description="an officetel sale file (RTMS OffiTrade)",
        csv_columns=(_ADDRESS, ("area", ("전용면적(㎡)",)), _SALE_AMOUNT, *_CONTRACT_DAY),
        property_types=("officetel",),
        transaction_types=("sale",),
        partial_shares=False,
        synced_by_default=True,
    )
    OFFICETEL_RENT = _Facts(
        sync_name="officetel-rent",
        operation="RTMSDataSvcOffiRent/getRTMSDataSvcOffiRent",
        file_prefix="OFFICETEL_RENT_",
        description="an officetel lease file (RTMS OffiRent)",
        csv_columns=(
            _ADDRESS,
            ("area", ("전용면적(㎡)",)),
            ("amount", ("보증금(만원)",)),
            ("rent", ("월세금(만원)", "월세(만원)")),
            *_CONTRACT_DAY,
        ),
        property_types=("officetel",),
        transaction_types=("chartered_lease", "monthly_lease"),
        partial_shares=False,
        synced_by_default=True,
    )
    INDUSTRIAL = _Facts(
        sync_name="industrial",
        operation="RTMSDataSvcInduTrade/getRTMSDataSvcInduTrade",
        file_prefix="INDU_",
        description="a factory/warehouse sale file (RTMS InduTrade)",
        csv_columns=_BUILDING_SALE_COLUMNS,
        property_types=("industrial",),
        transaction_types=("sale",),
        partial_shares=True,
        synced_by_default=False,
    )
    LAND = _Facts(
        sync_name="land",
        operation="RTMSDataSvcLandTrade/getRTMSDataSvcLandTrade",
        file_prefix="LAND_",
        description="a land sale file (RTMS LandTrade)",
        csv_columns=(
            _ADDRESS,
            ("jimok", ("지목",)),
            ("area", ("계약면적(㎡)", "거래면적(㎡)")),
            _SALE_AMOUNT,
            *_CONTRACT_DAY,
        ),
        property_types=("land",),
        transaction_types=("sale",),
        partial_shares=True,
        synced_by_default=False,
    )

    @property
    def ingest_kind(self) -> str:
        """The kind ``svc ingest`` loads its files as: ``rtms-`` and the sync name."""
        return f"rtms-{self.sync_name}"

    @property
    def parse_kind(self) -> str:
        """Its readers' kind, the second part of its records' natural keys: the sync name
        with underscores (``officetel-trade`` reads as ``officetel_trade``)."""
        return self.sync_name.replace("-", "_")

    def carries(self, property_type: str, transaction_type: str) -> bool:
        """Whether the dataset's records can have these types."""
        return property_type in self.property_types and transaction_type in self.transaction_types

    @classmethod
    def of_sync_name(cls, name: str) -> RtmsDataset:
        """The dataset whose sync kind is ``name``; ValueError for another string."""
        for dataset in cls:
            if dataset.sync_name == name:
                return dataset
        raise ValueError(f"sync kind must be one of {', '.join(d.sync_name for d in cls)}")

    @classmethod
    def of_ingest_kind(cls, kind: str) -> RtmsDataset | None:
        """The dataset whose files ``svc ingest`` loads as ``kind``; None for another kind
        (not every ingest kind is an RTMS dataset's)."""
        return next((d for d in cls if d.ingest_kind == kind), None)

    @classmethod
    def of_reader(cls, kind: RtmsDataset | str) -> RtmsDataset | None:
        """``kind`` itself, or the dataset whose reader kind it names; None for another
        string (the library's readers also take the reader kind as a string)."""
        if isinstance(kind, RtmsDataset):
            return kind
        return next((d for d in cls if d.parse_kind == kind), None)

    @classmethod
    def of_parse_kind(cls, kind: RtmsDataset | str) -> RtmsDataset:
        """``of_reader``, with ValueError for a string that names no dataset."""
        found = cls.of_reader(kind)
        if found is None:
            raise ValueError(f"kind must be one of {', '.join(d.parse_kind for d in cls)}")
        return found

    @classmethod
    def of_file_name(cls, file_name: str) -> RtmsDataset | None:
        """The dataset of a file named as MOLIT names them (``NRG_11680_202506.xml`` is
        ``COMMERCIAL``; the longest matching prefix decides); None for another name."""
        base = file_name.replace("\\", "/").rsplit("/", 1)[-1].upper()
        matching = [d for d in cls if base.startswith(d.file_prefix)]
        return max(matching, key=lambda d: len(d.file_prefix), default=None)
