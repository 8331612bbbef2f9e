"""Loading source files into the store: one transaction per file, idempotent, reported.

``ingest(store, kind, data, path=..., now=...)`` parses the bytes with the pure reader for
``kind`` and writes the records in one transaction, so a file either loads completely or
changes nothing. Natural keys make a second load of the same file (or an overlapping
page) add nothing. The returned ``LoadReport`` says what was read, loaded, already
present, excluded by rule and rejected as malformed.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Any

from svc_core.errors import InvalidParams
from svc_core.models import LoadReport
from svc_core.sources import ParseResult, rone, rtms, rtms_csv, samples
from svc_server.store import Store

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


def _looks_structured(data: bytes) -> bool:
    """XML or JSON (the open API) rather than the web site's CSV export."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return head in (b"<", b"{", b"[")


def _rtms(kind: str) -> Callable[[bytes, str], ParseResult]:
    def parse(data: bytes, path: str) -> ParseResult:
        if _looks_structured(data):
            return rtms.parse_rtms(data, RTMS_KINDS[kind], path=path)
        return rtms_csv.parse_rtms_csv(data, RTMS_KINDS[kind], path=path)

    return parse


def _log(
    store: Store, tx: Any, kind: str, path: str, data: bytes, report: LoadReport, now: float
) -> None:
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


def ingest(store: Store, kind: str, data: bytes, *, path: str, now: float) -> LoadReport:
    """Load one file of ``kind``; raises ``SourceError`` (nothing written) when unreadable."""
    if kind not in KINDS:
        raise InvalidParams(f"Unknown kind {kind!r}; choose one of: {', '.join(KINDS)}.")
    if kind.startswith("market-"):
        from svc_server.services import markets_ingest

        return markets_ingest.ingest(store, kind, data, path=path, now=now)
    if kind == "rone-index":
        parsed_index = rone.parse_rone(data, path=path)
        report = parsed_index.report
        with store.db.transaction() as tx:
            report.loaded, report.duplicate = store.realestate.insert_indices(
                tx, parsed_index.observations
            )
            _log(store, tx, kind, path, data, report, now)
        return report
    parse = samples.parse_samples if kind == "samples" else None
    result = parse(data, path=path) if parse is not None else _rtms(kind)(data, path)
    report = result.report
    with store.db.transaction() as tx:
        if result.retracted_keys:
            store.realestate.delete_transactions(tx, result.retracted_keys)
        report.loaded, report.duplicate = store.realestate.insert_transactions(
            tx, result.transactions
        )
        _log(store, tx, kind, path, data, report, now)
    return report


def summary_lines(report: LoadReport) -> list[str]:
    """A human summary of a load, for the CLI."""
    lines = [
        f"{report.path}: read {report.read}, loaded {report.loaded}, "
        f"duplicate {report.duplicate}, excluded {report.excluded_total}, "
        f"rejected {report.rejected_total}"
    ]
    page = report.page_info()
    if page:
        lines.append(f"  partial file: {page}; load the other pages too")
    for reason, count in sorted(report.excluded.items()):
        lines.append(f"  excluded {reason}: {count}")
    for reason, count in sorted(report.rejected.items()):
        where = ", ".join(
            f"line {r.line} ({r.detail})" for r in report.rejections if r.reason == reason
        )
        lines.append(f"  rejected {reason}: {count}" + (f" — first: {where}" if where else ""))
    return lines
