"""Lease sizes: how many units of a rate limit or a quota one process may take at once.

A server process admits calls from units it reserved in the database (a lease) instead
of writing once per call. A lease is sized from the ``room`` left before the next point
that must stay exact: the rate limit, the quota's cap, or a quota event's threshold. It
takes at most ``1/LEASE_SHARE`` of that room and none below ``LEASE_FLOOR``, so near
such a point every call holds its own unit (size 1) exactly as without leases, and the
unit that reaches the cap or a threshold is never one of a lease's.
"""

from __future__ import annotations

from svc_core.webhooks.events import QUOTA_KINDS, quota_threshold

LEASE_FLOOR = 2048
"""Below this much room every call holds its own unit: small plans never lease."""
LEASE_SHARE = 64
"""A lease takes at most this fraction (1/64) of the room left."""
LEASE_MOST = 8192
"""The largest lease: about a second of one busy process's calls, so a process refills
its leases about once a second; a process that dies leaves at most this many units held
until its lease lapses (the calls it lost are those of its last FLUSH_SECONDS)."""
RATE_LEASE_SECONDS = 1.0
"""How long a rate-limit lease may be used after it was stamped."""
FLUSH_SECONDS = 1.0
"""How often a process writes back what it did with its leases."""
REFILL_SHARE = 4
"""A lease asks for its successor when this fraction (a quarter) of its units, or of a
rate lease's time, is left, so the next block is taken before calls run out of one."""


def lease_size(room: int) -> int:
    """Units to reserve when ``room`` units are left before the next exact point: 0 when
    none is left, 1 (the call's own unit) below ``LEASE_FLOOR``, else ``room //
    LEASE_SHARE`` up to ``LEASE_MOST``."""
    if room <= 0:
        return 0
    if room < LEASE_FLOOR:
        return 1
    return min(LEASE_MOST, room // LEASE_SHARE)


def quota_room(committed: int, limit: int) -> int:
    """Units that may be leased when ``committed`` units (settled plus held) of a monthly
    ``limit`` are taken: every unit below the first quota event threshold above
    ``committed`` (the cap is the ``exceeded`` threshold), so the unit that reaches a
    threshold is always held by its own call; 0 at or past the cap."""
    if limit <= 0:
        return 0
    above = [t for t in (quota_threshold(k, limit) for k in QUOTA_KINDS) if t > committed]
    return max(0, min(above) - 1 - committed) if above else 0


def refill_due(units: int, left: int, ms_left: int | None = None) -> bool:
    """Whether a lease of ``units`` with ``left`` unused (and, for a rate lease,
    ``ms_left`` of its time) should ask for the next block now: a quarter or less of
    either left. A one-unit block never does (it is a call's own unit, not a lease)."""
    if units < 2:
        return False
    if left * REFILL_SHARE <= units:
        return True
    return ms_left is not None and ms_left * REFILL_SHARE <= RATE_LEASE_SECONDS * 1000
