"""Cold pulses in process: what a cohort never asked costs svc, and what the disk adds.

Opens each store given (SQLite database files, e.g. the two stores of ``bench/national.py
--dir DIR --cohorts same``), and times the pulse of 20 districts never asked before (all
types, the latest month), twice: the first pass reads each cohort's pages from wherever
they are (the disk, when the operating system's file cache no longer holds them), the
second from the file cache. svc's own cost is the second pass; the first shows what a
store larger than the machine's file cache adds on the first read of a cohort.

    python bench/cold_pulse.py /tmp/nat/national-500000_1y.db /tmp/nat/national-5000000.db
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from werkzeug.test import Client

from svc_core.regions import regions_in_use
from svc_server.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from national import BUSY
from profile_pulse import unmetered_app

PASSES = 2


def cold_pass(db: str, codes: list[str]) -> float:
    """The median pulse (ms) of the districts ``codes``, through an app on a store opened
    anew (nothing cached in the process; the file cache is the system's)."""
    store = open_store(f"sqlite:///{db}")
    try:
        app, api_key = unmetered_app(store)
        client = Client(app)
        headers = {"X-API-Key": api_key}
        client.get("/api/v1/real-estate/pulse?sigungu_code=11680", headers=headers)  # state
        taken = []
        for code in codes:
            started = time.perf_counter()
            client.get(f"/api/v1/real-estate/pulse?sigungu_code={code}", headers=headers)
            taken.append((time.perf_counter() - started) * 1000)
        return statistics.median(taken)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", nargs="+", help="SQLite database files holding data")
    parser.add_argument("--districts", type=int, default=20)
    args = parser.parse_args()
    codes = [r.code for r in regions_in_use() if r.code not in BUSY][: args.districts]
    for db in args.db:
        first, second = (cold_pass(db, codes) for _ in range(PASSES))
        print(f"{db}: first pass {first:.2f} ms, second pass {second:.2f} ms (median pulse)")


if __name__ == "__main__":
    main()
