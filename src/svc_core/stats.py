"""Cohort statistics: mean and quartiles by one documented method.

Quantile method: linear interpolation between order statistics, Hyndman and Fan's
type 7 (numpy's default ``"linear"``, R's default, ``statistics.quantiles(...,
method="inclusive")``). For sorted values ``x[0..n-1]`` and probability ``p``, let
``h = (n - 1) * p``; the quantile is ``x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] -
x[floor(h)])``. So p25/median/p75 always lie between the minimum and the maximum, and the
median of an even count is the midpoint of the two middle values.

Integer outputs (prices, rents, per-source means) are computed exactly with fractions and
rounded half to even (Python's ``round``). ``avg_area_m2`` is the mean of the known areas
as a string with two decimals (half to even on the exact value). ``relative_spread`` is
rounded to 4 decimals; the confidence ladder compares that rounded value.

Prices per area (``per_area_quartiles``): price ÷ area per deal, exactly (the area as
published: the shortest decimal that reads back as the stored float), then the same
type-7 quartiles, rounded half to even to whole KRW; deals without an area are left out.
Per pyeong, the area is first divided by ``M2_PER_PYEONG`` (1 pyeong = 3.305785 m²).

A cohort needs ``MIN_SAMPLES`` (2) samples; ``summarize`` returns None below that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Protocol, overload

import attrs

from svc_core.models import Transaction

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


class SampleLike(Protocol):
    """What ``summarize`` reads of a sample (``Sample``, or a richer record)."""

    @property
    def price(self) -> int: ...

    @property
    def monthly_rent(self) -> int | None: ...

    @property
    def area(self) -> float | None: ...

    @property
    def source(self) -> str: ...


def sample_of(tx: Transaction) -> Sample:
    """The statistics view of a transaction."""
    return Sample(
        price=tx.price_krw, monthly_rent=tx.monthly_rent_krw, area=tx.area_m2, source=tx.source
    )


def mean_exact(values: Iterable[int]) -> Fraction:
    """The exact mean of integers; ValueError when empty."""
    items = list(values)
    if not items:
        raise ValueError("mean of no values")
    return Fraction(sum(items), len(items))


def quantile_exact(sorted_values: Sequence[int | Fraction], p: Fraction) -> Fraction:
    """Type-7 quantile of already sorted integers (or fractions), exactly."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    if not 0 <= p <= 1:
        raise ValueError("p must be within [0, 1]")
    h = (len(sorted_values) - 1) * p
    lo = math.floor(h)
    frac = h - lo
    if frac == 0:
        return Fraction(sorted_values[lo])
    a, b = sorted_values[lo], sorted_values[lo + 1]
    return a + frac * (b - a)


def quantile(values: Iterable[float], p: float) -> float:
    """Type-7 quantile of any real values (sorted here)."""
    items = sorted(values)
    if not items:
        raise ValueError("quantile of no values")
    if not 0 <= p <= 1:
        raise ValueError("p must be within [0, 1]")
    h = (len(items) - 1) * p
    lo = math.floor(h)
    if lo + 1 >= len(items):
        return float(items[lo])
    return items[lo] + (h - lo) * (items[lo + 1] - items[lo])


def quartiles(values: Iterable[int]) -> tuple[int, int, int]:
    """(p25, median, p75) of integers, rounded half to even."""
    items = sorted(values)
    return (
        round(quantile_exact(items, Fraction(1, 4))),
        round(quantile_exact(items, Fraction(1, 2))),
        round(quantile_exact(items, Fraction(3, 4))),
    )


def per_area_quartiles(
    deals: Iterable[tuple[int, float | None]], *, area_unit: str = "m2"
) -> tuple[int, int, int] | None:
    """(p25, median, p75) of price ÷ area over ``(price, area in m²)`` pairs, per m² or
    per pyeong; None when no pair has an area."""
    if area_unit not in AREA_UNITS:
        raise ValueError(f"area_unit must be one of {', '.join(AREA_UNITS)}")
    per = M2_PER_PYEONG if area_unit == "pyeong" else Fraction(1)
    ratios = _Ratios(deals, per)
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

    def __init__(self, deals: Iterable[tuple[int, float | None]], per: Fraction) -> None:
        self._per = per
        per_f = float(per)
        self._approx = sorted((price * per_f / area, price, area) for price, area in deals if area)

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
            Fraction(price) * self._per / Fraction(repr(area))
            for _, price, area in approx[first:end]
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
    """Summary of a cohort of at least ``MIN_SAMPLES`` samples (SPEC's pulse row numbers).

    Rent fields are None unless some samples carry a monthly rent; they summarize those.
    ``avg_area_m2`` is None when no sample reports an area.
    """

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
    source_mix: dict[str, int]
    source_means: dict[str, int]
    relative_spread: float

    @property
    def distinct_sources(self) -> int:
        return len(self.source_mix)


def _area_text(areas: Sequence[float]) -> str | None:
    if not areas:
        return None
    # Exact mean in integer arithmetic: every float is n / 2**k, so over the largest
    # denominator the sum is one integer (as exact as summing Fractions, ~10x faster).
    ratios = [a.as_integer_ratio() for a in areas]
    denominator = max(d for _, d in ratios)
    total = sum(n * (denominator // d) for n, d in ratios)
    exact = Fraction(total, denominator * len(areas))
    value = Decimal(exact.numerator) / Decimal(exact.denominator)
    return str(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))


def summarize(samples: Sequence[SampleLike]) -> CohortStats | None:
    """Statistics of a cohort, or None when it has fewer than ``MIN_SAMPLES`` samples."""
    if len(samples) < MIN_SAMPLES:
        return None
    prices = sorted(s.price for s in samples)
    avg = mean_exact(prices)
    p25, median, p75 = quartiles(prices)

    rents = sorted(s.monthly_rent for s in samples if s.monthly_rent is not None)
    rent_avg = rent_p25 = rent_median = rent_p75 = None
    if rents:
        rent_avg = mean(rents)
        rent_p25, rent_median, rent_p75 = quartiles(rents)

    by_source: dict[str, list[int]] = {}
    for s in samples:
        by_source.setdefault(s.source, []).append(s.price)
    exact_means = {src: mean_exact(vals) for src, vals in sorted(by_source.items())}
    spread = Fraction(0)
    if len(exact_means) > 1 and avg > 0:
        spread = (max(exact_means.values()) - min(exact_means.values())) / avg

    return CohortStats(
        sample_count=len(samples),
        avg_price=round(avg),
        p25_price=p25,
        median_price=median,
        p75_price=p75,
        avg_monthly_rent=rent_avg,
        p25_monthly_rent=rent_p25,
        median_monthly_rent=rent_median,
        p75_monthly_rent=rent_p75,
        avg_area_m2=_area_text([s.area for s in samples if s.area is not None]),
        source_mix={src: len(vals) for src, vals in sorted(by_source.items())},
        source_means={src: round(m) for src, m in exact_means.items()},
        relative_spread=round(float(spread), 4),
    )
