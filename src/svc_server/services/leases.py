"""Leases: rate-limit slots and quota units a process admits calls from in memory.

Without leases every counted call writes twice (admission, then settlement). With them a
process stamps a block of rate-limit slots (``AccountsRepo.rate_admit``) and holds a
block of quota units (``HoldsRepo.take_hold``) in one write, admits the next calls from
those blocks under a process lock, settles them in memory, and writes back what they
did at most ``FLUSH_SECONDS`` later (``LeaseBook.write_back``, called by the app's
``http.lease_writer`` thread). What stays exact, and the bounds of what does not:

- The quota's cap: leased units are held in the database like a call's own, so settled
  plus held never passes the quota, across processes and hosts.
- Quota events fire once a month, at the write that moves the settled count to or past
  the threshold. A lease never holds the unit that reaches a threshold (``lease.quota_
  room``), but another process's lease written back later may: ``current`` in the event
  then passes the threshold by at most the units other processes held then.
- Rate limits: a leased slot is stamped when its lease is taken and used within
  ``RATE_LEASE_SECONDS``, so no more than ``limit`` calls are admitted in any window of
  ``window - RATE_LEASE_SECONDS`` seconds (59 of 60); unused slots are given back.
- Counts read elsewhere (``X-Quota-Used`` of another process, ``GET /usage``, the CLI)
  lag by at most ``FLUSH_SECONDS`` of this process's calls; this process flushes before
  answering its own usage reads. A process killed without a clean exit loses the counts
  of at most its last ``FLUSH_SECONDS``, and its leases stop counting when they expire.

Leases are sized by ``svc_core.accounts.lease.lease_size``: only limits with thousands of units
of room lease at all, so near a limit or a threshold, and for small plans, every call
holds its own unit as before. A quota is leased only for a caller whose rate limit is
leased too (thousands of calls a minute): a call that writes its own rate stamp anyway
holds its own quota unit in the same write, and its counts are exact at once.

Long because the book is the state of one lock: admission, taking blocks ahead,
settlement and write-back all change the same blocks under it, and split across modules
what the lock keeps consistent would no longer be read in one place.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import attrs

from svc_core.accounts.lease import RATE_LEASE_SECONDS, refill_due
from svc_server.services.quota_events import fire_thresholds
from svc_server.store import Store
from svc_server.store.accounts import Admission
from svc_server.store.holds import LeaseReturn, UsageClaim

log = logging.getLogger("svc.leases")


@attrs.define(kw_only=True)
class QuotaLease:
    """A block of one account-month's quota units held by this process (its
    ``usage_holds`` row is named ``claim.hold_id``): calls running on it (``in_use``),
    what finished since the last write (``ok`` per UTC day, ``failed``), the month's
    settled count at that write (``base``) and calls taken since (``taken``)."""

    claim: UsageClaim
    units: int
    seconds: int
    base: int
    in_use: int = 0
    failed: int = 0
    taken: int = 0
    ok: dict[str, int] = attrs.field(factory=dict)
    ahead: bool = False
    """Taken ahead by ``refill`` and not yet seen by a write-back (so not idle)."""

    @property
    def done(self) -> int:
        return sum(self.ok.values()) + self.failed

    @property
    def free(self) -> int:
        return self.units - self.in_use - self.done

    @property
    def used(self) -> int:
        """The month's settled count as this process knows it."""
        return self.base + sum(self.ok.values())


@attrs.define(kw_only=True)
class RateLease:
    """A block of rate-limit slots stamped at once under ``lease_id``: ``used`` of
    ``units`` until ``until_ms``; ``base`` calls were in the window before it."""

    lease_id: str
    limit: int
    units: int
    used: int
    until_ms: int
    base: int

    @classmethod
    def stamped(
        cls, lease_id: str, ask: Ask, admission: Admission, now_ms: int, *, used: int
    ) -> RateLease:
        """The block ``rate_admit`` stamped at ``now_ms`` for ``ask`` (``used`` of its
        slots taken by the call that wrote it: 1, or 0 for a block taken ahead)."""
        return cls(
            lease_id=lease_id,
            limit=ask.limit,
            units=admission.granted,
            used=used,
            until_ms=now_ms + int(RATE_LEASE_SECONDS * 1000),
            base=admission.in_window,
        )


@attrs.frozen(kw_only=True)
class Ask:
    """One call's admission: its rate bucket and limit at ``now_ms`` and, when counted
    against a quota, its claim (its ``hold_id`` not chosen yet); ``ids`` names what a
    write takes for it (a rate lease, a quota hold or lease), drawn only when the call
    writes, not for the calls a lease admits."""

    ids: Callable[[], str]
    bucket: str
    now_ms: int
    window_ms: int
    limit: int
    claim: UsageClaim | None


