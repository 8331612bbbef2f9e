"""One load of public data as a value: what every writer (``svc ingest``, ``svc sync
rtms``, ``svc sync rone``, ``svc demo-data``, the marketplace files) hands to
``ingest.commit``, which writes all of it in one transaction.

A load is parsed and checked before it is built, so building one reads and writes
nothing; its parts are optional and a load may carry several (the demo carries deals,
index values and marketplace records). ``report`` is what the reading found; the commit
returns it with ``loaded``, ``duplicate`` and ``retracted`` filled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from svc_core.markets import Activity, Listing
from svc_core.models import IndexObservation, LoadReport
from svc_core.periods import Month
from svc_core.realestate.freshness import MonthKey
from svc_core.sources import ParseResult
from svc_core.sources.datasets import RtmsDataset
from svc_core.sync.rtms import ReadStatus

Progress = Callable[[int, int], None]
"""``progress(done, total)``: records written so far out of the load's records."""


@attrs.frozen(kw_only=True)
class SyncMonth:
    """``svc sync rtms``'s read of one district-month: its state row, and whether the
    month now holds exactly what the read found (``status`` complete: stored records of
    the month the read no longer holds are retracted)."""

    kind: RtmsDataset
    sigungu_code: str
    month: Month
    status: ReadStatus = attrs.field(converter=ReadStatus)
    total_count: int | None
    pages: int
    digest: str | None = None
    """``svc_core.sync.rtms.month_digest`` of a complete read."""
    detail: str = ""


@attrs.frozen(kw_only=True)
class SyncTable:
    """``svc sync rone``'s read of one statistic table for one market-area era."""

    table_id: str
    era: str
    table_name: str
    status: ReadStatus = attrs.field(converter=ReadStatus)
    total_count: int | None = None
    pages: int = 0
    detail: str = ""


@attrs.frozen(kw_only=True)
class Load:
    """Everything one commit writes. ``kind`` and ``digest`` (the content's SHA-256) go
    to the ingest log, which ``logged`` False leaves out (a sync attempt that read no
    record: only its state is written)."""

    kind: str
    report: LoadReport
    digest: str
    transactions: ParseResult | None = None
    file_kind: str | None = None
    """The ``svc ingest`` kind of a file whose district-months completeness records (its
    paging header, or a whole read of each month it holds)."""
    whole_months: tuple[MonthKey, ...] = ()
    """District-months the load holds whole, deals or none (the demo set's districts,
    months and kinds): recorded as loaded."""
    indices: Sequence[IndexObservation] = ()
    listings: Sequence[Listing] = ()
    activity: Sequence[Activity] = ()
    activity_file: bytes | None = None
    """The activity file, read again knowing the stored listings when an activity's
    listing is not among them (its report then names each as ``unknown_listing``)."""
    synthetic: bool = False
    sync_month: SyncMonth | None = None
    sync_table: SyncTable | None = None
    unread_tables: tuple[tuple[str, str, str], ...] | None = None
    """``svc sync rone``: the survey tables of the latest table list it does not read
    (id, name, why), replacing those recorded before."""
    logged: bool = True
    defer_coverage: bool = False
    """Leave the precomputed coverage of the districts written stale, for
    ``ingest.coverage.refresh_stale`` once a run of loads is done, instead of rebuilding
    it in this commit."""
    progress: Progress | None = attrs.field(default=None, eq=False)

    @property
    def records(self) -> int:
        """Records the load would write (its progress total)."""
        held = len(self.transactions.transactions) if self.transactions is not None else 0
        return held + len(self.indices) + len(self.listings) + len(self.activity)


def state_only(
    report: LoadReport,
    *,
    sync_month: SyncMonth | None = None,
    sync_table: SyncTable | None = None,
    unread_tables: tuple[tuple[str, str, str], ...] | None = None,
) -> Load:
    """A sync's read that wrote no record (failed or partial, or the tables it does
    not read): only its state."""
    return Load(
        kind="attempt",
        report=report,
        digest="",
        sync_month=sync_month,
        sync_table=sync_table,
        unread_tables=unread_tables,
        logged=False,
    )
