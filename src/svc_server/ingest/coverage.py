"""The coverage rows precomputed at load time: inside the load's transaction, every
district it touched (and any district still missing them) gets its finished coverage
rows at both granularities and for every building-type filter, so ``GET
/api/v1/real-estate/coverage`` without a district reads rows instead of building them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from svc_core.models import BUILDING_TYPES
from svc_core.realestate import coverage as core_coverage
from svc_core.realestate import query as q
from svc_core.realestate.rollup import RollupRow
from svc_server.store import Store
from svc_server.store.loading import Writer, loading

COVERAGE_TYPES: tuple[str | None, ...] = (None, *BUILDING_TYPES)
"""The building-type filters coverage is precomputed for (None: every deal)."""


def refresh_coverage(
    w: Writer,
    codes: Iterable[str],
    *,
    rollup: Sequence[RollupRow] | None = None,
    stale: bool = True,
) -> int:
    """Rebuild the precomputed coverage rows of districts ``codes`` (and, with
    ``stale``, of any district still missing them) inside the load's transaction;
    return the rows written.

    ``rollup`` may hand over the complete rollup rows of ``codes`` when the caller has
    them in memory (a first load into an empty store); by default they are read.
    """
    wanted = sorted(set(codes) | (w.realestate.stale_coverage_districts(w.tx) if stale else set()))
    if not wanted:
        return 0
    if rollup is None or set(wanted) - set(codes):
        rollup = w.realestate.rollup(codes=wanted, dong_level=None, tx=w.tx)
    district = [r for r in rollup if r.dong == ""]
    dongs = [r for r in rollup if r.dong != ""]
    names = w.realestate.district_names(wanted, tx=w.tx)
    records = [
        record
        for level, rows in ((False, district), (True, dongs))
        for record in core_coverage.build_coverage(
            rows, q.GRANULARITIES, dong_level=level, names=names, building_types=COVERAGE_TYPES
        )
    ]
    w.realestate.replace_coverage(w.tx, wanted, records)
    return len(records)


STALE_BATCH = 16
"""Districts rebuilt per transaction by ``refresh_stale``: a write holds the data file
for a few of them at a time, not for the whole country."""


def refresh_stale(store: Store) -> int:
    """Rebuild the coverage of every district a deferred load left stale (``Load.
    defer_coverage``: ``svc ingest`` of several files, ``svc sync rtms``), a few
    districts per transaction; return the districts rebuilt.

    A load rebuilds the coverage of each district it touches, from the district's whole
    rollup: across the thousands of files or months of a national load that is most of
    the work, each district rebuilt once per file. Deferred, each is rebuilt once."""
    done = 0
    while True:
        with loading(store) as w:
            stale = sorted(w.realestate.stale_coverage_districts(w.tx))[:STALE_BATCH]
            if not stale:
                break
            refresh_coverage(w, stale, stale=False)
        done += len(stale)
    return done
