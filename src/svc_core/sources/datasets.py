"""The MOLIT RTMS datasets svc reads, each named once.

A dataset is named in four places: ``svc sync rtms --kinds`` (``sync_name``), the kind
``svc ingest`` loads its files as (``ingest_kind``, recognised by
``svc_core.sources.kind``), the kind its reader takes (``parse_kind``,
``svc_core.sources.rtms`` and ``rtms_csv``) and the open API operation under the
gateway's base URL (``operation``). The tables keyed by those names
(``svc_core.sync.rtms.SERVICES``, ``sources.rtms.KINDS``, ...) are views of this one.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class _Names(NamedTuple):
    sync_name: str
    ingest_kind: str
    parse_kind: str
    operation: str
    description: str
    property_types: tuple[str, ...]
    transaction_types: tuple[str, ...]


class RtmsDataset(_Names, enum.Enum):
    """One RTMS dataset: its names, what its files are, and the property and transaction
    types its records can have. Members are tuples: nothing about one can be changed."""

    COMMERCIAL = _Names(
        sync_name="commercial",
        ingest_kind="rtms-commercial",
        parse_kind="commercial",
        operation="RTMSDataSvcNrgTrade/getRTMSDataSvcNrgTrade",
        description="a commercial-building sale file (RTMS NrgTrade)",
        property_types=("office", "retail", "commercial_complex", "mixed_use"),
        transaction_types=("sale",),
    )
    OFFICETEL_TRADE = _Names(
        sync_name="officetel-trade",
        ingest_kind="rtms-officetel-trade",
        parse_kind="officetel_trade",
        operation="RTMSDataSvcOffiTrade/getRTMSDataSvcOffiTrade",
        description="an officetel sale file (RTMS OffiTrade)",
        property_types=("officetel",),
        transaction_types=("sale",),
    )
    OFFICETEL_RENT = _Names(
        sync_name="officetel-rent",
        ingest_kind="rtms-officetel-rent",
        parse_kind="officetel_rent",
        operation="RTMSDataSvcOffiRent/getRTMSDataSvcOffiRent",
        description="an officetel lease file (RTMS OffiRent)",
        property_types=("officetel",),
        transaction_types=("chartered_lease", "monthly_lease"),
    )

    @classmethod
    def of_parse_kind(cls, kind: str) -> RtmsDataset:
        """The dataset a reader's ``kind`` names; ValueError for any other string."""
        for dataset in cls:
            if dataset.parse_kind == kind:
                return dataset
        raise ValueError(f"kind must be one of {', '.join(d.parse_kind for d in cls)}")
