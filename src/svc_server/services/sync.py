"""``svc sync rtms``: keep the store complete and current from the MOLIT RTMS open API.

For each planned month (``svc_core.sync.rtms.plan``) the service reads page 1, learns
``totalCount``, reads the other pages, and when every item is in writes the month in one
transaction exactly as ``svc ingest`` writes a file holding the same items (same natural
keys, same coverage), retracting what the new read no longer holds: deals now cancelled
and deals gone from the source. The month's state, digest and an ingest-log line are
written in the same transaction.

Failures, by what a retry can fix. A refusal carries a result code, in the gateway's
``OpenAPI_ServiceResponse`` or in a normal answer's ``response/header``; both forms go
through ``svc_core.sync.rtms.classify_gateway``:

- a refused key (code 20, 30, 31, 32, ..., or HTTP 401/403) stops the run at once with
  nothing written (``UpstreamKeyRefused``);
- calls are paced (``SyncOptions.rate`` a second at most, ``svc_core.sync.pace.Pace``);
- a per-second refusal (code 23 or 34, or any code whose ``errMsg`` or ``returnAuthMsg``
  says ``PER_SECOND``: data.go.kr also sends it as 22 and as 99) pauses the run
  (``SyncOptions.pause`` seconds), halves the pace and asks again, spending no retry
  (``upstream.Pause``);
- the daily limit (code 22 without that marker, or HTTP 429) stops the run cleanly; the
  month being read is recorded and the run reports where it stopped
  (``stopped == "limit"``);
- a temporarily disabled key (code 21) is retried with the back-off, then stops the run
  (``stopped == "suspended"``), instead of costing a call on every month left;
- a request the API calls malformed (code 10, 11) stops the run at once
  (``SourceError``): every call is built the same way, so no other month would do better;
- timeouts, 5xx, server-trouble codes (01, 02, 04, 05) and malformed or truncated answers
  are retried ``retries`` times with doubling back-off, then the month is recorded failed
  (no page read) or partial (some pages read) and the run goes on with the others;
- an answer no retry would make usable fails the month at once, and the run goes on: a
  redirect (never followed), a body over ``delivery.fetch``'s cap, JSON nested too deep
  or with an unreadable number, a ``totalCount`` over ``MAX_TOTAL_COUNT``, and a page
  the upstream did not serve as asked (``svc_core.sync.rtms.paging_fault``: another
  ``pageNo`` than asked, or an earlier page served again);
- any other code (``99`` unknown error, ``03`` no data, codes not in the portal's list)
  records the month at once, without a retry, and the run goes on; the next run reads
  the month again;
- the budget: no call is made that would pass it; a month that cannot be finished inside
  it is recorded partial and the run stops (``stopped == "budget"``);
- ``CONNECT_FAILURE_LIMIT`` calls in a row that could not connect (``Reach``) stop the
  run (``stopped == "unreachable"``): months not tried are left as they were.

A month read incompletely never replaces a complete one: its state stays complete and
only the attempt is noted. The retry loop, the budget and the stop when the API cannot be
reached are ``services.upstream``'s, shared with ``svc sync rone``.

Long because each failure rule above is stated beside the code that applies it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence

import attrs

from svc_core.errors import GatewayError, SourceError, UpstreamKeyRefused
from svc_core.models import LoadReport
from svc_core.periods import Month
from svc_core.redact import redact_url
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.rtms import Page, parse_pages, read_page
from svc_core.sync.pace import DEFAULT_RATE, PER_SECOND_PAUSE, Pace
from svc_core.sync.rtms import (
    KEY_HINTS,
    MAX_TOTAL_COUNT,
    Budget,
    Task,
    bare_code,
    classify_gateway,
    month_digest,
    pages_for,
    paging_fault,
    plan,
)
from svc_server.delivery.fetch import Reply
from svc_server.delivery.rtms import RtmsClient
from svc_server.ingest import Load, SyncMonth, commit, state_only
from svc_server.ingest.coverage import refresh_stale
from svc_server.services.upstream import Calls, Failed, Pause, Retry, Stop, Suspended
from svc_server.store import Store

Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: months finished out of the plan, and the month now."""
Finished = Callable[[int, int, "MonthOutcome"], None]
"""``finished(done, total, outcome)``: a month done, and its outcome."""


