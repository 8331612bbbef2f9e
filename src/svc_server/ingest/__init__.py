"""Loading public data into the store: the only writer of public data.

Every writer builds a ``Load`` (``ingest.load``) and hands it to ``commit``
(``ingest.writer``), which writes it in one transaction: records, the roll-up, the
precomputed coverage, completeness, marketplace answers, a sync's state and the
ingest-log row. ``svc ingest`` reads files through the loaders (``ingest.loaders``: a
registry of parsers, one entry per kind), ``svc sync`` builds loads from the official
APIs' answers, ``svc demo-data`` from the demo set (``ingest.demo``). This package sits
below ``services`` and imports nothing from it.

``ingest(store, kind, data, path=..., now=...)`` recognises what the bytes are
(``svc_core.sources.kind``): a file whose content shows another kind than the one given
is refused (``SourceError`` naming what it looks like) and ``kind=None`` loads a file as
what it shows (where the content allows two kinds, a commercial and a factory/warehouse
file, the one MOLIT's file name names; else it is refused naming the choice). A file
whose items show several kinds (a lease file with a sale item
appended) is refused naming each, unless ``kind`` names one of them. The kind's loader parses the bytes before any transaction opens, so a
file either loads completely or changes nothing. A file whose every item is rejected is
refused too: it would load nothing and look like success. Natural keys make a second
load of the same file (or an overlapping page) add nothing. The returned ``LoadReport``
says what was read, loaded, already present, retracted (stored deals the file reports
as cancelled), excluded by rule and rejected as malformed.

| kind | reader | records |
|---|---|---|
| ``rtms-commercial`` | RTMS NrgTrade API (XML/JSON) or web CSV export | sales |
| ``rtms-officetel-trade`` | RTMS OffiTrade API or web CSV export | officetel sales |
| ``rtms-officetel-rent`` | RTMS OffiRent API or web CSV export | officetel leases |
| ``rtms-industrial`` | RTMS InduTrade API or web CSV export | factory/warehouse sales |
| ``rtms-land`` | RTMS LandTrade API or web CSV export | land sales |
| ``rone-index`` | R-ONE ``SttsApiTblData`` JSON or the documented CSV | index values |
| ``samples`` | svc's normalized samples CSV | transactions of any source |
| ``market-listings``, ``market-activity`` | marketplace files | (marketplace) |
"""

from __future__ import annotations

import csv
import io

import attrs

from svc_core.errors import InvalidParams, SourceError
from svc_core.models import PROPERTY_TYPES, LoadReport
from svc_core.regions import region_name
from svc_core.sources import csv_text
from svc_core.sources.kind import candidates, describe, item_kinds, layout, recognise, undecided
from svc_core.sources.sniff import binary_format
from svc_server.ingest.load import Load, Progress, SyncMonth, SyncTable, state_only
from svc_server.ingest.loaders import LOADERS, AreaMap, Options, parse_transaction_file
from svc_server.ingest.writer import Committed, commit
from svc_server.store import Store

KINDS: tuple[str, ...] = tuple(LOADERS)
AREA_MAP_HEADER = ("market_area", "sigungu_code")

__all__ = [
    "KINDS",
    "LOADERS",
    "AreaMap",
    "Committed",
    "Load",
    "Options",
    "Progress",
    "SyncMonth",
    "SyncTable",
    "commit",
    "ingest",
    "parse_area_map",
    "parse_transaction_file",
    "read",
    "resolve_kind",
    "state_only",
    "summary_lines",
]


def _mixed(shown: dict[str, int], kind: str | None, path: str) -> SourceError:
    """The refusal of a file whose items show several kinds (``shown``, with counts)."""
    listed = " and ".join(
        f"{n} {'item' if n == 1 else 'items'} of {describe(k)} ({k})" for k, n in shown.items()
    )
    what = f"its items show {len(shown)} kinds: {listed}; nothing loaded"
    if kind is not None:
        return SourceError(f"{what} (none is {kind})", path=path)
    example = next(iter(shown))
    return SourceError(
        f"{what}. Name the kind to load it as one (svc ingest {example} {path}): the "
        "other kind's items are then rejected",
        path=path,
    )


