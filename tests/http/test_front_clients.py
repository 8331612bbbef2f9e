"""Which request is the first on its connection (``front.Clients``): only those listen
for granian's word of a half-close after their answer (tests/http/test_half_close.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from svc_server.servers.front import Clients

KEEP_ALIVE = 30.0
ADDRESSES = st.sampled_from(["127.0.0.1:40000", "127.0.0.1:40001", "[::1]:40000"])


def test_a_kept_alive_connection_s_later_requests_are_not_first() -> None:
    clients = Clients(KEEP_ALIVE)
    assert clients.first("127.0.0.1:40000", 100.0)
    assert not clients.first("127.0.0.1:40000", 100.5)
    assert clients.first("127.0.0.1:40001", 100.6)  # another connection
    assert not clients.first("127.0.0.1:40000", 100.5 + KEEP_ALIVE)  # idle up to the limit
    # idle longer than granian keeps a connection: the address is a new connection's
    assert clients.first("127.0.0.1:40000", 101.0 + 2 * KEEP_ALIVE)


@given(st.lists(st.tuples(ADDRESSES, st.floats(0, 40)), min_size=1, max_size=60))
def test_first_is_whether_the_address_was_idle_longer_than_the_keep_alive(
    calls: list[tuple[str, float]],
) -> None:
    """Against a plain model (every request remembered): pruning forgets nothing that
    decides an answer, and no address is kept much past the keep-alive time."""
    clients = Clients(KEEP_ALIVE)
    last: dict[str, float] = {}
    now = 0.0
    for address, gap in calls:
        now += gap
        expected = address not in last or now - last[address] > KEEP_ALIVE
        assert clients.first(address, now) is expected
        last[address] = now
        assert all(now - t <= 2 * KEEP_ALIVE for t in clients.seen.values())
