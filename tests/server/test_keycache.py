"""The per-process key cache (``store.keycache``) on both backends: a remembered row is
served while the access stamp it was read under holds, a change committed elsewhere is
seen once ``KEY_STAMP_TTL`` has passed, and one made through this store at once."""

from __future__ import annotations

import os
import time

from svc_core.accounts import keys
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import Store
from svc_server.store.account_rows import KeyGrant
from svc_server.store.keycache import BUMP_SQL, KEY_STAMP_TTL, KeyCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_change_elsewhere_is_seen_after_the_bound_and_one_here_at_once(store: Store) -> None:
    made = consumers.create_consumer(
        store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
    )
    key_hash = keys.hash_key(str(made.api_key))
    clock = Clock()
    cache = KeyCache(store.db, clock=clock)
    reads: list[str] = []

    def read(wanted: str) -> KeyGrant | None:
        reads.append(wanted)
        return store.accounts.key_by_hash(wanted)

    first = cache.get(key_hash, read)
    assert first is not None and first.status == "active"
    assert cache.get(key_hash, read) is first and len(reads) == 1  # remembered

    # Another process revokes the key: the row and the stamp change in its transaction.
    with store.db.transaction() as tx:
        tx.execute("UPDATE api_keys SET status = 'revoked' WHERE key_hash = ?", (key_hash,))
        tx.execute(BUMP_SQL)
    clock.now += KEY_STAMP_TTL * 0.9
    stale = cache.get(key_hash, read)
    assert stale is not None and stale.status == "active"  # inside the bound
    clock.now += KEY_STAMP_TTL * 0.2
    fresh = cache.get(key_hash, read)
    assert fresh is not None and fresh.status == "revoked"  # past it: read again
    assert len(reads) == 2

    # A write through a cache's own bump is seen by that cache at once.
    with store.db.transaction() as tx:
        tx.execute("UPDATE api_keys SET status = 'active' WHERE key_hash = ?", (key_hash,))
        cache.bump(tx)
    again = cache.get(key_hash, read)
    assert again is not None and again.status == "active"


def test_unknown_keys_are_never_remembered(store: Store) -> None:
    cache = KeyCache(store.db, clock=Clock())
    reads: list[str] = []

    def read(wanted: str) -> None:
        reads.append(wanted)

    for _ in range(3):
        assert cache.get("0" * 64, read) is None
    assert len(reads) == 3