def resolve_kind(kind: str | None, data: bytes, *, path: str) -> str:
    """The kind to load ``data`` as: ``kind`` when the content agrees (or shows
    nothing), what the content shows when ``kind`` is None; ``SourceError`` when they
    contradict or nothing tells. A file whose items show several kinds
    (``item_kinds``) loads only as one of them named by ``kind``."""
    seen = recognise(data)
    if kind in LOADERS and seen == kind:
        return kind  # its first items show it: loads as it whatever the rest shows
    shown = item_kinds(data)
    if len(shown) > 1:
        if kind is None or layout(kind) not in shown:
            raise _mixed(shown, kind, path)
        return kind
    allowed = candidates(data)
    if kind is None:
        named = recognise(data, path)
        if named is not None:
            return named
        if len(allowed) > 1:
            raise SourceError(undecided(allowed, path), path=path)
        found = binary_format(data)
        if found is not None:
            raise SourceError(f"this is {found}, not a data file svc reads", path=path)
        raise SourceError(
            f"cannot tell what kind of file this is; give its KIND ({', '.join(KINDS)})",
            path=path,
        )
    if kind not in LOADERS:
        raise InvalidParams(f"Unknown kind {kind!r}; choose one of: {', '.join(KINDS)}.")
    if allowed and kind not in allowed:
        looks = " or ".join(f"{describe(k)} ({k})" for k in allowed)
        raise SourceError(f"this looks like {looks}, not {kind}; nothing loaded", path=path)
    return kind


def _all_rejected(report: LoadReport) -> bool:
    return report.read > 0 and report.rejected_total == report.read


def ingest(
    store: Store,
    kind: str | None,
    data: bytes,
    *,
    path: str,
    now: float,
    progress: Progress | None = None,
    area_map: AreaMap | None = None,
    table_name: str | None = None,
    property_type: str | None = None,
    defer_coverage: bool = False,
) -> LoadReport:
    """Load one file (of ``kind``, or of the kind its content shows when None):
    ``read`` it, then ``commit`` what it holds; ``SourceError`` (nothing written) when
    unreadable, of another kind, or every item is rejected. ``defer_coverage``: leave
    the precomputed coverage of its districts to ``coverage.refresh_stale`` (one of many
    files)."""
    load = read(
        kind,
        data,
        path=path,
        progress=progress,
        area_map=area_map,
        table_name=table_name,
        property_type=property_type,
    )
    if defer_coverage:
        load = attrs.evolve(load, defer_coverage=True)
    return commit(store, load, now=now).report


def read(
    kind: str | None,
    data: bytes,
    *,
    path: str,
    progress: Progress | None = None,
    area_map: AreaMap | None = None,
    table_name: str | None = None,
    property_type: str | None = None,
) -> Load:
    """What ``ingest`` writes of a file, parsed without a store (pure): ``SourceError``
    as ``ingest`` says. ``svc ingest`` of many files reads the next ones while it
    commits (``commands.ahead``).

    ``rone-index`` only: ``area_map`` maps R-ONE market areas to district codes (default
    ``svc_core.sources.rone.DEFAULT_AREA_MAP``); ``table_name`` (the statistic table's
    name) and ``property_type`` help when the rows do not name their metric or
    property class themselves.
    """
    if kind is not None and kind not in LOADERS:
        raise InvalidParams(f"Unknown kind {kind!r}; choose one of: {', '.join(KINDS)}.")
    rone_options = (area_map, table_name, property_type)
    if kind not in (None, "rone-index") and any(o is not None for o in rone_options):
        raise InvalidParams("area_map, table_name and property_type apply to rone-index only.")
    if property_type is not None and property_type not in PROPERTY_TYPES:
        raise InvalidParams(f"property_type must be one of: {', '.join(PROPERTY_TYPES)}.")
    kind = resolve_kind(kind, data, path=path)
    if kind != "rone-index" and any(o is not None for o in rone_options):
        raise InvalidParams("area_map, table_name and property_type apply to rone-index only.")
    options = Options(
        path=path,
        area_map=area_map,
        table_name=table_name,
        property_type=property_type,
        progress=progress,
    )
    load = LOADERS[kind](data, options)
    if _all_rejected(load.report):
        raise SourceError(
            f"every one of its {load.report.read} records was rejected "
            f"({', '.join(sorted(load.report.rejected))}); nothing loaded",
            path=path,
        )
    return load


def parse_area_map(data: bytes, *, path: str) -> dict[str, tuple[str, ...]]:
    """Read a market-area table: CSV ``market_area,sigungu_code``, one district a line.

    An area covering several districts takes several lines. ``SourceError`` names the
    file and line of the first problem (unknown code, malformed line).
    """
    reader = csv.reader(io.StringIO(csv_text(data, path, cp949=True), newline=""))
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
        where = "; ".join(f"{report.unit} {r.line}: {r.detail}" for r in shown)
        line = f"  rejected {reason}: {count}"
        if shown:
            line += f" (first {len(shown)}: {where})" if count > len(shown) else f" ({where})"
        lines.append(line)
    if report.retracted:
        lines.append(f"  retracted (cancelled after an earlier load): {report.retracted}")
    return lines
