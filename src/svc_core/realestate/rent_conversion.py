"""The statutory rent-to-deposit conversion rate (전월세 전환율) and converted deposits.

A monthly lease has two prices, a deposit and a rent, so it has no single figure to
compare with a chartered lease (deposit only). Korean housing law fixes the rate at which
one converts to the other: 주택임대차보호법 제7조의2 and its 시행령 제9조 cap the annual
rate at the lower of 10 % and the Bank of Korea base rate plus 2 %p (contracts from
2020-09-29; plus 3.5 %p from 2016-11-30; the base rate times 4 from 2014-01-01). The
*converted deposit* of a monthly lease is

    deposit + monthly rent x 12 / rate

with the rate in force at the contract date, computed exactly and rounded half to even to
whole KRW; a chartered lease's is its deposit. Contracts before 2014-01-01 have no rate
in the table, so their converted deposit is None.

Officetels leased as dwellings (what RTMS's officetel rent service reports) fall under
this housing law (``HOUSING``). Leases of the other property types (offices, shops: none
from RTMS, but other sources and the demo carry them) fall under 상가건물임대차보호법 제12조
and its 시행령 제5조 (``COMMERCIAL``): the lower of 12 % and the base rate x 4.5, from
2014-01-01. ``law_of`` tells which law a property type's leases fall under.

The rates are the bundled ``data/rent_conversion.json`` (``rate_table``): the eras of the
law and the base rate by effective date, each with its source, and ``checked_through``,
the last day both were checked. A contract dated after it uses the last base rate,
assumed unchanged (``rate_assumed``); an operator adds later decisions to the file.
"""

from __future__ import annotations

import bisect
import datetime
import functools
import importlib.resources
import itertools
import json
from collections.abc import Mapping
from fractions import Fraction

import attrs

__all__ = [
    "COMMERCIAL",
    "HOUSING",
    "BaseRate",
    "LimitEra",
    "RateTable",
    "assumed_rate_limitation",
    "base_rate_pct",
    "conversion_rate",
    "converted_deposit",
    "deposit_equivalent",
    "law_of",
    "parse_table",
    "rate_assumed",
    "rate_table",
]

TABLE_FILE = "data/rent_conversion.json"
HOUSING = "housing"
COMMERCIAL = "commercial"
"""The two laws that cap the conversion rate: 주택임대차보호법 and 상가건물임대차보호법."""
MONTHS_PER_YEAR = 12


@attrs.frozen(kw_only=True)
class BaseRate:
    """The Bank of Korea base rate (percent a year) from ``effective`` on."""

    effective: datetime.date
    pct: Fraction = attrs.field()

    @pct.validator
    def _positive(self, _: object, value: Fraction) -> None:
        if value <= 0:
            raise ValueError("a base rate is positive")


@attrs.frozen(kw_only=True)
class LimitEra:
    """One wording of 시행령 제9조, in force from ``start`` to ``end`` (inclusive; None:
    still in force): the rate may not exceed the lower of ``cap_pct`` and the base rate
    plus ``base_plus_pct`` or times ``base_times`` (exactly one is set)."""

    start: datetime.date
    end: datetime.date | None
    cap_pct: Fraction
    base_plus_pct: Fraction | None = None
    base_times: Fraction | None = None

    def __attrs_post_init__(self) -> None:
        if (self.base_plus_pct is None) == (self.base_times is None):
            raise ValueError("an era adds to the base rate or multiplies it, not both")
        if self.cap_pct <= 0 or (self.end is not None and self.end < self.start):
            raise ValueError(f"not an era of the law: {self!r}")
        if any(v is not None and v <= 0 for v in (self.base_plus_pct, self.base_times)):
            raise ValueError("an era's margin or multiple is positive")

    def limit_pct(self, base_pct: Fraction) -> Fraction:
        """The statutory rate (percent a year) under this era at a base rate."""
        if self.base_times is not None:
            second = base_pct * self.base_times
        else:
            assert self.base_plus_pct is not None  # checked at construction
            second = base_pct + self.base_plus_pct
        return min(self.cap_pct, second)


