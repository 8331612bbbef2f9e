"""Calls to an official data API (MOLIT RTMS, R-ONE) under a run's budget: the one
retry loop both syncs use.

Each call is counted against the budget before it is made (no call passes it), retried
on passing trouble with doubling back-off, and the run stops once
``CONNECT_FAILURE_LIMIT`` calls in a row could not connect (``svc_core.sync.rtms.Reach``).
An answer ``delivery.fetch`` will not read (a redirect, too large a body) fails the page
(``Failed``) without a retry, or with one when asking again may help (a corrupt
compressed body). What an answer means is the caller's ``read``: it returns the page, or
raises ``Retry`` (worth asking again), ``Failed`` (not worth it), ``Stop`` (the run must
end: ``limit``) or ``UpstreamKeyRefused``. Anything else a read raises on a hostile
answer (a ``RecursionError`` or ``ValueError`` from a reader that did not foresee it)
fails the page too, with its reason: one answer never ends the run.

A read may also raise ``Pause`` (a per-second refusal: the call is made again after
``pause`` seconds, the pace halved, no retry spent, ``PER_SECOND_RETRIES`` in a row at
most) and ``Suspended`` (the key is temporarily disabled: retried with the back-off, then
the run stops). With a ``pace``, calls are spaced by it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import attrs
import httpx

from svc_core.errors import SvcError
from svc_core.redact import redact_url
from svc_core.sync.pace import PER_SECOND_PAUSE, PER_SECOND_RETRIES, Pace
from svc_core.sync.rtms import Budget, Reach
from svc_server.delivery.fetch import Unusable
from svc_server.delivery.rtms import could_not_connect

A = TypeVar("A")
P = TypeVar("P")


class Stop(Exception):
    """The run must stop: ``reason`` is ``limit``, ``budget``, ``unreachable`` or
    ``suspended``."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


class Failed(Exception):
    """A page could not be read (after every retry, or one not worth retrying)."""


class Retry(Exception):
    """An answer worth asking again for (5xx, malformed, truncated, passing trouble)."""


class Pause(Exception):
    """A per-second refusal: wait ``pause`` seconds, call more slowly, ask again. It
    spends no retry; ``PER_SECOND_RETRIES`` of them in a row fail the page."""


class Suspended(Retry):
    """The key is temporarily disabled: retried with the back-off like any ``Retry``,
    and once the retries are spent the run stops (``Stop("suspended")``) instead of
    spending one call on every month left."""


@attrs.define
class Calls:
    """One run's calls to one API: its budget, retries, back-off, reachability and, when
    ``pace`` is given, the spacing of its calls (``svc_core.sync.pace.Pace``, read against
    ``clock``, a monotonic one)."""

    budget: Budget
    retries: int
    backoff: float
    sleep: Callable[[float], None]
    base_url: str
    made: int = 0
    reach: Reach = attrs.field(factory=Reach)
    pace: Pace | None = None
    clock: Callable[[], float] = time.monotonic
    pause: float = PER_SECOND_PAUSE

    def call(self, send: Callable[[], A], read: Callable[[A], P], *, label: str = "") -> P:
        """``read(send())``, retried on transport trouble and ``Retry``, paused and asked
        again on ``Pause``; ``label`` starts the reason a failure gives (``page 3: ``)."""
        problem = ""
        attempt = paused = 0
        wait = 0.0
        while True:
            if not self.budget.allows(1):
                raise Stop("budget", f"the budget of {self.budget.limit} calls is used up")
            if wait:
                self.sleep(wait)
            self._paced()
            self.budget = self.budget.spend(1)
            self.made += 1
            try:
                answer = send()
            except httpx.TransportError as exc:
                problem = f"{label}{type(exc).__name__}: {exc}".rstrip(": ")
                self.reach = self.reach.after(connected=not could_not_connect(exc))
                if self.reach.unreachable:
                    raise Stop("unreachable", f"cannot reach {redact_url(self.base_url)}") from None
            except Unusable as exc:
                self.reach = self.reach.after(connected=True)
                if not exc.retry:
                    raise Failed(f"{label}{exc.message} (not retried)") from None
                problem = f"{label}{exc.message}"
            else:
                self.reach = self.reach.after(connected=True)
                try:
                    return read(answer)
                except Pause as exc:
                    paused += 1
                    if paused > PER_SECOND_RETRIES:
                        raise Failed(
                            f"{label}{exc} ({paused} per-second refusals in a row; not retried)"
                        ) from None
                    if self.pace is not None:
                        self.pace = self.pace.slower()
                    wait = self.pause
                    continue
                except Suspended as exc:
                    if attempt >= self.retries:
                        raise Stop("suspended", str(exc)) from None
                    problem = str(exc)
                except Retry as exc:
                    problem = str(exc)
                except (Stop, Failed, SvcError):
                    raise
                except (RecursionError, ValueError, TypeError, LookupError) as exc:
                    raise Failed(f"{label}{_unreadable(exc)} (not retried)") from None
            paused = 0
            attempt += 1
            if attempt > self.retries:
                raise Failed(f"{problem} (after {attempt} tries)")
            wait = self.backoff * 2 ** (attempt - 1)

    def _paced(self) -> None:
        """Wait what the pace asks before a call, and note the call."""
        if self.pace is None:
            return
        wait = self.pace.wait(self.clock())
        if wait > 0:
            self.sleep(wait)
        self.pace = self.pace.called(self.clock())

    def cannot_finish(self, needed: int, what: str) -> Stop | None:
        """A ``budget`` stop when ``needed`` more calls do not fit what is left."""
        if needed <= self.budget.left:
            return None
        return Stop(
            "budget",
            f"the budget of {self.budget.limit} calls cannot finish {what} "
            f"({needed + 1} pages, {self.budget.left} calls left)",
        )


def _unreadable(exc: Exception) -> str:
    """Why an answer a reader choked on was not read, in words."""
    if isinstance(exc, RecursionError):
        return "the answer is nested too deeply to read"
    return f"the answer could not be read ({type(exc).__name__}: {str(exc)[:200]})"
