"""``svc sync rone``: the R-ONE commercial rental survey from its open API into the store.

The run lists the statistic tables (``SttsApiTbl.do``), plans which rental-survey
tables to read by their names (``svc_core.rone_sync.plan``: every class, metric and era;
the linked ``(시계열)`` series preferred), and reads each table's data
(``SttsApiTblData.do``, with its ``STATBL_ID`` and its one ``DTACYCLE_CD``) page by page,
1,000 rows a call, until every row of ``list_total_count`` is in. The rows of the
table's own era are then written in one transaction exactly as ``svc ingest rone-index``
writes a file holding them (same observations), with the table's state under its era
and an ingest-log line; rows outside the era are counted, not loaded.

Failures: a refused key raises ``UpstreamKeyRefused`` (nothing written); a request R-ONE
calls a bug (``ERROR-300`` ...), the daily limit and the budget stop the run
(``stopped``); server trouble is retried with back-off and the table recorded failed.
A table list offering no table to read stops the run too (``nothing``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import httpx

from svc_core.errors import GatewayError, SourceError, UpstreamKeyRefused
from svc_core.models import LoadReport
from svc_core.rone_sync import (
    CLASSES,
    PAGE_ROWS,
    RonePage,
    RoneTable,
    classify,
    data_document,
    plan,
    read_page,
    unmapped_areas,
)
from svc_core.sources import rone
from svc_core.sync import Budget, pages_for
from svc_server.delivery.rone import DATA, TABLES, RoneClient
from svc_server.ingest import Load, SyncTable, commit, state_only
from svc_server.store import Store

AreaMap = Mapping[str, Sequence[str]]


class _Stop(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


class _Failed(Exception):
    """A page could not be read after every retry."""


@attrs.define
class TableOutcome:
    """One table: ``status`` complete/failed, rows read, loaded (new or already held)
    and outside the table's era."""

    table: RoneTable
    status: str
    rows: int = 0
    loaded: int = 0
    held: int = 0
    outside_era: int = 0
    detail: str = ""


@attrs.define
class RoneReport:
    """A run: calls, tables by outcome, the tables left out (with why), and where it
    stopped (``limit``, ``budget``, ``request``, ``failed``, ``nothing``)."""

    calls: int = 0
    tables: list[TableOutcome] = attrs.field(factory=list)
    skipped: list[tuple[RoneTable, str]] = attrs.field(factory=list)
    unmapped: dict[str, str] = attrs.field(factory=dict)
    """Market areas read (``CLS_FULLNM`` → ``CLS_ID``) that the area map does not map."""
    stopped: str | None = None
    stop_detail: str = ""

    def count(self, status: str) -> int:
        return sum(1 for t in self.tables if t.status == status)


@attrs.define
class _Run:
    client: RoneClient
    budget: Budget
    retries: int
    backoff: float
    sleep: Callable[[float], None]
    report: RoneReport

    def pages(self, endpoint: str, root: str, params: Mapping[str, str]) -> list[RonePage]:
        """Every page of ``endpoint`` until ``list_total_count`` rows are in."""
        first = self.call(endpoint, root, params, 1)
        found = [first]
        needed = pages_for(first.total_count, PAGE_ROWS)
        if needed - 1 > self.budget.left:
            raise _Stop("budget", f"the budget of {self.budget.limit} calls cannot finish")
        for page_no in range(2, needed + 1):
            found.append(self.call(endpoint, root, params, page_no))
        return found

    def call(self, endpoint: str, root: str, params: Mapping[str, str], page_no: int) -> RonePage:
        problem = ""
        for attempt in range(self.retries + 1):
            if not self.budget.allows(1):
                raise _Stop("budget", f"the budget of {self.budget.limit} calls is used up")
            if attempt:
                self.sleep(self.backoff * 2 ** (attempt - 1))
            self.budget = self.budget.spend(1)
            self.report.calls += 1
            try:
                answer = self.client.get_page(endpoint, params, page_no=page_no, rows=PAGE_ROWS)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                continue
            try:
                page = read_page(
                    answer.body,
                    root,
                    path=f"{endpoint} page {page_no}",
                    content_type=answer.content_type,
                )
            except GatewayError as exc:
                verdict = classify(exc.reason_code)
                if verdict == "key":
                    raise UpstreamKeyRefused(
                        f"R-ONE refused the key ({exc.message}); check --service-key / SVC_RONE_KEY"
                    ) from None
                if verdict == "limit":
                    raise _Stop("limit", "the key's daily call limit is reached") from None
                if verdict == "request":
                    raise _Stop("request", f"R-ONE refused the request: {exc.message}") from None
                problem = exc.message
                continue
            except SourceError as exc:
                problem = f"HTTP {answer.status}: {exc.message}"
                continue
            if answer.status != 200:
                problem = f"HTTP {answer.status}"
                continue
            return page
        raise _Failed(f"{problem} (after {self.retries + 1} tries)")


