"""Opaque paging cursors of the transactions listing.

A cursor is the base64url text (no padding) of compact UTF-8 JSON ``[date, key, flag, query]``:
the sort key of the last record a page returned (contract date ``YYYY-MM-DD``, natural
key, 0 for a kept and 1 for an excluded record) and the fingerprint of the selection it
pages through. ``decode`` validates every part, so a garbled, forged or truncated cursor
is a 400 ``INVALID_PARAMS`` and never reaches the store, and a cursor of another query
(other filters, or a rolling window that moved since) is refused the same way rather
than paging through a selection it does not belong to.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
import re
from collections.abc import Mapping

from svc_core.errors import InvalidParams

CURSOR_MAX_LENGTH = 1200
"""Longest cursor accepted: room for any natural key of 200 characters (a real one is
about 200 characters long)."""
KEY_MAX_LENGTH = 200
CURSOR_PATTERN = "[A-Za-z0-9_-]+"
CURSOR_HINT = "Pass the _meta.next_cursor of the previous page unchanged, or leave cursor out."
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_FINGERPRINT = re.compile(r"[0-9a-f]{16}", re.ASCII)
_TEXT = re.compile(CURSOR_PATTERN, re.ASCII)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""What no stored natural key holds (``svc_core.models.Transaction``)."""

SortKey = tuple[str, str, int]
"""(contract date, natural key, 0 kept / 1 excluded): where a page ended."""


def fingerprint(selection: Mapping[str, object]) -> str:
    """16 hex digits naming a selection (its filters and the months they resolve to)."""
    text = json.dumps(dict(selection), sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def valid_key(key: object) -> bool:
    """True for a sort key ``decode`` accepts back."""
    if not isinstance(key, tuple) or len(key) != 3:
        return False
    date, natural_key, flag = key
    return (
        isinstance(date, str)
        and _valid_date(date)
        and isinstance(natural_key, str)
        and 0 < len(natural_key) <= KEY_MAX_LENGTH
        and _CONTROL.search(natural_key) is None
        and type(flag) is int
        and flag in (0, 1)
    )


def _valid_date(text: str) -> bool:
    if _DATE.fullmatch(text) is None:
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def encode(key: SortKey, selection: str) -> str:
    """The cursor of a page that ended at ``key`` in the selection ``selection`` (a
    ``fingerprint``)."""
    if not valid_key(key) or _FINGERPRINT.fullmatch(selection) is None:
        raise ValueError(f"not a listing position: {key!r} in {selection!r}")
    body = json.dumps([*key, selection], ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(body.encode("utf-8")).decode("ascii").rstrip("=")


def _refuse(why: str) -> InvalidParams:
    return InvalidParams(f"Query parameter 'cursor' {why}", hint=CURSOR_HINT)


def decode(text: str, selection: str) -> SortKey:
    """The sort key a cursor holds; ``InvalidParams`` (400) when it is not a cursor this
    listing made, or was made for another selection than ``selection``."""
    if not 0 < len(text) <= CURSOR_MAX_LENGTH or _TEXT.fullmatch(text) is None:
        raise _refuse("is not a cursor this API returned.")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, RecursionError):
        raise _refuse("is not a cursor this API returned.") from None
    if not isinstance(value, list) or len(value) != 4:
        raise _refuse("is not a cursor this API returned.")
    date, natural_key, flag, made_for = value
    key = (date, natural_key, flag)
    if not valid_key(key) or not isinstance(made_for, str):
        raise _refuse("is not a cursor this API returned.")
    if made_for != selection:
        raise _refuse(
            "belongs to another query (other filters, or a rolling period that has moved "
            "since); start again without cursor."
        )
    return date, natural_key, flag
