"""svc_core's public surface is exactly ``__all__``, and every name in it imports."""

from __future__ import annotations

import subprocess
import sys

import pytest

import svc_core

EXPORTED = [
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


def test_all_is_pinned() -> None:
    assert svc_core.__all__ == EXPORTED


@pytest.mark.parametrize("name", EXPORTED)
def test_each_exported_name_imports_and_is_what_its_module_defines(name: str) -> None:
    value = getattr(svc_core, name)
    assert getattr(value, "__module__", "").startswith("svc_core."), name
    assert name in dir(svc_core)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from svc_core import *", namespace)  # noqa: S102  (a fixed statement)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(EXPORTED)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'pulse_row'"):
        _ = svc_core.pulse_row


def test_importing_the_package_loads_no_submodule_it_does_not_need() -> None:
    """Names load on first use: ``import svc_core`` alone stays cheap."""
    code = (
        "import sys, svc_core; print(sorted(m for m in sys.modules if m.startswith('svc_core.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("svc_core.signing", "svc_core.webhooks.signing"),
        ("svc_core.stats", "svc_core.cohorts.stats"),
        ("svc_core.rent_conversion", "svc_core.realestate.rent_conversion"),
    ],
)
def test_a_documented_module_path_names_the_same_objects_after_the_regrouping(
    old: str, new: str
) -> None:
    """Code written against the paths docs/library.md and examples/ gave before svc_core
    was grouped by concern keeps importing every public name, as the very same object."""
    import importlib

    before, after = importlib.import_module(old), importlib.import_module(new)
    assert list(before.__all__) == list(after.__all__) and len(after.__all__) > 3
    for name in after.__all__:
        assert getattr(before, name) is getattr(after, name)
