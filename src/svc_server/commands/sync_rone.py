"""``svc sync rone``: the R-ONE commercial rental survey from its open API (docs/sync.md).

Exit status as ``svc sync rtms`` (``commands.sync``): 0 every table complete, 1 some
failed or partial, R-ONE refused a request as malformed, no table to read, or nothing
loaded, 2 usage error or key refused, 3 daily limit, 4 budget used up, 5 the API could
not be reached.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from svc_core.errors import InvalidParams
from svc_core.instants import iso_or_none
from svc_core.params import ascii_int
from svc_core.redact import redact_url
from svc_core.sources import rone
from svc_core.sync.rtms import CONNECT_FAILURE_LIMIT, DEFAULT_BUDGET
from svc_server import ingest
from svc_server.commands.base import Actions, ProgressBar, store_from_args
from svc_server.commands.infile import max_bytes, read_regular
from svc_server.delivery.rone import DEFAULT_BASE_URL, RoneClient
from svc_server.services import sync_rone
from svc_server.store.sync import UNREAD

KEY_ENV = "SVC_RONE_KEY"
BASE_URL_ENV = "SVC_RONE_BASE_URL"
TIMEOUT_HELP = "each call as a whole, from connecting to the last byte (30)"
EXIT_DAILY_LIMIT = 3
"""The key's daily call limit was reached (the same code for ``svc sync rtms``)."""
EXIT_BUDGET = 4
"""The budget (``--budget``) was used up (the same code for ``svc sync rtms``)."""
EXIT_UNREACHABLE = 5
"""The API could not be reached: ``CONNECT_FAILURE_LIMIT`` calls in a row did not connect
(the same code for ``svc sync rtms``)."""


def unreachable(what: str, base_url_env: str) -> int:
    """Say that the API could not be reached, ``svc: error: WHAT: check the network or
    BASE_URL_ENV`` on stderr; the exit status ``EXIT_UNREACHABLE``."""
    print(f"svc: error: {what}: check the network or {base_url_env}", file=sys.stderr)
    return EXIT_UNREACHABLE


def stopped(detail: str, advice: str, status: int) -> int:
    """Say why a sync stopped before its plan was done, ``svc: stopped: DETAIL; ADVICE``
    on stderr; its exit status."""
    print(f"svc: stopped: {detail}; {advice}", file=sys.stderr)
    return status


def register(inner: Actions) -> None:
    p = inner.add(
        "rone",
        cmd_rone,
        "read the R-ONE commercial rental survey from its open API",
        description=(
            "List the R-ONE statistic tables, choose the commercial rental survey's "
            "(임대동향) tables of vacancy, rent, floor rents and utility ratios, rent index, "
            "yields and net operating income of all five classes by name, read each "
            "(quarterly, and annual where offered) 1,000 rows a call as XML, list the "
            "survey's tables whose names it cannot read, and load every table's "
            "rows under its own era (each era is its own table; the linked (시계열) series "
            "is a series of its own, preferred by /indices where it exists). Every market "
            "area is served under its own code A<CLS_ID>; the area map adds districts. "
            f"Base URL from {BASE_URL_ENV} (default {DEFAULT_BASE_URL}). Progress: a bar "
            "on a terminal, a line per table otherwise. Exit 0 all complete, 1 some failed "
            "or partial, a malformed request, no table or nothing loaded, 2 usage error or "
            "key refused, 3 daily limit reached, 4 budget used up, 5 the API could not be "
            f"reached ({CONNECT_FAILURE_LIMIT} calls in a row could not connect)."
        ),
    )
    p.add_argument("--service-key", metavar="KEY", help=f"the R-ONE key (env {KEY_ENV})")
    p.add_argument(
        "--area-map",
        type=Path,
        metavar="CSV",
        help="market-area table (market_area,sigungu_code); default: the bundled one "
        "(svc_core/data/rone_areas.csv)",
    )
    p.add_argument(
        "--budget",
        type=ascii_int,
        default=DEFAULT_BUDGET,
        metavar="N",
        help="most calls this run makes",
    )
    p.add_argument(
        "--retries", type=ascii_int, default=3, metavar="N", help="retries of a failing call (3)"
    )
    p.add_argument(
        "--backoff", type=float, default=2.0, metavar="SECONDS", help="first retry delay (2)"
    )
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help=TIMEOUT_HELP)


def _table_line(t: sync_rone.TableOutcome) -> str:
    line = (
        f"{t.table.table_id} {t.table.name} [era {t.table.era}, {'+'.join(t.table.cycles)}]: "
        f"{t.status}, {t.rows} rows, {t.loaded} loaded, {t.held} already held, "
        f"{t.outside_era} outside its era"
    )
    return line + (f" ({t.detail})" if t.detail else "")


