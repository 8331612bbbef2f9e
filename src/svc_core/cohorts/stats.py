"""Cohort statistics: mean and quartiles by one documented method.

Quantile method: linear interpolation between order statistics, Hyndman and Fan's
type 7 (numpy's default ``"linear"``, R's default, ``statistics.quantiles(...,
method="inclusive")``). For sorted values ``x[0..n-1]`` and probability ``p``, let
``h = (n - 1) * p``; the quantile is ``x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] -
x[floor(h)])``. So p25/median/p75 always lie between the minimum and the maximum, and the
median of an even count is the midpoint of the two middle values.

Integer outputs (prices, rents, per-source means) are computed exactly with fractions and
rounded half to even (Python's ``round``). ``avg_area_m2`` is the mean of the known areas
as a string with two decimals, half to even on the exact mean of the areas as published
(``svc_core.cohorts.areas``). ``relative_spread`` is rounded to 4 decimals; the confidence
ladder compares that rounded value.

Prices per area (``per_area_quartiles``): price ÷ area per deal, exactly (the area as
published: the shortest decimal that reads back as the stored float), then the same
type-7 quartiles, rounded half to even to whole KRW; deals without an area are left out.
Per pyeong, the area is first divided by ``M2_PER_PYEONG`` (1 pyeong = 3.305785 m²).

Contracts, not rows (issue 28): RTMS reports a sale of several units of one building as
one row per unit; ``contracts`` groups a cohort's rows by ``contract_id`` (the rule of
``svc_core.cohorts.contracts``, whose ids never span sources; a row without one is a contract of
its own) and source into one observation per contract: a bulk contract enters once, with
its total price, its total area (the sum of its rows' published areas, so its price per
m² is total price ÷ total area; unknown when a row lacks its area) and its total monthly
rent (when every row has one). Every figure of ``summarize`` but the counts per source
is computed over contracts: price mean and quartiles, rent figures, ``avg_area_m2`` (the
mean contract area), the per-source means and ``relative_spread``; ``sample_count`` and
``source_mix`` count rows. A cohort of single-row contracts gets exactly the figures
computed over its rows.

A cohort needs ``MIN_SAMPLES`` (2) contracts; ``summarize`` returns None below that.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from decimal import Decimal
from fractions import Fraction
from operator import attrgetter
from typing import NamedTuple, Protocol, TypeVar, overload

import attrs

from svc_core.cohorts.areas import exact_area, mean_area_text, published_sum
from svc_core.cohorts.contracts import contract_id
from svc_core.models import Transaction

__all__ = [
    "MIN_SAMPLES",
    "QUARTERS",
    "CohortStats",
    "Contract",
    "Observation",
    "Sample",
    "SampleLike",
    "contracts",
    "mean",
    "mean_exact",
    "median",
    "per_area_quartiles",
    "quantile",
    "quantile_exact",
    "quartiles",
    "sample_of",
    "summarize",
]

MIN_SAMPLES = 2
AREA_UNITS: tuple[str, ...] = ("m2", "pyeong")
M2_PER_PYEONG = Fraction("3.305785")
QUARTERS = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))


@attrs.frozen(kw_only=True)
class Sample:
    """One transaction as the statistics see it."""

    price: int
    monthly_rent: int | None
    area: float | None
    source: str
    contract_id: str | None = None


class Observation(Protocol):
    """What the statistics read of one contract (a ``SampleLike`` row of its own contract,
    or a ``Contract``)."""

    @property
    def price(self) -> int: ...

    @property
    def monthly_rent(self) -> int | None: ...

    @property
    def area(self) -> float | Decimal | None: ...

    @property
    def source(self) -> str: ...


class SampleLike(Observation, Protocol):
    """What ``summarize`` reads of a sample (``Sample``, or a richer record): an
    observation with its area as published and its contract (``contract_id`` None makes
    the sample a contract of its own)."""

    @property
    def area(self) -> float | None: ...

    @property
    def contract_id(self) -> str | None: ...


class Contract(NamedTuple):
    """The rows (``units``, at least 2) of one bulk contract as one observation: their
    total price, total monthly rent (None unless every row has one) and total area (the
    exact sum of the published areas; None unless every row has one)."""

    price: int
    monthly_rent: int | None
    area: Decimal | None
    source: str
    units: int


def _merged(rows: Sequence[SampleLike]) -> Contract:
    rents = [r.monthly_rent for r in rows]
    areas = [r.area for r in rows]
    return Contract(
        price=sum(r.price for r in rows),
        monthly_rent=None if None in rents else sum(r for r in rents if r is not None),
        area=None if None in areas else published_sum(areas),
        source=rows[0].source,
        units=len(rows),
    )


_CONTRACT_ID = attrgetter("contract_id")


def contracts(samples: Sequence[SampleLike]) -> list[Observation]:
    """One observation per contract of ``samples`` (module docstring): a sample that is a
    contract of its own as it is, the rows sharing a ``contract_id`` and a source as one
    ``Contract`` (after the others, in order of their first row)."""
    counts = Counter(map(_CONTRACT_ID, samples))
    counts.pop(None, None)
    if not counts or max(counts.values()) == 1:
        return list(samples)  # no bulk contract: the common case costs one count
    multi = {cid for cid, n in counts.items() if n > 1}
    out: list[Observation] = [s for s in samples if s.contract_id not in multi]
    bulk: dict[tuple[str, str], list[SampleLike]] = {}
    for s in [s for s in samples if s.contract_id in multi]:
        bulk.setdefault((s.contract_id or "", s.source), []).append(s)
    out.extend(rows[0] if len(rows) == 1 else _merged(rows) for rows in bulk.values())
    return out


def sample_of(tx: Transaction) -> Sample:
    """The statistics view of a transaction (with the id of its contract)."""
    return Sample(
        price=tx.price_krw,
        monthly_rent=tx.monthly_rent_krw,
        area=tx.area_m2,
        source=tx.source,
        contract_id=contract_id(tx),
    )


def mean_exact(values: Iterable[int]) -> Fraction:
    """The exact mean of integers; ValueError when empty."""
    items = list(values)
    if not items:
        raise ValueError("mean of no values")
    return Fraction(sum(items), len(items))


Share = TypeVar("Share", Fraction, float)


def _type7_position(count: int, p: Share) -> tuple[int, Share]:
    """Where the type-7 quantile ``p`` of ``count`` sorted values falls: the index of the
    value at or below it and the share of the way to the next one. ``ValueError`` for
    no values or ``p`` outside [0, 1]."""
    if not count:
        raise ValueError("quantile of no values")
    if not 0 <= p <= 1:
        raise ValueError("p must be within [0, 1]")
    h = (count - 1) * p
    lo = math.floor(h)
    return lo, h - lo


def quantile_exact(sorted_values: Sequence[int | Fraction], p: Fraction) -> Fraction:
    """Type-7 quantile of already sorted integers (or fractions), exactly."""
    lo, frac = _type7_position(len(sorted_values), p)
    if frac == 0:
        return Fraction(sorted_values[lo])
    a, b = sorted_values[lo], sorted_values[lo + 1]
    return a + frac * (b - a)


def quantile(values: Iterable[float], p: float) -> float:
    """Type-7 quantile of any real values (sorted here)."""
    items = sorted(values)
    lo, frac = _type7_position(len(items), p)
    if lo + 1 >= len(items):
        return float(items[lo])
    return items[lo] + frac * (items[lo + 1] - items[lo])


def quartiles(values: Iterable[int]) -> tuple[int, int, int]:
    """(p25, median, p75) of integers, rounded half to even: ``quantile_exact`` at 1/4,
    1/2 and 3/4, in integer arithmetic (a quarter's interpolation is a multiple of 1/4:
    Fractions cost a third of a cold series)."""
    items = sorted(values)
    if not items:
        raise ValueError("quantile of no values")
    last = len(items) - 1
    out: list[int] = []
    for k in (1, 2, 3):
        lo, rest = divmod(last * k, 4)
        if rest == 0:
            out.append(items[lo])
            continue
        a, b = items[lo], items[lo + 1]
        whole, left = divmod(4 * a + rest * (b - a), 4)  # (a + rest/4 (b - a)) in quarters
        if 2 * left > 4 or (2 * left == 4 and whole % 2):
            whole += 1
        out.append(whole)
    return out[0], out[1], out[2]


def per_area_quartiles(
    deals: Iterable[tuple[int, float | Decimal | None]], *, area_unit: str = "m2"
) -> tuple[int, int, int] | None:
    """(p25, median, p75) of price ÷ area over ``(price, area in m²)`` pairs (one per
    contract: ``contracts``), per m² or per pyeong; None when no pair has an area."""
    return ratio_quartiles(per_area_ratios(deals, area_unit=area_unit))


def per_area_ratios(
    deals: Iterable[tuple[int, float | Decimal | None]], *, area_unit: str = "m2"
) -> Sequence[Fraction]:
    """The exact price ÷ area ratios of the pairs with an area, in ascending order, per
    m² or per pyeong (each computed when read: ``_Ratios``)."""
    if area_unit not in AREA_UNITS:
        raise ValueError(f"area_unit must be one of {', '.join(AREA_UNITS)}")
    return _Ratios(deals, M2_PER_PYEONG if area_unit == "pyeong" else Fraction(1))


def ratio_quartiles(ratios: Sequence[Fraction]) -> tuple[int, int, int] | None:
    """(p25, median, p75) of sorted ``ratios`` (``per_area_ratios``), rounded half to
    even; None when there are none."""
    if not len(ratios):
        return None
    p25, mid, p75 = (round(quantile_exact(ratios, p)) for p in QUARTERS)
    return p25, mid, p75


class _Ratios(Sequence[Fraction]):
    """The exact price ÷ area ratios of ``deals`` in order, each computed only when read.

    Sorting thousands of exact fractions cost 140 ms a cohort; a quartile reads two.
    The deals are sorted by a float ratio instead, which is within a few units in the
    last place of the exact one, so only deals whose float lies within ``_SLACK`` of the
    one asked for can be out of order with it: those few are ordered exactly."""

    def __init__(self, deals: Iterable[tuple[int, float | Decimal | None]], per: Fraction) -> None:
        self._per = per
        per_f = float(per)
        self._approx = sorted(
            (price * per_f / float(area), price, area) for price, area in deals if area
        )

    def __len__(self) -> int:
        return len(self._approx)

    @overload
    def __getitem__(self, i: int) -> Fraction: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Fraction]: ...

    def __getitem__(self, i: int | slice) -> Fraction | Sequence[Fraction]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        approx = self._approx
        if i < 0:
            i += len(approx)
        value = approx[i][0]
        slack = abs(value) * _SLACK
        first = i
        while first > 0 and approx[first - 1][0] >= value - slack:
            first -= 1
        end = i + 1
        while end < len(approx) and approx[end][0] <= value + slack:
            end += 1
        near = sorted(
            Fraction(price) * self._per / exact_area(area) for _, price, area in approx[first:end]
        )
        return near[i - first]


_SLACK = 1e-9
"""Relative distance within which float ratios are ordered exactly (their error is
below 1e-15)."""


def median(values: Iterable[int]) -> int:
    """The median of integers (type 7, as ``quartiles``), rounded half to even."""
    items = sorted(values)
    return round(quantile_exact(items, Fraction(1, 2)))


def mean(values: Iterable[int]) -> int:
    """Mean of integers, rounded half to even."""
    return round(mean_exact(values))


@attrs.frozen(kw_only=True)
class CohortStats:
    """Summary of a cohort of at least ``MIN_SAMPLES`` contracts (SPEC's pulse row
    numbers): ``sample_count`` rows in ``contract_count`` contracts, ``bulk_contracts`` of
    them of several rows, the largest of ``largest_contract`` rows.

    Rent fields are None unless some contracts carry a monthly rent; they summarize those.
    ``avg_area_m2`` is None when no contract reports an area.
    """

    sample_count: int
    contract_count: int
    bulk_contracts: int
    largest_contract: int
    avg_price: int
    p25_price: int
    median_price: int
    p75_price: int
    avg_monthly_rent: int | None
    p25_monthly_rent: int | None
    median_monthly_rent: int | None
    p75_monthly_rent: int | None
    avg_area_m2: str | None
    source_mix: dict[str, int]
    source_means: dict[str, int]
    relative_spread: float

    @property
    def distinct_sources(self) -> int:
        return len(self.source_mix)


def summarize(
    samples: Sequence[SampleLike], *, grouped: Sequence[Observation] | None = None
) -> CohortStats | None:
    """Statistics of a cohort over its contracts (module docstring), or None when it has
    fewer than ``MIN_SAMPLES`` contracts; ``grouped`` is ``contracts(samples)`` when the
    caller has it already."""
    observed = contracts(samples) if grouped is None else grouped
    if len(observed) < MIN_SAMPLES:
        return None
    units = (
        []
        if len(observed) == len(samples)
        else [c.units for c in observed if isinstance(c, Contract)]
    )
    prices = sorted(c.price for c in observed)
    avg = mean_exact(prices)
    p25, median, p75 = quartiles(prices)

    rents = sorted(c.monthly_rent for c in observed if c.monthly_rent is not None)
    rent_avg = rent_p25 = rent_median = rent_p75 = None
    if rents:
        rent_avg = mean(rents)
        rent_p25, rent_median, rent_p75 = quartiles(rents)

    by_source: dict[str, list[int]] = {}
    for c in observed:
        by_source.setdefault(c.source, []).append(c.price)
    exact_means = {src: mean_exact(vals) for src, vals in sorted(by_source.items())}
    rows = Counter(s.source for s in samples) if units else None
    spread = Fraction(0)
    if len(exact_means) > 1 and avg > 0:
        spread = (max(exact_means.values()) - min(exact_means.values())) / avg

    return CohortStats(
        sample_count=len(samples),
        contract_count=len(observed),
        bulk_contracts=len(units),
        largest_contract=max(units, default=1),
        avg_price=round(avg),
        p25_price=p25,
        median_price=median,
        p75_price=p75,
        avg_monthly_rent=rent_avg,
        p25_monthly_rent=rent_p25,
        median_monthly_rent=rent_median,
        p75_monthly_rent=rent_p75,
        avg_area_m2=mean_area_text([c.area for c in observed if c.area is not None]),
        source_mix={
            src: len(vals) if rows is None else rows[src] for src, vals in sorted(by_source.items())
        },
        source_means={src: round(m) for src, m in exact_means.items()},
        relative_spread=round(float(spread), 4),
    )
