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
    """The real-estate pulse path reads the cohort index; it must answer."""
    with store.data.transaction(write=False) as tx:
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


def check(store: Store, now: float) -> tuple[bool, dict[str, Any]]:
    """Run every probe; return (all ok, the status body)."""
    checks = []
    for name, probe in PROBES.items():
        start = time.perf_counter()
        try:
            probe(store)
            ok = True
        except Exception:
            ok = False
        latency_ms = round((time.perf_counter() - start) * 1000, 2)
        checks.append(Check(name=name, ok=ok, latency_ms=latency_ms))
    healthy = all(c.ok for c in checks)
    body = {
        "status": "ok" if healthy else "degraded",
        "checks": [attrs.asdict(c) for c in checks],
        "checked_at": iso(now),
    }
    return healthy, body
