"""Figures spelled out for a reader (an AI assistant's model): won amounts in 억원/만원
with the exact ₩ figure beside them, prices per m² also per 평, and the warnings a
figure needs (a wide p25-p75 spread).

Raw 만원 amounts are what assistants misread by a factor of 10,000; svc's amounts are
whole won, so they are spelled here once, exactly, and never rounded silently: the
억/만원 words round to the nearest 만원 (half to even) and say so with ``약`` when they do.
"""

from __future__ import annotations

from fractions import Fraction

from svc_core.cohorts.stats import M2_PER_PYEONG

MAN = 10_000
EOK = 100_000_000
WIDE_SPREAD = 3
"""p75 at least this many times p25: the middle half of the deals is too spread for a
median to describe them (different goods or a thin cohort)."""


def round_half_even(value: Fraction) -> int:
    """``value`` rounded to the nearest integer, ties to even (Python's ``round``)."""
    return round(value)


def korean_amount(won: int) -> str:
    """Whole won in 억원/만원 words: ``25억 5,000만원``, ``4,500만원``, ``8,000원``.

    Amounts of a 만원 or more are rounded to the nearest 만원 (ties to even) and start
    with ``약`` when that changed them; smaller amounts are given exactly in 원."""
    sign = "-" if won < 0 else ""
    size = abs(won)
    if size < MAN:
        return f"{sign}{size:,}원"
    man = round_half_even(Fraction(size, MAN))
    about = "약 " if man * MAN != size else ""
    eok, rest = divmod(man, EOK // MAN)
    parts = []
    if eok:
        parts.append(f"{eok:,}억")
    if rest:
        parts.append(f"{rest:,}만원")
    elif eok:
        parts[-1] += "원"
    return f"{about}{sign}{' '.join(parts)}"


def amount(won: int) -> str:
    """``korean_amount`` with the exact figure: ``25억 5,000만원 (₩2,550,000,000)``."""
    sign = "-" if won < 0 else ""
    return f"{korean_amount(won)} ({sign}₩{abs(won):,})"


def per_pyeong(won_per_m2: int) -> int:
    """A price per m² as a price per 평 (1 평 = 3.305785 m²), to the nearest won."""
    return round_half_even(won_per_m2 * M2_PER_PYEONG)


def unit_price(won_per_m2: int) -> str:
    """A price per m² spelled per m² and per 평: ``1,169만원/m² (평당 약 3,863만원)``."""
    return f"{korean_amount(won_per_m2)}/m² (평당 {korean_amount(per_pyeong(won_per_m2))})"


def spread(p25: int | None, p75: int | None) -> Fraction | None:
    """p75 / p25, or None when either is missing or p25 is not positive."""
    if p25 is None or p75 is None or p25 <= 0:
        return None
    return Fraction(p75, p25)


def dispersion_warning(p25: int | None, p75: int | None) -> str | None:
    """A warning when p75 is at least ``WIDE_SPREAD`` times p25, else None."""
    ratio = spread(p25, p75)
    if ratio is None or ratio < WIDE_SPREAD:
        return None
    return f"WIDE DISPERSION: p75 is {float(ratio):.1f}x p25, the median hides very different deals"
