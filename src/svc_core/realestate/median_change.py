"""How a median moved between two periods, and how sure that is (issue 46, item 2).

A row's change against another period states both medians, the percentage
(``this ÷ base − 1``, from the two rows' served medians, rounded half to even to two
decimals), both sides' contract counts, and an interval for the change computed by a
distribution-free method without randomness, so the same data always give the same
figures:

1. **Each median.** For ``n`` contracts sorted ``x(1) ≤ … ≤ x(n)``, the interval
   ``[x(k), x(n+1−k)]`` holds the median of the distribution the contracts are drawn
   from with probability at least ``1 − 2·P(B ≤ k−1)``, ``B ~ Binomial(n, ½)``, whatever
   that distribution (the exact order-statistic interval; ties only raise the
   coverage). ``k`` is the largest rank with ``2·P(B ≤ k−1) ≤ α``, computed in integers
   (``order_rank``); below ``MIN_INTERVAL_CONTRACTS`` contracts no rank qualifies and the
   interval is unbounded. The bounds are rounded half to even to whole KRW, as the
   medians are, so the served median always lies within them.
2. **The ratio.** With each side's interval at 97.5 % (``α = 1/40``), both hold at once
   with probability at least 95 % (Bonferroni, which needs no independence), and then the
   ratio of the medians lies in ``[L₁ ÷ U₀, U₁ ÷ L₀]``. The change's interval is that
   minus 1, in percent, rounded outward to two decimals (low down, high up), so it always
   holds the stated change.
3. **Significance.** A change is called significant only when that interval excludes
   zero (its low bound above 0, or its high bound below 0).

The interval widens as contracts get fewer: the rank ``k`` moves away from the middle as
``n`` shrinks, and below 7 contracts on a side there is no interval at all
(``interval_reason`` ``too_few_contracts``, never significant).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction

import attrs

from svc_core.json_schema import boolean, doc, integer, nullable, number, string

JOINT_LEVEL = Fraction(95, 100)
"""The coverage of a change's interval."""
SIDE_ALPHA = Fraction(1, 40)
"""Each median's interval misses with at most this probability (97.5 % each: Bonferroni)."""
ALONE_ALPHA = Fraction(1, 20)
"""A single median's interval (95 %), stated where a median stands alone (compare)."""
MIN_INTERVAL_CONTRACTS = 7
"""The fewest contracts whose median has a bounded 97.5 % interval: 2 · 2⁻⁷ ≤ 1/40."""

NOT_LOADED = "not_loaded"
INCOMPLETE = "incomplete"
TOO_FEW = "too_few_transactions"
NO_VALUE = "no_value"
REASONS = (NOT_LOADED, INCOMPLETE, TOO_FEW, NO_VALUE)
"""Why a change is null: the other period was never loaded; a side's period is not
loaded completely; the other period is loaded but has no row (fewer than 2 contracts);
a side has no such median (no contract reports an area)."""
TOO_FEW_CONTRACTS = "too_few_contracts"
"""Why a change's interval is null: a side has fewer than ``MIN_INTERVAL_CONTRACTS``."""
PERCENT = Fraction(100)
CENT = Fraction(1, 100)


