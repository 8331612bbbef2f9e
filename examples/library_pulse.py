"""Pulse rows from MOLIT files with svc_core alone: no server, no database.

    python examples/library_pulse.py NRG_11680_202506.xml --period 2025-06
    python examples/library_pulse.py OFFICETEL_*_11680_202506.xml --property-type officetel

Reads each file with the reader its MOLIT name calls for (``NRG_`` commercial sales,
``OFFICETEL_`` officetel sales, ``OFFICETEL_RENT_`` officetel leases; ``--kind`` forces
one), keeps the transactions a store would hold after loading the files in order, and
prints the pulse rows as a JSON array: exactly the ``data`` of ``GET
/api/v1/real-estate/pulse`` on a server that loaded the same files. The district is the
files' own when they hold one (``--sigungu-code`` otherwise); a rolling ``--period``
ends at the latest month in the files, as it ends at the latest month in the server's
store. Rows say ``complete`` with ``months_loaded`` of ``months_expected`` (false when
a month of the period is not among the files, or a file is one page of several whose
other pages are missing) and ``provisional`` (against ``--today``, by default today in UTC) and
link their deals on the server at ``--base-url`` (svc's default address unless given).
Exit status 1 (with the reason on stderr) when no cohort has enough transactions or a
parameter is malformed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from svc_core import (
    InvalidParams,
    SvcError,
    incomplete_of,
    loaded_of,
    merge_loads,
    parse_pulse,
    parse_transactions,
    pulse_rows,
    rtms_kind,
    to_json,
)
from svc_core.envelope import TRANSACTIONS_PATH
from svc_core.realestate.loads import KINDS

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="MOLIT RTMS files")
    parser.add_argument("--period", default="", help="last_6m (default), YYYY-MM or YYYY-Qn")
    parser.add_argument("--property-type", default="", help="one property type (default all)")
    parser.add_argument("--transaction-type", default="", help="one transaction type")
    parser.add_argument("--sigungu-code", default="", help="the district (default: the files')")
    parser.add_argument("--kind", choices=KINDS, help="the reader of every file")
    parser.add_argument(
        "--today",
        type=datetime.date.fromisoformat,
        default=datetime.datetime.now(datetime.UTC).date(),
        help="the date provisional is judged on, YYYY-MM-DD (default today, UTC)",
    )
    parser.add_argument(
        "--base-url", default=DEFAULT_BASE_URL, help="the server rows link their deals on"
    )
    args = parser.parse_args(argv)
    try:
        kinds = [args.kind or rtms_kind(path.name) for path in args.files]
        results = [
            parse_transactions(path.read_bytes(), kind, path=str(path))
            for kind, path in zip(kinds, args.files, strict=True)
        ]
        transactions = merge_loads(results)
        code = args.sigungu_code or _only_district({t.sigungu_code for t in transactions})
        query = parse_pulse(
            {
                "sigungu_code": code,
                "period": args.period,
                "property_type": args.property_type,
                "transaction_type": args.transaction_type,
            }
        )
        rows = pulse_rows(
            transactions,
            query,
            today=args.today,
            incomplete=incomplete_of(zip(kinds, results, strict=True)),
            loaded=loaded_of(zip(kinds, results, strict=True)),
            transactions_url=f"{args.base_url.rstrip('/')}{TRANSACTIONS_PATH}",
        )
    except (SvcError, OSError) as exc:
        print(f"library_pulse: {exc}", file=sys.stderr)
        return 1
    if not rows:
        print("library_pulse: no cohort with at least 2 transactions.", file=sys.stderr)
        return 1
    print(json.dumps(to_json(rows), ensure_ascii=False, indent=2))
    return 0


def _only_district(codes: set[str]) -> str:
    if len(codes) == 1:
        return next(iter(codes))
    found = ", ".join(sorted(codes)) or "none"
    raise InvalidParams(f"The files hold districts {found}: choose one with --sigungu-code.")


if __name__ == "__main__":
    sys.exit(main())
