"""The real-estate layer envelope (``_meta``): provenance and honesty on every answer.

Built from plain values so the same envelope rides 200s and 404s alike. The wording of
the notes lives here, in one place, so docs and responses cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from svc_core.caller import Caller
from svc_core.demo import DEMO_LIMITATION as SYNTHETIC_LIMITATION
from svc_core.instants import iso

SERVICE = "svc"
API_VERSION = "v1"
COVERAGE_METHOD = "not_estimated_rtms_reporting_share_unknown"
BASE_LIMITATIONS: tuple[str, ...] = (
    "MOLIT RTMS records are contracts reported within 30 days of signing; the latest month "
    "is incomplete until reports arrive.",
    "RTMS has no record id: identical deals are told apart only by their order in a report.",
    "avg_area_m2 is building (gross) area for whole-building sales, unit area for strata "
    "units, and exclusive area for officetels.",
    "Lot numbers are partly masked by MOLIT; dong precision uses the legal dong of the record.",
)

CONTRACT_METHODOLOGY = (
    "Figures count contracts, not rows: RTMS reports a sale of several units of one "
    "building as one row per unit, and rows that agree on source, district, legal dong, "
    "lot number, contract date, deal type, seller and buyer type, building use, build "
    "year, property type and building type are one contract (a lease, or a row without "
    "a lot number, is a contract of its own). A bulk contract enters the price quartiles "
    "and means once with its total price, and the per-area quartiles once with its total "
    "price / total area (area unknown unless every unit reports one); avg_area_m2 is the "
    "mean contract area. sample_count, source_mix and building_type_mix count rows; "
    "contract_count counts contracts, bulk_contracts those of several units. A row needs "
    "at least 2 contracts (a coverage period too), and the confidence ladder's threshold "
    "of 5 counts contracts."
)
"""``_meta.methodology`` of pulse, series and coverage answers (issue 28)."""

TRANSACTIONS_PATH = "/api/v1/real-estate/transactions"
"""The deals route pulse rows link to (``transactions_url``)."""


@attrs.frozen(kw_only=True)
class Links:
    """Absolute URLs the envelope, tier errors and rows point at (``transactions_url``:
    the deals route, which pulse rows link to with their cohort's filters)."""

    disclosure_url: str
    upgrade_url: str
    transactions_url: str = TRANSACTIONS_PATH


@attrs.frozen(kw_only=True)
class Answer:
    """What a use case answers: ``data`` (typed rows or a typed object, made JSON-ready by
    ``svc_core.convert``) and ``meta`` (the ``_meta`` envelope, already JSON-ready)."""

    data: Any
    meta: dict[str, Any]


def lease_status(property_type: str | None, transaction_type: str | None) -> tuple[str, str]:
    """``lease_data_status`` and ``lease_data_note`` for a query.

    ``absent`` when the query asks for sales only; ``reported`` for officetel leases
    (reported to MOLIT since 2021); ``not_mandated`` whenever commercial leases are in
    scope, because commercial leases are not reported to MOLIT at all.
    """
    if transaction_type == "sale":
        return "absent", "This query covers sales only; no lease data is included."
    if property_type == "officetel":
        return (
            "reported",
            "Officetel leases come from MOLIT lease reports; reporting is mandatory for "
            "housing leases but compliance is incomplete and renewals are under-reported.",
        )
    return (
        "not_mandated",
        "Commercial leases are not reported to MOLIT; lease cohorts for office, retail, "
        "commercial_complex and mixed_use come only from voluntary or derived sources and "
        "are thin.",
    )


EXCLUSION_LABELS: dict[str, str] = {
    "cancelled": "cancelled deals",
    "partial_share": "partial-share deals",
}
"""Readable names of the transaction exclusion reasons in ``coverage_note``."""


def coverage_note(exclusions: Mapping[str, int], *, scoped: bool = False) -> str:
    """How much of the market the data covers, and what was excluded and why.

    ``exclusions`` counts transactions excluded at ingest by reason: of the answer's
    cohorts (its districts, months and types) when ``scoped``, else over every load
    (the note is plain ASCII so that it can also travel in a response header).
    """
    parts = [
        "Covers deals reported to MOLIT RTMS (a sale must be reported within 30 days of "
        "the contract; the share of deals actually reported is not known, so no coverage "
        "estimate is given) plus the other sources listed in data_sources.",
        "Cancelled deals and partial-share deals are always excluded.",
    ]
    listed = ", ".join(
        f"{count} {EXCLUSION_LABELS.get(reason, reason)}"
        for reason, count in sorted(exclusions.items())
        if count
    )
    if scoped:
        parts.append(
            f"Excluded at ingest from this answer's districts, months and types: {listed}."
            if listed
            else "None was excluded at ingest from this answer's districts, months and types."
        )
    elif listed:
        parts.append(f"Excluded at ingest so far (every district): {listed}.")
    return " ".join(parts)


def rate_limit(caller: Caller) -> dict[str, int | None]:
    """``_meta.rate_limit`` of every data answer and refusal: the caller's per-minute
    limit and what is left of it (None until the access pipeline counted the call)."""
    return {"limit_per_min": caller.rate_limit_per_minute, "remaining": caller.rate_remaining}


PER_CALL_FIELDS = ("generated_at", "rate_limit", "request_id")
"""The ``_meta`` fields that belong to one call: two calls of one query by callers of
one plan and authentication method, on the same data and day, differ only in these (a
server may keep the rest of an encoded answer and fill these in per call)."""


def per_call_fields(caller: Caller, request_id: str, generated_at: datetime) -> dict[str, Any]:
    """The values of ``PER_CALL_FIELDS`` for one call (as ``layer_envelope`` sets them)."""
    return {
        "generated_at": iso(generated_at, "generated_at"),
        "rate_limit": rate_limit(caller),
        "request_id": request_id,
    }


def layer_envelope(
    *,
    caller: Caller,
    request_id: str,
    generated_at: datetime,
    count: int,
    confidence: str | None,
    source_mix: Mapping[str, int],
    data_sources: Sequence[str],
    disclosure_url: str,
    exclusions: Mapping[str, int] | None = None,
    exclusions_scoped: bool = False,
    synthetic: bool = False,
    property_type: str | None = None,
    transaction_type: str | None = None,
    query: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``_meta`` of every real-estate response (SPEC "Layer envelope")."""
    status, note = lease_status(property_type, transaction_type)
    call = per_call_fields(caller, request_id, generated_at)
    limitations = list(BASE_LIMITATIONS)
    if synthetic:
        limitations.insert(0, SYNTHETIC_LIMITATION)
    meta: dict[str, Any] = {
        "service": SERVICE,
        "api_version": API_VERSION,
        "vertical": "real_estate",
        "tier": caller.plan,
        "auth_method": caller.auth_method,
        "data_sources": sorted(set(data_sources)),
        "coverage_estimate": None,
        "coverage_estimate_method": COVERAGE_METHOD,
        "coverage_note": coverage_note(exclusions or {}, scoped=exclusions_scoped),
        "lease_data_status": status,
        "lease_data_note": note,
        "known_limitations": limitations,
        "disclosure_url": disclosure_url,
        "confidence": confidence,
        "source_mix": dict(sorted(source_mix.items())),
        "generated_at": call["generated_at"],
        "count": count,
    }
    if query is not None:
        meta["query"] = dict(query)
    meta["rate_limit"] = call["rate_limit"]
    meta.update(extra or {})
    meta["request_id"] = call["request_id"]
    return meta
