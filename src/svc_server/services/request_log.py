"""The request log: every call of an account's API keys, kept a week, 1,000 per account.

A served call never writes its log line itself: ``RequestLogBook.record`` appends it to
this process's buffer (a list append under a lock), and the app's ``http.log_writer``
thread writes the buffer in one transaction every ``FLUSH_SECONDS`` (the lines, the
per-key counts of successful counted calls, then the pruning of lines past
``RETENTION_SECONDS`` or beyond an account's ``MAX_ROWS_PER_ACCOUNT`` newest). The book
is flushed before the dashboard reads the log or usage, and on close, so a process
stopped cleanly loses nothing; one killed loses at most its last ``FLUSH_SECONDS``. A
buffer that cannot be written (the store down) keeps at most ``BUFFER_MAX`` lines and
drops the oldest beyond that. A call hands its line over as a plain tuple
(``RawCall``), appended to a ``deque`` without a lock: the decoding and clipping happen
in the writer.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from svc_core.accounts import requestlog
from svc_core.accounts.requestlog import LogQuery, RawCall
from svc_core.instants import iso
from svc_server.services.membership import account
from svc_server.store import Store

log = logging.getLogger("svc.requestlog")

FLUSH_SECONDS = 1.0
BUFFER_MAX = 50_000


class RequestLogBook:
    """This process's calls not yet written to the log."""

    def __init__(self, store: Store, clock: Callable[[], float], ids: Callable[[], str]) -> None:
        self.store = store
        self.clock = clock
        self.ids = ids
        self._flushing = threading.Lock()
        self._calls: deque[RawCall] = deque(maxlen=BUFFER_MAX)
        self._closed = False
        self._seq = itertools.count()

    def record(self, call: RawCall) -> None:
        """Keep ``call`` for the next write (at once once the book is closed)."""
        self._calls.append(call)  # atomic; a full deque drops its oldest line
        if self._closed:
            self.flush_quietly()

    def pending(self) -> bool:
        """Whether lines wait to be written (read without the lock, as a hint)."""
        return bool(self._calls)

    def flush(self) -> int:
        """Write the buffered lines, their per-key counts and the pruning in one
        transaction; the number of lines written. A failed write puts the lines back."""
        with self._flushing:
            raws = []
            try:
                while True:
                    raws.append(self._calls.popleft())
            except IndexError:  # drained (calls recorded meanwhile go with the next turn)
                pass
            if not raws:
                return 0
            try:
                keep = requestlog.MAX_ROWS_PER_ACCOUNT
                calls = [requestlog.from_raw(r) for r in requestlog.newest_per_account(raws, keep)]
                with self.store.db.transaction() as tx:
                    repo = self.store.request_log
                    repo.insert_calls(tx, calls, self._row_id)
                    counts = requestlog.counts_per_key(raws)
                    if counts:
                        repo.add_key_usage(tx, counts)
                    repo.prune(
                        tx,
                        [c.consumer_id for c in calls],
                        requestlog.oldest_kept_ms(self.clock()),
                        keep,
                    )
            except BaseException:
                self._calls.extendleft(reversed(raws))  # for the next turn
                raise
            return len(raws)

    def _row_id(self) -> str:
        """A line's id: this process's lines of one millisecond sort in the order they
        were recorded (the log lists newest first by time, then id)."""
        return f"{next(self._seq):012x}-{self.ids()}"

    def close(self) -> None:
        """Write what is buffered; lines recorded after this are written at once."""
        self._closed = True
        self.flush_quietly()

    def flush_quietly(self) -> None:
        """``flush``, a failure logged, not raised (the lines wait for the next turn);
        nothing once the store is closed (an app dropped without ``close``)."""
        if self.store.closed:
            return
        try:
            self.flush()
        except Exception as exc:  # the store may be down: no traceback (see log_writer)
            log.warning("writing the request log failed: %s: %s", type(exc).__name__, exc)


def recent_calls(store: Store, user_id: str, query: LogQuery, now: float) -> dict[str, Any]:
    """The calls of the user's primary account matching ``query``, newest first (404
    ``NO_CONSUMER`` without one); only that account's, whatever the filters say."""
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
        rows = store.request_log.calls(tx, consumer.id, query, requestlog.oldest_kept_ms(now))
    return {
        "rows": [
            {
                "time": iso(r.at_ms / 1000),
                "key_id": r.key_id,
                "key_prefix": r.key_prefix,
                "key_label": r.key_label,
                "method": r.method,
                "path": r.path,
                "status": int(r.status),
                "error_code": r.error_code,
                "request_id": r.request_id,
                "duration_ms": round(float(r.duration_ms), 1),
            }
            for r in rows
        ],
        "pagination": {"limit": query.limit, "offset": query.offset, "returned": len(rows)},
        "retention": {
            "days": requestlog.RETENTION_SECONDS // 86400,
            "max_rows": requestlog.MAX_ROWS_PER_ACCOUNT,
        },
    }
