"""Loading source files into the store: one transaction per file, idempotent, reported.

``ingest(store, kind, data, path=..., now=...)`` parses the bytes with the pure reader for
``kind`` and writes the records in one transaction, so a file either loads completely or
changes nothing. Natural keys make a second load of the same file (or an overlapping
page) add nothing. The returned ``LoadReport`` says what was read, loaded, already
present, retracted (stored deals the file reports as cancelled), excluded by rule and
rejected as malformed (with the first lines of each reason).

| kind | reader | records |
|---|---|---|
| ``rtms-commercial`` | RTMS NrgTrade API (XML/JSON) or web CSV export | sales |
| ``rtms-officetel-trade`` | RTMS OffiTrade API or web CSV export | officetel sales |
| ``rtms-officetel-rent`` | RTMS OffiRent API or web CSV export | officetel leases |
| ``rone-index`` | R-ONE ``SttsApiTblData`` JSON or the documented CSV | index values |
| ``samples`` | svc's normalized samples CSV | transactions of any source |
| ``market-listings``, ``market-activity`` | marketplace files | (marketplace) |
"""

from __future__ import annotations

import csv
import hashlib
import io
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from svc_core.errors import InvalidParams, SourceError
from svc_core.models import PROPERTY_TYPES, LoadReport
from svc_core.regions import region_name
from svc_core.sources import ParseResult, decode_text, rone, rtms, rtms_csv, samples
from svc_server.services import realestate
from svc_server.store import Store
from svc_server.store.base import Tx

RTMS_KINDS = {
    "rtms-commercial": "commercial",
    "rtms-officetel-trade": "officetel_trade",
    "rtms-officetel-rent": "officetel_rent",
}
KINDS: tuple[str, ...] = (
    *RTMS_KINDS,
    "rone-index",
    "samples",
    "market-listings",
    "market-activity",
)
AREA_MAP_HEADER = ("market_area", "sigungu_code")

Progress = Callable[[int, int], None]
"""``progress(done, total)``: records written so far out of the file's records."""
AreaMap = Mapping[str, Sequence[str]]