@attrs.frozen(kw_only=True)
class SyncOptions:
    """What a run reads and how hard it tries."""

    kinds: tuple[RtmsDataset, ...]
    districts: tuple[str, ...]
    first: Month
    last: Month
    current: Month
    refresh_months: int
    budget: int
    page_rows: int
    retries: int = 3
    backoff: float = 2.0
    rate: float = DEFAULT_RATE
    """Calls a second at most (``svc_core.sync.pace.Pace``)."""
    pause: float = PER_SECOND_PAUSE
    """Seconds waited after a per-second refusal before asking again (``--pause``)."""


@attrs.define
class MonthOutcome:
    """One month's result: ``status`` complete/partial/failed, ``unchanged`` when a
    re-read found the same records."""

    task: Task
    status: str
    pages: int = 0
    added: int = 0
    retracted: int = 0
    unchanged: bool = False
    detail: str = ""


@attrs.define
class SyncReport:
    """A run: calls made, months by outcome, rows added and retracted, and where it
    stopped (``stopped``: ``limit``, ``budget``, ``unreachable``, ``suspended``; None when
    done)."""

    planned: int
    calls: int = 0
    pages: int = 0
    months: list[MonthOutcome] = attrs.field(factory=list)
    stopped: str | None = None
    stop_detail: str = ""

    def count(self, status: str) -> int:
        return sum(1 for m in self.months if m.status == status)

    @property
    def added(self) -> int:
        return sum(m.added for m in self.months)

    @property
    def retracted(self) -> int:
        return sum(m.retracted for m in self.months)

    @property
    def unchanged(self) -> int:
        return sum(1 for m in self.months if m.unchanged)


def plan_sync(store: Store, options: SyncOptions) -> tuple[Task, ...]:
    """The months this run would read, from the stored states and the months loaded
    whole from API files by ``svc ingest``."""
    states = store.sync.states(kinds=options.kinds, codes=options.districts)
    ingested = store.sync.ingested(kinds=options.kinds, codes=options.districts)
    return plan(
        options.kinds,
        options.districts,
        options.first,
        options.last,
        states,
        current=options.current,
        refresh_months=options.refresh_months,
        page_rows=options.page_rows,
        loaded_whole={(m.kind, m.sigungu_code, m.month.label) for m in ingested if m.complete},
    )


