"""Rollup rows: what coverage and dimensions are built from, one per cohort, month,
source and building type.

A rollup row (``RollupRow``) has ``sigungu_code``, ``dong`` (``''`` for a district-level
row), ``property_type``, ``transaction_type``, ``month``, ``source``, ``building_type``
(``''`` when the source does not say), ``samples`` (the number of transactions),
``contracts`` (the contracts among them: the rows of one bulk sale are one,
``svc_core.cohorts.stats.contracts``) and ``bulk_contracts`` (those of several rows). A
contract's rows share every key of a rollup row (its contract date fixes the month), so
contracts add up over rollup rows as samples do. The server keeps such rows in its store
(``cohort_months``); ``rollup_of`` counts them from transactions, and ``tally`` counts
both from contract ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from typing import TypeVar

import attrs

from svc_core.realestate.deal import Deal


@attrs.frozen(slots=True)
class RollupRow:
    """One cohort, month, source and building type with its ``samples``, ``contracts`` and
    ``bulk_contracts`` (see the module docstring). Positional, in the column order of
    ``cohort_months`` (``KEYS`` then ``COUNTS``), so the store builds one per read row
    with one call."""

    sigungu_code: str
    dong: str
    property_type: str
    transaction_type: str
    month: str
    source: str
    building_type: str
    samples: int
    contracts: int
    bulk_contracts: int


COUNTS = ("samples", "contracts", "bulk_contracts")
"""The counts of a rollup row, in the order ``tally`` gives them."""
KEYS = (
    "sigungu_code",
    "dong",
    "property_type",
    "transaction_type",
    "month",
    "source",
    "building_type",
)
"""What a rollup row counts by: its key, in order (``cohort_months``' key columns)."""


K = TypeVar("K", bound=Hashable)


def tally(units: Iterable[tuple[K, Hashable, int]]) -> dict[K, list[int]]:
    """[samples, contracts, bulk contracts] per key from ``(key, contract, rows)``: the
    rows of one contract under one key, given at once or in parts (several units of
    one contract may come one by one, as ``(key, contract, 1)``)."""
    per: Counter[tuple[K, Hashable]] = Counter()
    for key, contract, n in units:
        per[(key, contract)] += n
    out: dict[K, list[int]] = {}
    for (key, _), n in per.items():
        counts = out.get(key)
        if counts is None:
            counts = out[key] = [0, 0, 0]
        counts[0] += n
        counts[1] += 1
        counts[2] += n > 1
    return out


def rollup_of(records: Iterable[Deal], *, dong_level: bool) -> list[RollupRow]:
    """Rollup rows counted from deals: district-level rows, or (``dong_level``) one per
    legal dong, leaving out deals without a dong; ``building_type`` ``''`` when the
    source does not say. A deal without a ``contract_id`` is a contract of its own."""
    units: list[tuple[tuple[str, str, str, str, str, str, str], Hashable, int]] = []
    for i, d in enumerate(records):
        if dong_level and not d.dong:
            continue
        dong = (d.dong or "") if dong_level else ""
        key = (d.sigungu_code, dong, d.property_type, d.transaction_type, d.month, d.source)
        units.append(((*key, d.building_type or ""), d.contract_id or i, 1))
    return [RollupRow(*key, *counts) for key, counts in tally(units).items()]