@attrs.frozen(kw_only=True)
class RateTable:
    """The base rates (by effective date, ascending), the eras of the housing law and of
    the commercial law (each consecutive, ascending) and the last day all were checked
    against their sources."""

    base_rates: tuple[BaseRate, ...]
    eras: tuple[LimitEra, ...]
    checked_through: datetime.date
    commercial_eras: tuple[LimitEra, ...] = ()
    _dates: tuple[datetime.date, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        dates = tuple(r.effective for r in self.base_rates)
        if not dates or not self.eras:
            raise ValueError("a rate table has base rates and eras")
        if any(a >= b for a, b in itertools.pairwise(dates)):
            raise ValueError("base rates are in strictly ascending effective order")
        for eras in (self.eras, self.commercial_eras):
            for era, after in itertools.pairwise(eras):
                if era.end is None or after.start != era.end + datetime.timedelta(days=1):
                    raise ValueError("the eras of the law follow each other without a gap")
        if dates[0] > min(e.start for e in (*self.eras, *self.commercial_eras)):
            raise ValueError("a base rate is in force when the first era starts")
        if self.checked_through < dates[-1]:
            raise ValueError("checked_through is on or after the last base rate change")
        object.__setattr__(self, "_dates", dates)

    def base_rate_at(self, on: datetime.date) -> Fraction | None:
        """The base rate in force on ``on`` (None before the first one)."""
        i = bisect.bisect_right(self._dates, on)
        return self.base_rates[i - 1].pct if i else None

    def era_at(self, on: datetime.date, law: str = HOUSING) -> LimitEra | None:
        """The era of ``law`` in force on ``on`` (None outside every era)."""
        for era in self.eras if law == HOUSING else self.commercial_eras:
            if era.start <= on and (era.end is None or on <= era.end):
                return era
        return None


def _pct(text: object) -> Fraction:
    if not isinstance(text, str):
        raise ValueError(f"a rate is written as a decimal string, not {text!r}")
    return Fraction(text)


def _optional_pct(entry: Mapping[str, object], name: str) -> Fraction | None:
    return None if entry.get(name) is None else _pct(entry[name])


def _date(text: object) -> datetime.date:
    if not isinstance(text, str):
        raise ValueError(f"a date is written YYYY-MM-DD, not {text!r}")
    return datetime.date.fromisoformat(text)


def _eras(entries: list[Mapping[str, object]]) -> tuple[LimitEra, ...]:
    return tuple(
        LimitEra(
            start=_date(e["from"]),
            end=None if e["to"] is None else _date(e["to"]),
            cap_pct=_pct(e["cap_pct"]),
            base_plus_pct=_optional_pct(e, "base_plus_pct"),
            base_times=_optional_pct(e, "base_times"),
        )
        for e in entries
    )


def parse_table(text: str) -> RateTable:
    """A ``RateTable`` from the JSON of ``data/rent_conversion.json``; ValueError (or
    KeyError) when it is not one."""
    doc = json.loads(text)
    return RateTable(
        base_rates=tuple(
            BaseRate(effective=_date(r["from"]), pct=_pct(r["pct"]))
            for r in doc["base_rates"]["rates"]
        ),
        eras=_eras(doc["limits"]["eras"]),
        checked_through=_date(doc["checked_through"]),
        commercial_eras=_eras(doc.get("commercial_limits", {}).get("eras", [])),
    )


@functools.cache
def rate_table() -> RateTable:
    """The bundled table (read once)."""
    text = importlib.resources.files("svc_core").joinpath(TABLE_FILE).read_text("utf-8")
    return parse_table(text)


def base_rate_pct(on: datetime.date, table: RateTable | None = None) -> Fraction | None:
    """The Bank of Korea base rate (percent a year) in force on ``on``."""
    return (table or rate_table()).base_rate_at(on)


def law_of(property_type: str) -> str:
    """The law that caps the conversion rate of a lease of ``property_type``: housing for
    officetels (leased as dwellings), commercial for every other type."""
    return HOUSING if property_type == "officetel" else COMMERCIAL


def conversion_rate(
    on: datetime.date, table: RateTable | None = None, *, law: str = HOUSING
) -> Fraction | None:
    """The statutory conversion rate of ``law`` in force on the contract date ``on``, as
    a fraction a year (``Fraction(9, 200)`` for 4.5 %); None when no era of the law
    covers it (before 2014-01-01)."""
    table = table or rate_table()
    era = table.era_at(on, law)
    base = table.base_rate_at(on)
    if era is None or base is None:
        return None
    return era.limit_pct(base) / 100


def converted_deposit(deposit: int, monthly_rent: int, rate: Fraction) -> int:
    """``deposit + monthly_rent x 12 / rate`` (``rate`` a fraction a year), exactly, then
    rounded half to even to whole KRW."""
    if deposit < 0 or monthly_rent < 0 or rate <= 0:
        raise ValueError("a deposit and a rent are >= 0 and a rate is > 0")
    # round(deposit + rent x 12 x d / n) for rate = n / d, in integers: a pulse converts
    # thousands of leases, and Fraction arithmetic was most of a lease row's cost
    n, d = rate.numerator, rate.denominator
    whole, rest = divmod(deposit * n + monthly_rent * MONTHS_PER_YEAR * d, n)
    if 2 * rest > n or (2 * rest == n and whole % 2):
        whole += 1
    return whole


def deposit_equivalent(
    deposit: int,
    monthly_rent: int | None,
    on: datetime.date,
    table: RateTable | None = None,
    *,
    law: str = HOUSING,
) -> int | None:
    """The converted deposit of a lease contracted on ``on``: the deposit when there is
    no rent (a chartered lease), else the rent converted at the rate of ``law`` in force
    then (None when the table has no rate for that date)."""
    if not monthly_rent:
        return deposit
    rate = conversion_rate(on, table, law=law)
    return None if rate is None else converted_deposit(deposit, monthly_rent, rate)


def rate_assumed(on: datetime.date, table: RateTable | None = None) -> bool:
    """True when ``on`` is after the table's ``checked_through``: its rate is the last one
    known, assumed unchanged."""
    return on > (table or rate_table()).checked_through


def assumed_rate_limitation(table: RateTable | None = None) -> str:
    """The caveat of figures that convert rents of contracts after ``checked_through``."""
    through = (table or rate_table()).checked_through.isoformat()
    return (
        f"Converted deposits of monthly leases contracted after {through} use the Bank of "
        f"Korea base rate in force on {through}, assumed unchanged since: the bundled rate "
        "table (svc_core/data/rent_conversion.json) was checked through that date; an "
        "operator adds later decisions to it and moves checked_through."
    )
