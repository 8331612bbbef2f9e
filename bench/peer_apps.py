"""The peers ``peers_bench.py`` serves pulse's cohort with, on svc's own database file.

- ``fastapi_query``: a FastAPI endpoint (run under uvicorn) that, per request, reads the
  latest month, selects the cohort's prices and areas for the six months up to it (the
  same ``transactions_cohort`` index svc walks) and computes count, mean, quartiles,
  mean area and the source mix with ``statistics`` — what pulse computes, without keys,
  limits or the envelope.
- ``fastapi_cached``: the same endpoint keeping each answer in a dict per process, and
  metering every call with one write (an upsert of a per-key counter, its own
  ``BEGIN IMMEDIATE`` transaction) — the cheapest honest way to count calls exactly.
- ``datasette_metadata``: a Datasette canned query computing the same figures in one
  SQL statement (quartiles by ``LIMIT 1 OFFSET``), served by ``datasette serve``.

``SVC_BENCH_DB`` names the SQLite file; ``SVC_BENCH_PEER`` picks the FastAPI mode.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import threading
from collections import Counter
from typing import Any

COHORT_SQL = (
    "SELECT price_krw, area_m2, source FROM transactions WHERE sigungu_code = ? "
    "AND property_type = ? AND transaction_type = ? AND month >= ? AND month <= ?"
)
CANNED_SQL = """
with c as (
  select price_krw, area_m2 from transactions
  where sigungu_code = :sigungu_code and property_type = :property_type
    and transaction_type = :transaction_type
    and month >= :month_from and month <= :month_to
), n as (select count(*) as k from c)
select
  (select k from n) as sample_count,
  (select cast(avg(price_krw) as integer) from c) as avg_price,
  (select price_krw from c order by price_krw limit 1 offset (select k / 4 from n)) as p25_price,
  (select price_krw from c order by price_krw limit 1 offset (select k / 2 from n))
    as median_price,
  (select price_krw from c order by price_krw limit 1 offset (select 3 * k / 4 from n))
    as p75_price,
  (select round(avg(area_m2), 2) from c) as avg_area_m2
"""


def datasette_metadata(database: str) -> dict[str, Any]:
    """Datasette metadata with the ``pulse`` canned query on ``database``."""
    return {"databases": {database: {"queries": {"pulse": {"sql": CANNED_SQL}}}}}


def window(latest: str) -> tuple[str, str]:
    """The six months ending at ``latest`` (``YYYY-MM``)."""
    year, month = int(latest[:4]), int(latest[5:7])
    first = year * 12 + month - 1 - 5
    return f"{first // 12:04d}-{first % 12 + 1:02d}", latest


_local = threading.local()


def connection() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(os.environ["SVC_BENCH_DB"], isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA synchronous = NORMAL")
        _local.conn = conn
    return conn


def pulse(sigungu_code: str, property_type: str, transaction_type: str) -> dict[str, Any]:
    """The cohort's figures over the six months up to the latest one with data."""
    conn = connection()
    latest = conn.execute("SELECT MAX(month) FROM cohort_months").fetchone()[0]
    first, last = window(latest)
    rows = conn.execute(
        COHORT_SQL, (sigungu_code, property_type, transaction_type, first, last)
    ).fetchall()
    prices = [r[0] for r in rows]
    areas = [r[1] for r in rows if r[1] is not None]
    q1, q2, q3 = statistics.quantiles(prices, n=4) if len(prices) > 1 else (0, 0, 0)
    row = {
        "sigungu_code": sigungu_code,
        "property_type": property_type,
        "transaction_type": transaction_type,
        "period": "last_6m",
        "sample_count": len(prices),
        "avg_price": round(statistics.fmean(prices)) if prices else None,
        "p25_price": round(q1),
        "median_price": round(q2),
        "p75_price": round(q3),
        "avg_area_m2": f"{statistics.fmean(areas):.2f}" if areas else None,
        "source_mix": dict(Counter(r[2] for r in rows)),
    }
    return {"data": [row], "_meta": {"count": 1, "window": [first, last]}}


def meter(key: str) -> None:
    """Count one call: one write transaction."""
    conn = connection()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "INSERT INTO peer_meter (key, calls) VALUES (?, 1) "
            "ON CONFLICT (key) DO UPDATE SET calls = calls + 1",
            (key,),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def make_fastapi() -> Any:
    from fastapi import FastAPI, Header

    mode = os.environ.get("SVC_BENCH_PEER", "fastapi_query")
    app = FastAPI()
    cache: dict[tuple[str, str, str], dict[str, Any]] = {}

    @app.get("/api/status")
    def status() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/v1/real-estate/pulse")
    def pulse_route(
        sigungu_code: str,
        property_type: str,
        transaction_type: str,
        x_api_key: str = Header(default="anonymous"),
    ) -> dict[str, Any]:
        if mode == "fastapi_query":
            return pulse(sigungu_code, property_type, transaction_type)
        meter(x_api_key)
        query = (sigungu_code, property_type, transaction_type)
        found = cache.get(query)
        if found is None:
            found = cache[query] = pulse(*query)
        return found

    return app


if "SVC_BENCH_DB" in os.environ and os.environ.get("SVC_BENCH_PEER", "").startswith("fastapi"):
    app = make_fastapi()
