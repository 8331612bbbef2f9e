"""The thread that writes a process's request log (``services.request_log``).

Started by the first call logged (building an app starts no thread), it writes the
book every ``FLUSH_SECONDS`` and ends once the book is empty; the next call logged
starts it again. At interpreter exit the book is written once more, so a server stopped
cleanly loses no line.
"""

from __future__ import annotations

import atexit
import logging
import threading

from svc_server.services.request_log import FLUSH_SECONDS, RequestLogBook

log = logging.getLogger("svc.requestlog")


class LogWriter:
    """One daemon thread per ``RequestLogBook``, running while it has lines to write."""

    def __init__(self, book: RequestLogBook, interval: float = FLUSH_SECONDS) -> None:
        self.book = book
        self.interval = interval
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._registered = False

    def ensure(self) -> None:
        """Start the thread if none runs (one attribute read otherwise)."""
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="svc-request-log", daemon=True
                )
                self._thread.start()
                if not self._registered:
                    atexit.register(self.book.close)
                    self._registered = True

    def stop(self) -> None:
        """End the thread (the caller then closes the book, writing what is left)."""
        self._stop.set()

    def _run(self) -> None:
        failing = False
        while not self._stop.wait(self.interval):
            if self.book.store.closed:  # the app was dropped without close(): nothing to do
                break
            try:
                self.book.flush()
                failing = False
            except Exception as exc:  # a busy or unreachable store: the lines wait
                # Once per failing streak, and without a formatted traceback: Python 3.11
                # parses source lines to draw one, which races with the parser in other
                # threads (CPython gh-106905) and a store down for an hour would repeat it
                # every second.
                if not failing:
                    log.warning("writing the request log failed: %s: %s", type(exc).__name__, exc)
                failing = True
            if not self.book.pending():
                break
        with self._lock:
            self._thread = None
        # A line recorded after the look above, while this thread still counted as
        # running, found no thread to start: start one for it.
        if self.book.pending() and not self._stop.is_set():
            self.ensure()
