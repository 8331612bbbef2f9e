"""The query string read strictly: UTF-8 after percent-decoding, or a 400 that says so.

The dispatcher, the warm lane and the wire server (which sees the raw request line
first) refuse a query the same way.
"""

from __future__ import annotations

import functools
from urllib.parse import parse_qsl

from svc_core.errors import InvalidParams

PERCENT_ENCODE = "Percent-encode parameters as UTF-8."


@functools.lru_cache(maxsize=1024)
def parse_query(raw: bytes) -> tuple[tuple[str, str], ...]:
    """Decode a query string strictly: bytes or percent-escapes that are not UTF-8 are a 400.

    Remembered per distinct query string (clients repeat theirs; a refusal is raised
    again each time, never remembered)."""
    return tuple(_parse_query(raw))


def _parse_query(raw: bytes) -> list[tuple[str, str]]:
    """Raw UTF-8 typed into a URL (``?q=강남`` as a browser's address bar or curl sends
    it, unencoded) is read as the same text its percent-encoded form is."""
    try:
        text = raw.decode("utf-8")
        return parse_qsl(
            text, keep_blank_values=True, strict_parsing=False, encoding="utf-8", errors="strict"
        )
    except UnicodeDecodeError:
        raise InvalidParams(
            "The query string is not valid UTF-8 after percent-decoding.",
            hint=PERCENT_ENCODE,
        ) from None
