"""Real-estate query latency at 200k and 2M transactions: does cost follow the cohort?

Two SQLite stores are filled with synthetic transactions through svc's own write path
(natural keys, rollup, precomputed coverage). Both hold the same Gangnam (11680) data,
150 transactions a month over 60 months; the rest of the table (every other
district of the bundled table) is ten times larger in the second store. Then, in-process
(service functions, no HTTP), it times:

- pulse: ``sigungu_code=11680`` with each property type in turn (``last_6m``)
- series: 12 monthly periods of 11680 (``from_period``/``to_period``)
- coverage: the top 200 cohorts of the whole store (no filter), by quarter and by month

Pulse and series are timed twice: "cold" drops the cached answers before each call, so
it times reading and summarizing the cohort (what the first call after a load does);
the plain rows time the cached answer every later call gets. It prints median and p99
latencies per size and the ratio 2M/200k of the medians (the
two stores are called in alternation, so a change of machine load cannot bias it). Pulse
and series read only their cohort through an index, and coverage reads precomputed rows,
so their ratios should stay near 1 (the goal for pulse is below 1.5).

    python bench/realestate.py            # 200k and 2M (several minutes: the 2M load)
    python bench/realestate.py --quick    # 30k and 300k
    python bench/realestate.py --dir D --reuse   # measure again the stores left in D
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from svc_core.caller import Caller
from svc_core.convert import to_json
from svc_core.models import LoadReport, Transaction
from svc_core.realestate import query
from svc_core.regions import regions_in_use
from svc_core.sources import ParseResult
from svc_server.ingest.coverage import refresh_stale
from svc_server.ingest.load import Load
from svc_server.ingest.writer import commit
from svc_server.services import coverage as coverage_service
from svc_server.services import realestate as service
from svc_server.services.versioned import VersionedCache
from svc_server.store import Store, open_store

TARGET = "11680"
TARGET_PER_MONTH = 150
MONTHS = 60
LATEST = (2026, 9)
BATCH = 50_000
CALLER = Caller(consumer_id="bench", plan="pro", auth_method="api_key", rate_limit_per_minute=10**6)
NAMES = ("pulse", "pulse cold", "series", "series cold", "coverage")
LINKS = service.Links(disclosure_url="http://bench/disclosure", upgrade_url="http://bench/pricing")
SEGMENTS = (
    ("office", "sale"),
    ("retail", "sale"),
    ("commercial_complex", "sale"),
    ("mixed_use", "sale"),
    ("officetel", "sale"),
    ("officetel", "chartered_lease"),
    ("officetel", "monthly_lease"),
    ("office", "monthly_lease"),
)
TYPES = tuple(dict.fromkeys(ptype for ptype, _ in SEGMENTS))
"""The property types the dataset holds deals of, each asked in turn."""
SOURCES = ("rtms_official", "rtms_official", "rtms_official", "public_assessment")
DONGS = ("역삼동", "삼성동", "논현동", "대치동", "청담동", "신사동")


def months() -> list[tuple[int, int]]:
    year, month = LATEST
    out = []
    for _ in range(MONTHS):
        out.append((year, month))
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return out[::-1]


def district_rows(
    rng: random.Random, code: str, name: str, per_month: int, start: int
) -> Iterator[Transaction]:
    """``per_month`` transactions a month for ``MONTHS`` months in one district."""
    serial = start
    for year, month in months():
        for _ in range(per_month):
            ptype, ttype = SEGMENTS[rng.randrange(len(SEGMENTS))]
            price = rng.randrange(5_000, 500_000) * 10_000
            serial += 1
            yield Transaction(
                source=SOURCES[rng.randrange(len(SOURCES))],
                sigungu_code=code,
                sigungu=name,
                dong=DONGS[rng.randrange(len(DONGS))],
                property_type=ptype,
                transaction_type=ttype,
                deal_date=datetime.date(year, month, rng.randrange(1, 29)),
                price_krw=price,
                monthly_rent_krw=price // 100 if ttype == "monthly_lease" else None,
                area_m2=round(rng.uniform(15.0, 900.0), 2),
                natural_key=f"bench:{code}:{serial}",
            )


def dataset(total: int, seed: int = 11) -> Iterator[Transaction]:
    """``total`` transactions: the fixed Gangnam cohort plus the rest spread evenly."""
    rng = random.Random(seed)
    yield from district_rows(rng, TARGET, "강남구", TARGET_PER_MONTH, 0)
    others = [r for r in regions_in_use() if r.code != TARGET]
    rest = total - TARGET_PER_MONTH * MONTHS
    per_district = rest // len(others)
    per_month, extra = divmod(per_district, MONTHS)
    for i, region in enumerate(others):
        yield from district_rows(rng, region.code, region.name, per_month + (extra > 0), i * 10**7)


def fill(store: Store, total: int) -> float:
    """Load the dataset through svc's one write path (``ingest.writer.commit``, as
    ``svc ingest`` of a file whose district-months it holds whole); seconds taken."""
    started = time.perf_counter()
    loaded = 0
    with attrs.validators.disabled():  # the generator is trusted; the store is measured
        rows = dataset(total)
        for number in itertools.count():
            batch = [row for _, row in zip(range(BATCH), rows, strict=False)]
            if not batch:
                break
            load = Load(
                kind="bench",
                report=LoadReport(path="bench"),
                digest=f"bench-{total}-{number}",
                transactions=ParseResult(transactions=batch, report=LoadReport(path="bench")),
                file_kind="samples",
                defer_coverage=True,
            )
            loaded += commit(store, load, now=time.time()).report.loaded
            print(f"\r  loaded {loaded:,}", end="", file=sys.stderr, flush=True)
    refresh_stale(store)
    print(file=sys.stderr)
    return time.perf_counter() - started


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered),
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    }


def measure(stores: dict[int, Store], runs: int) -> dict[int, dict[str, dict[str, float]]]:
    """Latencies per store and query. The stores are called in turn (small, large, small,
    ...) so that a change of machine load between them cannot bias the ratio."""

    parsers = {
        service.pulse: query.parse_pulse,
        service.series: query.parse_series,
        coverage_service.coverage: query.parse_coverage,
    }

    caches = {id(store): VersionedCache() for store in stores.values()}  # one per store

    def call(store: Store, fn: Any, params: dict[str, str]) -> Any:
        asked = service.Call(
            caller=CALLER,
            versions=caches[id(store)],
            request_id="bench",
            now=time.time(),
            links=LINKS,
        )
        answer = fn(store, parsers[fn](params), asked)
        return to_json(answer.data), answer.meta

    queries: dict[str, tuple[Callable[[Store, int], Any], int]] = {
        "pulse": (
            lambda store, i: call(
                store,
                service.pulse,
                {"sigungu_code": TARGET, "property_type": TYPES[i % len(TYPES)]},
            ),
            runs,
        ),
        "series": (
            lambda store, i: call(
                store,
                service.series,
                {"sigungu_code": TARGET, "from_period": "2025-10", "to_period": "2026-09"},
            ),
            max(10, runs // 4),
        ),
        "coverage": (
            lambda store, i: call(
                store, coverage_service.coverage, {"granularity": ("quarter", "month")[i % 2]}
            ),
            runs,
        ),
    }
    # Pulse and series answers are cached per data version: "cold" times the computation
    # (the first call after a load: read the cohort's samples, summarize), "warm" the
    # cached answer every later call gets.
    for name in ("pulse", "series"):
        queries[f"{name} cold"] = queries[name]
    out: dict[int, dict[str, dict[str, float]]] = {size: {} for size in stores}
    for name, (fn, count) in queries.items():
        cold = name.endswith(" cold")
        samples: dict[int, list[float]] = {size: [] for size in stores}
        for store in stores.values():
            fn(store, 0)  # warm the per-version state cache and the page cache
        for i in range(count):
            for size, store in stores.items():
                if cold:
                    caches[id(store)]._cache.clear()  # bench only: drop the answers
                    caches[id(store)].state(store)  # ... but keep the per-version state
                t = time.perf_counter()
                fn(store, i)
                samples[size].append((time.perf_counter() - t) * 1000)
        for size in stores:
            out[size][name] = summary(samples[size])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="30k and 300k transactions")
    parser.add_argument("--runs", type=int, default=200, help="timed calls per query")
    parser.add_argument("--dir", type=Path, help="where to put the databases (default: temp)")
    parser.add_argument(
        "--reuse", action="store_true", help="measure the stores already in --dir, no load"
    )
    args = parser.parse_args(argv)
    sizes = (30_000, 300_000) if args.quick else (200_000, 2_000_000)
    work = args.dir or Path(tempfile.mkdtemp(prefix="svc-bench-re-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"sizes": list(sizes), "load_s": {}}
    stores: dict[int, Store] = {}
    for size in sizes:
        path = work / f"re-{size}.db"
        if args.reuse and path.exists():
            stores[size] = open_store(f"sqlite:///{path}")
            continue
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        stores[size] = store = open_store(f"sqlite:///{path}")
        store.migrate()
        print(f"{size:,} transactions:", file=sys.stderr)
        results["load_s"][size] = round(fill(store, size), 1)
    results["latency"] = measure(stores, args.runs)
    for store in stores.values():
        store.close()
    small, large = sizes
    results["ratios"] = {
        name: results["latency"][large][name]["p50_ms"] / results["latency"][small][name]["p50_ms"]
        for name in NAMES
    }
    print()
    print(f"| query       | {small:>9,} p50 / p99 ms | {large:>9,} p50 / p99 ms | p50 ratio |")
    print("|-------------|--------------------------|--------------------------|-----------|")
    for name in NAMES:
        a, b = results["latency"][small][name], results["latency"][large][name]
        print(
            f"| {name:<11} | {a['p50_ms']:>10.2f} / {a['p99_ms']:>9.2f} | "
            f"{b['p50_ms']:>10.2f} / {b['p99_ms']:>9.2f} | {results['ratios'][name]:>9.2f} |"
        )
    print(
        f"\nload: {results['load_s']} s; pulse ratio goal < 1.5: "
        + (
            "met"
            if max(results["ratios"]["pulse"], results["ratios"]["pulse cold"]) < 1.5
            else "NOT met"
        )
    )
    print(json.dumps(results, default=str))
    return results


if __name__ == "__main__":
    main()
