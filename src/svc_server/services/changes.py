"""What changed in the data: ``GET /api/v1/real-estate/changes``, a page of change
records at a time (``store.change_records``; the records are written by the one commit
of public data, ``ingest.writer``).

A district takes its renumbering aliases, as every real-estate query does. The page is
read with the latest id at the time (``change_page``): a last page has seen every record
up to it, so its ``latest_cursor`` resumes exactly after what this answer could see.
"""

from __future__ import annotations

from svc_core.envelope import Answer
from svc_core.realestate import change_feed
from svc_core.realestate.change_feed import ChangesQuery
from svc_core.realestate.common import codes_of
from svc_server.services.realestate import Call, answer_context
from svc_server.store import Store


def changes(
    store: Store,
    query: ChangesQuery,
    call: Call,
    *,
    base: str,
) -> Answer:
    """One page of the feed (``base``: the public URL the records' links start with)."""
    state = call.versions.state(store)
    found, top = store.realestate.change_page(
        after_id=query.since.after_id,
        at=query.since.at,
        codes=codes_of(query.sigungu_code) if query.sigungu_code else [],
        property_type=query.property_type,
        transaction_type=query.transaction_type,
        limit=query.limit + 1,
    )
    page, more = found[: query.limit], len(found) > query.limit
    next_cursor, latest_cursor = change_feed.page_cursors(
        page, more=more, top=top, since=query.since
    )
    return change_feed.changes_answer(
        page,
        query,
        answer_context(state, call, code=query.sigungu_code),
        base=base,
        next_cursor=next_cursor,
        latest_cursor=latest_cursor,
    )
