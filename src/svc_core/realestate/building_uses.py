"""Building uses behind each property type (issue 28, item 7).

RTMS publishes a deal's building use (``buildingUse``, 용도) as text; the reader maps it
to a property type (``svc_core.sources.rtms``), and ``mixed_use`` (SPEC's name) gathers
every use that is neither office nor retail: 기타, 교육연구, 숙박, 의료 and uses of
several groups such as 업무,판매. The name promises more than the data holds, so rows
say which published uses they count (``building_use_mix``) and the dimensions list the
uses behind each property type (``building_uses``). Uses are counted as published;
``unknown`` counts deals whose source publishes no use (officetels, demo data).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import attrs

from svc_core.json_schema import doc, enum, integer, string
from svc_core.models import PROPERTY_TYPES
from svc_core.realestate.building_types import UNKNOWN_TYPE, counted

UNKNOWN_USE = UNKNOWN_TYPE


def building_use_mix(uses: Iterable[str | None]) -> dict[str, int]:
    """Samples per published building use (``unknown`` when the source does not say),
    ordered by use."""
    return counted(uses)


@attrs.frozen(kw_only=True)
class UseCount:
    """A published building use of one property type, with its samples."""

    value: str = attrs.field(
        metadata=doc(
            string(
                "The building use as the source published it (업무, 제2종근린생활, 기타, ...), "
                "or unknown when it publishes none (officetels)."
            )
        )
    )
    property_type: str = attrs.field(
        metadata=doc(enum(PROPERTY_TYPES, "The property type svc maps the use to."))
    )
    sample_count: int = attrs.field(metadata=doc(integer(minimum=1)))


@attrs.frozen(slots=True)
class UseRow:
    """A use-rollup row: samples of one property type and published building use (blank
    or None: not published), positional in that order as the store reads them."""

    property_type: str
    building_use: str | None
    samples: int


def use_counts(rows: Iterable[UseRow]) -> tuple[UseCount, ...]:
    """Samples per (property type, published use) of use-rollup rows (a blank use is
    ``unknown``): most samples first, then property type in enumeration order, then
    use."""
    totals: Counter[tuple[str, str]] = Counter()
    for row in rows:
        totals[(row.property_type, row.building_use or UNKNOWN_USE)] += row.samples
    ranked = sorted(
        totals.items(),
        key=lambda kv: (-kv[1], PROPERTY_TYPES.index(kv[0][0]), kv[0][1]),
    )
    return tuple(
        UseCount(value=use, property_type=ptype, sample_count=n) for (ptype, use), n in ranked
    )
