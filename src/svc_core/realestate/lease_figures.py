"""The lease figures of a pulse row: deposits per area and converted deposits.

A lease row's ``*_price`` fields are deposit quartiles (SPEC) and stay so; what a deposit
divided by an area is gets its own name, ``*_deposit_per_m2``. A monthly lease also pays
rent, so its deposit alone understates it: ``*_converted_deposit`` summarise each
lease's converted deposit (``svc_core.realestate.rent_conversion``: deposit + rent x 12 / the
statutory rate of its law at its contract date; a chartered lease's is its deposit), by the same
exact mean and type-7 quartiles as ``svc_core.cohorts.stats``, and ``*_converted_deposit_per_m2``
the converted deposit divided by each lease's area. Leases without a converted deposit
(contracts before the table's first era, or without a contract date) are left out of
those figures. Sale rows have none of these (None).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import attrs

from svc_core.cohorts.stats import mean, per_area_quartiles, quartiles
from svc_core.periods import parse_month
from svc_core.realestate.deal import Deal
from svc_core.realestate.lease_kinds import LEASE_KIND_LIMITATION, is_lease, mixes_kinds
from svc_core.realestate.pulse_row import PulseRow
from svc_core.realestate.rent_conversion import (
    RateTable,
    assumed_rate_limitation,
    conversion_rate,
    converted_deposit,
    law_of,
    rate_table,
)

__all__ = ["NO_FIGURES", "LeaseFigures", "lease_figures", "lease_limitations"]


@attrs.frozen(kw_only=True)
class LeaseFigures:
    """A lease row's per-area deposits and converted deposits (whole KRW; per m², or per
    pyeong when asked); each None when no lease has what it needs."""

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


NO_FIGURES = LeaseFigures()
"""A sale row's."""


def _converted(
    sample: Deal, table: RateTable, rates: dict[tuple[str, str], Fraction | None]
) -> int | None:
    """A sample's converted deposit at the rate of its law (``law_of`` its property
    type); ``rates`` keeps the rate of each law and contract date read (a row's leases
    share a few dozen dates)."""
    if not sample.monthly_rent:
        return sample.price
    day = sample.deal_date
    if not day:
        return None
    key = (law_of(sample.property_type), day)
    if key not in rates:
        rates[key] = conversion_rate(datetime.date.fromisoformat(day), table, law=key[0])
    rate = rates[key]
    return None if rate is None else converted_deposit(sample.price, sample.monthly_rent, rate)


def lease_figures(
    transaction_type: str,
    samples: Sequence[Deal],
    *,
    area_unit: str = "m2",
    table: RateTable | None = None,
) -> LeaseFigures:
    """The figures of a row's samples (``NO_FIGURES`` for a sale row); ``table`` is the
    bundled rate table by default."""
    if not is_lease(transaction_type):
        return NO_FIGURES
    table = table or rate_table()
    deposits = per_area_quartiles(((s.price, s.area) for s in samples), area_unit=area_unit)
    rates: dict[tuple[str, str], Fraction | None] = {}
    pairs = [(c, s.area) for s in samples if (c := _converted(s, table, rates)) is not None]
    values = [c for c, _ in pairs]
    middle = quartiles(values) if values else None
    per_area = per_area_quartiles(pairs, area_unit=area_unit)
    return LeaseFigures(
        p25_deposit_per_m2=deposits[0] if deposits else None,
        median_deposit_per_m2=deposits[1] if deposits else None,
        p75_deposit_per_m2=deposits[2] if deposits else None,
        avg_converted_deposit=mean(values) if values else None,
        p25_converted_deposit=middle[0] if middle else None,
        median_converted_deposit=middle[1] if middle else None,
        p75_converted_deposit=middle[2] if middle else None,
        p25_converted_deposit_per_m2=per_area[0] if per_area else None,
        median_converted_deposit_per_m2=per_area[1] if per_area else None,
        p75_converted_deposit_per_m2=per_area[2] if per_area else None,
    )


def _after(months: Iterable[str], through: datetime.date) -> bool:
    return any(parse_month(m).last_day > through for m in months)


def lease_limitations(
    rows: Iterable[PulseRow],
    period_of: Mapping[str, str],
    table: RateTable | None = None,
) -> list[str]:
    """The caveats of lease rows: a row pooling new leases and renewals
    (``LEASE_KIND_LIMITATION``), and monthly-lease rows whose period (``period_of`` maps
    each month to its period) reaches past the rate table's ``checked_through``, whose
    converted deposits may use an assumed rate (``assumed_rate_limitation``)."""
    table = table or rate_table()
    out: list[str] = []
    rows = list(rows)
    if any(r.lease_kind is None and mixes_kinds(r.lease_kind_mix) for r in rows):
        out.append(LEASE_KIND_LIMITATION)
    monthly = {r.period for r in rows if r.transaction_type == "monthly_lease"}
    months = [m for m, period in period_of.items() if period in monthly]
    if _after(months, table.checked_through):
        out.append(assumed_rate_limitation(table))
    return out