def sync_rone(
    store: Store,
    client: RoneClient,
    *,
    area_map: AreaMap,
    budget: int,
    now: float,
    sleep: Callable[[float], None],
    retries: int = 3,
    backoff: float = 2.0,
) -> RoneReport:
    """List, plan and read the rental-survey tables; write each table's era's rows."""
    run = _Run(
        client=client,
        budget=Budget(budget),
        retries=retries,
        backoff=backoff,
        sleep=sleep,
        report=RoneReport(),
    )
    try:
        listing = run.pages(TABLES, "SttsApiTbl", {})
    except _Stop as stop:
        run.report.stopped, run.report.stop_detail = stop.reason, stop.detail
        return run.report
    except _Failed as exc:
        run.report.stopped, run.report.stop_detail = "failed", f"table list: {exc}"
        return run.report
    try:
        chosen = plan((row for page in listing for row in page.rows), classes=_served_classes())
    except SourceError as exc:
        run.report.stopped, run.report.stop_detail = "failed", f"table list: {exc.message}"
        return run.report
    run.report.skipped = list(chosen.skipped)
    if not chosen.tables:
        run.report.stopped = "nothing"
        run.report.stop_detail = (
            f"the table list ({sum(p.total_count for p in listing[:1])} tables) names no "
            "rental-survey (임대동향) table svc reads"
        )
        return run.report
    for table in chosen.tables:
        params = {"STATBL_ID": table.table_id, "DTACYCLE_CD": table.cycle}
        try:
            pages = run.pages(DATA, "SttsApiTblData", params)
        except _Stop as stop:
            detail = stop.detail
            if stop.reason == "request":
                detail = f"table {table.name} ({table.table_id}): {detail}"
                _record(store, table, "failed", now, None, 0, detail)
            run.report.stopped, run.report.stop_detail = stop.reason, detail
            break
        except _Failed as exc:
            _record(store, table, "failed", now, None, 0, str(exc))
            run.report.tables.append(TableOutcome(table=table, status="failed", detail=str(exc)))
            continue
        run.report.tables.append(_write(store, table, pages, area_map, now))
        for path, cls_id in unmapped_areas(
            (row for page in pages for row in page.rows), area_map
        ).items():
            run.report.unmapped.setdefault(path, cls_id)
    return run.report


def _served_classes() -> frozenset[str]:
    """The survey classes svc has a property type for (``rone.DEFAULT_CLASS_MAP``)."""
    return frozenset(
        name for name in CLASSES.values() if rone.DEFAULT_CLASS_MAP.get(name.replace(" ", ""))
    )


def _record(
    store: Store,
    table: RoneTable,
    status: str,
    now: float,
    total: int | None,
    pages: int,
    detail: str,
) -> None:
    """A table read that wrote no value: only its state."""
    state = SyncTable(
        table_id=table.table_id,
        era=table.era,
        table_name=table.name,
        status=status,
        total_count=total,
        pages=pages,
        detail=detail,
    )
    commit(store, state_only(LoadReport(path=f"R-ONE {table.table_id}"), sync_table=state), now=now)


def _write(
    store: Store,
    table: RoneTable,
    pages: Sequence[RonePage],
    area_map: AreaMap,
    now: float,
) -> TableOutcome:
    rows: list[Mapping[str, Any]] = [row for page in pages for row in page.rows]
    total = pages[0].total_count
    if len(rows) != total:
        detail = f"read {len(rows)} rows of list_total_count {total}"
        _record(store, table, "partial", now, total, len(pages), detail)
        return TableOutcome(table=table, status="partial", rows=len(rows), detail=detail)
    # a malformed period goes to the reader, which rejects it by reason
    kept = [r for r in rows if table.holds(str(r.get("WRTTIME_IDTFR_ID", "")))]
    data = data_document(kept)
    path = f"R-ONE {table.table_id} ({table.era})"
    parsed = rone.parse_rone(data, path=path, area_map=area_map, table_name=table.name)
    load = Load(
        kind="rone-index",
        report=parsed.report,
        digest=hashlib.sha256(data).hexdigest(),
        indices=parsed.observations,
        sync_table=SyncTable(
            table_id=table.table_id,
            era=table.era,
            table_name=table.name,
            status="complete",
            total_count=total,
            pages=len(pages),
        ),
    )
    report = commit(store, load, now=now).report
    return TableOutcome(
        table=table,
        status="complete",
        rows=len(rows),
        loaded=report.loaded,
        held=report.duplicate,
        outside_era=len(rows) - len(kept),
    )
