"""``svc sync rtms`` and ``svc sync status``: keeping the store current from the official
MOLIT RTMS open API, and showing what it holds. See docs/sync.md.

Long because two commands live here, each with its flags, its output and (``sync rtms``)
an exit status per way a run can end.

Exit status of ``svc sync rtms`` (``EXIT_*``):

| code | meaning |
|---|---|
| 0 | every planned month is complete (or there was nothing to do) |
| 1 | some months failed or are partial after retries; the others are done |
| 2 | bad usage or configuration, or the API refused the key or the request: nothing more written |
| 3 | the key's daily call limit was reached: run again after midnight KST |
| 4 | the budget (``--budget``) was used up before the plan was done: run again |
| 5 | the API could not be reached (``CONNECT_FAILURE_LIMIT`` failed connects in a row): the months not tried are left missing |
| 6 | the API has temporarily disabled the key (code 21) and retries did not help: run again later |
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from contextlib import closing
from typing import Any

from svc_core.errors import InvalidParams
from svc_core.instants import iso_or_none
from svc_core.params import ascii_int
from svc_core.periods import Month, parse_month
from svc_core.realestate.region_search import resolve
from svc_core.regions import region, region_name, regions_in_use
from svc_core.sources.datasets import RtmsDataset
from svc_core.sync.pace import DEFAULT_RATE, PER_SECOND_PAUSE
from svc_core.sync.rtms import (
    CONNECT_FAILURE_LIMIT,
    DEFAULT_BUDGET,
    DEFAULT_PAGE_ROWS,
    DEFAULT_REFRESH_MONTHS,
    district_status,
    planned_calls,
)
from svc_server.commands import sync_rone, sync_status
from svc_server.commands.base import ProgressBar, actions, publish_data_events, store_from_args
from svc_server.delivery.rtms import DEFAULT_BASE_URL, RtmsClient
from svc_server.services import sync

EXIT_OK = 0
EXIT_INCOMPLETE = 1
EXIT_DAILY_LIMIT = sync_rone.EXIT_DAILY_LIMIT
EXIT_BUDGET = sync_rone.EXIT_BUDGET
EXIT_UNREACHABLE = sync_rone.EXIT_UNREACHABLE
EXIT_SUSPENDED = 6
KEY_ENV = "SVC_DATA_GO_KR_KEY"
BASE_URL_ENV = "SVC_RTMS_BASE_URL"
KST = datetime.timezone(datetime.timedelta(hours=9))
_KIND_NAMES = tuple(d.sync_name for d in RtmsDataset)
_DEFAULT_KINDS = tuple(d.sync_name for d in RtmsDataset if d.synced_by_default)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    inner = actions(
        sub,
        common,
        "sync",
        "SUBCOMMAND",
        description="Keep the store complete and current from the official APIs.",
    )

    r = inner.add(
        "rtms",
        cmd_rtms,
        "read MOLIT RTMS months from the open API",
        description=(
            "Read months x districts x kinds from the MOLIT RTMS open API (base URL from "
            f"{BASE_URL_ENV}, default {DEFAULT_BASE_URL}). Complete months older than the "
            "refresh window are skipped; the latest --refresh-months are re-read and what "
            "changed is applied. Progress: a bar on a terminal, a line per month otherwise. "
            "Exit 0 all complete, 1 some months failed or partial, 2 usage error or key "
            "refused, 3 daily limit reached, 4 budget used up, 5 the API could not be "
            f"reached ({CONNECT_FAILURE_LIMIT} calls in a row could not connect), 6 the API "
            "has temporarily disabled the key (code 21)."
        ),
    )
    r.add_argument(
        "--service-key", metavar="KEY", help=f"data.go.kr key, either form (env {KEY_ENV})"
    )
    where = r.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--sigungu",
        metavar="DISTRICT[,DISTRICT...]",
        help="districts in use: 5-digit codes or unambiguous names (부천시원미구, 'Bucheon Wonmi')",
    )
    where.add_argument(
        "--all", action="store_true", help="every district in use (the bundled code table)"
    )
    r.add_argument(
        "--from", dest="first", required=True, metavar="YYYY-MM", help="first month to fetch"
    )
    r.add_argument(
        "--to", dest="last", metavar="YYYY-MM", help="last month (default: the current one, KST)"
    )
    r.add_argument(
        "--kinds",
        default=",".join(_DEFAULT_KINDS),
        metavar="KIND[,KIND...]",
        help=f"of {', '.join(_KIND_NAMES)} (default: {','.join(_DEFAULT_KINDS)})",
    )
    r.add_argument(
        "--budget",
        type=ascii_int,
        default=DEFAULT_BUDGET,
        metavar="N",
        help=f"most API calls this run makes (default {DEFAULT_BUDGET})",
    )
    r.add_argument(
        "--refresh-months",
        type=ascii_int,
        default=DEFAULT_REFRESH_MONTHS,
        metavar="N",
        help=f"latest months re-read even when complete (default {DEFAULT_REFRESH_MONTHS})",
    )
    r.add_argument(
        "--page-size",
        type=ascii_int,
        default=DEFAULT_PAGE_ROWS,
        metavar="N",
        help=f"numOfRows asked per call (default {DEFAULT_PAGE_ROWS})",
    )
    r.add_argument(
        "--retries", type=ascii_int, default=3, metavar="N", help="retries of a failing call (3)"
    )
    r.add_argument(
        "--backoff",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="first retry delay, doubled each retry (2)",
    )
    r.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        metavar="CALLS",
        help=f"most calls a second (default {DEFAULT_RATE:g}); halved on a per-second refusal",
    )
    r.add_argument(
        "--pause",
        type=float,
        default=PER_SECOND_PAUSE,
        metavar="SECONDS",
        help=f"wait after a per-second refusal before asking again (default {PER_SECOND_PAUSE:g})",
    )
    r.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help=sync_rone.TIMEOUT_HELP
    )
    r.add_argument("--dry-run", action="store_true", help="print the plan; call nothing")

    s = inner.add(
        "status",
        cmd_status,
        "months synced, loaded by svc ingest, or missing, per kind and district",
    )
    s.add_argument(
        "--sigungu",
        metavar="DISTRICT[,DISTRICT...]",
        help="only these districts (codes, retired ones too, or names)",
    )
    s.add_argument("--kinds", metavar="KIND[,KIND...]", help="only these kinds")
    s.add_argument("--from", dest="first", metavar="YYYY-MM", help="months from this one")
    s.add_argument("--to", dest="last", metavar="YYYY-MM", help="months up to this one")
    s.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    sync_rone.register(inner)


def _parts(raw: str) -> tuple[str, ...]:
    parts = tuple(dict.fromkeys(c.strip() for c in raw.split(",") if c.strip()))
    if not parts:
        raise InvalidParams("--sigungu takes district codes or names, e.g. 11680 or 부천시원미구")
    return parts


def _codes(raw: str) -> tuple[str, ...]:
    """The districts in use that ``raw`` names (codes or names, comma-separated); a
    retired code is refused, naming the codes that replaced it."""
    return tuple(dict.fromkeys(resolve(part).code for part in _parts(raw)))


def _status_codes(raw: str) -> tuple[str, ...]:
    """Like ``_codes``, but a retired code of the table is taken as it is: its months
    may have been synced before it was retired."""
    codes = []
    for part in _parts(raw):
        found = region(part)
        codes.append(found.code if found is not None else resolve(part).code)
    return tuple(dict.fromkeys(codes))


def _kinds(raw: str) -> tuple[RtmsDataset, ...]:
    """The datasets ``--kinds`` names (``RtmsDataset.sync_name``), in its order."""
    names = tuple(dict.fromkeys(k.strip() for k in raw.split(",") if k.strip()))
    try:
        kinds = tuple(RtmsDataset.of_sync_name(name) for name in names)
    except ValueError:
        kinds = ()
    if not kinds:
        raise InvalidParams(f"--kinds takes {', '.join(_KIND_NAMES)}; got {raw!r}")
    return kinds


def _month(raw: str, flag: str) -> Month:
    return parse_month(raw.strip(), hint=f"{flag} takes YYYY-MM, e.g. 2025-06")


def _positive(value: int, flag: str, low: int = 1) -> int:
    if value < low:
        raise InvalidParams(f"{flag} must be at least {low}")
    return value


def options_from_args(args: argparse.Namespace, now: float) -> sync.SyncOptions:
    """The run's options; ``InvalidParams`` for a bad flag."""
    current = Month.of(datetime.datetime.fromtimestamp(now, KST).date())
    first = _month(args.first, "--from")
    last = _month(args.last, "--to") if args.last else current
    if last < first:
        raise InvalidParams("--to is before --from")
    districts = tuple(r.code for r in regions_in_use()) if args.all else _codes(args.sigungu)
    return sync.SyncOptions(
        kinds=_kinds(args.kinds),
        districts=districts,
        first=first,
        last=last,
        current=current,
        refresh_months=_positive(args.refresh_months, "--refresh-months", 0),
        budget=_positive(args.budget, "--budget"),
        page_rows=_positive(args.page_size, "--page-size"),
        retries=_positive(args.retries, "--retries", 0),
        backoff=max(args.backoff, 0.0),
        rate=_rate(args.rate),
        pause=_pause(args.pause),
    )


