"""The pulse row (SPEC "Pulse row") and how it is served.

A row keeps one attribute name per field and says its unit (``area_unit``); served
(``svc_core.convert.to_json``, the CSV columns ``row_columns``), it leaves ``area_unit``
out and names its per-area fields in that unit (``svc_core.realestate.area_names``):
``median_price_per_pyeong`` under ``area_unit=pyeong``. The serving hook is registered
on the one converter when this module is imported, which every holder of a row has done.
"""

from __future__ import annotations

from typing import Any

import attrs
from cattrs.gen import make_dict_unstructure_fn, override

from svc_core.cohorts.confidence import LEVELS, ConfidenceFactors
from svc_core.cohorts.stats import AREA_UNITS
from svc_core.convert import converter
from svc_core.json_schema import (
    SCHEMA,
    Schema,
    boolean,
    counts,
    doc,
    enum,
    field_schemas,
    integer,
    mix,
    nullable,
    obj,
    string,
)
from svc_core.models import BUILDING_TYPES, DEAL_TYPES, INDUSTRIAL_USES, LEASE_KINDS, PARTY_TYPES
from svc_core.realestate.area_names import is_per_area, served_name, served_names
from svc_core.realestate.median_change import Change, Medians
from svc_core.realestate.row_docs import (
    DONG_PRECISION,
    KRW,
    KRW_OR_NULL,
    PROPERTY_TYPE,
    SIGUNGU_CODE,
    TRANSACTION_TYPE,
)

PER_AREA = "per_area_text"
"""The metadata key of a per-area field: its description, which ``served_schemas`` ends
with the unit the field is served in."""
AREA_UNIT_TEXT = {
    "m2": "KRW per m²; present unless area_unit=pyeong",
    "pyeong": "KRW per pyeong (3.305785 m²); present only with area_unit=pyeong, instead "
    "of the field named _per_m2",
}
CONVERTED = nullable(
    integer(
        "Over the row's leases, each lease's converted deposit: deposit + monthly rent x 12 "
        "/ the statutory conversion rate in force at its contract date (officetels: "
        "주택임대차보호법 시행령 제9조, the lower of 10% and the Bank of Korea base rate + 2%p, "
        "+ 3.5%p before 2020-09-29, x 4 before 2016-11-30; other property types: "
        "상가건물임대차보호법 시행령 제5조, the lower of 12% and the base rate x 4.5), exactly, "
        "rounded half to even; a chartered lease's is its deposit. KRW; lease rows only (null "
        "on sale rows). Monthly leases contracted before 2014-01-01 have none and are left "
        "out (null when no lease has one)."
    )
)


NOT_SERVED = ("area_unit", "medians")
"""Row attributes kept for computing, never served."""


def _change(text: str) -> dict[str, Schema]:
    return doc(
        obj(
            field_schemas(Change),
            description=f"The change of {text} (issue 46; see the API guide, Changes over "
            "time): both medians, the percentage, both sides' contracts and a 95% "
            "distribution-free interval; change_pct null with its reason.",
        )
    )


def per_area(text: str) -> dict[str, str]:
    """The ``attrs.field`` metadata of a per-area field described by ``text``."""
    return {PER_AREA: text}


def _filter(schema: Schema) -> Any:
    """A filter's value as the row echoes it: ``schema`` or null (None: not filtered)."""
    return attrs.field(default=None, metadata=doc(nullable(schema)))


def _price(label: str) -> dict[str, str]:
    return per_area(
        f"{label} of price / area per contract (building area for whole buildings, "
        "exclusive or unit area otherwise; a bulk contract's total price / total area); "
        "sale rows only (null on lease rows: see *_deposit_per_m2)"
    )


def _deposit(label: str) -> dict[str, str]:
    return per_area(
        f"{label} of deposit / area per lease (exclusive area); lease rows only (null on sale rows)"
    )


def _converted(label: str) -> dict[str, str]:
    return per_area(
        f"{label} of converted deposit / area per lease; lease rows only (null on sale rows)"
    )


