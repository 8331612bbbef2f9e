"""A caller's own usage page counts the calls its server admitted from leases at once.

Leased calls are written back within ``FLUSH_SECONDS``; ``GET /api/auth/me/usage``
writes back the answering process's leases first, so a caller who just made calls
through one real ``svc serve`` worker sees every one of them, before the writer thread's
first turn.
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
CALLS = 7


def test_the_usage_page_counts_leased_calls_at_once(
    db_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    store = open_store(db_url, pool_size=2)
    store.migrate()
    try:
        email = "usage-leased@example.com"
        consumer_id, api_key = mh.consumer(store, email, monthly_quota=BIG, rate_limit=BIG)
        cookie = mh.session_cookie(store, email)
        live = live_server_factory(db_url, env={"SVC_INLINE_WORKER": "false"})
        started = time.monotonic()
        for _ in range(CALLS):
            request = urllib.request.Request(live.url + DATA, headers={"X-API-Key": api_key})
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
        if time.monotonic() - started >= FLUSH_SECONDS or mh.usage_rows(store, consumer_id):
            pytest.skip("the writer thread wrote back first (a slow machine): nothing to show")
        status, body = mh.call(live, "GET", "/api/auth/me/usage", cookie)
        assert status == 200, body
        assert body["data"]["current_period"]["requests_used"] == CALLS
        assert sum(d["calls"] for d in body["data"]["daily"]) == CALLS
    finally:
        store.close()
