"""``svc sync rone``: the R-ONE commercial rental survey from its open API into the store.

The run lists the statistic tables (``SttsApiTbl.do``), plans which rental-survey
tables to read by their names (``svc_core.sync.rone.plan``: every class, metric and era,
the linked ``(시계열)`` series as a series of its own), records the survey's tables it
cannot read by name (``not_read``, with why), and reads each table's data
(``SttsApiTblData.do``, with its ``STATBL_ID`` and one ``DTACYCLE_CD`` a call series:
quarterly, then annual ``YY`` when the list offers both) page by page, 1,000 rows a
call, until every row of ``list_total_count`` is in. Every call asks XML (``Type=xml``,
the delivery client), R-ONE's default. The rows of the
table's own era are then written in one transaction exactly as ``svc ingest rone-index``
writes a file holding them (same observations), with the table's state under its era
and an ingest-log line; rows outside the era are counted, not loaded.

Failures: a refused key raises ``UpstreamKeyRefused`` (nothing written); a request R-ONE
calls a bug (``ERROR-300`` ...), the daily limit and the budget stop the run
(``stopped``); server trouble is retried with back-off and the table recorded failed;
``CONNECT_FAILURE_LIMIT`` calls in a row that could not connect stop the run
(``stopped == "unreachable"``) without recording the table being read. A table list
offering no table to read stops the run too (``nothing``). The retry loop and the
budget are ``services.upstream``'s, shared with ``svc sync rtms``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from svc_core.errors import GatewayError, SourceError, UpstreamKeyRefused
from svc_core.models import LoadReport
from svc_core.sources import rone
from svc_core.sync.rone import (
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
from svc_core.sync.rtms import Budget, pages_for
from svc_server.delivery.fetch import Reply
from svc_server.delivery.rone import DATA, TABLES, RoneClient
from svc_server.ingest import Load, SyncTable, commit, state_only
from svc_server.services.upstream import Calls, Failed, Retry, Stop
from svc_server.store import Store

AreaMap = Mapping[str, Sequence[str]]
Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: tables finished out of those chosen, the table now."""
Finished = Callable[[int, int, "TableOutcome"], None]
"""``finished(done, total, outcome)``: called as each table is done."""


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
    stopped (``limit``, ``budget``, ``request``, ``unreachable``, ``failed``,
    ``nothing``)."""

    calls: int = 0
    tables: list[TableOutcome] = attrs.field(factory=list)
    skipped: list[tuple[RoneTable, str]] = attrs.field(factory=list)
    unread: list[tuple[str, str, str]] = attrs.field(factory=list)
    """The survey's (임대동향) tables svc cannot read by name: (id, name, why)."""
    unmapped: dict[str, str] = attrs.field(factory=dict)
    """Market areas read (``CLS_FULLNM`` → ``CLS_ID``) that the area map does not map."""
    stopped: str | None = None
    stop_detail: str = ""

    def count(self, status: str) -> int:
        return sum(1 for t in self.tables if t.status == status)


@attrs.define
class _Run:
    client: RoneClient
    calls: Calls
    report: RoneReport

    def pages(self, endpoint: str, root: str, params: Mapping[str, str]) -> list[RonePage]:
        """Every page of ``endpoint`` until ``list_total_count`` rows are in."""
        first = self.call(endpoint, root, params, 1)
        found = [first]
        needed = pages_for(first.total_count, PAGE_ROWS)
        short = self.calls.cannot_finish(needed - 1, f"{endpoint} {params.get('STATBL_ID', '')}")
        if short is not None:
            raise short
        for page_no in range(2, needed + 1):
            found.append(self.call(endpoint, root, params, page_no))
        return found

    def call(self, endpoint: str, root: str, params: Mapping[str, str], page_no: int) -> RonePage:
        try:
            return self.calls.call(
                lambda: self.client.get_page(endpoint, params, page_no=page_no, rows=PAGE_ROWS),
                lambda answer: _page(answer, root, f"{endpoint} page {page_no}"),
            )
        finally:
            self.report.calls = self.calls.made


