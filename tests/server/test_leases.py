"""Leases in the store and the process book (``services/leases.py``), on both backends:
a block of units is one write, calls on it write nothing, and writing back turns them
into exactly the counts, days and free units they were."""

from __future__ import annotations

import threading
from typing import Any

import attrs
import pytest

from svc_core.accounts.lease import LEASE_MOST, RATE_LEASE_SECONDS
from svc_server.services.leases import Ask, Granted, LeaseBook
from svc_server.store import Store
from svc_server.store.holds import UsageClaim

MONTH, DAY = "2026-09", "2026-09-21"
T0 = 1_790_000_000.0
BIG = 10**8


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def ask(n: int, clock: Clock, *, limit: int = BIG, quota: int | None = BIG) -> Ask:
    claim = None
    if quota is not None:
        claim = UsageClaim(
            consumer_id="c",
            month=MONTH,
            mode="live",
            limit=quota,
            hold_id="",
            now=int(clock.now),
            expires_at=int(clock.now) + 300,
        )
    return Ask(
        ids=lambda: f"h{n}",
        bucket="consumer:c:live",
        now_ms=int(clock.now * 1000),
        window_ms=60_000,
        limit=limit,
        claim=claim,
    )


def writes(store: Store) -> tuple[int, int, int]:
    """Rows in the rate log, held units and the stored month count."""
    with store.db.transaction(write=False) as tx:
        log = tx.fetchone("SELECT COUNT(*) AS n FROM rate_events")
        held = tx.fetchone("SELECT COALESCE(SUM(units), 0) AS n FROM usage_holds")
    assert log is not None and held is not None
    return int(log["n"]), int(held["n"]), store.accounts.usage("c", MONTH)


