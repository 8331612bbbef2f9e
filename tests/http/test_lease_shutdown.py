"""A server stopped cleanly loses no count of calls admitted from leases.

Calls of a caller with thousands of units of room are counted in memory and written
back within ``FLUSH_SECONDS`` (``services.leases``). A real ``svc serve`` (granian, and
gunicorn) that receives SIGTERM before that writes them back as its worker stops, and
gives back every unit and slot it did not use.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable

import pytest

from svc_core.accounts.lease import FLUSH_SECONDS
from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

DATA = "/api/v1/real-estate/coverage"
BIG = 1_000_000
CALLS = 20


@pytest.mark.parametrize("server", ["granian", "gunicorn"])
def test_a_clean_stop_writes_every_leased_call_back(
    db_url: str, server: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    store = open_store(db_url, pool_size=2)
    store.migrate()
    try:
        consumer_id, api_key = mh.consumer(
            store, "leased@example.com", monthly_quota=BIG, rate_limit=BIG
        )
        live = live_server_factory(db_url, env={"SVC_SERVER": server, "SVC_INLINE_WORKER": "false"})
        started = time.monotonic()
        for _ in range(CALLS):
            request = urllib.request.Request(live.url + DATA, headers={"X-API-Key": api_key})
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
        written = sum(mh.usage_rows(store, consumer_id).values())
        if time.monotonic() - started >= FLUSH_SECONDS or written:
            pytest.skip("the writer thread wrote back first (a slow machine): nothing to show")
        live.proc.terminate()  # SIGTERM, as systemd stops a service
        assert live.proc.wait(timeout=30) == 0
        assert sum(mh.usage_rows(store, consumer_id).values()) == CALLS
        assert sum(mh.day_rows(store, consumer_id).values()) == CALLS
        with store.db.transaction(write=False) as tx:
            held = tx.fetchone("SELECT COALESCE(SUM(units), 0) AS n FROM usage_holds")
            window = tx.fetchone("SELECT COALESCE(SUM(in_window), 0) AS n FROM rate_counts")
        assert held is not None and window is not None
        assert int(held["n"]) == 0  # the unused quota units went back
        assert int(window["n"]) == CALLS  # and so did the unused rate-limit slots
    finally:
        store.close()
