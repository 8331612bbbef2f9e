"""Parts of ``svc sync status`` (``commands.sync``): how an ingested month is told, and
what it says of the records loads rejected as malformed (issue 42): one line (or JSON
entry) per source kind and district-month holding any, so that a month loaded whole
with a rejected row is not mistaken for a month with every deal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.periods import Month
from svc_core.regions import region_name
from svc_core.sync.rtms import IngestedMonth
from svc_server.store import Store
from svc_server.store.base import Row

WHOLE = {True: "whole", False: "incomplete", None: "whole unknown"}
"""How ``svc sync status`` tells whether an ingested month holds every item."""


def ingested_text(month: IngestedMonth) -> str:
    return f"{month.month.label} from {', '.join(month.sources)}, {WHOLE[month.complete]}"


def rejected_months(
    store: Store, codes: Sequence[str], first: Month | None, last: Month | None
) -> list[Row]:
    """(kind, sigungu_code, month, n) of the district-months with rejected records, of
    ``codes`` (every district when empty) between ``first`` and ``last``."""
    return [
        r
        for r in store.realestate.rejected_by_month()
        if (not codes or r["sigungu_code"] in codes)
        and (first is None or r["month"] >= first.label)
        and (last is None or r["month"] <= last.label)
    ]


def rejected_json(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [
        {
            "kind": r["kind"],
            "sigungu_code": r["sigungu_code"],
            "month": r["month"],
            "count": int(r["n"]),
        }
        for r in rows
    ]


def rejected_lines(rows: Sequence[Row]) -> list[str]:
    out = []
    for r in rows:
        n = int(r["n"])
        out.append(
            f"rejected {r['kind']} {r['sigungu_code']} {region_name(r['sigungu_code']) or ''} "
            f"{r['month']}: {n} malformed record{'s' if n != 1 else ''} in no figure "
            "(/transactions?include_excluded=true lists them with their reason)"
        )
    return out
