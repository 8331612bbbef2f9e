"""Instants: the one place a time becomes text or Unix seconds, and text becomes a time.

Inside svc a time is an aware UTC ``datetime``; stores keep whole Unix seconds and the
clock gives float seconds, so both convert here (``utc``). Every timestamp served is
ISO-8601 UTC with ``Z`` in whole seconds (``2026-05-01T00:00:00Z``): ``iso`` writes it,
``parse_iso`` reads it back (and any ISO-8601 text with a zone).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

Instant = datetime | int | float
"""An aware ``datetime`` or Unix seconds (floored to whole seconds)."""

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc(at: Instant, name: str = "time") -> datetime:
    """``at`` as an aware UTC datetime; Unix seconds are floored to whole seconds.

    Raises ``ValueError`` for a naive datetime, a boolean, a non-finite or out-of-range
    number.
    """
    if isinstance(at, datetime):
        if at.tzinfo is None or at.utcoffset() is None:
            raise ValueError(f"{name} must be an aware datetime (UTC), not a naive one")
        try:
            return at.astimezone(UTC)
        except OverflowError as exc:  # 0001-01-01 with a positive offset, say
            raise ValueError(f"{name} is out of range: {at!r}") from exc
    if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
        raise ValueError(f"{name} must be an aware datetime or finite Unix seconds")
    try:
        return datetime.fromtimestamp(math.floor(at), UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ValueError(f"{name} is out of range: {at!r}") from exc


def utc_exact(seconds: float, name: str = "time") -> datetime:
    """Unix seconds as an aware UTC datetime keeping the fraction of a second: for a
    clock reading that a duration is measured from (a trial's days left round up)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError(f"{name} must be finite Unix seconds")
    utc(seconds, name)  # the same type, finiteness and range checks
    return datetime.fromtimestamp(seconds, UTC)


def utc_or_none(at: Instant | None, name: str = "time") -> datetime | None:
    """``utc`` that lets None (a time that has not happened) through."""
    return None if at is None else utc(at, name)


def iso(at: Instant, name: str = "time") -> str:
    """``at`` as ISO-8601 UTC with ``Z``, in whole seconds."""
    return utc(at, name).strftime(ISO_FORMAT)


def iso_or_none(at: Instant | None, name: str = "time") -> str | None:
    """``iso`` that lets None through."""
    return None if at is None else iso(at, name)


def unix(at: Instant, name: str = "time") -> int:
    """``at`` as whole Unix seconds (floored)."""
    return math.floor(utc(at, name).timestamp())


class MissingZone(ValueError):
    """ISO-8601 text without ``Z`` or an offset: which instant it means is unknown."""


def parse_iso(text: str, name: str = "time") -> datetime:
    """ISO-8601 text with a zone (``Z`` or ``+09:00``) as an aware UTC datetime.

    Raises ``ValueError`` for text that is not ISO-8601, ``MissingZone`` (a
    ``ValueError``) for text without a zone.
    """
    parsed = datetime.fromisoformat(text.strip())
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise MissingZone(f"{name} needs a time zone (Z or +09:00): {text[:64]!r}")
    return utc(parsed, name)
