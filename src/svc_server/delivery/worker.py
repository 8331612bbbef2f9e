"""The delivery worker: sends queued webhook deliveries and runs the periodic jobs.

Run it as ``svc worker`` (any number of processes, on any hosts sharing the database) or,
with ``SVC_INLINE_WORKER=true``, as a daemon thread inside each server process. Workers
coordinate only through the ``deliveries`` table:

1. **Claim.** One transaction marks ``pending`` rows ``claimed`` by this worker: the
   oldest pending row of each active endpoint that has nothing in flight, so each
   endpoint gets its events one at a time, in creation order (best effort). Consumers
   take turns (the one with the fewest deliveries in flight first), and no consumer
   holds more than ``per_consumer`` of a worker's slots (half of them by default), so
   one tenant's dead endpoints leave the other half free for everyone else.
2. **Send.** Just before the request, ``claimed`` becomes ``sending`` (compare-and-set on
   the claim), then ``delivery.attempt.attempt`` signs with a fresh timestamp, sends
   through the SSRF-checked sender (5 s in all, no redirects, no retries) and records
   ``delivered`` or ``failed`` with the endpoint's failure count in one transaction.
3. **Sweep.** A worker that stops (crash, kill, restart) leaves rows behind. After
   ``stale_after`` seconds (60 by default, far above the 5-second send deadline) a
   ``claimed`` row goes back to ``pending``: it was never sent, so it is sent later and
   not lost. A ``sending`` row becomes ``failed`` with "worker stopped during send; not
   retried": the request may have reached the receiver, and v1 never sends twice. Such
   a failure does not count toward disabling the endpoint (it was not the receiver's).

The periodic jobs that publish ``subscription.trial_will_end`` and ``data.updated`` are
use cases (``services.events.notify_trials_ending``,
``services.data_events.publish_changes``): the command that starts the worker hands them
in (``trial_notices``, ``data_events``), so ``delivery/`` imports nothing from
``services/``; services
call down into ``delivery.attempt`` and ``delivery.sender``, never the other way.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import attrs

from svc_core.webhooks.netguard import Resolver
from svc_server.config import Config
from svc_server.delivery import attempt as delivery
from svc_server.delivery.attempt import DeliveryJob
from svc_server.delivery.sender import SendResult
from svc_server.store import Store

log = logging.getLogger("svc.worker")

STALE_AFTER = 60
"""Seconds after which a claim or a send whose worker vanished is settled."""
STOPPED_DURING_SEND = "worker stopped during send; not retried"
DEFAULT_INTERVAL = 1.0
MAINTENANCE_EVERY = 30.0
"""Seconds between sweeps and trial checks in a running worker."""

TrialNotices = Callable[[Store, float], int]
"""The periodic trial job: publish the notices due at a time, return how many."""
DataEvents = Callable[[Store, float], int]
"""The periodic data job: publish the change records not yet published as
``data.updated`` events (``services.data_events.publish_changes``), return the
deliveries queued."""


@attrs.frozen(kw_only=True)
class Maintenance:
    """What one sweep and trial check did."""

    released: int
    failed: int
    trial_notices: int
    data_events: int = 0


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Worker:
    """Claims, sends and records deliveries for one store; safe to run many at once."""

    def __init__(
        self,
        store: Store,
        *,
        allow_private: bool = False,
        clock: Callable[[], float] = time.time,
        resolver: Resolver | None = None,
        concurrency: int = 8,
        per_consumer: int | None = None,
        stale_after: int = STALE_AFTER,
        worker_id: str | None = None,
        trial_notices: TrialNotices | None = None,
        data_events: DataEvents | None = None,
        timeout: float = delivery.DELIVERY_TIMEOUT,
    ) -> None:
        """``trial_notices`` and ``data_events`` run with each sweep (``svc worker`` and
        ``svc serve`` pass ``services.events.notify_trials_ending`` and
        ``services.data_events.publish_changes``); without them neither is published
        by the worker. ``timeout`` bounds each send (SPEC's 5 s; tests give less)."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if per_consumer is not None and per_consumer < 1:
            raise ValueError("per_consumer must be at least 1")
        self.store = store
        self.allow_private = allow_private
        self.clock = clock
        self.resolver = resolver
        self.concurrency = concurrency
        self.per_consumer = per_consumer or max(1, concurrency // 2)
        self.stale_after = stale_after
        self.worker_id = worker_id or default_worker_id()
        self.trial_notices = trial_notices
        self.data_events = data_events
        self.timeout = timeout

    # steps -----------------------------------------------------------------------------

    def maintain(self) -> Maintenance:
        """Settle what stopped workers left behind, then publish due trial notices."""
        now = int(self.clock())
        before = now - self.stale_after
        with self.store.db.transaction() as tx:
            released = self.store.webhooks.release_stale_claims(tx, before)
            failed = self.store.webhooks.fail_stale_sends(tx, before, STOPPED_DURING_SEND, now)
            for status, message in (
                ("revoked", delivery.NOT_SENT_REVOKED),
                ("disabled_after_failure", delivery.NOT_SENT_DISABLED),
            ):
                self.store.webhooks.fail_orphans(tx, status, message, now)
        notices = self.trial_notices(self.store, self.clock()) if self.trial_notices else 0
        data = self.data_events(self.store, self.clock()) if self.data_events else 0
        if released or failed:
            log.warning(
                "settled deliveries of stopped workers: %d re-queued, %d failed", released, failed
            )
        return Maintenance(
            released=released, failed=failed, trial_notices=notices, data_events=data
        )

    def claim(self, limit: int) -> list[DeliveryJob]:
        """Claim up to ``limit`` deliveries: at most one per endpoint, consumers in turn,
        and at most ``per_consumer`` of this worker's slots for any one consumer."""
        with self.store.db.transaction() as tx:
            rows = self.store.webhooks.claim(
                tx, self.worker_id, int(self.clock()), limit, self.per_consumer
            )
        return [delivery.job_from_row(r) for r in rows]

    def deliver(self, job: DeliveryJob) -> SendResult | None:
        """Send one claimed delivery; None when the claim was lost to a sweep."""
        with self.store.db.transaction() as tx:
            started = self.store.webhooks.mark_sending(
                tx, job.id, self.worker_id, int(self.clock())
            )
        if not started:
            return None
        result = delivery.attempt(
            self.store,
            job,
            self.worker_id,
            clock=self.clock,
            allow_private=self.allow_private,
            resolver=self.resolver,
            timeout=self.timeout,
        )
        log.info(
            json.dumps(
                {
                    "delivery_id": job.id,
                    "endpoint_id": job.endpoint_id,
                    "event_id": job.event_id,
                    "event_type": job.event_type,
                    "status": "delivered" if result.ok else "failed",
                    "http_status": result.http_status,
                    "duration_ms": result.duration_ms,
                    "error": result.error,
                }
            )
        )
        return result

    # loops ------------------------------------------------------------------------------

    def run_once(self) -> int:
        """Maintain, then send until nothing is left to claim; return how many were sent.

        Each round claims at most one delivery per endpoint and sends the round
        concurrently, so an endpoint's queue drains in order, one round per event.
        """
        self.maintain()
        sent = 0
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="svc-delivery") as pool:
            while jobs := self.claim(self.concurrency):
                results = list(pool.map(self.deliver, jobs))
                sent += sum(1 for r in results if r is not None)
        return sent

    def run(self, stop: threading.Event, interval: float = DEFAULT_INTERVAL) -> None:
        """Deliver until ``stop`` is set, then finish the sends in flight.

        Up to ``concurrency`` sends run at once; a slow endpoint holds one slot only.
        Errors (a database restart, say) are logged and the loop carries on.
        """
        inflight: set[Future[SendResult | None]] = set()
        next_maintenance = 0.0
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="svc-delivery") as pool:
            while not stop.is_set():
                try:
                    if time.monotonic() >= next_maintenance:
                        next_maintenance = time.monotonic() + MAINTENANCE_EVERY
                        self.maintain()
                    jobs: list[DeliveryJob] = []
                    free = self.concurrency - len(inflight)
                    if free > 0 and self.store.webhooks.has_pending():
                        jobs = self.claim(free)
                    inflight |= {pool.submit(self.deliver, job) for job in jobs}
                    if not jobs:
                        if inflight:
                            wait(inflight, timeout=interval, return_when=FIRST_COMPLETED)
                        else:
                            stop.wait(interval)
                    inflight = _reap(inflight)
                except Exception:
                    log.exception("webhook worker iteration failed; retrying")
                    stop.wait(interval)
            wait(inflight)
            _reap(inflight)


