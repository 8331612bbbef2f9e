"""The public health probe: one timed check per vertical, run against the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs

from svc_core.instants import iso
from svc_server.store import Store

Probe = Callable[[Store], None]


def _real_estate_pulse(store: Store) -> None:
    """The real-estate pulse path reads the cohort index and the records' table (a
    row of it: the index alone answered from a file whose table was damaged)."""
    with store.data.transaction(write=False) as tx:
        tx.fetchone("SELECT * FROM transactions LIMIT 1")
        tx.fetchone(
            "SELECT sigungu_code FROM transactions "
            "WHERE sigungu_code = ? AND property_type = ? AND transaction_type = ? LIMIT 1",
            ("11680", "office", "sale"),
        )


def _markets_pulse(store: Store) -> None:
    """The marketplace pulse path reads the published answers; they must answer."""
    store.markets.row("강남", "office", "2026-01", None)


PROBES: dict[str, Probe] = {
    "real_estate_pulse": _real_estate_pulse,
    "markets_pulse": _markets_pulse,
}


@attrs.frozen(kw_only=True)
class Check:
    """One probe's outcome (attribute order is the JSON field order)."""

    name: str
    ok: bool
    latency_ms: float
    error: str | None = None
    """Why the probe failed (left out of the body when it did not)."""


def check(store: Store, now: float) -> tuple[bool, dict[str, Any]]:
    """Run every probe; return (all ok, the status body). A probe fails, saying why, when
    a database file cannot serve what it holds (``Store.problem``: a SQLite file
    damaged, gone or replaced), even where a read would still answer from a file
    deleted while open."""
    checks = []
    for name, probe in PROBES.items():
        start = time.perf_counter()
        error = store.problem()
        if error is None:
            try:
                probe(store)
            except Exception:
                error = store.problem() or "The probe's query failed."
        latency_ms = round((time.perf_counter() - start) * 1000, 2)
        checks.append(Check(name=name, ok=error is None, latency_ms=latency_ms, error=error))
    healthy = all(c.ok for c in checks)
    body = {
        "status": "ok" if healthy else "degraded",
        "checks": [
            attrs.asdict(c, filter=lambda a, v: a.name != "error" or v is not None) for c in checks
        ],
        "checked_at": iso(now),
    }
    return healthy, body
