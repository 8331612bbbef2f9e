"""Building types in a cohort: whole buildings (RTMS 일반) and units (RTMS 집합; every
officetel), counted per row, and the caveat a row mixing them carries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from svc_core.models import BUILDING_TYPES

__all__ = ["MIX_LIMITATION", "UNKNOWN_TYPE", "building_type_mix", "counted", "is_mixed"]

UNKNOWN_TYPE = "unknown"
MIX_LIMITATION = (
    "A row without building_type mixes whole buildings (RTMS 일반) and units (RTMS 집합) "
    "when building_type_mix names both: their prices describe different goods; filter with "
    "building_type or compare the *_price_per_m2 fields."
)


def counted(values: Iterable[str | None]) -> dict[str, int]:
    """Samples per value, given each sample's (``unknown`` when the source does not say:
    None or blank), ordered by value: the shape of every ``*_mix`` of a row."""
    counts = Counter(v or UNKNOWN_TYPE for v in values)
    return dict(sorted(counts.items()))


def building_type_mix(types: Iterable[str | None]) -> dict[str, int]:
    """Samples per building type, given each sample's (``unknown`` when the source does
    not say: None)."""
    return counted(types)


def is_mixed(mix: Mapping[str, int]) -> bool:
    """True when a cohort holds both whole buildings and units."""
    return all(mix.get(t, 0) > 0 for t in BUILDING_TYPES)
