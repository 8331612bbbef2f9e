"""The per-process cache of encoded answers (``http.answers.Rendered``), one data
version at a time: a newer version drops every entry, an older one is never kept, and
after a load the threads missing the same answer compute it once (``computing``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

from svc_server.http.answers import MAX_BYTES, MAX_ENTRY_BYTES, Rendered


class AnswerCache:
    """A per-process LRU of ``Rendered`` answers for one data version at a time."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, Rendered] = OrderedDict()
        self._bytes = 0
        self._version: Hashable = None
        self._running: dict[tuple[Hashable, Hashable], threading.Event] = {}

    def get(self, version: Hashable, key: Hashable) -> Rendered | None:
        with self._lock:
            if version != self._version:
                return None
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def computing(self, version: Hashable, key: Hashable) -> threading.Event | None:
        """Claim the computation of ``key`` at ``version``: None when this thread is the
        one to compute it (it must call ``done``), else the event set once the thread
        computing it is done, to wait for and then look again. After a load every
        request thread misses at once; one computes each answer, the others wait."""
        with self._lock:
            running = self._running.get((version, key))
            if running is not None:
                return running
            self._running[(version, key)] = threading.Event()
            return None

    def done(self, version: Hashable, key: Hashable) -> None:
        """The computation claimed by ``computing`` ended (kept, refused or failed)."""
        with self._lock:
            running = self._running.pop((version, key), None)
        if running is not None:
            running.set()

    def put(self, version: Hashable, key: Hashable, rendered: Rendered) -> None:
        size = rendered.size
        if size > min(MAX_ENTRY_BYTES, self.max_bytes):
            return
        with self._lock:
            if version != self._version:
                # A newer data version makes every entry stale (an older one, computed
                # by a request that started before a load, is not kept at all).
                if self._version is not None and _older(version, self._version):
                    return
                self._entries.clear()
                self._bytes = 0
                self._version = version
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[key] = rendered
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.size

    def __len__(self) -> int:
        return len(self._entries)


def _older(a: Hashable, b: Hashable) -> bool:
    try:
        return bool(a < b)  # type: ignore[operator]
    except TypeError:
        return False
