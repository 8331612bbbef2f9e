"""Quota holds: units of a monthly quota held by calls in flight (migration 0009).

``usage_counters`` counts settled successful calls; ``usage_holds`` has one row per
counted call still running. Admission holds a unit only while settled + live holds <
quota, so the cap is exact; a success turns its hold into a settled unit, a failure
deletes it, so calls that fail never make another caller's call look over quota. A
hold carries an expiry: one left by a process that died before settling stops counting
then and is deleted by the next admission.
"""

from __future__ import annotations

import attrs

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

    @property
    def exhausted(self) -> bool:
        """Settled successful calls used the quota up: no unit comes back this month."""
        return not self.taken and self.settled >= self.limit


def count_day(tx: Tx, consumer_id: str, day: str, mode: str) -> None:
    """Add one call to the (consumer, UTC day, mode) count (one atomic upsert)."""
    tx.execute(
        "INSERT INTO usage_days (consumer_id, day, mode, count) VALUES (?, ?, ?, 1) "
        "ON CONFLICT (consumer_id, day, mode) "
        "DO UPDATE SET count = usage_days.count + 1",
        (consumer_id, day, mode),
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
            "(SELECT COUNT(*) FROM usage_holds WHERE consumer_id = ? AND month = ? "
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

    def take_hold(self, tx: Tx, claim: UsageClaim) -> HoldState:
        """Hold one unit for a call in flight while settled + live holds < quota.

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
        if state.settled + state.held >= claim.limit:
            return state
        tx.execute(
            "INSERT INTO usage_holds (id, consumer_id, month, mode, expires_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (claim.hold_id, *_usage_key(claim), claim.expires_at),
        )
        return attrs.evolve(state, held=state.held + 1, taken=True)

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