def _looks_structured(data: bytes) -> bool:
    """XML or JSON (the open API) rather than the web site's CSV export."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return head in (b"<", b"{", b"[")


def parse(kind: str, data: bytes, *, path: str) -> ParseResult:
    """Read a transaction file of ``kind`` (format detected); nothing is written."""
    if kind == "samples":
        return samples.parse_samples(data, path=path)
    if kind not in RTMS_KINDS:
        raise InvalidParams(f"{kind!r} is not a transaction kind.")
    if _looks_structured(data):
        return rtms.parse_rtms(data, RTMS_KINDS[kind], path=path)
    return rtms_csv.parse_rtms_csv(data, RTMS_KINDS[kind], path=path)


def parse_area_map(data: bytes, *, path: str) -> dict[str, tuple[str, ...]]:
    """Read a market-area table: CSV ``market_area,sigungu_code``, one district a line.

    An area covering several districts takes several lines. ``SourceError`` names the
    file and line of the first problem (unknown code, malformed line).
    """
    reader = csv.reader(io.StringIO(decode_text(data, path), newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise SourceError(f"malformed CSV: {exc}", path=path, line=reader.line_num) from None
    if not rows or tuple(c.strip().lower() for c in rows[0]) != AREA_MAP_HEADER:
        raise SourceError(f"the header must be {','.join(AREA_MAP_HEADER)}", path=path, line=1)
    out: dict[str, list[str]] = {}
    for line, cells in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != 2 or not cells[0].strip():
            raise SourceError("expected a market area and a 5-digit code", path=path, line=line)
        area, code = cells[0].strip(), cells[1].strip()
        if region_name(code) is None:
            raise SourceError(f"{code!r} is not a known district code", path=path, line=line)
        out.setdefault(area, []).append(code)
    if not out:
        raise SourceError("the market-area table is empty", path=path)
    return {area: tuple(codes) for area, codes in out.items()}


def log_load(
    tx: Tx, store: Store, kind: str, path: str, data: bytes, report: LoadReport, now: float
) -> None:
    """One ``ingest_log`` row: provenance, counts, and the exclusions for coverage_note."""
    rejected: dict[str, Any] = {
        reason: {
            "count": count,
            "lines": [r.line for r in report.rejections if r.reason == reason],
        }
        for reason, count in report.rejected.items()
    }
    store.realestate.log_ingest(
        tx,
        {
            "id": str(uuid.uuid4()),
            "kind": kind,
            "path": path[:500],
            "sha256": hashlib.sha256(data).hexdigest(),
            "read_count": report.read,
            "loaded": report.loaded,
            "duplicate": report.duplicate,
            "excluded": report.excluded,
            "rejected": rejected,
            "loaded_at": int(now),
        },
    )


def ingest(
    store: Store,
    kind: str,
    data: bytes,
    *,
    path: str,
    now: float,
    progress: Progress | None = None,
    area_map: AreaMap | None = None,
    table_name: str | None = None,
    property_type: str | None = None,
) -> LoadReport:
    """Load one file of ``kind``; ``SourceError`` (nothing written) when unreadable.

    ``rone-index`` only: ``area_map`` maps R-ONE market areas to district codes (default
    ``svc_core.sources.rone.DEFAULT_AREA_MAP``); ``table_name`` (the statistic table's
    name) and ``property_type`` help when the rows do not name their metric or
    property class themselves.
    """
    if kind not in KINDS:
        raise InvalidParams(f"Unknown kind {kind!r}; choose one of: {', '.join(KINDS)}.")
    rone_options = (area_map, table_name, property_type)
    if kind != "rone-index" and any(o is not None for o in rone_options):
        raise InvalidParams("area_map, table_name and property_type apply to rone-index only.")
    if property_type is not None and property_type not in PROPERTY_TYPES:
        raise InvalidParams(f"property_type must be one of: {', '.join(PROPERTY_TYPES)}.")
    if kind.startswith("market-"):
        from svc_server.services import markets_ingest

        return markets_ingest.ingest(store, kind, data, path=path, now=now)
    if kind == "rone-index":
        try:
            parsed = rone.parse_rone(
                data,
                path=path,
                area_map=area_map if area_map is not None else rone.DEFAULT_AREA_MAP,
                table_name=table_name,
                property_type=property_type,
            )
        except ValueError as exc:
            if isinstance(exc, SourceError):
                raise
            raise SourceError(f"bad market-area table: {exc}", path=path) from None
        report = parsed.report
        with store.db.transaction() as tx:
            report.loaded, report.duplicate = store.realestate.insert_indices(
                tx, parsed.observations
            )
            log_load(tx, store, kind, path, data, report, now)
        if progress is not None:
            progress(report.read, report.read)
        return report
    result = parse(kind, data, path=path)
    report = result.report
    total = len(result.transactions)

    def step(done: int) -> None:
        if progress is not None:
            progress(done, total)

    with store.db.transaction() as tx:
        touched = {t.sigungu_code for t in result.transactions}
        if result.retracted_keys:
            report.retracted, codes = store.realestate.delete_transactions(
                tx, result.retracted_keys
            )
            touched |= codes
        report.loaded, report.duplicate = store.realestate.insert_transactions(
            tx, result.transactions, progress=step
        )
        if report.loaded or report.retracted:
            realestate.refresh_coverage(store, tx, touched)
        log_load(tx, store, kind, path, data, report, now)
    step(total)
    return report


def summary_lines(report: LoadReport) -> list[str]:
    """A human summary of a load, for the CLI: counts, then each reason on its own line
    with the first rejected lines."""
    lines = [
        f"{report.path}: read {report.read}, loaded {report.loaded}, "
        f"duplicate {report.duplicate}, excluded {report.excluded_total}, "
        f"rejected {report.rejected_total}"
        + (f", retracted {report.retracted}" if report.retracted else "")
    ]
    page = report.page_info()
    if page:
        lines.append(f"  partial file: {page}; load the other pages too")
    for reason, count in sorted(report.excluded.items()):
        lines.append(f"  excluded {reason}: {count}")
    for reason, count in sorted(report.rejected.items()):
        shown = [r for r in report.rejections if r.reason == reason]
        where = "; ".join(f"line {r.line}: {r.detail}" for r in shown)
        line = f"  rejected {reason}: {count}"
        if shown:
            line += f" (first {len(shown)}: {where})" if count > len(shown) else f" ({where})"
        lines.append(line)
    if report.retracted:
        lines.append(f"  retracted (cancelled after an earlier load): {report.retracted}")
    return lines
