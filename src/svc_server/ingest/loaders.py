"""The loaders: for each ``svc ingest`` kind, a pure parse of a file's bytes into the
``Load`` that ``commit`` writes. Parsing happens before any transaction opens, so an
unreadable file changes nothing. A new data source is one entry of ``LOADERS``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence

import attrs

from svc_core.errors import InvalidParams, SourceError
from svc_core.realestate.loads import parse_transactions as parse_rtms
from svc_core.sources import ParseResult, rone, samples
from svc_core.sources import markets as market_source
from svc_core.sources.datasets import RtmsDataset
from svc_core.sync.rone import era_of
from svc_server.ingest.load import Load, Progress
from svc_server.ingest.markets import ACTIVITY, LISTINGS

AreaMap = Mapping[str, Sequence[str]]


@attrs.frozen(kw_only=True)
class Options:
    """What a load may be told besides the bytes (R-ONE options apply to rone-index)."""

    path: str
    area_map: AreaMap | None = None
    table_name: str | None = None
    property_type: str | None = None
    progress: Progress | None = None


Loader = Callable[[bytes, Options], Load]
"""One ingest kind: the bytes of a file to the load that writes it (pure)."""


def parse_transaction_file(kind: str, data: bytes, *, path: str) -> ParseResult:
    """Read a transaction file of ingest ``kind`` (format told by content); pure."""
    if kind == "samples":
        return samples.parse_samples(data, path=path)
    dataset = RtmsDataset.of_ingest_kind(kind)
    if dataset is None:
        raise InvalidParams(f"{kind!r} is not a transaction kind.")
    return parse_rtms(data, dataset, path=path)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _transaction_loader(kind: str) -> Loader:
    def load(data: bytes, options: Options) -> Load:
        result = parse_transaction_file(kind, data, path=options.path)
        return Load(
            kind=kind,
            report=result.report,
            digest=_digest(data),
            transactions=result,
            file_kind=kind,
            progress=options.progress,
        )

    return load


def _rone(data: bytes, options: Options) -> Load:
    try:
        result = rone.parse_rone(
            data,
            path=options.path,
            area_map=options.area_map if options.area_map is not None else rone.DEFAULT_AREA_MAP,
            table_name=options.table_name,
            property_type=options.property_type,
            era=era_of(options.table_name or ""),
        )
    except SourceError:
        raise
    except ValueError as exc:
        raise SourceError(f"bad market-area table: {exc}", path=options.path) from None
    return Load(
        kind="rone-index",
        report=result.report,
        digest=_digest(data),
        indices=result.observations,
        progress=options.progress,
    )


def _listings(data: bytes, options: Options) -> Load:
    listings, report = market_source.parse_listings(data, path=options.path)
    return Load(kind=LISTINGS, report=report, digest=_digest(data), listings=listings)


def _activity(data: bytes, options: Options) -> Load:
    activities, report = market_source.parse_activity(data, path=options.path)
    return Load(
        kind=ACTIVITY,
        report=report,
        digest=_digest(data),
        activity=activities,
        activity_file=data,
    )


LOADERS: dict[str, Loader] = {
    **{d.ingest_kind: _transaction_loader(d.ingest_kind) for d in RtmsDataset},
    "rone-index": _rone,
    "samples": _transaction_loader("samples"),
    LISTINGS: _listings,
    ACTIVITY: _activity,
}
"""Every ingest kind's loader, in the order ``svc ingest --help`` lists them."""
