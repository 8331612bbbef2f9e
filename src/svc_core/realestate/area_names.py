"""Per-area field names that say their unit (issue 28, item 5).

A row field whose name ends in ``_per_m2`` holds an amount per area. Rows keep one
attribute name (``median_price_per_m2``) and say their unit (``area_unit``); where a
row is served (JSON keys, CSV columns) the name follows the unit: ``_per_m2`` becomes
``_per_<unit>``, so ``area_unit=pyeong`` answers carry ``median_price_per_pyeong`` and
no ``*_per_m2`` key. The rule is by suffix, so every per-area field added later follows
it without a list to update. ``avg_area_m2`` is an area, not an amount per area: its
name does not end in ``_per_m2`` and never changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from svc_core.cohorts.stats import AREA_UNITS

PER_AREA_SUFFIX = "_per_m2"
"""The stored name's suffix of every per-area field."""


def suffix(area_unit: str) -> str:
    """``_per_m2`` or ``_per_pyeong``; ``ValueError`` for a unit the API does not have."""
    if area_unit not in AREA_UNITS:
        raise ValueError(f"area_unit must be one of {', '.join(AREA_UNITS)}")
    return f"_per_{area_unit}"


def is_per_area(name: str) -> bool:
    """Whether ``name`` (a stored name) is a per-area field."""
    return name.endswith(PER_AREA_SUFFIX)


def served_name(name: str, area_unit: str) -> str:
    """The name a field is served under in ``area_unit``: a per-area field's suffix
    names the unit; any other name is unchanged."""
    if not is_per_area(name):
        return name
    return name.removesuffix(PER_AREA_SUFFIX) + suffix(area_unit)


def served_names(names: Iterable[str], area_unit: str) -> tuple[str, ...]:
    """``served_name`` of each of ``names``, in order."""
    return tuple(served_name(name, area_unit) for name in names)
