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

from svc_core.cohorts.confidence import ConfidenceFactors
from svc_core.cohorts.stats import AREA_UNITS
from svc_core.convert import converter
from svc_core.realestate.area_names import is_per_area, served_name, served_names


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

    Issue 28's lease fields (before ``complete``): ``lease_kind``, ``deal_type`` and
    ``buyer_type`` are the filters' values (None: every deal); ``lease_kind_mix`` counts a
    lease row's samples per kind (empty on sale rows). On lease rows the per-area figures
    are ``*_deposit_per_m2`` and the ``*_price_per_m2`` fields are None; sale rows the
    reverse, and their ``*_converted_deposit*`` are None
    (``svc_core.realestate.lease_figures``)."""

    sigungu_code: str
    sigungu: str
    gu: str | None
    dong: str | None
    property_type: str
    transaction_type: str
    period: str
    sample_count: int
    avg_price: int
    p25_price: int
    median_price: int
    p75_price: int
    avg_monthly_rent: int | None
    p25_monthly_rent: int | None
    median_monthly_rent: int | None
    p75_monthly_rent: int | None
    avg_area_m2: str | None
    confidence: str
    source_mix: dict[str, int]
    source_means: dict[str, int]
    confidence_factors: ConfidenceFactors
    contract_count: int
    bulk_contracts: int
    largest_contract_units: int
    building_type: str | None = None
    building_type_mix: dict[str, int] = attrs.field(factory=dict)
    area_unit: str = attrs.field(default="m2", validator=attrs.validators.in_(AREA_UNITS))
    p25_price_per_m2: int | None = None
    median_price_per_m2: int | None = None
    p75_price_per_m2: int | None = None
    median_land_price_per_m2: int | None = None
    lease_kind: str | None = None
    lease_kind_mix: dict[str, int] = attrs.field(factory=dict)
    deal_type: str | None = None
    buyer_type: str | None = None
    p25_deposit_per_m2: int | None = None
    median_deposit_per_m2: int | None = None
    p75_deposit_per_m2: int | None = None
    avg_converted_deposit: int | None = None
    p25_converted_deposit: int | None = None
    median_converted_deposit: int | None = None
    p75_converted_deposit: int | None = None
    p25_converted_deposit_per_m2: int | None = None
    median_converted_deposit_per_m2: int | None = None
    p75_converted_deposit_per_m2: int | None = None
    complete: bool = True
    provisional: bool = False
    transactions_url: str | None = None
    months_loaded: int = 0
    months_expected: int = 0
    building_use_mix: dict[str, int] = attrs.field(factory=dict)


def _served_fields(area_unit: str) -> dict[str, Any]:
    """The cattrs overrides that serve a row in ``area_unit``: ``area_unit`` left out,
    per-area fields renamed."""
    out: dict[str, Any] = {"area_unit": override(omit=True)}
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
    names = (f.name for f in attrs.fields(PulseRow) if f.name != "area_unit")
    return served_names(names, area_unit)