@attrs.define
class _Run:
    store: Store
    client: RtmsClient
    options: SyncOptions
    clock: Callable[[], float]
    report: SyncReport
    calls: Calls

    def call(self, task: Task, page_no: int) -> Page:
        """One page, retried on passing trouble; raises ``UpstreamKeyRefused``, ``Stop`` or
        ``Failed``."""
        try:
            return self.calls.call(
                lambda: self.client.get_page(
                    task.kind,
                    task.sigungu_code,
                    task.month,
                    page_no=page_no,
                    rows=self.options.page_rows,
                ),
                lambda answer: self._page(answer, task, page_no),
                label=f"page {page_no}: ",
            )
        finally:
            self.report.calls = self.calls.made

    def page(self, task: Task, page_no: int, earlier: Sequence[Page]) -> Page:
        """Page ``page_no`` after the ``earlier`` pages of the month; ``Failed`` when the
        upstream did not serve the page asked (``paging_fault``)."""
        page = self.call(task, page_no)
        fault = paging_fault(page_no, page.page_no, page.items, [p.items for p in earlier])
        if fault is not None:
            raise Failed(f"{fault}; not retried")
        return page

    def _page(self, answer: Reply, task: Task, page_no: int) -> Page:
        where = f"{task.kind.sync_name} {task.sigungu_code} {task.month.label} page {page_no}"
        try:
            page = read_page(answer.body, path=where)
        except GatewayError as exc:
            raise _refusal(exc, where) from None
        except SourceError as exc:
            if answer.status in (401, 403):
                raise UpstreamKeyRefused(
                    f"the API answered HTTP {answer.status}: the service key was refused; "
                    "check --service-key / SVC_DATA_GO_KR_KEY"
                ) from None
            if answer.status == 429:
                raise Stop("limit", "the API answered HTTP 429 (too many requests)") from None
            status = f"HTTP {answer.status}: " if answer.status != 200 else ""
            raise Retry(f"{status}{exc.message}") from None
        if answer.status != 200:
            raise Retry(f"{where}: HTTP {answer.status}")
        if page.total_count is None:
            raise Retry(f"{where}: the answer has no totalCount")
        if page.total_count > MAX_TOTAL_COUNT:
            raise Failed(
                f"{where}: totalCount {page.total_count:,} is more than a month holds "
                f"(at most {MAX_TOTAL_COUNT:,} are believed; not retried)"
            )
        return page

    def month(self, task: Task) -> MonthOutcome:
        """Read and write one month; a ``Stop`` is recorded and raised on."""
        pages: list[Page] = []
        try:
            first = self.page(task, 1, pages)
            pages.append(first)
            total = first.total_count or 0
            size = self.options.page_rows
            if 0 < len(first.items) < min(size, total):
                size = len(first.items)  # the service honours a smaller page than asked
            needed = pages_for(total, size)
            short = self.calls.cannot_finish(needed - 1, "this month")
            if short is not None:
                raise short
            for page_no in range(2, needed + 1):
                pages.append(self.page(task, page_no, pages))
        except Failed as exc:
            self.report.pages += len(pages)
            return self.incomplete(task, pages, str(exc))
        except Stop as exc:
            if pages or exc.reason in ("limit", "suspended"):  # a call was made for it
                self.report.pages += len(pages)
                self.report.months.append(self.incomplete(task, pages, exc.detail))
            raise
        self.report.pages += len(pages)
        read = sum(len(p.items) for p in pages)
        if read != total:
            return self.incomplete(
                task, pages, f"read {read} items of totalCount {total} (changed while paging?)"
            )
        return self.write(task, pages, total)

    def incomplete(self, task: Task, pages: Sequence[Page], detail: str) -> MonthOutcome:
        status = "partial" if pages else "failed"
        month = SyncMonth(
            kind=task.kind,
            sigungu_code=task.sigungu_code,
            month=task.month,
            status=status,
            total_count=pages[0].total_count if pages else None,
            pages=len(pages),
            detail=detail,
        )
        commit(
            self.store,
            state_only(LoadReport(path=self.path(task)), sync_month=month),
            now=self.clock(),
        )
        return MonthOutcome(task=task, status=status, pages=len(pages), detail=detail)

    def path(self, task: Task) -> str:
        return (
            f"{redact_url(self.client.url(task.kind))}?LAWD_CD={task.sigungu_code}"
            f"&DEAL_YMD={task.month.year:04d}{task.month.month:02d}"
        )

    def write(self, task: Task, pages: Sequence[Page], total: int) -> MonthOutcome:
        result = parse_pages(pages, task.kind, path=self.path(task))
        digest = month_digest((t.natural_key for t in result.transactions), result.retracted_keys)
        with self.store.data.transaction(write=False) as tx:
            old = self.store.sync.get(tx, task.kind, task.sigungu_code, task.month)
        month_id = f"sync|{task.kind.sync_name}|{task.sigungu_code}|{task.month.label}"
        load = Load(
            kind=task.kind.ingest_kind,
            report=result.report,
            digest=hashlib.sha256(month_id.encode()).hexdigest(),
            transactions=result,
            defer_coverage=True,
            sync_month=SyncMonth(
                kind=task.kind,
                sigungu_code=task.sigungu_code,
                month=task.month,
                status="complete",
                total_count=total,
                pages=len(pages),
                digest=digest,
            ),
        )
        report = commit(self.store, load, now=self.clock()).report
        unchanged = (
            old is not None
            and old.status == "complete"
            and old.digest == digest
            and report.loaded == 0
            and report.retracted == 0
        )
        return MonthOutcome(
            task=task,
            status="complete",
            pages=len(pages),
            added=report.loaded,
            retracted=report.retracted,
            unchanged=unchanged,
        )


