"""Accounts persistence: consumers, users, memberships, API keys (``store.apikeys``),
sessions, usage, limits. Consumer writes move the access stamp (``store.keycache``)."""

from __future__ import annotations

from typing import Any

import attrs

from svc_core.accounts.lease import lease_size
from svc_server.store.account_rows import (
    Consumer,
    Invite,
    ListedConsumer,
    MemberConsumer,
    Membership,
    Session,
    User,
)
from svc_server.store.apikeys import ApiKeysTable
from svc_server.store.base import Database, Tx, insert_row, row_as, row_or_none, update_by_id
from svc_server.store.holds import HoldsRepo, HoldState, UsageClaim, count_day, count_month
from svc_server.store.keycache import KeyCache


@attrs.frozen(kw_only=True)
class MonthUsage:
    """A consumer's counted calls in one month, read in one statement: per mode for the
    month, and per (day, mode) for its days."""

    by_mode: dict[str, int]
    by_day: dict[tuple[str, str], int]


@attrs.frozen(kw_only=True)
class Admission:
    """What ``admit`` decided: ``in_window`` admitted requests before this one; for a
    refusal, ``blocker_ms`` is the stamp that must leave first; ``hold`` is what the
    quota hold attempt saw (None when no claim was made or the rate limit refused)."""

    in_window: int
    admitted: bool
    blocker_ms: int | None = None
    hold: HoldState | None = None
    granted: int = 0
    """Rate-limit slots stamped: 1 for the call's own, more for a lease."""


