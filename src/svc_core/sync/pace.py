"""Pacing a sync's calls to data.go.kr: at most ``rate`` a second, and slower after a
per-second refusal (``svc_core.sync.rtms.classify_gateway`` calls it ``pace``; the forms are
in docs/sync.md, "The per-second limit"). Pure: the caller passes the times in.
"""

from __future__ import annotations

import attrs

DEFAULT_RATE = 10.0
"""Calls a second ``svc sync rtms`` makes at most by default (``--rate``). data.go.kr
does not publish the RTMS services' per-second limit (another of its services states 30
a second; official-apis.md §2.4): 10 stays well under it and costs a 9,000-call run 15
minutes."""
PER_SECOND_PAUSE = 1.0
"""Seconds a run waits after a per-second refusal before asking again: at least the
rest of the second the limit counts."""
PER_SECOND_RETRIES = 5
"""Per-second refusals of one call after which its month fails (each one also halves
the pace): a limit that refuses every pause is not a per-second one."""
SLOWEST_INTERVAL = 2.0
"""The longest interval halving the pace comes to (one call every 2 seconds)."""


@attrs.frozen
class Pace:
    """Spacing of a run's calls: at most one every ``interval`` seconds, the last made at
    ``last`` (a monotonic time; None before the first)."""

    interval: float = attrs.field()
    last: float | None = None

    @interval.validator
    def _finite(self, _: object, value: float) -> None:
        if not 0 <= value < float("inf"):
            raise ValueError("interval must be a finite number of seconds, 0 or more")

    @classmethod
    def of_rate(cls, rate: float) -> Pace:
        """The pace of at most ``rate`` calls a second (a positive number)."""
        if not 0 < rate < float("inf"):
            raise ValueError("rate must be a positive number of calls a second")
        return cls(1.0 / rate)

    def wait(self, now: float) -> float:
        """Seconds to wait at ``now`` before the next call (0 when it may go now)."""
        if self.last is None:
            return 0.0
        return max(0.0, self.last + self.interval - now)

    def called(self, at: float) -> Pace:
        """After a call made at ``at``."""
        return Pace(self.interval, at)

    def slower(self) -> Pace:
        """After a per-second refusal: half the rate, down to ``SLOWEST_INTERVAL``."""
        interval = min(max(self.interval * 2, 0.05), SLOWEST_INTERVAL)
        return Pace(max(interval, self.interval), self.last)
