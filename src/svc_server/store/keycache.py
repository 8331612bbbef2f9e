"""API keys resolved once per process and trusted while the *access stamp* stands still.

Every write that can change what a key admits (a key inserted, revoked, rotated, expired
or given a new IP allowlist; a consumer's plan, limits or status changed) moves the one
counter in ``access_stamp`` inside its own transaction (``bump``). A process reads that
counter at most once per ``KEY_STAMP_TTL`` seconds and keeps the key rows it resolved
while the counter it last read is the one they were read under. So a change committed
by any process or host is seen by every process within ``KEY_STAMP_TTL`` seconds, and
by the process that made it at once (``bump`` drops what it knew). What depends on the
clock alone (a rotated key's ``grace_until``) is judged on every call from the row, so
it stays exact.

Unknown hashes are never remembered: a key created a moment ago is found on its first
call, and guessing keys costs the guesser a read each, as before.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import attrs

from svc_server.store.account_rows import KeyGrant
from svc_server.store.base import Database, Tx

KEY_STAMP_TTL = 1.0
"""Seconds a process trusts the access stamp it last read: the bound within which a
revocation, rotation, allowlist or plan change made elsewhere is seen."""
CACHE_ENTRIES = 4096
BUMP_SQL = "UPDATE access_stamp SET version = version + 1 WHERE id = 1"


class KeyCache:
    """A per-process LRU of key rows (by key hash), valid under one access stamp."""

    def __init__(self, db: Database, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        self.clock = clock
        self._lock = threading.Lock()
        self._rows: OrderedDict[str, tuple[int, KeyGrant]] = OrderedDict()
        self._stamp: tuple[float, int] | None = None

    def stamp(self) -> int:
        """The access stamp, read from the database at most once per ``KEY_STAMP_TTL``."""
        now = self.clock()
        known = self._stamp
        if known is not None and now - known[0] < KEY_STAMP_TTL:
            return known[1]
        with self.db.transaction(write=False) as tx:
            row = tx.fetchone("SELECT version FROM access_stamp WHERE id = 1")
        stamp = int(row["version"]) if row else 0
        self._stamp = (now, stamp)
        return stamp

    def get(self, key_hash: str, read: Callable[[str], KeyGrant | None]) -> KeyGrant | None:
        """The row of ``key_hash``: remembered while the stamp holds, else ``read``.

        The stamp is read before the row, so a remembered row is never older than its
        stamp: a change committing meanwhile moves the stamp and the row is read again.
        """
        stamp = self.stamp()
        with self._lock:
            found = self._rows.get(key_hash)
            if found is not None and found[0] == stamp:
                self._rows.move_to_end(key_hash)
                return found[1]
        row = read(key_hash)
        if row is not None:
            with self._lock:
                self._rows[key_hash] = (stamp, row)
                self._rows.move_to_end(key_hash)
                while len(self._rows) > CACHE_ENTRIES:
                    self._rows.popitem(last=False)
        return row

    def known_stamp(self) -> int | None:
        """``stamp`` when it needs no read (read within ``KEY_STAMP_TTL``), else None: for
        a caller that must not wait on I/O (``http.warm``)."""
        known = self._stamp
        if known is None or self.clock() - known[0] >= KEY_STAMP_TTL:
            return None
        return known[1]

    def peek(self, key_hash: str) -> tuple[int, KeyGrant] | None:
        """The row of ``key_hash`` with the stamp it holds under, when ``get`` would
        return it without reading the database, else None (``known_stamp``)."""
        stamp = self.known_stamp()
        if stamp is None:
            return None
        with self._lock:
            found = self._rows.get(key_hash)
            if found is None or found[0] != stamp:
                return None
            self._rows.move_to_end(key_hash)
            return found

    def touched(self, key_id: str, at: int) -> None:
        """Note a ``last_used_at`` write in the remembered row (use is not a change of
        what the key admits, so it does not move the stamp)."""
        with self._lock:
            for key_hash, (stamp, row) in self._rows.items():
                if row.id == key_id:
                    self._rows[key_hash] = (stamp, attrs.evolve(row, last_used_at=at))

    def bump(self, tx: Tx) -> None:
        """Move the access stamp inside ``tx`` (a write that changes what keys admit) and
        forget what this process knew, so it reads afresh at once."""
        tx.execute(BUMP_SQL)
        self.forget()

    def forget(self) -> None:
        """Drop the remembered rows and stamp."""
        with self._lock:
            self._rows.clear()
            self._stamp = None