def status_line(t: Mapping[str, Any]) -> str:
    """A ``sync_tables`` row as ``svc sync status`` shows it: a table read, with its era
    and values, or a survey table svc cannot read by name, with why."""
    if t["status"] == UNREAD:
        return f"rone {t['table_id']} {t['table_name']}: not read ({t['detail']})"
    return (
        f"rone {t['table_id']} {t['table_name']} ({t['era']}): {t['status']}, "
        f"{t['loaded']} values loaded; last sync {iso_or_none(t['fetched_at']) or 'never'}"
    )


def cmd_rone(args: argparse.Namespace) -> int:
    key = args.service_key or os.environ.get(KEY_ENV, "")
    if not key.strip():
        raise missing_key("R-ONE", KEY_ENV, "r-one-svc-sync-rone")
    if args.budget < 1 or args.retries < 0:
        raise InvalidParams("--budget must be at least 1 and --retries at least 0")
    if not 0 < args.timeout < math.inf:
        raise InvalidParams("--timeout must be a positive number of seconds")
    area_map: ingest.AreaMap = rone.DEFAULT_AREA_MAP
    if args.area_map is not None:
        data = read_regular(args.area_map, max_bytes(None))
        area_map = ingest.parse_area_map(data, path=str(args.area_map))
    base_url = os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL
    with (
        closing(store_from_args(args)) as store,
        closing(RoneClient(key, base_url=base_url, timeout=args.timeout)) as client,
        ProgressBar(sys.stderr, lines=sys.stdout) as bar,
    ):
        report = sync_rone.sync_rone(
            store,
            client,
            area_map=area_map,
            budget=args.budget,
            now=time.time(),
            sleep=time.sleep,
            retries=args.retries,
            backoff=max(args.backoff, 0.0),
            progress=bar.show,
            finished=bar.steps(_table_line),
        )
    for table, why in report.skipped:
        print(f"  {table.table_id} {table.name}: skipped ({why})")
    for table_id, name, why in report.unread:
        print(f"  {table_id} {name}: not read ({why})")
    if report.unread:
        print(
            f"  {len(report.unread)} survey (임대동향) tables not read: their names are "
            "listed above and in svc sync status"
        )
    if bar.lines is None:  # the progress lines said it already
        for t in report.tables:
            print(f"  {_table_line(t)}")
    if report.unmapped:
        shown = ", ".join(
            f"{path} ({cls_id})" for path, cls_id in list(report.unmapped.items())[:12]
        )
        more = len(report.unmapped) - 12
        print(
            f"  {len(report.unmapped)} market areas map to no district (served under "
            f"A<CLS_ID>; map them with --area-map): {shown}"
            + (f" and {more} more" if more > 0 else "")
        )
    values = sum(t.loaded + t.held for t in report.tables)
    print(
        f"sync rone: {report.calls} calls; tables: "
        f"{report.count('complete')} complete, {report.count('partial')} partial, "
        f"{report.count('failed')} failed; {sum(t.loaded for t in report.tables)} values loaded"
    )
    if report.stopped == "unreachable":
        return unreachable(f"cannot reach {redact_url(base_url)}", BASE_URL_ENV)
    if report.stopped == "limit":
        return stopped(report.stop_detail, "run again tomorrow.", EXIT_DAILY_LIMIT)
    if report.stopped == "budget":
        return stopped(report.stop_detail, "run again to continue.", EXIT_BUDGET)
    if report.stopped in ("failed", "request", "nothing"):
        print(f"svc: error: {report.stop_detail}", file=sys.stderr)
        return 1
    if report.count("failed") or report.count("partial"):
        return 1
    if not values:
        print(
            "svc: error: nothing loaded: the tables read hold no value svc serves",
            file=sys.stderr,
        )
        return 1
    return 0


def shown_tables(tables: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``svc sync status --json``'s R-ONE table states: times as ISO text, and each
    recorded reason with any key in it hidden (a row written before svc hid them)."""
    return [
        {**t, "fetched_at": iso_or_none(t["fetched_at"]), "detail": redact_url(t["detail"])}
        for t in tables
    ]


def missing_key(issuer: str, env: str, section: str) -> InvalidParams:
    """The error of a sync run without its key: where to give it, and the section of
    docs/sync.md that says how to get one."""
    return InvalidParams(
        f"give the {issuer} key: --service-key KEY or {env} "
        f"(how to get one: docs/sync.md#{section})"
    )
