"""Offset paging of account listings (the webhook delivery log, the request log):
``limit`` and ``offset``, declared once for validation and the API reference."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from svc_core.params import Param

PAGE_DEFAULT = 50
PAGE_MAX = 200
OFFSET_MAX = 2**31 - 1


def limit_param(*, high: int, default: int, description: str) -> Param:
    """The ``limit`` of a listing that returns at most ``high`` rows a page."""
    return Param(
        name="limit",
        description=description,
        kind="integer",
        low=1,
        high=high,
        default=default,
        message=f"must be a whole number from 1 to {high}.",
        hint=f"limit defaults to {default}.",
        allow_empty=False,
    )


LIMIT = limit_param(high=PAGE_MAX, default=PAGE_DEFAULT, description="Page size.")
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
