"""What loads left out of a cohort, as an answer states it (issue 42): the records
rejected as malformed, counted per district-month and reason (``_meta.rejected_rows``),
the records listed with ``include_excluded=true`` (``_meta.rejected_records``), and the
months of a listing that were never loaded (``_meta.unloaded_periods``).

Pure functions over what the store counted; the store module is
``svc_server.store.rejections``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import attrs

from svc_core.realestate import freshness
from svc_core.realestate.common import codes_of
from svc_core.sources import RejectedRecord

RejectedCount = tuple[str, str, str, int]
"""(district code, month, reason, records) of rejected records."""


def rejected_rows(counts: Iterable[RejectedCount]) -> list[dict[str, object]]:
    """One entry per district-month with rejected records: ``sigungu_code``, ``month``,
    ``count`` and ``reasons`` (reason → records), ordered by district then month."""
    grouped: dict[tuple[str, str], dict[str, int]] = {}
    for code, month, reason, n in counts:
        if n <= 0:
            continue
        reasons = grouped.setdefault((code, month), {})
        reasons[reason] = reasons.get(reason, 0) + n
    return [
        {
            "sigungu_code": code,
            "month": month,
            "count": sum(reasons.values()),
            "reasons": dict(sorted(reasons.items())),
        }
        for (code, month), reasons in sorted(grouped.items())
    ]


@attrs.frozen(kw_only=True)
class RejectedRow(RejectedRecord):
    """A stored rejected record (``rejected_records``) as a listing reads it: the
    ``RejectedRecord`` a reader kept, with the ``kind`` of its load and the file
    (``path``) it came from. The store builds one per read row, with one call."""

    kind: str
    path: str


def rejected_record(row: RejectedRow) -> dict[str, object]:
    """A stored rejected record as a listing names it."""
    return {
        "natural_key": row.natural_key,
        "sigungu_code": row.sigungu_code,
        "month": row.month,
        "property_type": row.property_type,
        "transaction_type": row.transaction_type,
        "rejected_reason": row.reason,
        "detail": row.detail,
        "source_file": row.path,
        "source_line": row.line,
        "kind": row.kind,
    }


def unloaded_months(
    code: str,
    months: Iterable[str],
    kinds: Collection[str],
    loaded: Collection[freshness.MonthKey],
) -> list[str]:
    """The months among ``months`` for which nothing of any of ``kinds`` was loaded
    completely under district ``code`` or its renumbering aliases: months a listing
    cannot say anything about (never the same as months without deals)."""
    codes = codes_of(code)
    return [m for m in months if not freshness.any_loaded(codes, (m,), kinds, loaded)]
