"""``GET /api/v1/real-estate/changes``: the change records in order, a page at a time.

Its parameters are declared here (validation and the API reference), its answer is the
records (``changes.record_json``) in the layer envelope with ``next_cursor`` (the next
page; null on the last, like ``/transactions``) and ``latest_cursor`` (where to resume
later: after the last record this answer saw, also on the last page and on an empty
one, so a poller never reads a record twice nor skips one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from svc_core.envelope import Answer
from svc_core.params import Param, read_all
from svc_core.realestate import changes
from svc_core.realestate.common import Context, layer_meta
from svc_core.realestate.query import PROPERTY_TYPE, SIGUNGU_OPTIONAL, TRANSACTION_TYPE

LIMIT_DEFAULT = 100
LIMIT_MAX = 1000
DEMO_LOAD = "demo"
"""The ``load_kind`` of the synthetic demo set (its records are synthetic)."""

SINCE = Param(
    name="since",
    description="Where the feed starts: the `_meta.next_cursor` or `_meta.latest_cursor` "
    "of a previous answer (the records after it), or a time in ISO-8601 with a zone "
    "(the records written at or after it, e.g. 2026-11-01T00:00:00Z). Absent: the first "
    "record. A cursor is a position in the one order of the feed: it may be used with "
    "other filters than the answer it came from.",
    max_length=64,
    message="is not a cursor this API returned nor a time.",
    hint=changes.CURSOR_HINT,
    example="2026-11-01T00:00:00Z",
    allow_empty=False,
)
LIMIT = Param(
    name="limit",
    description=f"Change records per page, 1 to {LIMIT_MAX}.",
    kind="integer",
    low=1,
    high=LIMIT_MAX,
    default=LIMIT_DEFAULT,
    allow_empty=False,
)
CHANGES_PARAMS: tuple[Param, ...] = (
    attrs.evolve(
        SIGUNGU_OPTIONAL,
        description="Only the changes of this 5-digit district (and the codes it was "
        "stored under before a renumbering); every district when absent.",
    ),
    attrs.evolve(PROPERTY_TYPE, description="Only changes that touched this property type."),
    attrs.evolve(TRANSACTION_TYPE, description="Only changes that touched this transaction type."),
    SINCE,
    LIMIT,
)


@attrs.frozen(kw_only=True)
class ChangesQuery:
    sigungu_code: str | None
    property_type: str | None
    transaction_type: str | None
    since: changes.Since
    limit: int


def parse_changes(query: Mapping[str, str]) -> ChangesQuery:
    """A ``ChangesQuery`` from query parameters; ``InvalidParams`` (400)."""
    values = read_all(CHANGES_PARAMS, query)
    since = values["since"]
    limit = values["limit"]
    assert isinstance(limit, int)  # an integer declaration with a default
    return ChangesQuery(
        sigungu_code=_text(values["sigungu_code"]),
        property_type=_text(values["property_type"]),
        transaction_type=_text(values["transaction_type"]),
        since=changes.parse_since(since if isinstance(since, str) else None),
        limit=limit,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def page_cursors(
    records: Sequence[changes.ChangeRecord], *, more: bool, top: int, since: changes.Since
) -> tuple[str | None, str | None]:
    """(next_cursor, latest_cursor) of a page of ``records`` read when the latest id was
    ``top``: a page that ``more`` records follow continues after its last record; the
    last page has seen every record up to ``top`` (none after it was committed yet: ids
    are committed in order)."""
    if more and records:
        after = records[-1].id
        return changes.encode_cursor(after), changes.encode_cursor(after)
    if since.after_id is not None:
        top = max(top, since.after_id)
    return None, changes.encode_cursor(top)


def changes_answer(
    records: Sequence[changes.ChangeRecord],
    query: ChangesQuery,
    context: Context,
    *,
    base: str,
    next_cursor: str | None,
    latest_cursor: str | None,
) -> Answer:
    """The page as an answer: the records with their links, in feed order."""
    echo = {
        "sigungu_code": query.sigungu_code,
        "property_type": query.property_type,
        "transaction_type": query.transaction_type,
        "limit": query.limit,
    }
    meta = layer_meta(
        context,
        count=len(records),
        source_mix={},
        synthetic=any(r.load_kind == DEMO_LOAD for r in records),
        property_type=query.property_type,
        transaction_type=query.transaction_type,
        query=echo,
        extra={
            "next_cursor": next_cursor,
            "latest_cursor": latest_cursor,
            "data_as_of": context.data_as_of,
            "data_version": context.data_version,
        },
    )
    return Answer(data=[changes.record_json(r, base) for r in records], meta=meta)
