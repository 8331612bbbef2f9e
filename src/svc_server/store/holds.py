"""Quota holds: units of a monthly quota held by calls in flight (migration 0009).

``usage_counters`` counts settled successful calls; ``usage_holds`` has one row per
counted call still running, or per process lease (migration 0013: a row of ``units``
units a process admits calls from in memory, ``services.leases``). Admission holds a
unit only while settled + live held units < quota, so the cap is exact; a success turns
its hold into a settled unit, a failure deletes it, so calls that fail never make
another caller's call look over quota. A hold carries an expiry: one left by a process
that died before settling stops counting then and is deleted by the next admission.
"""

from __future__ import annotations

import attrs

from svc_core.accounts.lease import lease_size, quota_room
from svc_server.store.base import Database, Tx


@attrs.frozen(kw_only=True)
class UsageClaim:
    """A hold on one unit of an account's monthly quota, asked for along with rate
    admission: the account's month (``YYYY-MM``) and key mode, its quota, the hold's id,
    the admission's time and when the hold lapses (unix seconds)."""

    consumer_id: str
    month: str
    mode: str
    limit: int
    hold_id: str
    now: int
    expires_at: int


@attrs.frozen(kw_only=True)
class HoldState:
    """What a hold attempt saw in one snapshot: the month's ``settled`` successful calls
    and the live holds of calls in flight (``held``, this call's included when
    ``taken``), against the quota ``limit``."""

    settled: int
    held: int
    limit: int
    taken: bool
    granted: int = 0
    """Units the attempt took: 1 for a call's own hold, more for a lease."""

    @property
    def exhausted(self) -> bool:
        """Settled successful calls used the quota up: no unit comes back this month."""
        return not self.taken and self.settled >= self.limit


@attrs.frozen(kw_only=True)
class LeaseReturn:
    """What a process did with a quota lease since it last wrote: successes per UTC day
    (``ok``), failures (``failed``), and the units it still keeps (``keep``: 0 deletes
    the lease's row) until ``expires_at``."""

    hold_id: str
    ok: tuple[tuple[str, int], ...]
    failed: int
    keep: int
    expires_at: int


def count_month(tx: Tx, consumer_id: str, month: str, mode: str, calls: int = 1) -> int:
    """Add ``calls`` successful calls to the month's count; return the new count (one
    atomic upsert)."""
    row = tx.fetchone(
        "INSERT INTO usage_counters (consumer_id, month, mode, count) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (consumer_id, month, mode) "
        "DO UPDATE SET count = usage_counters.count + excluded.count RETURNING count",
        (consumer_id, month, mode, calls),
    )
    return int(row["count"]) if row else 0


def count_day(tx: Tx, consumer_id: str, day: str, mode: str, calls: int = 1) -> None:
    """Add ``calls`` calls to the (consumer, UTC day, mode) count (one atomic upsert)."""
    tx.execute(
        "INSERT INTO usage_days (consumer_id, day, mode, count) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (consumer_id, day, mode) "
        "DO UPDATE SET count = usage_days.count + excluded.count",
        (consumer_id, day, mode, calls),
    )


