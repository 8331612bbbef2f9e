"""Dimensions: the districts, dongs and types with data, with sample counts (SPEC
"Real-estate dimensions"). Counted from rollup rows (see ``coverage``) of the
``last_6m`` window; items by ``sample_count`` descending, then value."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import attrs

from svc_core import periods
from svc_core.envelope import Answer
from svc_core.json_schema import doc, enum, integer, string
from svc_core.models import PROPERTY_TYPES
from svc_core.realestate.building_types import UNKNOWN_TYPE
from svc_core.realestate.building_uses import UseCount, UseRow, use_counts
from svc_core.realestate.common import Context, gu_name, layer_meta
from svc_core.realestate.coverage import RollupRow
from svc_core.realestate.query import DimensionsQuery
from svc_core.realestate.row_docs import SIGUNGU_CODE

K = TypeVar("K")
WINDOW = "last_6m"
VALUE = doc(string())
SAMPLES = doc(integer(minimum=0))
"""The metadata of the fields a ``CodedCount`` and a ``ValueCount`` share."""


@attrs.frozen(kw_only=True)
class CodedCount:
    """A district (``value`` its name) or ``gu > dong`` with its code and samples."""

    value: str = attrs.field(metadata=VALUE)
    code: str = attrs.field(metadata=doc(SIGUNGU_CODE))
    sample_count: int = attrs.field(metadata=SAMPLES)


@attrs.frozen(kw_only=True)
class ValueCount:
    """A property or transaction type with its samples."""

    value: str = attrs.field(metadata=VALUE)
    sample_count: int = attrs.field(metadata=SAMPLES)


@attrs.frozen(kw_only=True)
class TypedCount:
    """A land category, zone or industrial use of one property type, with its samples."""

    value: str = attrs.field(
        metadata=doc(
            string(
                "As stored: a land category or zone as published (a zone by its "
                "full legal name), or an industrial use."
            )
        )
    )
    property_type: str = attrs.field(
        metadata=doc(enum(PROPERTY_TYPES, "The property type of the deals counted."))
    )
    sample_count: int = attrs.field(metadata=doc(integer(minimum=1)))


@attrs.frozen(kw_only=True)
class Dimensions:
    """The ``data`` of the dimensions answer; ``gu_dongs`` only at dong precision.
    ``building_types`` counts whole buildings and units (and ``unknown``, deals whose
    source does not say, which only the unfiltered rows hold); ``lease_kinds`` counts the
    leases per kind, ``deal_types`` and ``buyer_types`` the sales per type (``unknown``
    likewise: deals contracted before RTMS published the field); ``building_uses`` the
    published building uses behind each property type (``building_uses``).
    ``land_categories``, ``zonings`` and ``industrial_uses`` count the values of the
    filters of the same names per property type (deals that publish none are left out:
    only land has categories, only factory/warehouse sales uses)."""

    sigungus: tuple[CodedCount, ...]
    gu_dongs: tuple[CodedCount, ...]
    property_types: tuple[ValueCount, ...]
    transaction_types: tuple[ValueCount, ...]
    building_types: tuple[ValueCount, ...] = ()
    lease_kinds: tuple[ValueCount, ...] = ()
    deal_types: tuple[ValueCount, ...] = ()
    buyer_types: tuple[ValueCount, ...] = ()
    building_uses: tuple[UseCount, ...] = ()
    land_categories: tuple[TypedCount, ...] = ()
    zonings: tuple[TypedCount, ...] = ()
    industrial_uses: tuple[TypedCount, ...] = ()


def _ranked(counter: Mapping[K, int]) -> list[tuple[K, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))


def _values(counter: Mapping[str, int]) -> tuple[ValueCount, ...]:
    return tuple(ValueCount(value=v, sample_count=n) for v, n in _ranked(counter))


@attrs.frozen(slots=True)
class KindCount:
    """Samples (``n``) of one transaction type, lease kind, deal type and buyer type, and
    property type, industrial use, land category and zoning (None: not published),
    positional in that order as the store reads them."""

    transaction_type: str
    lease_kind: str | None
    deal_type: str | None
    buyer_type: str | None
    property_type: str
    industrial_use: str | None
    land_category: str | None
    zoning: str | None
    n: int


def contract_kinds(
    kinds: Iterable[KindCount],
) -> tuple[tuple[ValueCount, ...], tuple[ValueCount, ...], tuple[ValueCount, ...]]:
    """Lease kinds (over leases), deal types and buyer types (over sales) of ``kinds``."""
    leases: Counter[str] = Counter()
    deal_types: Counter[str] = Counter()
    buyer_types: Counter[str] = Counter()
    for r in kinds:
        if r.transaction_type == "sale":
            deal_types[r.deal_type or UNKNOWN_TYPE] += r.n
            buyer_types[r.buyer_type or UNKNOWN_TYPE] += r.n
        else:
            leases[r.lease_kind or UNKNOWN_TYPE] += r.n
    return _values(leases), _values(deal_types), _values(buyer_types)


def land_terms(
    kinds: Iterable[KindCount],
) -> tuple[tuple[TypedCount, ...], tuple[TypedCount, ...], tuple[TypedCount, ...]]:
    """Land categories, zones and industrial uses per property type of ``kinds``: most
    samples first, then property type in enumeration order, then value."""
    counters: tuple[Counter[tuple[str, str]], ...] = (Counter(), Counter(), Counter())
    for r in kinds:
        for counter, value in zip(
            counters, (r.land_category, r.zoning, r.industrial_use), strict=True
        ):
            if value is not None:
                counter[(r.property_type, value)] += r.n

    def ranked(counter: Counter[tuple[str, str]]) -> tuple[TypedCount, ...]:
        order = sorted(
            counter.items(), key=lambda kv: (-kv[1], PROPERTY_TYPES.index(kv[0][0]), kv[0][1])
        )
        return tuple(
            TypedCount(value=value, property_type=ptype, sample_count=n)
            for (ptype, value), n in order
        )

    categories, zonings, uses = counters
    return ranked(categories), ranked(zonings), ranked(uses)


def dimension_counts(
    districts: Iterable[RollupRow],
    dongs: Iterable[RollupRow],
    names: Mapping[str, str],
    kinds: Iterable[KindCount] = (),
    uses: Iterable[UseRow] = (),
) -> tuple[Dimensions, dict[str, int]]:
    """The dimensions of district-level rollup rows (and dong-level rows for
    ``gu_dongs``; pass none below dong precision) with the samples per source.
    ``names`` names the districts (a missing one shows as its code); ``kinds`` are the
    contract and land counts (``contract_kinds``, ``land_terms``); ``uses`` are the window's use-rollup rows
    (``building_uses.use_counts``)."""
    sigungus: Counter[str] = Counter()
    ptypes: Counter[str] = Counter()
    ttypes: Counter[str] = Counter()
    btypes: Counter[str] = Counter()
    mix: Counter[str] = Counter()
    gu_dongs: Counter[tuple[str, str]] = Counter()
    for r in districts:
        n = r.samples
        sigungus[r.sigungu_code] += n
        ptypes[r.property_type] += n
        ttypes[r.transaction_type] += n
        btypes[r.building_type or UNKNOWN_TYPE] += n
        mix[r.source] += n
    for r in dongs:
        gu_dongs[(r.sigungu_code, r.dong)] += r.samples
    kinds = list(kinds)
    lease_kinds, deal_types, buyer_types = contract_kinds(kinds)
    land_categories, zonings, industrial_uses = land_terms(kinds)
    data = Dimensions(
        sigungus=tuple(
            CodedCount(value=names.get(code, code), code=code, sample_count=n)
            for code, n in _ranked(sigungus)
        ),
        gu_dongs=tuple(
            CodedCount(
                value=f"{gu_name(names.get(code, code))} > {dong}", code=code, sample_count=n
            )
            for (code, dong), n in _ranked(gu_dongs)
        ),
        property_types=tuple(ValueCount(value=v, sample_count=n) for v, n in _ranked(ptypes)),
        transaction_types=tuple(ValueCount(value=v, sample_count=n) for v, n in _ranked(ttypes)),
        building_types=tuple(ValueCount(value=v, sample_count=n) for v, n in _ranked(btypes)),
        lease_kinds=lease_kinds,
        deal_types=deal_types,
        buyer_types=buyer_types,
        building_uses=use_counts(uses),
        land_categories=land_categories,
        zonings=zonings,
        industrial_uses=industrial_uses,
    )
    return data, dict(mix)


def dimensions_answer(
    data: Dimensions,
    mix: Mapping[str, int],
    query: DimensionsQuery,
    window: periods.PeriodWindow,
    context: Context,
    *,
    synthetic: bool,
) -> Answer:
    """``GET /api/v1/real-estate/dimensions``'s answer; ``_meta.count`` is the number of
    districts."""
    echo: dict[str, Any] = {
        "geo_precision": query.geo_precision,
        "period": WINDOW,
        "window_from": window.window_from,
        "window_to": window.window_to,
    }
    meta = layer_meta(
        context,
        count=len(data.sigungus),
        source_mix=mix,
        synthetic=synthetic,
        query=echo,
        extra={"data_as_of": context.data_as_of, "data_version": context.data_version},
    )
    return Answer(data=data, meta=meta)