def _reap(futures: set[Future[SendResult | None]]) -> set[Future[SendResult | None]]:
    """Drop finished futures, logging any that raised; return those still running."""
    running = set()
    for future in futures:
        if not future.done():
            running.add(future)
        elif future.exception() is not None:
            log.error("webhook delivery failed unexpectedly", exc_info=future.exception())
    return running


@attrs.define
class InlineWorker:
    """A worker running in a daemon thread of the current process."""

    worker: Worker
    thread: threading.Thread
    stopping: threading.Event

    def stop(self, timeout: float | None = 10.0) -> None:
        """Ask the loop to end and wait for the sends in flight."""
        self.stopping.set()
        self.thread.join(timeout)


def start_inline(
    store: Store,
    config: Config,
    *,
    clock: Callable[[], float] = time.time,
    interval: float = DEFAULT_INTERVAL,
    trial_notices: TrialNotices | None = None,
    data_events: DataEvents | None = None,
) -> InlineWorker:
    """Start delivering from a daemon thread of this server process
    (``SVC_INLINE_WORKER=true``, started by ``svc serve``, which passes the trial job).
    Several processes may each run one."""
    worker = Worker(
        store,
        allow_private=config.webhook_allow_private,
        clock=clock,
        concurrency=4,
        trial_notices=trial_notices,
        data_events=data_events,
    )
    stopping = threading.Event()
    thread = threading.Thread(
        target=worker.run, args=(stopping, interval), name="svc-webhook-worker", daemon=True
    )
    thread.start()
    return InlineWorker(worker=worker, thread=thread, stopping=stopping)
