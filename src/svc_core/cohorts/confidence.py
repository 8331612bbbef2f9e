"""The confidence ladder of a cohort, with the reason that decided it.

The ladder, first matching rule wins (``MAX_SPREAD`` = 0.20, ``MIN_SAMPLES`` = 5):

1. at least 2 distinct sources and ``relative_spread <= 0.20`` → ``high``
   ("2 sources agree within 20% spread (8.1%)")
2. at least 2 distinct sources, spread above 20%, at least 5 contracts → ``medium``
3. at least 2 distinct sources, spread above 20%, fewer than 5 contracts → ``low``
4. a single source with at least 5 contracts → ``medium``
   ("single source, 7 contracts (18 samples) >= 5")
5. a single source with fewer than 5 contracts → ``low``

The threshold counts contracts, not rows (issue 28): the units of one bulk sale are one
observation, so twelve rows of one contract weigh as one (``svc_core.cohorts.stats.contracts``).
The reason names the samples (rows) too when they are more than the contracts.

A cohort mixing whole buildings and units (``cap_mixed``) is at most ``medium``, with
``mixed_building_types`` set and the reason extended.

Independent sources that agree are the strongest evidence; one source is at best
``medium``. ``relative_spread`` is (max per-source mean − min per-source mean) / average
price, as computed by ``svc_core.cohorts.stats``. For a series, ``worst`` gives the weakest level.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from svc_core.cohorts.stats import CohortStats
from svc_core.json_schema import boolean, doc, integer, number, string

MAX_SPREAD = 0.20
MIN_SAMPLES = 5
LEVELS: tuple[str, ...] = ("low", "medium", "high")


@attrs.frozen(kw_only=True)
class ConfidenceFactors:
    """The inputs of the ladder and the sentence naming the rule that fired: SPEC's
    fields, then ``mixed_building_types`` (issue 14) and ``contract_count`` (issue 28: the
    contracts among the ``sample_count`` rows, which the thresholds count)."""

    distinct_sources: int = attrs.field(metadata=doc(integer(minimum=1)))
    relative_spread: float = attrs.field(
        metadata=doc(number("(max - min of source means) / avg_price."))
    )
    sample_count: int = attrs.field(
        metadata=doc(integer("Rows, as the row's sample_count.", minimum=2))
    )
    ladder_reason: str = attrs.field(
        metadata=doc(
            string(
                "The rule that fired, e.g. 'single source, 13 contracts (24 samples) >= 5': "
                "the threshold of 5 counts contracts."
            )
        )
    )
    mixed_building_types: bool = attrs.field(
        default=False,
        metadata=doc(
            boolean(
                "True when the row holds both whole buildings and units (then its "
                "confidence is at most medium)."
            )
        ),
    )
    contract_count: int = attrs.field(
        metadata=doc(
            integer(
                "Contracts, which the ladder's threshold counts (the row's contract_count).",
                minimum=2,
            )
        )
    )

    def as_dict(self) -> dict[str, Any]:
        """The factors by name, in field order."""
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class Confidence:
    level: str
    factors: ConfidenceFactors


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _counted(contracts: int, samples: int) -> str:
    """``7 contracts (18 samples)``; ``5 contracts`` when each is one sample."""
    text = f"{contracts} contract{'' if contracts == 1 else 's'}"
    return text if samples == contracts else f"{text} ({samples} samples)"


def assess(
    *,
    distinct_sources: int,
    relative_spread: float,
    sample_count: int,
    contract_count: int | None = None,
) -> Confidence:
    """Apply the ladder to the factors; ``contract_count`` (the contracts among the
    ``sample_count`` rows) defaults to ``sample_count``: every row a contract."""
    contracts = sample_count if contract_count is None else contract_count
    if not 1 <= distinct_sources <= contracts <= sample_count or relative_spread < 0:
        raise ValueError(
            "a cohort has 1 to contract_count sources, at most sample_count contracts "
            "and a spread >= 0"
        )
    limit = _pct(MAX_SPREAD).replace(".0%", "%")
    counted = _counted(contracts, sample_count)
    if distinct_sources >= 2:
        if relative_spread <= MAX_SPREAD:
            level = "high"
            reason = (
                f"{distinct_sources} sources agree within {limit} spread ({_pct(relative_spread)})"
            )
        else:
            level = "medium" if contracts >= MIN_SAMPLES else "low"
            cmp = ">=" if contracts >= MIN_SAMPLES else "<"
            reason = (
                f"{distinct_sources} sources disagree beyond {limit} spread "
                f"({_pct(relative_spread)}), {counted} {cmp} {MIN_SAMPLES}"
            )
    elif contracts >= MIN_SAMPLES:
        level = "medium"
        reason = f"single source, {counted} >= {MIN_SAMPLES}"
    else:
        level = "low"
        reason = f"single source, {counted} < {MIN_SAMPLES}"
    return Confidence(
        level=level,
        factors=ConfidenceFactors(
            distinct_sources=distinct_sources,
            relative_spread=relative_spread,
            sample_count=sample_count,
            ladder_reason=reason,
            contract_count=contracts,
        ),
    )


def confidence_of(stats: CohortStats) -> Confidence:
    """The confidence of a summarized cohort."""
    return assess(
        distinct_sources=stats.distinct_sources,
        relative_spread=stats.relative_spread,
        sample_count=stats.sample_count,
        contract_count=stats.contract_count,
    )


MIXED_REASON = "mixes whole buildings and units: at most medium"


def cap_mixed(grade: Confidence) -> Confidence:
    """The grade of a cohort that mixes whole buildings and units: their prices describe
    different goods, so the row says so and is never ``high``."""
    factors = attrs.evolve(
        grade.factors,
        mixed_building_types=True,
        ladder_reason=f"{grade.factors.ladder_reason}; {MIXED_REASON}",
    )
    level = "medium" if grade.level == "high" else grade.level
    return Confidence(level=level, factors=factors)


def worst(levels: Iterable[str | None]) -> str | None:
    """The lowest level (low < medium < high) among ``levels``; None when there is none."""
    ranks = [LEVELS.index(level) for level in levels if level is not None]
    return LEVELS[min(ranks)] if ranks else None
