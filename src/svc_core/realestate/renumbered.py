"""One deal, one count, across a district's renumbering.

MOLIT serves a renumbered district's months under the new codes, the months before the
change included, and answers ``000`` with no items under a retired code
(docs/data-sources.md, "A deal counts once across a renumbering"). So a store holding a month read under a
retired code (synced before the change, or loaded from a saved file) and the same month
read under a code that replaced it holds each deal twice, under two natural keys (the
key hashes the district).

The rule, applied by the one write path (``svc_server.ingest.writer``) so reads need no
change: **the deal read under the code in force wins**. A record is matched across the
two by its ``twin_key``: the deal's own fields without the district (contract date, dong,
types, price, rent, area, floor, building type and name), the fields the client quoted in
§2.6 matches on. Identical deals are matched one for one (a multiset: two identical
deals under the old code need two under the new one). A split's new codes are told apart
by dong, which the key holds.

- A load of records under a code that replaced others (``regions.replaces``) retracts
  the stored records of those retired codes, in the same months, that have a twin in
  the load (``superseded``).
- A load of records under a retired code (``Region.replaced_by``) stores none that has a
  twin already stored (or in the load) under a code that replaced it: they count as
  duplicates.

An old-code record without a twin stays where it is (a month not yet read under the new
code, or a deal the new read no longer holds) and is still found by a query of either
code through the aliases.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Sequence

import attrs

from svc_core.models import Transaction
from svc_core.regions import region, replaces

TwinKey = tuple[str, str, str, str, int, int, str, int | None, str, str]
"""(property_type, transaction_type, contract date, dong, price, rent, area, floor,
building type, building name): a deal without its district."""


def twin_key(deal: Transaction | StoredTwin) -> TwinKey:
    """The district-free identity of a deal, as read or as stored."""
    day = deal.deal_date
    area = deal.area_m2
    floor = deal.floor
    return (
        deal.property_type,
        deal.transaction_type,
        day.isoformat() if isinstance(day, datetime.date) else day[:10],
        deal.dong or "",
        int(deal.price_krw),
        int(deal.monthly_rent_krw or 0),
        "" if area is None else f"{float(area):.2f}",
        None if floor is None else int(floor),
        deal.building_type or "",
        deal.building_name or "",
    )


def record_twin(record: Transaction) -> TwinKey:
    """``twin_key`` of a record a reader built."""
    return twin_key(record)


@attrs.frozen(slots=True, kw_only=True)
class StoredTwin:
    """A stored record (``excluded`` True: of ``excluded_transactions``) as a load reads
    it to match twins: the columns ``svc_server.store.renumbered`` reads, one call per
    read row, and its ``twin``."""

    natural_key: str
    sigungu_code: str
    month: str
    property_type: str
    transaction_type: str
    deal_date: str
    dong: str | None
    price_krw: int
    monthly_rent_krw: int | None
    area_m2: float | None
    floor: int | None
    building_type: str | None
    building_name: str | None
    excluded: bool
    twin: TwinKey = attrs.field(init=False, default=attrs.Factory(twin_key, takes_self=True))


def retired_into(code: str) -> tuple[str, ...]:
    """The codes that replaced ``code`` when it is retired (``()`` while in use)."""
    found = region(code)
    return found.replaced_by if found is not None else ()


def superseded(older: Sequence[tuple[str, TwinKey]], newer: Iterable[TwinKey]) -> list[str]:
    """The keys of ``older`` records (key, twin) that a record of ``newer`` stands for:
    each ``newer`` twin matches one ``older`` record with the same twin, in key order."""
    left = Counter(newer)
    out = []
    for key, twin in sorted(older):
        if left[twin] > 0:
            left[twin] -= 1
            out.append(key)
    return out


def replaced_codes(codes: Iterable[str]) -> set[str]:
    """The retired codes that any of ``codes`` replaced."""
    return {old for code in codes for old in replaces(code)}
