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
store. Exit status 1 (with the reason on stderr) when no cohort has enough transactions
or a parameter is malformed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from svc_core import (
    InvalidParams,
    SvcError,
    merge_loads,
    parse_pulse,
    parse_transactions,
    pulse_rows,
    rtms_kind,
    to_json,
)
from svc_core.realestate.loads import KINDS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="MOLIT RTMS files")
    parser.add_argument("--period", default="", help="last_6m (default), YYYY-MM or YYYY-Qn")
    parser.add_argument("--property-type", default="", help="one property type (default all)")
    parser.add_argument("--transaction-type", default="", help="one transaction type")
    parser.add_argument("--sigungu-code", default="", help="the district (default: the files')")
    parser.add_argument("--kind", choices=KINDS, help="the reader of every file")
    args = parser.parse_args(argv)
    try:
        results = [
            parse_transactions(path.read_bytes(), args.kind or rtms_kind(path.name), path=str(path))
            for path in args.files
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
        rows = pulse_rows(transactions, query)
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
