"""Per-minute rate limits: sliding-log arithmetic over an injected clock.

The store keeps a log of the times of the requests it admitted for each bucket. A
request at ``now`` is admitted when fewer than ``limit`` logged requests lie in the
window ``(now - window, now]``; only admitted requests are logged. A stamp therefore
leaves the window exactly ``window`` seconds after it was made.

Error bound: none beyond the clock's resolution. Unlike a fixed window (up to 2x the
limit across a boundary) or a sliding-window counter (which interpolates the previous
window and is off by a few percent), a log holds every admitted time, so no interval of
length ``window`` ever holds more than ``limit`` admitted requests, and a request is
never refused while fewer than ``limit`` are in its window. Stamps stored in whole
milliseconds move each boundary by less than 1 ms. The log per bucket holds at most
``limit`` entries inside the window, so memory is bounded by the limit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

DEFAULT_WINDOW = 60.0


@attrs.frozen(kw_only=True)
class Decision:
    """The verdict for one request.

    ``remaining``: further requests that would be admitted right now (after this one, if
    admitted). ``retry_after``: whole seconds to wait before a retry can succeed (0 when
    admitted, at least 1 when refused). ``reset_at``: the instant (same clock as ``now``)
    when the next slot frees up.
    """

    allowed: bool
    limit: int
    remaining: int
    retry_after: int
    reset_at: float


def in_window(stamp: float, now: float, window: float = DEFAULT_WINDOW) -> bool:
    """Does a request logged at ``stamp`` still count at ``now``?"""
    return now - stamp < window


def decide(
    timestamps_in_window: Sequence[float],
    now: float,
    limit: int,
    window: float = DEFAULT_WINDOW,
) -> Decision:
    """Admit or refuse a request at ``now`` given the admitted requests' times.

    Stamps that have already left the window are ignored, so the whole log may be passed.
    """
    if type(limit) is not int or limit < 1:
        raise ValueError(f"limit must be an int >= 1: {limit!r}")
    if not window > 0 or not math.isfinite(window):
        raise ValueError(f"window must be a positive number of seconds: {window!r}")
    live = sorted(stamp for stamp in timestamps_in_window if in_window(stamp, now, window))
    if len(live) < limit:
        oldest = live[0] if live else now
        return Decision(
            allowed=True,
            limit=limit,
            remaining=limit - len(live) - 1,
            retry_after=0,
            reset_at=oldest + window,
        )
    # Admission needs the count below ``limit``: the stamp that must leave is the
    # (len - limit + 1)-th oldest (the oldest, unless the limit was lowered).
    blocker = live[len(live) - limit]
    retry = max(1, math.ceil(blocker + window - now))
    # Float rounding can put the ceiling one second off either way: make it the least
    # whole number of seconds after which the blocker has left.
    if retry > 1 and not in_window(blocker, now + retry - 1, window):
        retry -= 1
    elif in_window(blocker, now + retry, window):
        retry += 1
    return Decision(
        allowed=False,
        limit=limit,
        remaining=0,
        retry_after=retry,
        reset_at=blocker + window,
    )
