"""Areas as published: exact sums and means of the areas RTMS publishes as decimals.

A stored area is a float; the area as published is the shortest decimal that reads back
as it (``repr``). Figures are computed on the published decimals, exactly: a bulk
contract's area is their sum (a ``Decimal``), a mean is rounded half to even on their
exact mean, and a price per area divides by them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import MAX_PREC, Context, Decimal
from fractions import Fraction

_EXACT = Context(prec=MAX_PREC)
"""Decimal sums in this context are exact."""


def published_sum(areas: Iterable[float | Decimal | None]) -> Decimal:
    """The exact sum of areas as published: a row's float as the shortest decimal that
    reads back as it, a contract's total as it is; None counts as nothing."""
    add = _EXACT.add
    total = Decimal(0)
    for a in areas:
        if a is not None:
            total = add(total, Decimal(repr(a)) if isinstance(a, float) else a)
    return total


def exact_area(area: float | Decimal) -> Fraction:
    """An area exactly: a row's as published, a contract's total as it is."""
    return Fraction(repr(area)) if isinstance(area, float) else Fraction(area)


def mean_area_text(areas: Sequence[float | Decimal]) -> str | None:
    """The exact mean of areas as published, with two decimals rounded half to even;
    None for no area."""
    if not areas:
        return None
    # Fast: the exact mean of the values as stored, in integer arithmetic (a float is
    # n / 2**k, a Decimal n / 10**k: over one common denominator the sum is one integer,
    # ~10x faster than summing Fractions). A float is within 2**-53 of itself from its
    # published decimal, so this mean is within max area * 2**-52 of the published
    # one: they round alike unless it lies that close to a half-hundredth.
    ratios = [a.as_integer_ratio() for a in areas]
    denominators = {d for _, d in ratios}
    denominator = max(denominators)
    if any(denominator % d for d in denominators):
        denominator = math.lcm(*denominators)
    total = sum(n * (denominator // d) for n, d in ratios)
    stored = Fraction(total, denominator * len(areas))
    q, r = divmod(stored.numerator * 100, stored.denominator)
    off = abs(2 * r - stored.denominator)  # distance from the half-hundredth, scaled
    if off * 2**51 <= stored.denominator * 100 * math.ceil(max(areas)):
        return hundredths(Fraction(published_sum(areas)) / len(areas))
    return str(Decimal(q + (2 * r > stored.denominator)).scaleb(-2))


def hundredths(value: Fraction) -> str:
    """``value`` with two decimals, rounded half to even exactly."""
    q, r = divmod(value.numerator * 100, value.denominator)
    if 2 * r > value.denominator or (2 * r == value.denominator and q % 2):
        q += 1
    return str(Decimal(q).scaleb(-2))
