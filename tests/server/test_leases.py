"""Leases in the store and the process book (``services/leases.py``), on both backends:
a block of units is one write, calls on it write nothing, and writing back turns them
into exactly the counts, days and free units they were."""

from __future__ import annotations

import pytest

from svc_core.lease import LEASE_MOST, RATE_LEASE_SECONDS
from svc_server.services.leases import Ask, LeaseBook
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