def _rate(value: float) -> float:
    if not 0 < value <= 1000:
        raise InvalidParams("--rate must be a number of calls a second, above 0 and at most 1000")
    return value


def _pause(value: float) -> float:
    if not 0 <= value <= 60:
        raise InvalidParams("--pause must be a number of seconds, from 0 to 60")
    return value


def _month_line(month: sync.MonthOutcome) -> str:
    """One month's outcome, as the progress lines and the end of a run show it."""
    task = month.task
    what = f"{task.kind.sync_name} {task.sigungu_code} {task.month.label}: {month.status}"
    if month.status != "complete":
        return f"{what}: {month.detail}"
    if month.unchanged:
        return f"{what} (unchanged)"
    return f"{what}, {month.added} added, {month.retracted} retracted"


def _summary(report: sync.SyncReport) -> str:
    return (
        f"sync rtms: {report.calls} calls, {report.pages} pages; months: "
        f"{report.count('complete')} complete ({report.unchanged} unchanged), "
        f"{report.count('partial')} partial, {report.count('failed')} failed, "
        f"{report.planned - len(report.months)} not reached; rows: {report.added} added, "
        f"{report.retracted} retracted"
        + (" (0 changes)" if report.added == report.retracted == 0 else "")
    )


def cmd_rtms(args: argparse.Namespace) -> int:
    now = time.time()
    options = options_from_args(args, now)
    key = args.service_key or os.environ.get(KEY_ENV, "")
    base_url = os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL
    with closing(store_from_args(args)) as store:
        tasks = sync.plan_sync(store, options)
        if args.dry_run:
            months = len({t.month for t in tasks})
            print(
                f"plan: {len(tasks)} month reads ({months} months x "
                f"{len(options.districts)} districts x {len(options.kinds)} kinds, "
                f"complete months before the refresh window skipped); "
                f"at least {planned_calls(tasks)} calls of a budget of {options.budget}"
            )
            for task in tasks:
                print(
                    f"  {task.kind.sync_name} {task.sigungu_code} {task.month.label} "
                    f"({task.reason}, {task.calls} call{'s' if task.calls > 1 else ''})"
                )
            return EXIT_OK
        if not key.strip():
            raise sync_rone.missing_key("data.go.kr", KEY_ENV, "getting-a-datagokr-key")
        if not 0 < args.timeout < float("inf"):
            raise InvalidParams("--timeout must be a positive number of seconds")
        with (
            closing(RtmsClient(key, base_url=base_url, timeout=args.timeout)) as client,
            ProgressBar(sys.stderr, lines=sys.stdout) as bar,
        ):
            report = sync.sync_rtms(
                store,
                client,
                tasks,
                options,
                clock=time.time,
                sleep=time.sleep,
                progress=bar.show,
                finished=bar.steps(_month_line),
            )
        publish_data_events(args, store)
    for month in report.months:
        if month.status != "complete":
            task = month.task
            print(
                f"  {month.status}: {task.kind.sync_name} {task.sigungu_code} {task.month.label}: "
                f"{month.detail}",
                file=sys.stderr,
            )
    print(_summary(report))
    if report.stopped == "unreachable":
        return sync_rone.unreachable(report.stop_detail, BASE_URL_ENV)
    if report.stopped == "suspended":
        print(f"svc: stopped: {report.stop_detail}", file=sys.stderr)
        return EXIT_SUSPENDED
    if report.stopped == "limit":
        return sync_rone.stopped(
            report.stop_detail,
            "finished months are kept. Run the same command again after midnight KST to resume.",
            EXIT_DAILY_LIMIT,
        )
    if report.stopped == "budget":
        return sync_rone.stopped(
            report.stop_detail, "run the same command again to continue.", EXIT_BUDGET
        )
    if report.count("partial") or report.count("failed"):
        return EXIT_INCOMPLETE
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """Per kind and district: the months svc sync read complete, partial or failed, the
    months loaded from files by svc ingest (with the files, and whether the month is
    known whole), the missing ones (months of the range with neither; the range defaults
    to the first and last month known) and the last sync time (UTC)."""
    kinds = _kinds(args.kinds) if args.kinds else ()
    codes = _status_codes(args.sigungu) if args.sigungu else ()
    first = _month(args.first, "--from") if args.first else None
    last = _month(args.last, "--to") if args.last else None
    with closing(store_from_args(args, reads_only=True)) as store:
        states = store.sync.states(kinds=kinds, codes=codes)
        ingested = store.sync.ingested(kinds=kinds, codes=codes)
        tables = store.sync.tables()
        rejected = sync_status.rejected_months(store, codes, first, last)
    rows = district_status(
        states.values(), kinds=kinds, districts=codes, first=first, last=last, ingested=ingested
    )
    if args.json:
        doc = {
            "districts": [
                {
                    "kind": r.kind.sync_name,
                    "sigungu_code": r.sigungu_code,
                    "sigungu": region_name(r.sigungu_code),
                    "complete": list(r.complete),
                    "partial": list(r.partial),
                    "failed": list(r.failed),
                    "missing": list(r.missing),
                    "ingested": [
                        {"month": i.month.label, "sources": list(i.sources), "complete": i.complete}
                        for i in r.ingested
                    ],
                    "last_synced_at": iso_or_none(r.last_synced_at),
                }
                for r in rows
            ],
            "rone_tables": sync_rone.shown_tables(tables),
            "rejected": sync_status.rejected_json(rejected),
        }
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not rows and not tables and not rejected:
        print("sync status: nothing synced yet")
    for t in tables:
        print(sync_rone.status_line(t))
    for r in rows:
        parts = []
        for name in ("complete", "partial", "failed", "missing"):
            months = getattr(r, name)
            shown = f" ({', '.join(months)})" if months and name != "complete" else ""
            parts.append(f"{name} {len(months)}{shown}")
        if r.ingested:
            loaded = ", ".join(sync_status.ingested_text(i) for i in r.ingested)
            parts.append(f"ingested {len(r.ingested)} ({loaded})")
        print(
            f"{r.kind.sync_name} {r.sigungu_code} {region_name(r.sigungu_code) or ''}: "
            + ", ".join(parts)
            + f"; last sync {iso_or_none(r.last_synced_at) or 'never'}"
        )
    for line in sync_status.rejected_lines(rejected):
        print(line)
    return EXIT_OK
