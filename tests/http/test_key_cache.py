"""The in-process key cache (issue 17): changes to a key are seen everywhere within
``KEY_STAMP_TTL`` seconds.

Two ``svc serve`` processes share one database (SQLite file and PostgreSQL), started once
per module and backend; each test has a consumer and key of its own. Both have
resolved the key (so each holds it in memory); a change made through server 0's API
(revoke, IP allowlist) or by a third process (a plan change, as ``svc consumer`` does)
must be refused or reflected by server 1 within the documented bound, and by server 0
at once. A rotated key's grace ends by the clock alone, exactly, cache or not.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime

import attrs
import pytest

from svc_server.services import keys
from svc_server.store import Store, open_store
from svc_server.store.keycache import KEY_STAMP_TTL
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

DATA = "/api/v1/real-estate/coverage"  # counted, 200 on an empty database
KEYS = "/api/auth/me/keys"
SLACK = 0.5  # seconds for the request itself on a loaded machine
ENV = {"SVC_THREADS": "2", "SVC_INLINE_WORKER": "false", "SVC_SITE_ORIGINS": mh.ORIGIN}


@attrs.frozen
class Pair:
    store: Store
    servers: tuple[LiveServer, LiveServer]


@pytest.fixture(scope="module")
def pair(module_db_url: str) -> Iterator[Pair]:
    """Two servers on one migrated database, started once per module and backend; each
    test changes only a consumer and key of its own."""
    store = open_store(module_db_url, pool_size=2)
    try:
        # One worker each, so the process that resolved the key is the one asked again.
        servers = mh.start_together(
            lambda: LiveServer(module_db_url, env=ENV), lambda: LiveServer(module_db_url, env=ENV)
        )
        try:
            yield Pair(store, (servers[0], servers[1]))
        finally:
            mh.stop_all(servers)
    finally:
        store.close()


def get(server: LiveServer, key: str) -> tuple[int, dict[str, object]]:
    req = urllib.request.Request(server.url + DATA, headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def key_id(server: LiveServer, cookie: str) -> str:
    status, body = mh.call(server, "GET", KEYS, cookie)
    assert status == 200, body
    return str(body["data"][0]["id"])


def seconds_until(check: Callable[[], bool], limit: float) -> float:
    """Seconds until ``check()`` holds, polling; fails after ``limit`` seconds."""
    started = time.monotonic()
    while not check():
        elapsed = time.monotonic() - started
        assert elapsed < limit, f"not seen within {limit} s"
        time.sleep(0.02)
    return time.monotonic() - started


def stamps_read_now(pair: Pair) -> None:
    """Make both servers read the access stamp now, as servers just started do: this
    process revokes a probe key both hold (as ``svc key revoke`` does) and asks both
    until they refuse it. Servers shared by the module's tests may otherwise hold a
    stamp read up to ``KEY_STAMP_TTL`` ago when a test makes its change, and a server
    that kept its stamp longer than the bound would then still see the change in time."""
    probe_id, probe = mh.consumer(
        pair.store, f"probe-{uuid.uuid4().hex[:12]}@example.com", monthly_quota=10, rate_limit=10
    )
    for server in pair.servers:
        assert get(server, probe)[0] == 200
    with pair.store.db.transaction(write=False) as tx:
        [row] = pair.store.accounts.keys_of_consumer(tx, probe_id)
    keys.revoke_key(pair.store, row.id, time.time(), actor="admin")
    seconds_until(
        lambda: all(get(server, probe)[0] == 401 for server in pair.servers),
        KEY_STAMP_TTL + SLACK,
    )


def warmed(pair: Pair, email: str, *, fresh: bool = True) -> tuple[str, str, str]:
    """A consumer whose key both servers have resolved: (consumer_id, key, cookie).
    ``fresh``: the servers read the access stamp just before resolving it (so the
    change a test makes next waits on them for up to a whole ``KEY_STAMP_TTL``)."""
    consumer_id, key = mh.consumer(pair.store, email, monthly_quota=10_000, rate_limit=10_000)
    cookie = mh.session_cookie(pair.store, email)
    if fresh:
        stamps_read_now(pair)
    for server in pair.servers:
        for _ in range(3):
            assert get(server, key)[0] == 200
    return consumer_id, key, cookie


def test_a_revocation_in_one_server_is_refused_by_the_other_within_the_bound(pair: Pair) -> None:
    _, key, cookie = warmed(pair, "revoke@example.com")
    ident = key_id(pair.servers[0], cookie)
    status, body = mh.call(pair.servers[0], "POST", f"{KEYS}/{ident}/revoke", cookie)
    assert status == 200, body
    assert get(pair.servers[0], key)[0] == 401  # the process that revoked: at once
    waited = seconds_until(lambda: get(pair.servers[1], key)[0] == 401, KEY_STAMP_TTL + SLACK)
    assert waited <= KEY_STAMP_TTL + SLACK
    assert get(pair.servers[1], key)[0] == 401  # and from then on


def test_an_allowlist_change_is_enforced_by_the_other_server_within_the_bound(
    pair: Pair,
) -> None:
    _, key, cookie = warmed(pair, "allow@example.com")
    ident = key_id(pair.servers[0], cookie)
    status, body = mh.call(
        pair.servers[0], "PATCH", f"{KEYS}/{ident}", cookie, {"ip_allowlist": ["203.0.113.0/24"]}
    )
    assert status == 200, body
    assert get(pair.servers[0], key)[0] == 403
    seconds_until(lambda: get(pair.servers[1], key)[0] == 403, KEY_STAMP_TTL + SLACK)
    status, body = get(pair.servers[1], key)
    assert body["error"]["code"] == "IP_NOT_ALLOWED"  # type: ignore[index]


def test_a_plan_change_by_another_process_reaches_both_servers_within_the_bound(
    pair: Pair,
) -> None:
    consumer_id, key, _ = warmed(pair, "plan@example.com")
    assert get(pair.servers[1], key)[1]["_meta"]["tier"] == "pro"  # type: ignore[index]
    with pair.store.db.transaction() as tx:  # what `svc consumer set-plan` does
        assert pair.store.accounts.update_consumer(tx, consumer_id, {"plan": "team"})
    for server in pair.servers:
        seconds_until(
            lambda s=server: get(s, key)[1]["_meta"]["tier"] == "team",  # type: ignore[misc, index]
            KEY_STAMP_TTL + SLACK,
        )


def test_a_rotated_keys_grace_ends_exactly_on_the_clock(pair: Pair) -> None:
    _, key, cookie = warmed(pair, "grace@example.com", fresh=False)
    ident = key_id(pair.servers[0], cookie)
    status, body = mh.call(
        pair.servers[0], "POST", f"{KEYS}/{ident}/rotate", cookie, {"grace_period_seconds": 2}
    )
    assert status == 200, body
    ends = datetime.fromisoformat(body["previous"]["grace_until"]).timestamp()
    for server in pair.servers:  # the old key still works, and is held by both servers
        assert get(server, key)[0] == 200
    while time.time() < ends - 1.2:  # well inside the grace: still admitted everywhere
        assert get(pair.servers[1], key)[0] == 200
        time.sleep(0.05)
    seconds_until(lambda: get(pair.servers[1], key)[0] == 401, 4)
    refused_at = time.time()
    # Expiry is judged from the row on every call, with no write to move the stamp: the
    # key stops at its grace_until (whole seconds), whatever either server remembers.
    assert ends - 1 <= refused_at < ends + 1 + SLACK
    assert get(pair.servers[0], key)[0] == 401
