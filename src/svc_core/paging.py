"""Offset paging of account listings (the webhook delivery log): ``limit`` and ``offset``,
declared once for validation and the API reference."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from svc_core.params import Param

PAGE_DEFAULT = 50
PAGE_MAX = 200
OFFSET_MAX = 2**31 - 1

LIMIT = Param(
    name="limit",
    description="Page size.",
    kind="integer",
    low=1,
    high=PAGE_MAX,
    default=PAGE_DEFAULT,
    message=f"must be a whole number from 1 to {PAGE_MAX}.",
    hint=f"limit defaults to {PAGE_DEFAULT}.",
    allow_empty=False,
)
OFFSET = Param(
    name="offset",
    description="Rows to skip.",
    kind="integer",
    low=0,
    high=OFFSET_MAX,
    default=0,
    message=f"must be a whole number from 0 to {OFFSET_MAX}.",
    hint="offset defaults to 0.",
    allow_empty=False,
)
PAGE_PARAMS: tuple[Param, ...] = (LIMIT, OFFSET)


@attrs.frozen(kw_only=True)
class Page:
    """Which slice of a listing to return."""

    limit: int = PAGE_DEFAULT
    offset: int = 0


def read_page(query: Mapping[str, str]) -> Page:
    """``limit`` (1 to 200, default 50) and ``offset`` (0 or more, default 0)."""
    return Page(limit=int(LIMIT.read(query) or 0), offset=int(OFFSET.read(query) or 0))
