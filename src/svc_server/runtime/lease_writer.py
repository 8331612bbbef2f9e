"""The thread that writes a process's leases back (``services.leases``).

Started by the first call admitted from a lease (building an app starts no thread), it
takes the next blocks leases running low ask for (``LeaseBook.refill``) as soon as they
ask, calls ``LeaseBook.write_back`` every ``FLUSH_SECONDS``, and ends once the book holds
nothing; the next lease starts it again. At interpreter exit the book gives every lease
back, so a server stopped cleanly loses no count.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time

from svc_core.accounts.lease import FLUSH_SECONDS
from svc_server.services.leases import LeaseBook

log = logging.getLogger("svc.leases")


class LeaseWriter:
    """One daemon thread per ``LeaseBook``, running while the book holds leases."""

    def __init__(self, book: LeaseBook) -> None:
        self.book = book
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._registered = False

    def ensure(self) -> None:
        """Start the thread if the book holds leases and none runs (cheap otherwise)."""
        if self._thread is not None or not self.book.holding():
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="svc-leases", daemon=True)
                self._thread.start()
                if not self._registered:
                    atexit.register(self.book.close)
                    self._registered = True

    def _run(self) -> None:
        flush_at = time.monotonic() + FLUSH_SECONDS
        while True:
            self.book.wanted.wait(max(0.0, flush_at - time.monotonic()))
            try:
                self.book.refill()  # next blocks asked for by leases running low
            except Exception:  # the calls renew it themselves when it runs out
                log.warning("taking a lease's next block failed", exc_info=True)
            if time.monotonic() < flush_at:
                continue
            flush_at = time.monotonic() + FLUSH_SECONDS
            try:
                self.book.write_back()
            except Exception:  # a busy or closed store: try again next turn
                log.warning("writing back leases failed", exc_info=True)
            with self._lock:
                if not self.book.holding():
                    self._thread = None
                    return