def _page(answer: Reply, root: str, where: str) -> RonePage:
    """What one answer means: its page, or the exception the run raises."""
    try:
        page = read_page(answer.body, root, path=where, content_type=answer.content_type)
    except GatewayError as exc:
        verdict = classify(exc.reason_code)
        if verdict == "key":
            raise UpstreamKeyRefused(
                f"R-ONE refused the key ({exc.message}); check --service-key / SVC_RONE_KEY"
            ) from None
        if verdict == "limit":
            raise Stop("limit", "the key's daily call limit is reached") from None
        if verdict == "request":
            raise Stop("request", f"R-ONE refused the request: {exc.message}") from None
        raise Retry(exc.message) from None
    except SourceError as exc:
        raise Retry(f"HTTP {answer.status}: {exc.message}") from None
    if answer.status != 200:
        raise Retry(f"HTTP {answer.status}")
    return page


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
    progress: Progress | None = None,
    finished: Finished | None = None,
) -> RoneReport:
    """List, plan and read the rental-survey tables; write each table's era's rows.
    ``progress`` is told of each table before it is read, ``finished`` of its outcome."""
    run = _Run(
        client=client,
        calls=Calls(
            budget=Budget(budget),
            retries=retries,
            backoff=backoff,
            sleep=sleep,
            base_url=client.base_url,
        ),
        report=RoneReport(),
    )
    try:
        listing = run.pages(TABLES, "SttsApiTbl", {})
    except Stop as stop:
        run.report.stopped, run.report.stop_detail = stop.reason, stop.detail
        return run.report
    except Failed as exc:
        run.report.stopped, run.report.stop_detail = "failed", f"table list: {exc}"
        return run.report
    try:
        chosen = plan((row for page in listing for row in page.rows), classes=_served_classes())
    except SourceError as exc:
        run.report.stopped, run.report.stop_detail = "failed", f"table list: {exc.message}"
        return run.report
    run.report.skipped = list(chosen.skipped)
    run.report.unread = list(chosen.unread)
    unread = state_only(LoadReport(path="R-ONE table list"), unread_tables=tuple(chosen.unread))
    commit(store, unread, now=now)
    if not chosen.tables:
        run.report.stopped = "nothing"
        run.report.stop_detail = (
            f"the table list ({sum(p.total_count for p in listing[:1])} tables) names no "
            "rental-survey (임대동향) table svc reads"
        )
        return run.report
    tables = chosen.tables
    for done, table in enumerate(tables):
        if progress is not None:
            progress(done, len(tables), f"{table.table_id} {table.name}")
        try:
            pages: list[RonePage] = []
            total = 0
            for cycle in table.cycles:
                params = {"STATBL_ID": table.table_id, "DTACYCLE_CD": cycle}
                read = run.pages(DATA, "SttsApiTblData", params)
                pages += read
                total += read[0].total_count
        except Stop as stop:
            detail = stop.detail
            if stop.reason == "request":
                detail = f"table {table.name} ({table.table_id}): {detail}"
                _record(store, table, "failed", now, None, 0, detail)
            run.report.stopped, run.report.stop_detail = stop.reason, detail
            break
        except Failed as exc:
            _record(store, table, "failed", now, None, 0, str(exc))
            outcome = TableOutcome(table=table, status="failed", detail=str(exc))
        else:
            outcome = _write(store, table, pages, total, area_map, now)
            for path, cls_id in unmapped_areas(
                (row for page in pages for row in page.rows), area_map, table.name
            ).items():
                run.report.unmapped.setdefault(path, cls_id)
        run.report.tables.append(outcome)
        if finished is not None:
            finished(done + 1, len(tables), outcome)
    if progress is not None and tables:
        progress(len(run.report.tables), len(tables), "")
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
    total: int,
    area_map: AreaMap,
    now: float,
) -> TableOutcome:
    """Write a table's rows of its era (``total``: the rows its cycles' answers state)."""
    rows: list[Mapping[str, Any]] = [row for page in pages for row in page.rows]
    if len(rows) != total:
        detail = f"read {len(rows)} rows of list_total_count {total}"
        _record(store, table, "partial", now, total, len(pages), detail)
        return TableOutcome(table=table, status="partial", rows=len(rows), detail=detail)
    # a malformed period goes to the reader, which rejects it by reason
    kept = [r for r in rows if table.holds(str(r.get("WRTTIME_IDTFR_ID", "")))]
    data = data_document(kept)
    path = f"R-ONE {table.table_id} ({table.era})"
    parsed = rone.parse_rone(
        data, path=path, area_map=area_map, table_name=table.name, era=table.era
    )
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