def _refusal(exc: GatewayError, where: str) -> Exception:
    """What a refusal with a result code does to the run (``classify_gateway``, which
    reads the messages before the code): the exception to raise from the page."""
    said = " ".join(p for p in (exc.reason_code, exc.auth_message) if p and p != "?")
    verdict = classify_gateway(exc.reason_code, exc.auth_message, exc.error_message)
    if verdict == "key":
        hint = KEY_HINTS.get(bare_code(exc.reason_code), "the key is not usable here")
        return UpstreamKeyRefused(
            f"the API refused the service key ({said or 'no code'}): {hint}; "
            "check --service-key / SVC_DATA_GO_KR_KEY and that the key is approved "
            "for this service"
        )
    if verdict == "limit":
        return Stop("limit", f"the key's daily call limit is reached ({said})")
    if verdict == "pace":
        return Pause(f"too many calls a second ({said})")
    if verdict == "suspended":
        return Suspended(
            f"the API has temporarily disabled the service key ({said}); finished months "
            "are kept: run the same command again later, and if it persists check the "
            "key's state on data.go.kr"
        )
    if verdict == "request":
        return SourceError(
            f"the API refused the request as malformed ({said}); the run stops, as every "
            "call is built the same way. This is a bug in svc, or SVC_RTMS_BASE_URL points "
            "at a service that differs: please report it",
            path=where,
        )
    if verdict == "retry":
        return Retry(exc.message)
    return Failed(f"{exc.message} (not retried; the next run reads this month again)")


COVERAGE_REFRESH_SECONDS = 60.0
"""How long the precomputed coverage of the districts a run wrote may wait to be rebuilt
(each month's write leaves it stale; answers meanwhile build it from the rollup)."""


def sync_rtms(
    store: Store,
    client: RtmsClient,
    tasks: Sequence[Task],
    options: SyncOptions,
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    monotonic: Callable[[], float] = time.monotonic,
    progress: Progress | None = None,
    finished: Finished | None = None,
) -> SyncReport:
    """Read ``tasks`` (from ``plan_sync``) in order; ``UpstreamKeyRefused`` when the key is
    refused (nothing written by this run). ``progress`` before each month, ``finished``
    after."""
    run = _Run(
        store=store,
        client=client,
        options=options,
        clock=clock,
        report=SyncReport(planned=len(tasks)),
        calls=Calls(
            budget=Budget(options.budget),
            retries=options.retries,
            backoff=options.backoff,
            sleep=sleep,
            base_url=client.base_url,
            pace=Pace.of_rate(options.rate),
            clock=monotonic,
            pause=options.pause,
        ),
    )
    refreshed = clock()
    try:
        for done, task in enumerate(tasks):
            if progress is not None:
                progress(
                    done,
                    len(tasks),
                    f"{task.kind.sync_name} {task.sigungu_code} {task.month.label}",
                )
            try:
                outcome = run.month(task)
            except Stop as stop:
                run.report.stopped = stop.reason
                run.report.stop_detail = stop.detail
                break
            run.report.months.append(outcome)
            if finished is not None:
                finished(done + 1, len(tasks), outcome)
            if clock() - refreshed >= COVERAGE_REFRESH_SECONDS:
                refresh_stale(store)
                refreshed = clock()
    finally:
        refresh_stale(store)
    if progress is not None:
        progress(len(run.report.months), len(tasks), "")
    return run.report