@attrs.frozen(kw_only=True)
class Granted:
    """What ``LeaseBook.admit`` decided: the admission, the lease the call's quota unit
    came from (None when the call holds its own unit, or has no quota) and the claim as
    written (named; the one a call holding its own unit settles)."""

    admission: Admission
    lease: QuotaLease | None
    claim: UsageClaim | None


@attrs.frozen(kw_only=True)
class Renewal:
    """What a call that must write took from the leases before writing: a rate slot
    (``taken``) or the old rate lease's unused slots to give back, and a quota unit
    (``unit``, when the quota lease had room; a call with a claim and no unit takes a
    hold in the write)."""

    taken: Admission | None
    give_back: tuple[str, int] | None
    unit: QuotaLease | None


class LeaseBook:
    """This process's leases over one store, shared by its request threads."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self._lock = threading.Lock()
        self._rate: dict[str, RateLease] = {}
        self._quota: dict[tuple[str, str, str], QuotaLease] = {}
        self._draining: list[QuotaLease] = []
        self._spent: list[tuple[str, RateLease]] = []
        """Rate leases replaced by their successor, their unused slots to give back."""
        self._wanted: dict[tuple[str, object], tuple[Ask, RateLease | QuotaLease]] = {}
        """Next blocks asked for by leases running low, with the ask that made them."""
        self.wanted = threading.Event()
        """Set when a lease asks for its next block (``refill`` takes it)."""
        self._closed = False
        self._refilling = threading.Lock()
        self._renewing: dict[str, threading.Event] = {}
        """Rate buckets whose renewing write is running, with the event set after it."""

    def admit(self, ask: Ask) -> Granted:
        """Admit a call from this process's leases, or in one write that renews them.

        The write runs outside the book's lock, one at a time per rate bucket: calls of
        other callers go on being admitted while it waits (behind a load holding
        SQLite's lock, say, or another process's quota lock), and calls of the same
        bucket wait for it and then look again. What it takes is put in the book only
        once written."""
        claim = ask.claim
        while True:
            with self._lock:
                rate, rate_here, lease, quota_here = self._room(ask, ask.now_ms)
                if rate_here and quota_here:
                    assert rate is not None
                    in_window = self._grant(ask, rate, lease, ask.now_ms)
                    admission = Admission(in_window=in_window, admitted=True)
                    return Granted(admission=admission, lease=lease, claim=claim)
                running = self._renewing.get(ask.bucket)
                if running is None:
                    done = self._renewing[ask.bucket] = threading.Event()
                    renewal = self._start_renewal(ask, rate, rate_here, lease, quota_here)
                    break
            running.wait()
        try:
            return self._renew(ask, renewal)
        finally:
            with self._lock:
                del self._renewing[ask.bucket]
            done.set()

    def try_admit(self, ask: Ask, now_ms: int) -> tuple[int, QuotaLease | None] | None:
        """``admit`` at ``now_ms`` when the leases have room for the call (no write, no
        wait): the calls admitted in the rate window before it and the lease its quota
        unit came from; else None with nothing taken. For a caller that must not wait on
        I/O (``http.warm``); ``ask`` may be one made earlier for the same caller on the
        same UTC day (its own time is used only by writes, which take the clock's)."""
        with self._lock:
            rate, rate_here, lease, quota_here = self._room(ask, now_ms)
            if not (rate_here and quota_here):
                return None
            assert rate is not None
            return self._grant(ask, rate, lease, now_ms), lease

    def _grant(self, ask: Ask, rate: RateLease, lease: QuotaLease | None, now_ms: int) -> int:
        """Under the lock: take a rate slot and (with ``lease``) a quota unit for a call
        that ``_room`` found room for, asking ahead for blocks running low; the calls
        admitted in the rate window before it."""
        in_window = self._take_rate(rate)
        self._take_unit(lease)
        self._ask_ahead(ask, rate, lease, now_ms)
        return in_window

    def _room(
        self, ask: Ask, now_ms: int
    ) -> tuple[RateLease | None, bool, QuotaLease | None, bool]:
        """Under the lock: the call's rate lease and quota lease, and whether each has
        room for it at ``now_ms``."""
        claim = ask.claim
        rate = self._rate.get(ask.bucket)
        rate_here = (
            rate is not None
            and rate.limit == ask.limit
            and now_ms < rate.until_ms
            and rate.used < rate.units
        )
        lease = self._quota.get(_key(claim)) if claim is not None else None
        quota_here = claim is None or (
            lease is not None and lease.claim.limit == claim.limit and lease.free > 0
        )
        return rate, rate_here, lease, quota_here

    def _start_renewal(
        self,
        ask: Ask,
        rate: RateLease | None,
        rate_here: bool,
        lease: QuotaLease | None,
        quota_here: bool,
    ) -> Renewal:
        """Under the lock: take what the leases still have for the call (a rate slot, a
        quota unit) and set aside what the write replaces."""
        taken = None
        give_back = None
        if rate_here:
            assert rate is not None
            taken = Admission(in_window=self._take_rate(rate), admitted=True)
        else:
            if rate is not None and ask.now_ms - rate.until_ms < ask.window_ms:
                give_back = (rate.lease_id, rate.units - rate.used)
            self._rate.pop(ask.bucket, None)
        unit = None
        if ask.claim is not None and quota_here:
            unit = self._take_unit(lease)
        elif lease is not None:  # used up (or the plan changed): it drains
            self._retire(lease)
        return Renewal(taken=taken, give_back=give_back, unit=unit)

    def _renew(self, ask: Ask, renewal: Renewal) -> Granted:
        """The renewing write (outside the lock), then the book updated under it."""
        name = ask.ids()
        claim = ask.claim
        if claim is not None:
            claim = attrs.evolve(claim, hold_id=name)
        admission = renewal.taken
        hold = None
        try:
            with self.store.db.transaction() as tx:
                if admission is None:
                    admission = self.store.accounts.rate_admit(
                        tx,
                        ask.bucket,
                        ask.now_ms,
                        ask.window_ms,
                        ask.limit,
                        lease_id=name,
                        give_back=renewal.give_back,
                    )
                if admission.admitted and claim is not None and renewal.unit is None:
                    # A call that wrote its own rate stamp holds its own unit too: leases
                    # only pay for calls they spare every write.
                    leasing = renewal.taken is not None or admission.granted > 1
                    hold = self.store.holds.take_hold(tx, claim, lease=leasing)
        except BaseException:
            with self._lock:
                self._give_unit_back(renewal.unit)
            raise
        with self._lock:
            if renewal.taken is None and admission.admitted and admission.granted > 1:
                self._rate[ask.bucket] = RateLease.stamped(name, ask, admission, ask.now_ms, used=1)
            if not admission.admitted or claim is None:
                self._give_unit_back(renewal.unit)
                return Granted(admission=admission, lease=None, claim=claim)
            if renewal.unit is not None:
                return Granted(admission=admission, lease=renewal.unit, claim=claim)
            assert hold is not None
            admission = attrs.evolve(admission, hold=hold)
            if hold.granted < 2:
                return Granted(admission=admission, lease=None, claim=claim)
            lease = QuotaLease(
                claim=claim,
                units=hold.granted,
                seconds=claim.expires_at - claim.now,
                base=hold.settled,
            )
            current = self._quota.get(_key(claim))
            if current is not None:
                self._retire(current)
            self._quota[_key(claim)] = lease
            return Granted(admission=admission, lease=self._take_unit(lease), claim=claim)

    def _give_unit_back(self, lease: QuotaLease | None) -> None:
        """Undo ``_take_unit`` for a call that was refused or failed before it ran."""
        if lease is not None:
            lease.in_use -= 1
            lease.taken -= 1

    def _ask_ahead(self, ask: Ask, rate: RateLease, lease: QuotaLease | None, now_ms: int) -> None:
        """Ask for the next block of a lease running low (under the lock), so ``refill``
        takes it in the background before calls run out: without this a call finding
        its lease used up waits, with every call of the process, for the renewing write
        (tens of milliseconds while a load fills the database's log)."""
        if refill_due(rate.units, rate.units - rate.used, rate.until_ms - now_ms):
            self._want(("rate", ask.bucket), ask, rate)
        if lease is not None and refill_due(lease.units, lease.free):
            self._want(("quota", _key(lease.claim)), ask, lease)

    def _want(self, key: tuple[str, object], ask: Ask, lease: RateLease | QuotaLease) -> None:
        if key not in self._wanted:  # asked once until ``refill`` takes it
            self._wanted[key] = (ask, lease)
            self.wanted.set()

    def refill(self) -> None:
        """Take the next blocks asked for (``_ask_ahead``), each in its own write outside
        the lock, and put each in its lease's place once written: calls go on being
        admitted from the old block meanwhile. Called by the app's lease writer thread.

        A rate block stamped ahead is used within ``RATE_LEASE_SECONDS`` of its stamp
        like any other, and the old block's unused slots are given back at the next
        write-back, so the rate bound holds; a quota block is held like any other, and
        the old one drains. A block whose lease was replaced meanwhile (a call renewed
        it) is not used and goes back whole."""
        with self._refilling:  # ``close`` waits for a block being written
            with self._lock:
                wanted, self._wanted = self._wanted, {}
                self.wanted.clear()
            for (kind, _), (ask, asker) in wanted.items():
                if self._closed:
                    return
                if kind == "rate":
                    assert isinstance(asker, RateLease)
                    self._refill_rate(ask, asker)
                else:
                    assert isinstance(asker, QuotaLease)
                    self._refill_quota(ask, asker)

    def _refill_rate(self, ask: Ask, old: RateLease) -> None:
        now_ms = int(self.clock() * 1000)
        name = ask.ids()
        with self.store.db.transaction() as tx:
            admission = self.store.accounts.rate_admit(
                tx, ask.bucket, now_ms, ask.window_ms, ask.limit, lease_id=name
            )
        if not admission.admitted:
            return
        fresh = RateLease.stamped(name, ask, admission, now_ms, used=0)
        with self._lock:
            if self._rate.get(ask.bucket) is old and not self._closed:
                self._rate[ask.bucket] = fresh
                self._spent.append((ask.bucket, old))
            else:
                self._spent.append((ask.bucket, fresh))

    def _refill_quota(self, ask: Ask, old: QuotaLease) -> None:
        assert ask.claim is not None  # only a quota lease asks for quota
        now = int(self.clock())
        claim = attrs.evolve(ask.claim, hold_id=ask.ids(), now=now, expires_at=now + old.seconds)
        with self.store.db.transaction() as tx:
            hold = self.store.holds.take_hold(tx, claim, lease=True)
            if hold.taken and hold.granted < 2:  # near a threshold: calls hold their own
                self.store.holds.release_hold(tx, claim)
        if not hold.taken or hold.granted < 2:
            return
        fresh = QuotaLease(claim=claim, units=hold.granted, seconds=old.seconds, base=0, ahead=True)
        with self._lock:
            fresh.base = max(hold.settled, old.used)  # X-Quota-Used never goes back
            if self._quota.get(_key(claim)) is old and not self._closed:
                self._retire(old)
                self._quota[_key(claim)] = fresh
            else:  # not used: its units go back at the next write-back
                self._draining.append(fresh)

    def _take_rate(self, rate: RateLease) -> int:
        """Take a slot of ``rate``: the calls admitted in the window before this one."""
        rate.used += 1
        return rate.base + rate.used - 1

    def _take_unit(self, lease: QuotaLease | None) -> QuotaLease | None:
        if lease is not None:
            lease.in_use += 1
            lease.taken += 1
        return lease

    def settle(self, lease: QuotaLease, succeeded: bool, day: str) -> int:
        """A call admitted from ``lease`` ended: count it in memory (written back within
        ``FLUSH_SECONDS``; at once once the book is closed, as no writer turn follows);
        return the month's settled count as this process knows it."""
        with self._lock:
            lease.in_use -= 1
            if succeeded:
                lease.ok[day] = lease.ok.get(day, 0) + 1
            else:
                lease.failed += 1
            used = lease.used
        if self._closed:
            self._give_back_all()
        return used

    def unsettle(self, lease: QuotaLease, day: str) -> bool:
        """Take back a success ``settle`` counted whose answer was never sent: True when
        it was still in memory (its unit goes back as a failure's does), False when it
        has been written already (the caller takes it back from the database)."""
        with self._lock:
            if self._closed or lease.ok.get(day, 0) <= 0:
                lease.base -= 1  # X-Quota-Used drops now, not at the next write-back
                return False
            lease.ok[day] -= 1
            lease.failed += 1
            return True

    def used(self, consumer_id: str, month: str, mode: str) -> int | None:
        """The month's settled count as this process's lease knows it, if it has one."""
        with self._lock:
            lease = self._quota.get((consumer_id, month, mode))
            return lease.used if lease is not None else None

    def write_back(self, *, release: bool = False) -> None:
        """Write what the leases did to the database: counts, days, events, unused
        units; a lease with no call since the last write (or every one, ``release``)
        gives all its units back. Rate leases past their time give back unused slots.

        What to write is taken under the book's lock, the writing happens outside it, so
        calls keep being admitted from the leases while the database is slow (a load
        running, say); a write that fails puts what it took back, for the next turn."""
        now = self.clock()
        with self._lock:
            taken = [
                (lease, done)
                for lease in [*self._quota.values(), *self._draining]
                if (done := self._take_done(lease, now, release=release)) is not None
            ]
            now_ms = int(now * 1000)
            rates = [
                (bucket, self._rate.pop(bucket))
                for bucket, rate in list(self._rate.items())
                if release or now_ms >= rate.until_ms
            ]
            rates += self._spent
            self._spent = []
        failed: Exception | None = None
        for lease, done in taken:
            try:
                with self.store.db.transaction() as tx:
                    count, live = self.store.holds.return_lease(tx, lease.claim, done, int(now))
                    if done.ok and lease.claim.mode == "live":
                        fire_thresholds(self.store, tx, lease.claim, count, now)
            except Exception as err:  # the others are still written
                failed = failed or err
                with self._lock:
                    self._put_back(lease, done)
                continue
            with self._lock:
                lease.base = count  # calls settled since are still in lease.ok
                lease.claim = attrs.evolve(lease.claim, expires_at=done.expires_at)
                if not live:  # it lapsed: its units may be another's now, so none is free
                    lease.units = lease.in_use + lease.done
                    self._retire(lease)
        for bucket, rate in rates:  # unused slots not given back age out of the window
            with self.store.db.transaction() as tx:
                self.store.accounts.give_back_rate(
                    tx, bucket, rate.lease_id, rate.units - rate.used
                )
        if failed is not None:
            raise failed

    def _take_done(self, lease: QuotaLease, now: float, *, release: bool) -> LeaseReturn | None:
        """What ``lease`` has to write now (None: nothing), taken off it: its finished
        calls, and the units it stops holding. A lease that keeps none is retired."""
        current = self._quota.get(_key(lease.claim)) is lease
        if not current and lease.units == 0:  # drained: nothing more to write
            self._draining.remove(lease)
            return None
        idle = lease.taken == 0 and lease.in_use == 0 and not lease.ahead
        lease.ahead = False  # a block taken ahead is idle only from the next turn on
        keep = lease.in_use if (release or idle or not current) else lease.units - lease.done
        renew = lease.claim.expires_at - now < lease.seconds / 2
        if not lease.done and keep == lease.units and not renew:
            return None
        done = LeaseReturn(
            hold_id=lease.claim.hold_id,
            ok=tuple(sorted(lease.ok.items())),
            failed=lease.failed,
            keep=keep,
            expires_at=int(now) + lease.seconds,
        )
        lease.base += sum(lease.ok.values())  # X-Quota-Used never goes back meanwhile
        lease.units, lease.taken, lease.ok, lease.failed = keep, 0, {}, 0
        if keep == 0:
            self._retire(lease)
            if lease in self._draining:
                self._draining.remove(lease)
        return done

    def _put_back(self, lease: QuotaLease, done: LeaseReturn) -> None:
        """Undo ``_take_done`` after a failed write: the calls are written next time."""
        for day, calls in done.ok:
            lease.ok[day] = lease.ok.get(day, 0) + calls
        lease.base -= sum(n for _, n in done.ok)
        lease.failed += done.failed
        lease.units += sum(n for _, n in done.ok) + done.failed
        if lease not in self._draining and self._quota.get(_key(lease.claim)) is not lease:
            self._draining.append(lease)

    def _retire(self, lease: QuotaLease) -> None:
        """No new call takes a unit of ``lease``; it drains until its calls end."""
        key = _key(lease.claim)
        if self._quota.get(key) is lease:
            del self._quota[key]
            if lease.units:
                self._draining.append(lease)

    def holding(self) -> bool:
        """Whether this book has anything to write back (read without the lock: a
        writer that misses a lease taken this instant sees it on its next turn)."""
        return bool(self._quota or self._draining or self._rate or self._spent)

    def close(self) -> None:
        """Give every lease back (a clean shutdown loses no count); no block is taken
        ahead after this. Blocks being written meanwhile (by ``refill`` or a call's
        renewing write, each bounded by the store's busy timeout) are waited for and go
        back too, and a call still running settles straight to the database."""
        self._closed = True
        with self._refilling:
            pass
        with self._lock:
            running = list(self._renewing.values())
        for done in running:
            done.wait()
        self._give_back_all()

    def _give_back_all(self) -> None:
        try:
            self.write_back(release=True)
        except Exception:  # the store may be gone already
            log.warning("giving back leases failed", exc_info=True)


def _key(claim: UsageClaim | None) -> tuple[str, str, str]:
    assert claim is not None
    return (claim.consumer_id, claim.month, claim.mode)