@attrs.frozen(kw_only=True)
class PulseRow:
    """One cohort's row, fields in SPEC order, then the additions of issue 14. ``gu`` and
    ``dong`` are set only at dong precision; amounts are whole KRW; ``avg_area_m2`` is a
    two-decimal string. ``building_type`` is the filter's value (None: both);
    ``building_type_mix`` counts samples per type (``unknown`` when the source does not
    say). Right after SPEC's fields, issue 28's: ``contract_count`` contracts among the
    ``sample_count`` rows, ``bulk_contracts`` of them of several rows, the largest of
    ``largest_contract_units`` rows (every figure is over contracts).
    ``*_price_per_m2`` are quartiles of price ÷ area per contract and
    ``median_land_price_per_m2`` the median of price ÷ land area of the whole buildings,
    in ``area_unit`` (``m2`` or ``pyeong``); each is None when no contract reports the
    area.
    ``area_unit`` is not served: a served row names its per-area fields in its unit
    (``median_price_per_pyeong``; ``svc_core.realestate.area_names``). ``complete`` is
    true when every month of its period is loaded completely (``months_loaded`` of
    ``months_expected``), ``provisional`` while its period is within the reporting lag
    (``svc_core.realestate.freshness``); ``transactions_url`` links the deals behind the
    row by their months. Those depend on the clock and the server's address:
    ``finish_rows`` sets them on rows computed once per data version.
    ``building_use_mix`` counts samples per published building use (issue 28).

    Issue 45's (last): ``industrial_use``, ``land_category`` and ``zoning`` are the filters'
    values (None: every deal); ``industrial_use_mix``, ``land_category_mix`` and
    ``zoning_mix`` count samples per value on the rows whose samples carry one (empty
    otherwise).

    Issue 28's lease fields (before ``complete``): ``lease_kind``, ``deal_type`` and
    ``buyer_type`` are the filters' values (None: every deal); ``lease_kind_mix`` counts a
    lease row's samples per kind (empty on sale rows). On lease rows the per-area figures
    are ``*_deposit_per_m2`` and the ``*_price_per_m2`` fields are None; sale rows the
    reverse, and their ``*_converted_deposit*`` are None
    (``svc_core.realestate.lease_figures``).

    Issue 46's changes come last: ``medians`` (not served) holds the intervals of the
    row's two medians, from which ``svc_core.realestate.changes_over_time`` sets the four
    ``change_vs_*`` fields (None until it has)."""

    sigungu_code: str = attrs.field(metadata=doc(SIGUNGU_CODE))
    sigungu: str = attrs.field(metadata=doc(string("District name.")))
    gu: str | None = attrs.field(metadata=doc(DONG_PRECISION))
    dong: str | None = attrs.field(metadata=doc(DONG_PRECISION))
    property_type: str = attrs.field(metadata=doc(PROPERTY_TYPE))
    transaction_type: str = attrs.field(metadata=doc(TRANSACTION_TYPE))
    period: str = attrs.field(
        metadata=doc(string("The row's period: a rolling label, YYYY-MM or YYYY-Qn."))
    )
    sample_count: int = attrs.field(
        metadata=doc(
            integer(
                "Transactions (rows) in the cohort; the units of one bulk sale are one row "
                "each. A cohort needs at least 2 contracts (contract_count), so at least 2 "
                "rows.",
                minimum=2,
            )
        )
    )
    avg_price: int = attrs.field(metadata=doc(KRW))
    p25_price: int = attrs.field(metadata=doc(KRW))
    median_price: int = attrs.field(metadata=doc(KRW))
    p75_price: int = attrs.field(metadata=doc(KRW))
    avg_monthly_rent: int | None = attrs.field(metadata=doc(KRW_OR_NULL))
    p25_monthly_rent: int | None = attrs.field(metadata=doc(KRW_OR_NULL))
    median_monthly_rent: int | None = attrs.field(metadata=doc(KRW_OR_NULL))
    p75_monthly_rent: int | None = attrs.field(metadata=doc(KRW_OR_NULL))
    avg_area_m2: str | None = attrs.field(
        metadata=doc(nullable(string("Mean area, two decimals.", pattern="^[0-9]+\\.[0-9]{2}$")))
    )
    confidence: str = attrs.field(metadata=doc(enum(LEVELS)))
    source_mix: dict[str, int] = attrs.field(metadata=doc(counts("Samples (rows) per source.")))
    source_means: dict[str, int] = attrs.field(
        metadata=doc(counts("Mean price per source (KRW), over contracts."))
    )
    confidence_factors: ConfidenceFactors = attrs.field(
        metadata=doc(obj(field_schemas(ConfidenceFactors)))
    )
    contract_count: int = attrs.field(
        metadata=doc(
            integer(
                "Contracts among the rows: the rows of one bulk sale (several units of one "
                "building, one lot, contract date, parties' types, building use and type) are "
                "one. Prices, per-area prices, avg_area_m2 and source_means are over "
                "contracts, a bulk contract entering once with its total price and total "
                "area. At least 2.",
                minimum=2,
            )
        )
    )
    bulk_contracts: int = attrs.field(
        metadata=doc(integer("Contracts of more than one row (unit).", minimum=0))
    )
    largest_contract_units: int = attrs.field(
        metadata=doc(
            integer(
                "Rows of the row's largest contract (1 when none is bulk); above a third of "
                "sample_count, _meta.known_limitations names the row.",
                minimum=1,
            )
        )
    )
    building_type: str | None = _filter(
        enum(BUILDING_TYPES, "The building_type filter; null when the row holds both.")
    )
    building_type_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            counts(
                "Samples per building type: whole_building, unit, and unknown when the "
                "source does not say."
            )
        ),
    )
    area_unit: str = attrs.field(default="m2", validator=attrs.validators.in_(AREA_UNITS))
    p25_price_per_m2: int | None = attrs.field(default=None, metadata=_price("25th percentile"))
    median_price_per_m2: int | None = attrs.field(default=None, metadata=_price("Median"))
    p75_price_per_m2: int | None = attrs.field(default=None, metadata=_price("75th percentile"))
    median_land_price_per_m2: int | None = attrs.field(
        default=None,
        metadata=per_area(
            "Median of price / land area (plottageAr) over the row's whole buildings, per "
            "contract; sale rows only"
        ),
    )
    lease_kind: str | None = _filter(
        enum(LEASE_KINDS, "The lease_kind filter; null when the row holds both kinds.")
    )
    lease_kind_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            counts(
                "Leases per kind on a lease row: new (RTMS 신규), renewal (갱신), and unknown "
                "when the source does not say; they add up to sample_count. Empty on sale "
                "rows."
            )
        ),
    )
    deal_type: str | None = _filter(enum(DEAL_TYPES, "The deal_type filter; null without it."))
    buyer_type: str | None = _filter(enum(PARTY_TYPES, "The buyer_type filter; null without it."))
    p25_deposit_per_m2: int | None = attrs.field(default=None, metadata=_deposit("25th percentile"))
    median_deposit_per_m2: int | None = attrs.field(default=None, metadata=_deposit("Median"))
    p75_deposit_per_m2: int | None = attrs.field(default=None, metadata=_deposit("75th percentile"))
    avg_converted_deposit: int | None = attrs.field(default=None, metadata=doc(CONVERTED))
    p25_converted_deposit: int | None = attrs.field(default=None, metadata=doc(CONVERTED))
    median_converted_deposit: int | None = attrs.field(default=None, metadata=doc(CONVERTED))
    p75_converted_deposit: int | None = attrs.field(default=None, metadata=doc(CONVERTED))
    p25_converted_deposit_per_m2: int | None = attrs.field(
        default=None, metadata=_converted("25th percentile")
    )
    median_converted_deposit_per_m2: int | None = attrs.field(
        default=None, metadata=_converted("Median")
    )
    p75_converted_deposit_per_m2: int | None = attrs.field(
        default=None, metadata=_converted("75th percentile")
    )
    complete: bool = attrs.field(
        default=True,
        metadata=doc(
            boolean(
                "True only when every month of the row's period is loaded completely for its "
                "district and types (months_loaded equals months_expected): read whole by svc "
                "sync rtms (also a month the API says is empty), by RTMS API files whose "
                "pages hold the whole totalCount, or by a file without paging figures (web "
                "CSV export, samples CSV) holding deals of it. A month never loaded, loaded "
                "from an incomplete set of pages or partially synced makes it false."
            )
        ),
    )
    provisional: bool = attrs.field(
        default=False,
        metadata=doc(
            boolean(
                "True while the period is within the reporting lag: deals are reported "
                "within 30 days of contract and published the next day, so a month stays "
                "provisional until 31 days after its last day (cancellations can arrive "
                "later still)."
            )
        ),
    )
    transactions_url: str | None = attrs.field(
        default=None,
        metadata=doc(
            string(
                "The deals behind this row: /api/v1/real-estate/transactions with the row's "
                "sigungu_code, its months as from=YYYY-MM&to=YYYY-MM (the first and last "
                "month of its period; a rolling window's resolved months, so the link keeps "
                "listing the deals the row was computed from), property_type and "
                "transaction_type (then building_type, lease_kind, deal_type and buyer_type "
                "when filtered, and geo_precision=dong&dong=... for a dong row).",
                format="uri",
            )
        ),
    )
    months_loaded: int = attrs.field(
        default=0,
        metadata=doc(
            integer(
                "Months of the row's period loaded completely for its district (or a "
                "renumbering alias of it) and every source dataset of its types; the months "
                "missing are listed in _meta.incomplete_periods.",
                minimum=0,
            )
        ),
    )
    months_expected: int = attrs.field(
        default=0,
        metadata=doc(
            integer(
                "Months in the row's period (1 for a month, 3 for a quarter, 3, 6 or 12 for "
                "a rolling window).",
                minimum=1,
            )
        ),
    )
    building_use_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            mix(
                "Samples per building use as the source published it (RTMS buildingUse, "
                "용도: 업무, 제2종근린생활, 기타, 숙박, ...), and unknown when the source does "
                "not say (officetels). Shows what a property type holds: mixed_use gathers "
                "every use that is neither office nor retail."
            )
        ),
    )
    industrial_use: str | None = _filter(
        enum(INDUSTRIAL_USES, "The industrial_use filter; null without it.")
    )
    land_category: str | None = _filter(string("The land_category filter (지목); null without it."))
    zoning: str | None = _filter(string("The zoning filter, as a full zone name; null without it."))
    industrial_use_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            mix(
                "Samples per use on an industrial row (factory/warehouse sales): factory, "
                "warehouse, other, and unknown when the source does not say. Empty on rows "
                "of other property types."
            )
        ),
    )
    land_category_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            mix(
                "Samples per land category (지목: 대, 전, 답, 임야, 도로, ...) on a land row, "
                "as published. Empty on rows of other property types."
            )
        ),
    )
    zoning_mix: dict[str, int] = attrs.field(
        factory=dict,
        metadata=doc(
            mix(
                "Samples per zone (용도지역, full legal names: 계획관리지역, 일반상업지역, ...) "
                "on land, commercial and industrial rows, and unknown when the source does "
                "not say. Empty when no sample has one (officetels, leases)."
            )
        ),
    )
    medians: Medians = attrs.field(factory=Medians)
    change_vs_previous: Change | None = attrs.field(
        default=None, metadata=_change("median_price against the previous period")
    )
    change_vs_year_ago: Change | None = attrs.field(
        default=None, metadata=_change("median_price against the same period a year earlier")
    )
    change_vs_previous_per_m2: Change | None = attrs.field(
        default=None,
        metadata=_change(
            "the median per area (median_price_per_m2 of a sale, median_deposit_per_m2 of a "
            "lease, in the answer's area_unit) against the previous period"
        ),
    )
    change_vs_year_ago_per_m2: Change | None = attrs.field(
        default=None,
        metadata=_change("the median per area against the same period a year earlier"),
    )


