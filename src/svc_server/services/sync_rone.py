"""``svc sync rone``: the R-ONE commercial rental survey from its open API into the store.

The run lists the statistic tables (``SttsApiTbl.do``), chooses the rental-survey
tables by name (``svc_core.rone_sync.choose_tables``), and reads each table's data
(``SttsApiTblData.do``) page by page, 1,000 rows a call, until every row of
``list_total_count`` is in. The rows of the chosen market-area era (the survey redrew
its areas in 2024 Q3) are then written in one transaction exactly as ``svc ingest
rone-index`` writes a file holding them (same observations), with the table's state for
that era and an ingest-log line; rows of the other era are counted, not loaded.

Failures are handled as in ``services.sync``: a refused key raises
``UpstreamKeyRefused`` (nothing written), the daily limit and the budget stop the run
(``stopped``), passing trouble is retried with back-off and the table recorded failed,
and ``CONNECT_FAILURE_LIMIT`` calls in a row that could not connect stop the run
(``stopped == "unreachable"``) without recording the table being read.
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
    PAGE_ROWS,
    RonePage,
    RoneTable,
    choose_tables,
    classify,
    data_document,
    era_of,
    read_page,
)
from svc_core.sources import rone
from svc_core.sync import Budget, Reach, pages_for
from svc_server.delivery.rone import DATA, TABLES, RoneClient
from svc_server.delivery.rtms import could_not_connect
from svc_server.ingest import Load, SyncTable, commit, state_only
from svc_server.store import Store

AreaMap = Mapping[str, Sequence[str]]
Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: tables finished out of those chosen, the table now."""
Finished = Callable[[int, int, "TableOutcome"], None]
"""``finished(done, total, outcome)``: called as each table is done."""


class _Stop(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


class _Failed(Exception):
    """A page could not be read after every retry."""


@attrs.define
class TableOutcome:
    """One table: ``status`` complete/failed, rows read, loaded and of the other era."""

    table: RoneTable
    status: str
    rows: int = 0
    loaded: int = 0
    other_era: int = 0
    detail: str = ""


@attrs.define
class RoneReport:
    """A run: calls, tables by outcome, and where it stopped (``limit``, ``budget``,
    ``unreachable``, or ``failed`` when the table list could not be read)."""

    era: str
    calls: int = 0
    tables: list[TableOutcome] = attrs.field(factory=list)
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
    reach: Reach = attrs.field(factory=Reach)

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
                self.reach = self.reach.after(connected=not could_not_connect(exc))
                if self.reach.unreachable:
                    raise _Stop("unreachable", f"cannot reach {self.client.base_url}") from None
                continue
            self.reach = self.reach.after(connected=True)
            try:
                page = read_page(answer.body, root, path=f"{endpoint} page {page_no}")
            except GatewayError as exc:
                verdict = classify(exc.reason_code)
                if verdict == "key":
                    raise UpstreamKeyRefused(
                        f"R-ONE refused the key ({exc.message}); check --service-key / SVC_RONE_KEY"
                    ) from None
                if verdict == "limit":
                    raise _Stop("limit", "the key's daily call limit is reached") from None
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
    era: str,
    area_map: AreaMap,
    budget: int,
    now: float,
    sleep: Callable[[float], None],
    retries: int = 3,
    backoff: float = 2.0,
    progress: Progress | None = None,
    finished: Finished | None = None,
) -> RoneReport:
    """List, choose and read the rental-survey tables; write ``era``'s rows.
    ``progress`` is told of each table before it is read, ``finished`` of its outcome."""
    run = _Run(
        client=client,
        budget=Budget(budget),
        retries=retries,
        backoff=backoff,
        sleep=sleep,
        report=RoneReport(era=era),
    )
    try:
        listing = run.pages(TABLES, "SttsApiTbl", {})
    except _Stop as stop:
        run.report.stopped, run.report.stop_detail = stop.reason, stop.detail
        return run.report
    except _Failed as exc:
        run.report.stopped, run.report.stop_detail = "failed", f"table list: {exc}"
        return run.report
    tables = choose_tables(row for page in listing for row in page.rows)
    for done, table in enumerate(tables):
        if progress is not None:
            progress(done, len(tables), f"{table.table_id} {table.name}")
        try:
            pages = run.pages(DATA, "SttsApiTblData", {"STATBL_ID": table.table_id})
        except _Stop as stop:
            run.report.stopped, run.report.stop_detail = stop.reason, stop.detail
            break
        except _Failed as exc:
            _record(store, table, era, "failed", now, None, 0, str(exc))
            outcome = TableOutcome(table=table, status="failed", detail=str(exc))
        else:
            outcome = _write(store, table, pages, era, area_map, now)
        run.report.tables.append(outcome)
        if finished is not None:
            finished(done + 1, len(tables), outcome)
    if progress is not None and tables:
        progress(len(run.report.tables), len(tables), "")
    return run.report


def _record(
    store: Store,
    table: RoneTable,
    era: str,
    status: str,
    now: float,
    total: int | None,
    pages: int,
    detail: str,
) -> None:
    """A table read that wrote no value: only its state."""
    state = SyncTable(
        table_id=table.table_id,
        era=era,
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
    era: str,
    area_map: AreaMap,
    now: float,
) -> TableOutcome:
    rows: list[Mapping[str, Any]] = [row for page in pages for row in page.rows]
    total = pages[0].total_count
    if len(rows) != total:
        detail = f"read {len(rows)} rows of list_total_count {total}"
        _record(store, table, era, "partial", now, total, len(pages), detail)
        return TableOutcome(table=table, status="partial", rows=len(rows), detail=detail)
    # rows of no era (a malformed period) go to the reader, which rejects them by reason
    kept = [r for r in rows if era_of(str(r.get("WRTTIME_IDTFR_ID", ""))) in (era, None)]
    data = data_document(kept)
    path = f"R-ONE {table.table_id} ({era})"
    parsed = rone.parse_rone(data, path=path, area_map=area_map, table_name=table.name)
    load = Load(
        kind="rone-index",
        report=parsed.report,
        digest=hashlib.sha256(data).hexdigest(),
        indices=parsed.observations,
        sync_table=SyncTable(
            table_id=table.table_id,
            era=era,
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
        other_era=len(rows) - len(kept),
    )