def test_calls_on_a_lease_write_nothing_until_written_back(store: Store) -> None:
    clock = Clock()
    book = LeaseBook(store, clock)
    leases = []
    for n in range(100):
        granted = book.admit(ask(n, clock))
        admission, lease = granted.admission, granted.lease
        assert admission.admitted and lease is not None
        leases.append(lease)
    assert writes(store) == (1, LEASE_MOST, 0)  # one stamp, one block of units, no count
    for n, lease in enumerate(leases):
        assert book.settle(lease, n % 10 != 0, DAY) == n + 1 - (n // 10 + 1)
    book.write_back()
    # 90 successes counted; 10 failures and the 90 settled units left the block
    assert writes(store) == (1, LEASE_MOST - 100, 90)
    with store.db.transaction(write=False) as tx:
        days = tx.fetchall("SELECT day, count FROM usage_days WHERE consumer_id = 'c'")
    assert [(r["day"], int(r["count"])) for r in days] == [(DAY, 90)]
    book.write_back()  # nothing was taken since: the lease goes back whole
    assert writes(store) == (1, 0, 90)


def test_an_unused_rate_lease_gives_its_slots_back(store: Store) -> None:
    clock = Clock()
    book = LeaseBook(store, clock)
    admission = book.admit(ask(0, clock, quota=None)).admission
    assert admission.admitted
    with store.db.transaction(write=False) as tx:
        summary = tx.fetchone("SELECT in_window FROM rate_counts")
    assert summary is not None and int(summary["in_window"]) == LEASE_MOST
    clock.now += RATE_LEASE_SECONDS
    book.write_back()
    with store.db.transaction(write=False) as tx:
        summary = tx.fetchone("SELECT in_window FROM rate_counts")
        units = tx.fetchone("SELECT SUM(units) AS n FROM rate_events")
    assert summary is not None and units is not None
    assert int(summary["in_window"]) == int(units["n"]) == 1  # the one call made


@pytest.mark.parametrize("limit", [4096, 10_000])
def test_leased_slots_never_pass_the_limit_and_the_oldest_blocks(store: Store, limit: int) -> None:
    """Leases fill the window exactly to the limit; the refusal names the first stamp,
    whose slots must leave the window before any frees."""
    stamps = []
    now_ms = leased = int(T0 * 1000)
    granted = 0
    while True:
        with store.db.transaction() as tx:
            admission = store.accounts.rate_admit(
                tx, "b", now_ms, 60_000, limit, lease_id=f"l{now_ms}"
            )
        if not admission.admitted:
            break
        stamps.append(now_ms)
        granted += admission.granted
        if admission.granted > 1:
            leased = now_ms
        now_ms += 1
    assert granted == limit
    assert admission.in_window == limit and admission.blocker_ms == stamps[0]
    with store.db.transaction() as tx:  # giving back the last lease's slots frees them
        store.accounts.give_back_rate(tx, "b", f"l{leased}", 1)
        again = store.accounts.rate_admit(tx, "b", now_ms, 60_000, limit)
    assert again.admitted and again.granted == 1


def test_a_lapsed_lease_counts_only_what_still_fits(store: Store) -> None:
    """A process that stalled past its lease's expiry: another call took the freed
    units up to the cap, so the stalled process's successes are not all counted."""
    clock = Clock()
    book = LeaseBook(store, clock)
    quota = 5000
    first = ask(0, clock, quota=quota)
    lease = book.admit(first).lease
    assert lease is not None and lease.units > 1
    book.settle(lease, True, DAY)
    with store.db.transaction() as tx:  # everything else is settled elsewhere meanwhile
        tx.execute(
            "INSERT INTO usage_counters (consumer_id, month, mode, count) VALUES (?, ?, ?, ?)",
            ("c", MONTH, "live", quota),
        )
    clock.now += 301  # past the lease's expiry
    book.write_back()
    assert store.accounts.usage("c", MONTH) == quota  # not quota + 1
    assert writes(store)[1] == 0


def test_a_failed_write_back_loses_no_count(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails (a busy database) keeps what it was to write for the next turn,
    and calls go on being admitted and counted from the lease meanwhile."""
    clock = Clock()
    book = LeaseBook(store, clock)
    for n in range(5):
        lease = book.admit(ask(n, clock)).lease
        assert lease is not None
        book.settle(lease, True, DAY)
    real = store.holds.return_lease

    def busy(*args: object, **kwargs: object) -> object:
        raise RuntimeError("database is busy")

    monkeypatch.setattr(store.holds, "return_lease", busy)
    with pytest.raises(RuntimeError):
        book.write_back()
    assert store.accounts.usage("c", MONTH) == 0
    lease = book.admit(ask(5, clock)).lease
    assert lease is not None and book.settle(lease, True, DAY) == 6
    monkeypatch.setattr(store.holds, "return_lease", real)
    book.write_back()
    assert store.accounts.usage("c", MONTH) == 6
    book.write_back()  # idle now: the lease goes back whole
    assert writes(store) == (1, 0, 6)


def call(book: LeaseBook, n: int, clock: Clock, **limits: int | None) -> Granted:
    """Admit call ``n`` and, when it came from a quota lease, settle it as a success."""
    granted = book.admit(ask(n, clock, **limits))  # type: ignore[arg-type]
    if granted.lease is not None:
        book.settle(granted.lease, True, DAY)
    return granted


def calls_until_asked(book: LeaseBook, clock: Clock) -> int:
    """Make settled calls until a lease asks for its next block; how many were made."""
    n = 0
    while not book.wanted.is_set():
        assert call(book, n, clock).admission.admitted
        n += 1
    return n


def rate_state(store: Store) -> tuple[int, int]:
    """The bucket's counted slots and the slots its stamps hold."""
    with store.db.transaction(write=False) as tx:
        summary = tx.fetchone("SELECT in_window FROM rate_counts")
        units = tx.fetchone("SELECT COALESCE(SUM(units), 0) AS n FROM rate_events")
    assert summary is not None and units is not None
    return int(summary["in_window"]), int(units["n"])


def test_a_lease_running_low_takes_its_next_block_ahead(store: Store) -> None:
    """With a quarter of a block left the lease asks for the next; ``refill`` (the
    writer thread's) takes it in its own write, calls move to it without writing, and
    what the old blocks did not use goes back: the counts are exactly the calls."""
    clock = Clock()
    book = LeaseBook(store, clock)
    first = book.admit(ask(0, clock))
    assert first.lease is not None and first.lease.units == LEASE_MOST
    calls = [first.lease]
    while not book.wanted.is_set():
        lease = book.admit(ask(len(calls), clock)).lease
        assert lease is not None
        calls.append(lease)
    assert len(calls) == LEASE_MOST - LEASE_MOST // 4  # asked with a quarter left
    assert writes(store) == (1, LEASE_MOST, 0)  # asking wrote nothing
    book.refill()
    assert not book.wanted.is_set()
    assert writes(store)[:2] == (2, 2 * LEASE_MOST)  # one more stamp, one more block
    more = [book.admit(ask(len(calls) + n, clock)).lease for n in range(100)]
    assert all(lease is not None and lease is not first.lease for lease in more)
    assert writes(store)[:2] == (2, 2 * LEASE_MOST)  # calls on the new blocks write nothing
    for lease in [*calls, *more]:
        assert lease is not None
        book.settle(lease, True, DAY)
    made = len(calls) + len(more)
    book.write_back()  # the old rate block gives its unused slots back, the old quota
    assert rate_state(store)[0] == rate_state(store)[1]  # block its unused units
    book.close()
    assert writes(store)[1:] == (0, made)
    assert rate_state(store) == (made, made)


def test_a_rate_lease_near_its_end_asks_ahead_and_the_bound_holds(store: Store) -> None:
    """A rate lease with a quarter of its second left asks for the next block; blocks
    taken ahead never let more than the limit through in the window."""
    clock = Clock()
    book = LeaseBook(store, clock)
    limit = 4 * 2048 * 64  # room for full-size leases
    admitted = 0
    for step in range(40):  # 40 x 100 ms of calls, refilled whenever asked
        for _ in range(50):
            if book.admit(ask(admitted, clock, limit=limit, quota=None)).admission.admitted:
                admitted += 1
        if book.wanted.is_set():
            book.refill()
        clock.now += 0.1
        if step % 10 == 9:
            book.write_back()
    book.close()
    assert rate_state(store) == (admitted, admitted) == (2000, 2000)
    with store.db.transaction(write=False) as tx:
        stamps = tx.fetchone("SELECT COUNT(*) AS n FROM rate_events")
    assert stamps is not None and int(stamps["n"]) <= 6  # a block every ~0.75 s, not a call


def test_a_block_taken_ahead_for_a_replaced_lease_goes_back_whole(store: Store) -> None:
    clock = Clock()
    book = LeaseBook(store, clock)
    n = calls_until_asked(book, clock)
    clock.now += RATE_LEASE_SECONDS  # the rate lease runs out before the refill runs:
    assert call(book, n, clock).admission.admitted  # a call renews it itself
    n += 1
    book.refill()  # the quota block is used; the rate block was not asked by this lease
    clock.now += RATE_LEASE_SECONDS
    book.close()
    assert rate_state(store) == (n, n)
    assert writes(store)[1:] == (0, n)  # every call counted, every unit back


def test_near_a_threshold_nothing_is_taken_ahead(store: Store) -> None:
    """Close to a quota event's threshold a block taken ahead would hold the unit that
    reaches it: ``refill`` takes none, and calls go back to holding their own."""
    clock = Clock()
    book = LeaseBook(store, clock)
    quota = 1_000_000  # the 80 % threshold is unit 800,000
    start = 800_000 - 1 - 2070  # 2,070 units of room: a lease of 32
    with store.db.transaction() as tx:
        tx.execute(
            "INSERT INTO usage_counters (consumer_id, month, mode, count) VALUES (?, ?, ?, ?)",
            ("c", MONTH, "live", start),
        )
    lease = book.admit(ask(0, clock, quota=quota)).lease
    assert lease is not None and lease.units == 32
    book.settle(lease, True, DAY)
    n = 1
    while not book.wanted.is_set():
        assert call(book, n, clock, quota=quota).lease is lease
        n += 1
    assert lease.free == 32 // 4
    book.refill()  # 2,038 units of room would be left: under LEASE_FLOOR, so no block
    assert writes(store)[1] == 32  # the first block only
    for _ in range(lease.free):
        assert call(book, n, clock, quota=quota).lease is lease
        n += 1
    assert call(book, n, clock, quota=quota).lease is None  # holds its own unit now
    book.close()
    assert writes(store)[1] == 1  # that call's hold, not settled in this test
    assert store.accounts.usage("c", MONTH) == start + 32


def test_a_closed_book_takes_nothing_ahead(store: Store) -> None:
    clock = Clock()
    book = LeaseBook(store, clock)
    n = calls_until_asked(book, clock)
    book.close()
    book.refill()
    assert not book.holding()
    assert writes(store) == (1, 0, n)


def held_quota_write(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Event, threading.Event]:
    """Make the store's next quota write wait: (set once it is writing, set to let it on)."""
    writing, finish = threading.Event(), threading.Event()
    real = store.holds.take_hold

    def slow(*args: Any, **kwargs: Any) -> Any:
        writing.set()
        assert finish.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(store.holds, "take_hold", slow)
    return writing, finish


def test_closing_waits_for_a_block_being_taken_and_gives_it_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker stopping while its writer thread takes a block ahead: ``close`` waits
    for that write and gives the new block back with the rest, so no unit or slot stays
    held after a clean stop."""
    clock = Clock()
    book = LeaseBook(store, clock)
    n = calls_until_asked(book, clock)
    writing, finish = held_quota_write(store, monkeypatch)
    refill = threading.Thread(target=book.refill)
    refill.start()
    assert writing.wait(10)
    closing = threading.Thread(target=book.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive()  # waiting for the block being written
    finish.set()
    refill.join(10)
    closing.join(10)
    assert not closing.is_alive() and not book.holding()
    assert writes(store)[1:] == (0, n)
    assert rate_state(store) == (n, n)


def test_one_callers_renewal_waiting_on_the_database_stalls_no_other_caller(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Caller b's renewing write waits (behind a load's lock, say): caller a, whose
    leases have room, is admitted meanwhile, and b's next call waits for b's write and
    is then admitted from the block it took, without a write of its own."""
    clock = Clock()
    book = LeaseBook(store, clock)
    assert call(book, 0, clock).lease is not None  # a (consumer c) holds both leases

    def ask_b(n: int) -> Ask:
        made = ask(n, clock)
        assert made.claim is not None
        return attrs.evolve(
            made,
            bucket="consumer:b:live",
            claim=attrs.evolve(made.claim, consumer_id="b"),
            ids=lambda: f"b{n}",
        )

    writing, finish = threading.Event(), threading.Event()
    real = store.accounts.rate_admit
    writes_b: list[str] = []

    def held(tx: Any, bucket: str, *args: Any, **kwargs: Any) -> Any:
        if bucket == "consumer:b:live":
            writes_b.append(bucket)
            writing.set()
            assert finish.wait(10)
        return real(tx, bucket, *args, **kwargs)

    monkeypatch.setattr(store.accounts, "rate_admit", held)
    results: dict[str, Granted] = {}
    first_b = threading.Thread(target=lambda: results.update(b1=book.admit(ask_b(1))))
    first_b.start()
    assert writing.wait(10)
    second_b = threading.Thread(target=lambda: results.update(b2=book.admit(ask_b(2))))
    second_b.start()
    a_grants: list[Granted] = []
    a_calls = threading.Thread(
        target=lambda: a_grants.extend(call(book, n, clock) for n in range(1, 50))
    )
    a_calls.start()
    a_calls.join(5)
    alive = a_calls.is_alive()
    b_waited = first_b.is_alive() and second_b.is_alive()  # b's calls wait for b's write
    finish.set()  # (before asserting, so no thread is left waiting)
    assert not alive and b_waited  # a is not held up by b's write
    assert len(a_grants) == 49 and all(g.admission.admitted for g in a_grants)
    first_b.join(10)
    second_b.join(10)
    a_calls.join(10)
    assert results["b1"].admission.admitted and results["b2"].admission.admitted
    assert results["b1"].lease is not None and results["b2"].lease is results["b1"].lease
    assert writes_b == ["consumer:b:live"]  # one write for both of b's calls


def test_closing_waits_for_a_calls_renewing_write_and_counts_the_call(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker stopping while a call's own write takes its first blocks: ``close``
    waits for that write and gives the blocks back, and the call, settled after the
    close, is counted in the database at once: no count lost, no unit left held."""
    clock = Clock()
    book = LeaseBook(store, clock)
    writing, finish = held_quota_write(store, monkeypatch)
    granted: list[Granted] = []
    caller = threading.Thread(target=lambda: granted.append(book.admit(ask(0, clock))))
    caller.start()
    assert writing.wait(10)
    closing = threading.Thread(target=book.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive()  # waiting for the call's write
    finish.set()
    caller.join(10)
    closing.join(10)
    assert not closing.is_alive()
    [first] = granted
    assert first.admission.admitted and first.lease is not None
    assert writes(store)[1:] == (1, 0)  # the running call's unit is still held
    book.settle(first.lease, True, DAY)
    assert writes(store)[1:] == (0, 1)
    assert not book.holding()


def test_a_call_taken_back_is_uncounted_whether_or_not_it_was_written(store: Store) -> None:
    """A call whose answer was never sent (its client half-closed, ``http.front``) is
    taken back from the lease in memory, or from the counts once written back; the
    count this process shows (``X-Quota-Used``) drops at once either way."""
    from svc_server.services import access

    clock = Clock()
    book = LeaseBook(store, clock)
    reservations = []
    for n in range(3):
        granted = book.admit(ask(n, clock))
        assert granted.lease is not None
        assert book.settle(granted.lease, True, DAY) == n + 1
        reservations.append(
            access.Reservation(
                consumer_id="c", month=MONTH, day=DAY, mode="live", lease=granted.lease
            )
        )
    access.unsettle(store, reservations[0], book)  # still in memory
    assert book.used("c", MONTH, "live") == 2
    book.write_back()
    assert writes(store)[2] == 2
    access.unsettle(store, reservations[1], book)  # written already: from the counts
    assert book.used("c", MONTH, "live") == 1
    assert writes(store)[2] == 1
    book.write_back()  # idle: the lease goes back whole, the counts stay
    assert writes(store) == (1, 0, 1)
    with store.db.transaction(write=False) as tx:
        days = tx.fetchall("SELECT count FROM usage_days WHERE consumer_id = 'c'")
    assert [int(r["count"]) for r in days] == [1]
