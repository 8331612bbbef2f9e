"""svc core: pure domain logic for the svc data API (no I/O, no clock, no randomness).

Import it as a library: read MOLIT and R-ONE files, compute the same pulse, series,
coverage and index rows the server answers, summarize cohorts, and sign or verify
webhook deliveries. Everything listed in ``__all__`` is importable from ``svc_core``
directly; the names are loaded on first use, so ``import svc_core`` stays cheap and
importing one submodule does not pull in the others. See ``docs/library.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svc_core.cohorts.confidence import confidence_of
    from svc_core.cohorts.stats import summarize
    from svc_core.convert import to_json
    from svc_core.envelope import Answer
    from svc_core.errors import (
        InvalidParams,
        InvalidPeriod,
        NotFound,
        SignatureVerificationError,
        SourceError,
        SvcError,
        TierRestricted,
    )
    from svc_core.models import IndexObservation, Transaction
    from svc_core.params import Param
    from svc_core.periods import Month, Quarter
    from svc_core.realestate.contract_record import ContractRecord, contract_records
    from svc_core.realestate.coverage import CoverageRow, coverage_rows
    from svc_core.realestate.freshness import incomplete_of, loaded_of
    from svc_core.realestate.indices import IndexRow, index_rows, index_value_of
    from svc_core.realestate.loads import merge_loads, parse_transactions, rtms_kind
    from svc_core.realestate.pulse import PulseRow, pulse_rows
    from svc_core.realestate.query import (
        Cohort,
        CoverageQuery,
        DimensionsQuery,
        IndicesQuery,
        PulseQuery,
        SeriesQuery,
        parse_coverage,
        parse_dimensions,
        parse_indices,
        parse_pulse,
        parse_series,
    )
    from svc_core.realestate.record import TransactionRecord, transaction_record
    from svc_core.realestate.series import series_rows
    from svc_core.sources.rone import parse_rone
    from svc_core.sources.rtms import parse_rtms
    from svc_core.sources.rtms_csv import parse_rtms_csv
    from svc_core.sources.samples import parse_samples
    from svc_core.webhooks.signing import sign, verify

_EXPORTS: dict[str, str] = {
    # readers
    "parse_rtms": "svc_core.sources.rtms",
    "parse_rtms_csv": "svc_core.sources.rtms_csv",
    "parse_rone": "svc_core.sources.rone",
    "parse_samples": "svc_core.sources.samples",
    "parse_transactions": "svc_core.realestate.loads",
    "rtms_kind": "svc_core.realestate.loads",
    "merge_loads": "svc_core.realestate.loads",
    "incomplete_of": "svc_core.realestate.freshness",
    "loaded_of": "svc_core.realestate.freshness",
    "Transaction": "svc_core.models",
    "IndexObservation": "svc_core.models",
    # queries
    "Param": "svc_core.params",
    "Cohort": "svc_core.realestate.query",
    "PulseQuery": "svc_core.realestate.query",
    "SeriesQuery": "svc_core.realestate.query",
    "CoverageQuery": "svc_core.realestate.query",
    "IndicesQuery": "svc_core.realestate.query",
    "DimensionsQuery": "svc_core.realestate.query",
    "parse_pulse": "svc_core.realestate.query",
    "parse_series": "svc_core.realestate.query",
    "parse_coverage": "svc_core.realestate.query",
    "parse_indices": "svc_core.realestate.query",
    "parse_dimensions": "svc_core.realestate.query",
    # rows
    "PulseRow": "svc_core.realestate.pulse",
    "pulse_rows": "svc_core.realestate.pulse",
    "series_rows": "svc_core.realestate.series",
    "CoverageRow": "svc_core.realestate.coverage",
    "coverage_rows": "svc_core.realestate.coverage",
    "IndexRow": "svc_core.realestate.indices",
    "index_rows": "svc_core.realestate.indices",
    "index_value_of": "svc_core.realestate.indices",
    "TransactionRecord": "svc_core.realestate.record",
    "transaction_record": "svc_core.realestate.record",
    "ContractRecord": "svc_core.realestate.contract_record",
    "contract_records": "svc_core.realestate.contract_record",
    "Answer": "svc_core.envelope",
    "to_json": "svc_core.convert",
    # statistics and periods
    "summarize": "svc_core.cohorts.stats",
    "confidence_of": "svc_core.cohorts.confidence",
    "Month": "svc_core.periods",
    "Quarter": "svc_core.periods",
    # webhook signatures
    "sign": "svc_core.webhooks.signing",
    "verify": "svc_core.webhooks.signing",
    # errors
    "SvcError": "svc_core.errors",
    "InvalidParams": "svc_core.errors",
    "InvalidPeriod": "svc_core.errors",
    "SourceError": "svc_core.errors",
    "NotFound": "svc_core.errors",
    "TierRestricted": "svc_core.errors",
    "SignatureVerificationError": "svc_core.errors",
}

__all__ = [
    "Answer",
    "Cohort",
    "ContractRecord",
    "CoverageQuery",
    "CoverageRow",
    "DimensionsQuery",
    "IndexObservation",
    "IndexRow",
    "IndicesQuery",
    "InvalidParams",
    "InvalidPeriod",
    "Month",
    "NotFound",
    "Param",
    "PulseQuery",
    "PulseRow",
    "Quarter",
    "SeriesQuery",
    "SignatureVerificationError",
    "SourceError",
    "SvcError",
    "TierRestricted",
    "Transaction",
    "TransactionRecord",
    "confidence_of",
    "contract_records",
    "coverage_rows",
    "incomplete_of",
    "index_rows",
    "index_value_of",
    "loaded_of",
    "merge_loads",
    "parse_coverage",
    "parse_dimensions",
    "parse_indices",
    "parse_pulse",
    "parse_rone",
    "parse_rtms",
    "parse_rtms_csv",
    "parse_samples",
    "parse_series",
    "parse_transactions",
    "pulse_rows",
    "rtms_kind",
    "series_rows",
    "sign",
    "summarize",
    "to_json",
    "transaction_record",
    "verify",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'svc_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
