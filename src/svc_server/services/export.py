"""``svc export``: the datasets it writes, read from the store a page at a time.

The deals are the listing's records (``record_of``, as ``GET .../transactions`` serves
them), kept and excluded, district by district in the listing's order (contract date,
natural key, a kept record before an excluded one of the same key); the rollups are the
pulse rollup rows (district and dong level). Each district's records are read in pages
of ``EXPORT_PAGE``, each page in its own short transaction, so memory stays flat however
large the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from svc_core.realestate import listing as core
from svc_core.realestate.record import TransactionRecord, record_of
from svc_core.realestate.rollup import RollupRow
from svc_server.store import Store
from svc_server.store.transactions import Selection

EXPORT_PAGE = 1000
"""Records per store read."""


def deal_records(store: Store) -> Iterator[TransactionRecord]:
    """Every record the store holds, kept or excluded (``excluded`` and
    ``excluded_reason`` say which), by district code, then in the listing's order."""
    for code, pairs in groupby(store.realestate.listed_months(), key=lambda pair: pair[0]):
        selection = Selection(
            codes=(code,), months=tuple(month for _, month in pairs), include_excluded=True
        )
        after = None
        while True:
            rows = store.realestate.listing(selection, after=after, limit=EXPORT_PAGE)
            yield from (record_of(r) for r in rows)
            if len(rows) < EXPORT_PAGE:
                break
            after = core.sort_key(rows[-1])


def rollup_rows(store: Store) -> list[RollupRow]:
    """Every rollup row, district and dong level."""
    return store.realestate.rollup(dong_level=None)
