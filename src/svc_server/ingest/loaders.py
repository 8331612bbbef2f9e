"""The loaders: for each ingest kind, a pure parse (bytes → records and a report) and a
write (records → store, inside the caller's transaction).

Parsing happens before any transaction opens, so an unreadable file changes nothing;
writing returns the finished ``LoadReport`` (loaded, duplicate, retracted counted).
``write_transactions`` is shared with ``svc sync``, which writes a month read from the
API exactly as ``svc ingest`` writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from svc_core.errors import InvalidParams, SourceError
from svc_core.markets import Activity, Listing
from svc_core.models import LoadReport
from svc_core.sources import IndexParseResult, ParseResult, rone, rtms, rtms_csv, samples
from svc_core.sources import markets as market_source
from svc_server.services import completeness, coverage, markets_ingest
from svc_server.store import Store
from svc_server.store.base import Tx

RTMS_KINDS = {
    "rtms-commercial": "commercial",
    "rtms-officetel-trade": "officetel_trade",
    "rtms-officetel-rent": "officetel_rent",
}
Progress = Callable[[int, int], None]
"""``progress(done, total)``: records written so far out of the file's records."""
AreaMap = Mapping[str, Sequence[str]]


@attrs.frozen(kw_only=True)
class Options:
    """What a load may be told besides the bytes (R-ONE options apply to rone-index);
    ``load_id`` is the id of the load's ``ingest_log`` row, which its records carry."""

    path: str
    area_map: AreaMap | None = None
    table_name: str | None = None
    property_type: str | None = None
    progress: Progress | None = None
    load_id: str | None = None
    now: float = 0.0


@attrs.frozen(kw_only=True)
class Parsed:
    """A file read by a loader's ``parse``: its report and the records to write."""

    report: LoadReport
    records: Any
    data: bytes


@attrs.frozen(kw_only=True)
class Loader:
    """One ingest kind: ``parse`` reads (pure, before any write), ``write`` stores the
    records in the given transaction and returns the finished report."""

    kind: str
    parse: Callable[[bytes, Options], Parsed]
    write: Callable[[Store, Tx, Parsed, Options], LoadReport]


def _looks_structured(data: bytes) -> bool:
    """XML or JSON (the open API) rather than the web site's CSV export."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return head in (b"<", b"{", b"[")


def parse_transactions(kind: str, data: bytes, *, path: str) -> ParseResult:
    """Read a transaction file of ``kind`` (format detected); nothing is written."""
    if kind == "samples":
        return samples.parse_samples(data, path=path)
    if kind not in RTMS_KINDS:
        raise InvalidParams(f"{kind!r} is not a transaction kind.")
    if _looks_structured(data):
        return rtms.parse_rtms(data, RTMS_KINDS[kind], path=path)
    return rtms_csv.parse_rtms_csv(data, RTMS_KINDS[kind], path=path)


def write_transactions(
    store: Store,
    tx: Tx,
    result: ParseResult,
    *,
    also_retract: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
    load_id: str | None = None,
) -> LoadReport:
    """Retract cancelled deals (and ``also_retract``), insert the new ones, keep the
    excluded ones with their reason and rebuild the coverage of every district touched
    (or whose stored records got their building type), inside ``tx``; the records carry
    ``load_id`` (the load's ``ingest_log`` id)."""
    report = result.report
    touched = {t.sigungu_code for t in result.transactions}
    gone = [*result.retracted_keys, *also_retract]
    if gone:
        report.retracted, codes = store.realestate.delete_transactions(tx, gone)
        touched |= codes
    retyped: set[str] = set()
    report.loaded, report.duplicate = store.realestate.insert_transactions(
        tx, result.transactions, progress=progress, retyped=retyped, load_id=load_id
    )
    if result.excluded and load_id is not None:
        store.realestate.insert_excluded(tx, result.excluded, load_id=load_id)
    if report.loaded or report.retracted or retyped:
        coverage.refresh_coverage(store, tx, touched | retyped)
    return report


def _transaction_loader(kind: str) -> Loader:
    def parse(data: bytes, options: Options) -> Parsed:
        result = parse_transactions(kind, data, path=options.path)
        return Parsed(report=result.report, records=result, data=data)

    def write(store: Store, tx: Tx, parsed: Parsed, options: Options) -> LoadReport:
        result: ParseResult = parsed.records
        total = len(result.transactions)
        progress = options.progress

        def step(done: int) -> None:
            if progress is not None:
                progress(done, total)

        report = write_transactions(store, tx, result, progress=step, load_id=options.load_id)
        completeness.record_file(store, tx, kind, result, now=options.now)
        return report

    return Loader(kind=kind, parse=parse, write=write)


def _parse_rone(data: bytes, options: Options) -> Parsed:
    try:
        result = rone.parse_rone(
            data,
            path=options.path,
            area_map=options.area_map if options.area_map is not None else rone.DEFAULT_AREA_MAP,
            table_name=options.table_name,
            property_type=options.property_type,
        )
    except SourceError:
        raise
    except ValueError as exc:
        raise SourceError(f"bad market-area table: {exc}", path=options.path) from None
    return Parsed(report=result.report, records=result, data=data)


def _write_rone(store: Store, tx: Tx, parsed: Parsed, options: Options) -> LoadReport:
    result: IndexParseResult = parsed.records
    report = result.report
    report.loaded, report.duplicate = store.realestate.insert_indices(tx, result.observations)
    return report


def _parse_listings(data: bytes, options: Options) -> Parsed:
    listings, report = market_source.parse_listings(data, path=options.path)
    return Parsed(report=report, records=listings, data=data)


def _write_listings(store: Store, tx: Tx, parsed: Parsed, options: Options) -> LoadReport:
    listings: list[Listing] = parsed.records
    return markets_ingest.write_listings(store, tx, listings, parsed.report)


def _parse_activity(data: bytes, options: Options) -> Parsed:
    activities, report = market_source.parse_activity(data, path=options.path)
    return Parsed(report=report, records=activities, data=data)


def _write_activity(store: Store, tx: Tx, parsed: Parsed, options: Options) -> LoadReport:
    activities: list[Activity] = parsed.records
    return markets_ingest.write_activity(
        store, tx, activities, parsed.report, data=parsed.data, path=options.path
    )


LOADERS: dict[str, Loader] = {
    **{kind: _transaction_loader(kind) for kind in RTMS_KINDS},
    "rone-index": Loader(kind="rone-index", parse=_parse_rone, write=_write_rone),
    "samples": _transaction_loader("samples"),
    markets_ingest.LISTINGS: Loader(
        kind=markets_ingest.LISTINGS, parse=_parse_listings, write=_write_listings
    ),
    markets_ingest.ACTIVITY: Loader(
        kind=markets_ingest.ACTIVITY, parse=_parse_activity, write=_write_activity
    ),
}
"""Every ingest kind's loader, in the order ``svc ingest --help`` lists them."""