class AccountsRepo(ApiKeysTable):
    """Every accounts query, in portable SQL (API keys in ``store.apikeys``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.holds = HoldsRepo(db)
        self.keys = KeyCache(db)

    # consumers -------------------------------------------------------------------------

    def create_consumer(self, tx: Tx, row: dict[str, Any]) -> None:
        insert_row(tx, "consumers", row)
        self.keys.bump(tx)

    def get_consumer(self, consumer_id: str) -> Consumer | None:
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT * FROM consumers WHERE id = ?", (consumer_id,))
        return row_or_none(Consumer, row)

    def list_consumers(self, now: int) -> list[ListedConsumer]:
        """Every consumer, its owner's email and how many of its keys work at ``now``
        (``active_keys``: active ones, and rotated ones still in their grace period, as
        ``svc_core.accounts.keys.key_status`` decides)."""
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT c.*, (SELECT COUNT(*) FROM api_keys k WHERE k.consumer_id = c.id "
                "AND ((k.status = 'active' AND k.grace_until IS NULL) "
                "OR (k.status IN ('active', 'grace') AND k.grace_until > ?))) AS active_keys, "
                "(SELECT MIN(m.email) FROM memberships m WHERE m.consumer_id = c.id "
                "AND m.role = 'owner' AND m.status = 'active') AS owner_email "
                "FROM consumers c ORDER BY c.created_at, c.id",
                (now,),
            )
        return [row_as(ListedConsumer, r) for r in rows]

    def update_consumer(self, tx: Tx, consumer_id: str, fields: dict[str, Any]) -> int:
        self.keys.bump(tx)
        return update_by_id(tx, "consumers", consumer_id, fields)

    # users and memberships ---------------------------------------------------------------

    def get_user_by_subject(self, tx: Tx, subject: str) -> User | None:
        return row_or_none(User, tx.fetchone("SELECT * FROM users WHERE subject = ?", (subject,)))

    def get_user_by_email(self, tx: Tx, email: str) -> User | None:
        return row_or_none(User, tx.fetchone("SELECT * FROM users WHERE email = ?", (email,)))

    def get_user_by_id(self, tx: Tx, user_id: str) -> User | None:
        return row_or_none(User, tx.fetchone("SELECT * FROM users WHERE id = ?", (user_id,)))

    def get_user(self, user_id: str) -> User | None:
        with self.db.transaction(write=False) as tx:
            return self.get_user_by_id(tx, user_id)

    def insert_user(self, tx: Tx, user_id: str, subject: str | None, email: str, now: int) -> None:
        tx.execute(
            "INSERT INTO users (id, subject, email, created_at) VALUES (?, ?, ?, ?)",
            (user_id, subject, email, now),
        )

    def set_user_subject(self, tx: Tx, user_id: str, subject: str) -> None:
        tx.execute("UPDATE users SET subject = ? WHERE id = ?", (subject, user_id))

    def insert_membership(self, tx: Tx, member: Membership) -> None:
        insert_row(tx, "memberships", attrs.asdict(member))

    def active_consumers_of_user(self, tx: Tx, user_id: str) -> list[MemberConsumer]:
        """The consumers a user belongs to (active memberships), with plan and role,
        ``chosen`` (1 for the one the user switched to) and ``owner_email``."""
        rows = tx.fetchall(
            "SELECT c.*, m.role AS role,"
            " CASE WHEN u.current_consumer_id = c.id THEN 1 ELSE 0 END AS chosen,"
            " (SELECT MIN(o.email) FROM memberships o WHERE o.consumer_id = c.id"
            "  AND o.role = 'owner' AND o.status = 'active') AS owner_email"
            " FROM memberships m JOIN consumers c ON c.id = m.consumer_id"
            " JOIN users u ON u.id = m.user_id"
            " WHERE m.user_id = ? AND m.status = 'active' AND c.status = 'active'"
            " ORDER BY c.created_at, c.id",
            (user_id,),
        )
        return [row_as(MemberConsumer, r) for r in rows]

    def set_current_consumer(self, tx: Tx, user_id: str, consumer_id: str | None) -> None:
        """Remember the account a user acts on (checked against their memberships on
        every read, never trusted alone)."""
        tx.execute("UPDATE users SET current_consumer_id = ? WHERE id = ?", (consumer_id, user_id))

    def memberships_of_consumer(self, tx: Tx, consumer_id: str) -> list[Membership]:
        rows = tx.fetchall(
            "SELECT * FROM memberships WHERE consumer_id = ? ORDER BY invited_at, id",
            (consumer_id,),
        )
        return [row_as(Membership, r) for r in rows]

    def get_membership(self, tx: Tx, membership_id: str) -> Membership | None:
        row = tx.fetchone("SELECT * FROM memberships WHERE id = ?", (membership_id,))
        return row_or_none(Membership, row)

    def pending_invites_for_email(self, tx: Tx, email: str, now: int) -> list[Invite]:
        rows = tx.fetchall(
            "SELECT m.*, c.company_name AS company_name, (SELECT MIN(o.email) "
            "FROM memberships o WHERE o.consumer_id = m.consumer_id AND o.role = 'owner' "
            "AND o.status = 'active') AS owner_email FROM memberships m "
            "JOIN consumers c ON c.id = m.consumer_id WHERE m.email = ? "
            "AND m.status = 'pending' AND (m.expires_at IS NULL OR m.expires_at > ?) "
            "ORDER BY m.invited_at, m.id",
            (email, now),
        )
        return [row_as(Invite, r) for r in rows]

    def update_membership_if(
        self, tx: Tx, membership_id: str, status: str, fields: dict[str, Any]
    ) -> bool:
        """Update a membership only while it still has ``status`` (compare-and-set)."""
        return update_by_id(tx, "memberships", membership_id, fields, status=status) == 1

    def remove_membership(self, tx: Tx, membership_id: str, now: int) -> bool:
        """Mark a membership removed; True only for the one caller that removed it (a
        compare-and-set: concurrent removals wait on the row and then find it removed)."""
        return (
            tx.execute(
                "UPDATE memberships SET status = 'removed', removed_at = ? "
                "WHERE id = ? AND status <> 'removed'",
                (now, membership_id),
            )
            == 1
        )

    # sessions ---------------------------------------------------------------------------------

    def insert_session(self, tx: Tx, session_id: str, user_id: str, now: int, expires: int) -> None:
        tx.execute(
            "INSERT INTO sessions (id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
            (session_id, user_id, now, expires),
        )

    def get_session(self, session_id: str) -> Session | None:
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return row_or_none(Session, row)

    def renew_session(self, session_id: str, expires: int) -> None:
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE sessions SET expires_at = ? WHERE id = ? AND revoked_at IS NULL",
                (expires, session_id),
            )

    def revoke_session(self, session_id: str, now: int) -> None:
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, session_id),
            )

    # usage, rate limits, quota markers --------------------------------------------------------

    def increment_usage(self, tx: Tx, consumer_id: str, month: str, mode: str) -> int:
        """Add one successful call; return the new count (one atomic statement)."""
        return count_month(tx, consumer_id, month, mode)

    def count_day(self, tx: Tx, consumer_id: str, day: str, mode: str) -> None:
        """Add one call to the (consumer, UTC day, mode) count (one atomic upsert)."""
        count_day(tx, consumer_id, day, mode)

    def count_success(self, tx: Tx, consumer_id: str, month: str, day: str, mode: str) -> int:
        """Count one successful call that held no unit (a test key has no quota): in the
        month and on the day it arrived; return the month's new count."""
        count = self.increment_usage(tx, consumer_id, month, mode)
        self.count_day(tx, consumer_id, day, mode)
        return count

    def uncount_success(self, tx: Tx, consumer_id: str, month: str, day: str, mode: str) -> None:
        """Take one counted call back from the month and the day it was counted on (its
        answer was never sent, ``services.access.unsettle``); counts never go below 0."""
        for table, column, value in (
            ("usage_counters", "month", month),
            ("usage_days", "day", day),
        ):
            tx.execute(
                f"UPDATE {table} SET count = count - 1 "
                f"WHERE consumer_id = ? AND {column} = ? AND mode = ? AND count > 0",
                (consumer_id, value, mode),
            )

    def usage(self, consumer_id: str, month: str, mode: str = "live") -> int:
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone(
                "SELECT count FROM usage_counters WHERE consumer_id = ? AND month = ? AND mode = ?",
                (consumer_id, month, mode),
            )
        return int(row["count"]) if row else 0

    def month_usage(self, tx: Tx, consumer_id: str, month: str) -> MonthUsage:
        """The month's counts and its days' counts in ONE statement, so they agree even
        while calls are counted (PostgreSQL reads each statement at its own snapshot)."""
        rows = tx.fetchall(
            "SELECT 'month' AS kind, month AS at, mode, count FROM usage_counters "
            "WHERE consumer_id = ? AND month = ? "
            "UNION ALL SELECT 'day' AS kind, day AS at, mode, count FROM usage_days "
            "WHERE consumer_id = ? AND day LIKE ?",
            (consumer_id, month, consumer_id, month + "-%"),
        )
        by_mode = {r["mode"]: int(r["count"]) for r in rows if r["kind"] == "month"}
        by_day = {(r["at"], r["mode"]): int(r["count"]) for r in rows if r["kind"] == "day"}
        return MonthUsage(by_mode=by_mode, by_day=by_day)

    def admit(
        self,
        bucket: str,
        now_ms: int,
        window_ms: int,
        limit: int,
        usage: UsageClaim | None = None,
    ) -> Admission:
        """Rate-limit admission and (when admitted) a hold on one unit of quota, in ONE
        write transaction (``rate_admit`` then ``HoldsRepo.take_hold``)."""
        with self.db.transaction() as tx:
            admission = self.rate_admit(tx, bucket, now_ms, window_ms, limit)
            if admission.admitted and usage is not None:
                admission = attrs.evolve(admission, hold=self.holds.take_hold(tx, usage))
        return admission

    def rate_admit(
        self,
        tx: Tx,
        bucket: str,
        now_ms: int,
        window_ms: int,
        limit: int,
        *,
        lease_id: str | None = None,
        give_back: tuple[str, int] | None = None,
    ) -> Admission:
        """Admit one call under the per-minute limit; with ``lease_id``, stamp as many
        slots as ``lease_size`` allows far from the limit (``granted``) under that name,
        after giving back the unused slots of an earlier lease (``give_back``: its name
        and the slots it did not use).

        Under a per-bucket lock: the bucket's stamps that left the window are deleted and
        the ``rate_counts`` summary read and written, so the cost does not grow with the
        traffic and processes sharing the database never admit more than ``limit`` in
        any window. A call is stamped no earlier than the bucket's newest stamp: calls
        are stamped when they arrive but admitted in lock order, and a later-stamped call
        admitted first must not prune stamps an earlier one still counts. Only a refusal
        reads stamps back: to find the one that must leave the window first.
        """
        self.db.lock(tx, "rate:" + bucket)
        if give_back is not None:
            self.give_back_rate(tx, bucket, *give_back)
        summary = tx.fetchone(
            "SELECT in_window, last_ms FROM rate_counts WHERE bucket = ?", (bucket,)
        )
        stamp = max(now_ms, int(summary["last_ms"])) if summary else now_ms
        held = int(summary["in_window"]) if summary else 0
        if held:
            gone = tx.fetchone(
                "SELECT COALESCE(SUM(units), 0) AS n FROM rate_events "
                "WHERE bucket = ? AND at_ms <= ?",
                (bucket, stamp - window_ms),
            )
            if gone and int(gone["n"]):
                tx.execute(
                    "DELETE FROM rate_events WHERE bucket = ? AND at_ms <= ?",
                    (bucket, stamp - window_ms),
                )
                held -= int(gone["n"])
        if held >= limit:
            blocker = tx.fetchone(
                "SELECT at_ms FROM (SELECT at_ms, SUM(units) OVER "
                "(ORDER BY at_ms ROWS UNBOUNDED PRECEDING) AS upto "
                "FROM rate_events WHERE bucket = ?) AS log WHERE upto > ? "
                "ORDER BY at_ms LIMIT 1",
                (bucket, held - limit),
            )
            tx.execute("UPDATE rate_counts SET in_window = ? WHERE bucket = ?", (held, bucket))
            return Admission(
                in_window=held,
                admitted=False,
                blocker_ms=int(blocker["at_ms"]) if blocker else now_ms,
            )
        granted = max(1, lease_size(limit - held)) if lease_id is not None else 1
        tx.execute(
            "INSERT INTO rate_events (bucket, at_ms, units, lease_id) VALUES (?, ?, ?, ?)",
            (bucket, stamp, granted, lease_id if granted > 1 else None),
        )
        tx.execute(
            "INSERT INTO rate_counts (bucket, in_window, last_ms) VALUES (?, ?, ?) "
            "ON CONFLICT (bucket) DO UPDATE SET in_window = excluded.in_window, "
            "last_ms = excluded.last_ms",
            (bucket, held + granted, stamp),
        )
        return Admission(in_window=held, admitted=True, granted=granted)

    def give_back_rate(self, tx: Tx, bucket: str, lease_id: str, unused: int) -> None:
        """Give back the slots a rate lease did not use (still in the window, if the
        stamp is: once pruned, its slots no longer count anyway)."""
        if unused <= 0:
            return
        self.db.lock(tx, "rate:" + bucket)
        if tx.execute(
            "UPDATE rate_events SET units = units - ? WHERE bucket = ? AND lease_id = ? "
            "AND units >= ?",
            (unused, bucket, lease_id, unused),
        ):
            tx.execute(
                "UPDATE rate_counts SET in_window = in_window - ? WHERE bucket = ?",
                (unused, bucket),
            )

    def mark_quota_event(
        self, tx: Tx, consumer_id: str, month: str, threshold: str, now: int
    ) -> bool:
        """Insert the (consumer, month, threshold) marker; True only for the first caller."""
        return (
            tx.execute(
                "INSERT INTO quota_events (consumer_id, month, threshold, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (consumer_id, month, threshold, now),
            )
            == 1
        )