def _served_fields(area_unit: str) -> dict[str, Any]:
    """The cattrs overrides that serve a row in ``area_unit``: ``area_unit`` left out,
    per-area fields renamed."""
    out: dict[str, Any] = {name: override(omit=True) for name in NOT_SERVED}
    for field in attrs.fields(PulseRow):
        if is_per_area(field.name):
            out[field.name] = override(rename=served_name(field.name, area_unit))
    return out


_SERVE = {
    unit: make_dict_unstructure_fn(PulseRow, converter, **_served_fields(unit))
    for unit in AREA_UNITS
}
converter.register_unstructure_hook(PulseRow, lambda row: _SERVE[row.area_unit](row))


def row_columns(area_unit: str = "m2") -> tuple[str, ...]:
    """The served fields of a row in ``area_unit``, in order: its JSON keys, and the
    CSV columns of pulse and series."""
    names = (f.name for f in attrs.fields(PulseRow) if f.name not in NOT_SERVED)
    return served_names(names, area_unit)


def per_area_schema(text: str, area_unit: str) -> Schema:
    """The schema of a per-area field described by ``text``, served in ``area_unit``."""
    return nullable(
        integer(f"{text}, {AREA_UNIT_TEXT[area_unit]}; null when no deal reports the area.")
    )


def served_schemas(area_units: tuple[str, ...] = AREA_UNITS) -> dict[str, Schema]:
    """The JSON schema of each served field, in order, from the declarations: each run
    of per-area fields under every unit's names in turn (a row carries one unit's)."""
    out: dict[str, Schema] = {}
    run: list[attrs.Attribute[Any]] = []

    def flush() -> None:
        for unit in area_units:
            for field in run:
                out[served_name(field.name, unit)] = (
                    field.metadata[SCHEMA]
                    if SCHEMA in field.metadata
                    else per_area_schema(field.metadata[PER_AREA], unit)
                )
        run.clear()

    for field in attrs.fields(PulseRow):
        if is_per_area(field.name):
            run.append(field)
            continue
        flush()
        if SCHEMA in field.metadata:
            out[field.name] = field.metadata[SCHEMA]
    flush()
    return out
