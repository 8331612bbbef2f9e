"""What every real-estate answer shares: the request context, the envelope, the tier
gate, district names and the codes a district is stored under."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import attrs

from svc_core.accounts.plans import require_tier
from svc_core.caller import Caller
from svc_core.envelope import Links, layer_envelope
from svc_core.instants import iso
from svc_core.regions import aliases, region_name

DONG_TIER = "pro"
DEFAULT_SOURCES = ("rtms_official",)


@attrs.frozen(kw_only=True)
class Context:
    """Who asks and what the data says about itself: everything an envelope needs
    besides the rows. ``exclusions`` counts records excluded at ingest, by reason;
    ``data_as_of`` is when the data behind the answer last changed (ISO-8601, None
    before any: ``data_as_of``), ``data_version`` the id of the latest change behind it
    (``data_version``)."""

    caller: Caller
    request_id: str
    generated_at: datetime
    links: Links
    exclusions: Mapping[str, int] = attrs.field(factory=dict)
    data_as_of: str | None = None
    data_version: int | None = None
    cohort_scoped: bool = False
    """``exclusions`` count the answer's cohorts (its districts, months and types), not
    the whole store; the answer then also states them as ``_meta.exclusions`` and its
    ``rejected_rows``."""
    rejected_rows: tuple[Mapping[str, object], ...] = ()
    """Records rejected as malformed in the answer's cohorts, per district-month
    (``svc_core.realestate.traces.rejected_rows``)."""


def data_as_of(changed: Mapping[str, int], codes: Iterable[str] | None) -> str | None:
    """When the data of districts ``codes`` last changed, given when each district's
    did (``changed``: code → unix seconds): the latest of them, over every district when
    ``codes`` is None (an answer about no one district); ISO-8601 UTC, None when none
    of them has data."""
    if codes is None:
        times = list(changed.values())
    else:
        times = [changed[code] for code in set(codes) if code in changed]
    return iso(max(times)) if times else None


def data_version(versions: Mapping[str, int], codes: Iterable[str] | None) -> int | None:
    """The data version of an answer about districts ``codes`` (None: every district),
    given each district's (``versions``: code → the id of its latest change): the
    highest of them, None when none of them has data. It moves exactly when the data
    of one of those districts changes, and never for another district's load."""
    if codes is None:
        found = list(versions.values())
    else:
        found = [versions[code] for code in set(codes) if code in versions]
    return max(found) if found else None


def gate(caller: Caller, geo_precision: str, links: Links) -> None:
    """403 ``TIER_RESTRICTED`` unless the caller's plan may use ``geo_precision``."""
    if geo_precision == "dong":
        require_tier(caller.plan, DONG_TIER, links.upgrade_url)


def layer_meta(
    context: Context,
    *,
    count: int,
    source_mix: Mapping[str, int],
    synthetic: bool,
    grade: str | None = None,
    sources: Iterable[str] = (),
    property_type: str | None = None,
    transaction_type: str | None = None,
    query: Mapping[str, object] | None = None,
    extra: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The ``_meta`` of a real-estate answer; ``data_sources`` are ``sources`` and the
    sources of the rows, or RTMS when there is neither."""
    data_sources = set(sources) | set(source_mix) or set(DEFAULT_SOURCES)
    if context.cohort_scoped:
        extra = {
            **(extra or {}),
            "exclusions": dict(sorted(context.exclusions.items())),
            "rejected_rows": [dict(r) for r in context.rejected_rows],
        }
    return layer_envelope(
        caller=context.caller,
        request_id=context.request_id,
        generated_at=context.generated_at,
        count=count,
        confidence=grade,
        source_mix=source_mix,
        data_sources=sorted(data_sources),
        disclosure_url=context.links.disclosure_url,
        exclusions=context.exclusions,
        exclusions_scoped=context.cohort_scoped,
        synthetic=synthetic,
        property_type=property_type,
        transaction_type=transaction_type,
        query=query,
        extra=extra,
    )


def district_name(code: str, fallback: str | None = None) -> str:
    """A district's name: the bundled table, else ``fallback`` (the name its records
    carry), else the code itself."""
    return region_name(code) or fallback or code


def gu_name(sigungu: str) -> str:
    """The gu of a district name: its last word (``성남시 분당구`` → ``분당구``)."""
    words = sigungu.split()
    return words[-1] if words else sigungu


def codes_of(code: str) -> list[str]:
    """The requested code and its renumbering aliases, requested code first."""
    return [code, *sorted(aliases(code))]
