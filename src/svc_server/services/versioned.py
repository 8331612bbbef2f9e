"""Answers kept per *data version* (``store.data_version``), in this process.

The version is read from the database at most once per ``VERSION_TTL`` second, so several
server processes stay consistent within that bound; a load this process committed
(``RealEstateRepo.loads`` moved) is seen by the next call at once. The app keeps one
cache for its store (``runtime.Deps.versions``); a library caller of the services keeps
one per store it reads.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from svc_server.store import Store
from svc_server.store.data_version import Version
from svc_server.store.realestate import DataState

T = TypeVar("T")
CACHE_ENTRIES = 1024
VERSION_TTL = 1.0
"""Seconds a process trusts the data version it last read (see ``VersionedCache``)."""


@attrs.frozen(kw_only=True)
class _Read:
    """A read of the data version: when (monotonic seconds, before the read), how many
    loads this process had committed then, and the version."""

    at: float
    loads: int
    version: Version


class VersionedCache:
    """A small LRU of answers keyed by data version, and the version last read, of one
    store (every call passes the same one)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._read: _Read | None = None

    def version(self, store: Store) -> Version:
        """The data version: read from the database when the last read is older than
        ``VERSION_TTL`` or a load of this process committed since."""
        known = self.known_version(store)
        if known is not None:
            return known
        # taken before the read: a load committing meanwhile moves the count again
        at, loads = time.monotonic(), store.realestate.loads.count()
        version = store.realestate.data_version()
        self._read = _Read(at=at, loads=loads, version=version)
        return version

    def known_version(self, store: Store) -> Version | None:
        """``version`` when it needs no read, else None: for a caller that must not wait
        on I/O (``app.warm``)."""
        read = self._read
        if (
            read is None
            or read.loads != store.realestate.loads.count()
            or time.monotonic() - read.at >= VERSION_TTL
        ):
            return None
        return read.version

    def state(self, store: Store) -> DataState:
        """The store's current ``DataState`` (one cheap query when nothing changed)."""
        version = self.version(store)
        return self.get(("state",), lambda: store.realestate.state(version), version=version)

    def get(self, key: tuple[Any, ...], compute: Callable[[], T], *, version: Version) -> T:
        """``compute()`` once per data ``version`` and ``key``.

        Read the version before computing (``version``, ``state``), so an entry can only
        hold data at least as new as its version: a load committing meanwhile changes
        the version and the next call recomputes.
        """
        full = (version, *key)
        with self._cache_lock:
            if full in self._cache:
                self._cache.move_to_end(full)
                return self._cache[full]  # type: ignore[no-any-return]
        value = compute()
        with self._cache_lock:
            self._cache[full] = value
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return value