class HoldsRepo:
    """Every quota-hold query, in portable SQL."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def hold_state(self, tx: Tx, claim: UsageClaim, now: int) -> HoldState:
        """Settled calls and holds live at ``now`` of the claim's month in ONE
        statement, so they agree while other calls settle (a settle moves a unit from
        one to the other in one transaction; PostgreSQL reads each statement at its own
        snapshot)."""
        row = tx.fetchone(
            "SELECT (SELECT count FROM usage_counters "
            "WHERE consumer_id = ? AND month = ? AND mode = ?) AS settled, "
            "(SELECT COALESCE(SUM(units), 0) FROM usage_holds WHERE consumer_id = ? AND month = ? "
            "AND mode = ? AND expires_at > ?) AS held",
            (*_usage_key(claim), *_usage_key(claim), now),
        )
        settled = int(row["settled"] or 0) if row else 0
        held = int(row["held"] or 0) if row else 0
        return HoldState(settled=settled, held=held, limit=claim.limit, taken=False)

    def peek_hold(self, claim: UsageClaim) -> HoldState:
        """``hold_state`` in a read transaction: whether a hold could be had now."""
        with self.db.transaction(write=False) as tx:
            return self.hold_state(tx, claim, claim.now)

    def take_hold(self, tx: Tx, claim: UsageClaim, *, lease: bool = False) -> HoldState:
        """Hold one unit for a call in flight while settled + live holds < quota; with
        ``lease``, as many as ``lease_size`` allows far from the cap and the thresholds
        (``granted``; the hold's row then is the process's lease).

        Under the account's quota lock (PostgreSQL's advisory lock; SQLite serializes
        every writer), so concurrent callers in any number of processes never hold more
        than the quota between them. The account's lapsed holds (of a process that died
        before settling) are deleted first.
        """
        self.db.lock(tx, _quota_lock(claim.consumer_id, claim.mode))
        tx.execute(  # any month's: a hold lapsed before a month's end goes too
            "DELETE FROM usage_holds WHERE consumer_id = ? AND mode = ? AND expires_at <= ?",
            (claim.consumer_id, claim.mode, claim.now),
        )
        state = self.hold_state(tx, claim, claim.now)
        committed = state.settled + state.held
        if committed >= claim.limit:
            return state
        units = max(1, lease_size(quota_room(committed, claim.limit))) if lease else 1
        tx.execute(
            "INSERT INTO usage_holds (id, consumer_id, month, mode, expires_at, units) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (claim.hold_id, *_usage_key(claim), claim.expires_at, units),
        )
        return attrs.evolve(state, held=state.held + units, taken=True, granted=units)

    def return_lease(
        self, tx: Tx, claim: UsageClaim, done: LeaseReturn, now: int
    ) -> tuple[int, bool]:
        """Write back a lease: its successes become settled units and day counts, its
        failures and the units not kept leave the row; return the month's settled count
        and whether the lease was still live (False: it lapsed, and no unit is kept).

        A lease that lapsed (its process stalled past ``expires_at``) may have had its
        units given to other calls: its successes are then counted only while units are
        free, as ``keep_hold`` does for one call, and its row is not renewed.
        """
        self.db.lock(tx, _quota_lock(claim.consumer_id, claim.mode))
        ok = sum(n for _, n in done.ok)
        if done.keep:
            live = tx.execute(
                "UPDATE usage_holds SET units = ?, expires_at = ? WHERE id = ? AND expires_at > ?",
                (done.keep, done.expires_at, done.hold_id, now),
            )
        else:
            live = tx.execute(
                "DELETE FROM usage_holds WHERE id = ? AND expires_at > ?", (done.hold_id, now)
            )
        if not live:
            tx.execute("DELETE FROM usage_holds WHERE id = ?", (done.hold_id,))
        state = self.hold_state(tx, claim, now)
        # A live lease's successes always fit (its units were counted as held).
        ok = min(ok, max(0, claim.limit - state.settled - state.held))
        if not ok:
            return state.settled, bool(live)
        settled = count_month(tx, *_usage_key(claim), ok)
        left = ok
        for day, calls in done.ok:
            if left:
                count_day(tx, claim.consumer_id, day, claim.mode, min(calls, left))
                left -= min(calls, left)
        return settled, bool(live)

    def try_hold(self, claim: UsageClaim) -> HoldState:
        """``take_hold`` in its own write transaction (a call waiting for a unit)."""
        with self.db.transaction() as tx:
            return self.take_hold(tx, claim)

    def keep_hold(self, tx: Tx, claim: UsageClaim, day: str, now: int) -> int | None:
        """A call that held a unit succeeded: the hold becomes a settled unit, counted
        on ``day``; return the month's new settled count.

        Settled units never pass the quota: a hold that lapsed before its call settled
        at ``now`` (the call outlived the hold's bound) may have been given to another
        call, so its unit is kept only if one is still free, else the call is not
        counted (None).
        """
        live = "DELETE FROM usage_holds WHERE id = ? AND expires_at > ?"
        if not tx.execute(live, (claim.hold_id, now)):
            self.db.lock(tx, _quota_lock(claim.consumer_id, claim.mode))
            tx.execute("DELETE FROM usage_holds WHERE id = ?", (claim.hold_id,))
            state = self.hold_state(tx, claim, now)
            if state.settled + state.held >= claim.limit:
                return None
        row = tx.fetchone(
            "INSERT INTO usage_counters (consumer_id, month, mode, count) VALUES (?, ?, ?, 1) "
            "ON CONFLICT (consumer_id, month, mode) "
            "DO UPDATE SET count = usage_counters.count + 1 "
            "WHERE usage_counters.count < ? RETURNING count",
            (*_usage_key(claim), claim.limit),
        )
        if row is None:
            return None
        count_day(tx, claim.consumer_id, day, claim.mode)
        return int(row["count"])

    def release_hold(self, tx: Tx, claim: UsageClaim) -> int:
        """A call that held a unit failed: give the unit back; return the month's
        settled count (unchanged)."""
        tx.execute("DELETE FROM usage_holds WHERE id = ?", (claim.hold_id,))
        return self.hold_state(tx, claim, claim.now).settled


def _usage_key(claim: UsageClaim) -> tuple[str, str, str]:
    return (claim.consumer_id, claim.month, claim.mode)


def _quota_lock(consumer_id: str, mode: str) -> str:
    return f"quota:{consumer_id}:{mode}"