@functools.cache
def order_rank(n: int, alpha: Fraction) -> int | None:
    """The largest rank ``k`` (1-based, at most ``(n+1)/2``) with ``2·P(B ≤ k−1) ≤ alpha``
    for ``B ~ Binomial(n, ½)``, exactly in integers; None when even ``k = 1`` misses
    (too few values for an interval at that level)."""
    total = 1 << n
    cumulative = 0
    term = 1  # C(n, i)
    rank = 0
    for i in range((n + 1) // 2):
        cumulative += term
        if 2 * cumulative * alpha.denominator > alpha.numerator * total:
            break
        rank = i + 1
        term = term * (n - i) // (i + 1)
    return rank or None


@attrs.frozen
class Interval:
    """An interval of a median: its bounds, whole KRW (or KRW per area)."""

    low: int
    high: int


def median_interval(ordered: Sequence[int | Fraction], alpha: Fraction) -> Interval | None:
    """The exact order-statistic interval of the median of ``ordered`` (sorted values),
    missing with probability at most ``alpha``; None when too few values bound it."""
    n = len(ordered)
    rank = order_rank(n, alpha) if n else None
    if rank is None:
        return None
    return Interval(low=round(ordered[rank - 1]), high=round(ordered[n - rank]))


@attrs.frozen
class MedianBounds:
    """A median's intervals: ``paired`` at 97.5 % (what a change combines), ``alone`` at
    95 % (what a median on its own is stated with); None when too few values."""

    paired: Interval | None = None
    alone: Interval | None = None


NO_BOUNDS = MedianBounds()


@attrs.frozen
class Medians:
    """The intervals of a row's two medians that changes compare: the price (a lease's
    deposit) and the price per area (a lease's deposit per area)."""

    price: MedianBounds = NO_BOUNDS
    per_area: MedianBounds = NO_BOUNDS


def median_bounds(ordered: Sequence[int | Fraction]) -> MedianBounds:
    """Both intervals of the median of ``ordered`` (sorted values)."""
    return MedianBounds(
        paired=median_interval(ordered, SIDE_ALPHA), alone=median_interval(ordered, ALONE_ALPHA)
    )


@attrs.frozen
class Side:
    """One side of a change: the row's median (None when it has none), its intervals and
    its contracts."""

    value: int | None
    bounds: MedianBounds
    contracts: int


def _pct(ratio: Fraction) -> float:
    """``(ratio − 1)`` in percent, rounded half to even to two decimals."""
    return float(round((ratio - 1) * PERCENT, 2))


def _outward(ratio: Fraction, *, up: bool) -> Fraction:
    """``(ratio − 1)`` in percent, rounded to two decimals away from the middle."""
    cents = (ratio - 1) * PERCENT / CENT
    whole = math.ceil(cents) if up else math.floor(cents)
    return whole * CENT


@attrs.frozen(kw_only=True)
class Change:
    """A median's change against another period (module docstring): served as an object
    of a pulse or series row, null fields with their reason."""

    base_period: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The period compared with: YYYY-MM, YYYY-Qn, or for a rolling window "
                    "the window's months as YYYY-MM/YYYY-MM; null when it is before 1990."
                )
            )
        )
    )
    value: int | None = attrs.field(
        metadata=doc(nullable(integer("This row's median (KRW, or KRW per area).")))
    )
    base_value: int | None = attrs.field(
        metadata=doc(
            nullable(integer("The other period's median, same cohort; null without its row."))
        )
    )
    change_pct: float | None = attrs.field(
        metadata=doc(
            nullable(
                number(
                    "(value / base_value - 1) x 100, rounded half to even to 2 decimals; "
                    "null with reason."
                )
            )
        )
    )
    contract_count: int = attrs.field(metadata=doc(integer("Contracts of this row.", minimum=2)))
    base_contract_count: int | None = attrs.field(
        metadata=doc(nullable(integer("Contracts of the other period's row.", minimum=2)))
    )
    interval_low_pct: float | None = attrs.field(
        metadata=doc(
            nullable(
                number(
                    "Low bound of the change's 95% interval, in percent (exact order-"
                    "statistic intervals of both medians at 97.5% each, combined as a "
                    "ratio; rounded down to 2 decimals); null with interval_reason."
                )
            )
        )
    )
    interval_high_pct: float | None = attrs.field(
        metadata=doc(nullable(number("High bound of the change's 95% interval (rounded up).")))
    )
    significant: bool = attrs.field(
        metadata=doc(
            boolean("True only when the interval excludes zero; false without an interval.")
        )
    )
    reason: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "Why change_pct is null: not_loaded (the other period was never "
                    "loaded), incomplete (a side's period is not loaded completely), "
                    "too_few_transactions (the other period is loaded but has no row), "
                    "no_value (a side has no such median); null otherwise.",
                    enum=[*REASONS, None],
                )
            )
        )
    )
    interval_reason: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "Why the interval is null while change_pct is not: too_few_contracts "
                    "(a side has fewer than 7 contracts with the value, too few to bound "
                    "its median at 97.5%); null otherwise.",
                    enum=[TOO_FEW_CONTRACTS, None],
                )
            )
        )
    )


def unavailable(base_period: str | None, this: Side, base: Side | None, reason: str) -> Change:
    """A change that cannot be stated, for ``reason``: the values it has, no figures."""
    return Change(
        base_period=base_period,
        value=this.value,
        base_value=base.value if base else None,
        change_pct=None,
        contract_count=this.contracts,
        base_contract_count=base.contracts if base else None,
        interval_low_pct=None,
        interval_high_pct=None,
        significant=False,
        reason=reason,
        interval_reason=None,
    )


def change_between(base_period: str | None, this: Side, base: Side) -> Change:
    """The change from ``base`` to ``this`` (both loaded completely, each with a row):
    ``no_value`` when a side has no positive median, else the percentage and, when both
    sides bound their medians, the interval and whether it excludes zero."""
    if this.value is None or base.value is None or this.value <= 0 or base.value <= 0:
        return unavailable(base_period, this, base, NO_VALUE)
    now, then = this.bounds.paired, base.bounds.paired
    low = high = None
    if now is not None and then is not None and then.low > 0:
        low = _outward(Fraction(now.low, then.high), up=False)
        high = _outward(Fraction(now.high, then.low), up=True)
    return Change(
        base_period=base_period,
        value=this.value,
        base_value=base.value,
        change_pct=_pct(Fraction(this.value, base.value)),
        contract_count=this.contracts,
        base_contract_count=base.contracts,
        interval_low_pct=None if low is None else float(low),
        interval_high_pct=None if high is None else float(high),
        significant=low is not None and high is not None and (low > 0 or high < 0),
        reason=None,
        interval_reason=TOO_FEW_CONTRACTS if low is None else None,
    )
