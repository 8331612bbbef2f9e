"""What a load changed: the change records of ``GET /changes`` and ``data.updated``.

A load that changes what a (source kind, district, month) holds writes one change
record (issue 31). What it holds is its records, kept and excluded, with every column;
the store digests them in key order (the *content digest*), and a load whose digests
before and after are equal changed nothing and writes nothing (``diff``). The counts
are of kept deals as the load wrote them: ``added`` (new), ``retracted`` (cancelled, or
gone from a month read whole) and ``changed`` (a record stored before a migration that
got the columns a new read found); a change of the excluded records alone moves the
digest with all three counts 0.

The feed is ordered by record id; its cursor (``encode_cursor``) is the id a page ended
at, valid for any filter (a position in the one order, not a selection). ``since`` also
takes a time: the records written at or after it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

import attrs

from svc_core import instants
from svc_core.errors import InvalidParams
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.freshness import load_kinds
from svc_core.regions import region_name

Moved = tuple[str, str, str, str]
"""(what, property type, transaction type, source kind): a kept deal ``added``,
``retracted`` or ``changed``, or an ``excluded`` record the load wrote."""
ContentKey = tuple[str, str, str]
"""(source kind, sigungu_code, month ``YYYY-MM``)."""
MOVES = ("added", "retracted", "changed", "excluded")
EMPTY_DIGEST = hashlib.sha256(b"").hexdigest()
"""The content digest of a month that holds nothing."""

CURSOR_PATTERN = "[A-Za-z0-9_-]{1,64}"
CURSOR_HINT = (
    "Pass the _meta.next_cursor (or latest_cursor) of a previous answer unchanged, or a "
    "time such as 2026-11-01T00:00:00Z."
)
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T.*", re.ASCII)
_MAX_ID = 2**62


def source_kind(property_type: str, transaction_type: str) -> str:
    """The source kind records of these types are loaded under (a sync kind such as
    ``commercial``, or ``other``): the first of ``freshness.load_kinds``."""
    return load_kinds(property_type, transaction_type)[0]


Types = tuple[tuple[str, ...], tuple[str, ...]]
"""(property types, transaction types), each in ``PROPERTY_TYPES`` and
``TRANSACTION_TYPES`` order: the records a read of a district's months keeps."""
ALL_TYPES: Types = (PROPERTY_TYPES, TRANSACTION_TYPES)


def kind_types(pairs: Iterable[tuple[str, str]]) -> Types:
    """The types a read must keep to hold every record of the source kinds of these
    (property type, transaction type) pairs: the types of every pair of those kinds.

    A load reads back only what it can have changed: loading officetel leases need not
    read a district's commercial sales (at 5,000,000 deals, reading every kind made a
    national load's later kinds twice as slow as its first). A kind is read whole, never
    a part of it, so its content digest is the one the previous load recorded."""
    kinds = {source_kind(p, t) for p, t in pairs}
    covered = [
        (p, t) for p in PROPERTY_TYPES for t in TRANSACTION_TYPES if source_kind(p, t) in kinds
    ]
    return (
        tuple(p for p in PROPERTY_TYPES if any(p == q for q, _ in covered)),
        tuple(t for t in TRANSACTION_TYPES if any(t == u for _, u in covered)),
    )


@attrs.frozen(kw_only=True)
class Diff:
    """How what a month holds moved: the counts of kept deals, the types of the records
    that moved in ``PROPERTY_TYPES``/``TRANSACTION_TYPES`` order, and the digests."""

    added: int
    retracted: int
    changed: int
    property_types: tuple[str, ...]
    transaction_types: tuple[str, ...]
    digest_before: str
    digest_after: str


def diff(digest_before: str, digest_after: str, moved: Iterable[Moved]) -> Diff | None:
    """The change of a (source kind, district, month) whose content digest went from
    ``digest_before`` to ``digest_after`` and whose records ``moved`` (as the load
    wrote them); None when the digests are equal: the month holds what it held."""
    if digest_before == digest_after:
        return None
    counts = {what: 0 for what in MOVES}
    ptypes: set[str] = set()
    ttypes: set[str] = set()
    for what, ptype, ttype, _ in moved:
        if what not in counts:
            raise ValueError(f"not a move: {what!r}")
        counts[what] += 1
        ptypes.add(ptype)
        ttypes.add(ttype)
    return Diff(
        added=counts["added"],
        retracted=counts["retracted"],
        changed=counts["changed"],
        property_types=_ordered(ptypes, PROPERTY_TYPES),
        transaction_types=_ordered(ttypes, TRANSACTION_TYPES),
        digest_before=digest_before,
        digest_after=digest_after,
    )


def _ordered(found: Iterable[str], order: tuple[str, ...]) -> tuple[str, ...]:
    wanted = set(found)
    return (*(t for t in order if t in wanted), *sorted(wanted - set(order)))


@attrs.frozen(kw_only=True)
class ChangeRecord:
    """One stored change (``change_records``)."""

    id: int
    changed_at: int
    load_id: str
    load_kind: str
    source_kind: str
    sigungu_code: str
    month: str
    property_types: tuple[str, ...]
    transaction_types: tuple[str, ...]
    added: int
    retracted: int
    changed: int
    digest_before: str
    digest_after: str
    complete: bool


def pulse_url(record: ChangeRecord, base: str) -> str:
    """The pulse answer whose rows the change moved: the district's month, narrowed to
    the property and transaction type when the change touched only one."""
    pairs = [("sigungu_code", record.sigungu_code), ("period", record.month)]
    if len(record.property_types) == 1:
        pairs.append(("property_type", record.property_types[0]))
    if len(record.transaction_types) == 1:
        pairs.append(("transaction_type", record.transaction_types[0]))
    return f"{base}/api/v1/real-estate/pulse?{urlencode(pairs)}"


def transactions_url(record: ChangeRecord, base: str) -> str:
    """The month's deals, excluded ones included (where a retraction shows)."""
    pairs = [
        ("sigungu_code", record.sigungu_code),
        ("period", record.month),
        ("include_excluded", "true"),
    ]
    return f"{base}/api/v1/real-estate/transactions?{urlencode(pairs)}"


def record_json(record: ChangeRecord, base: str) -> dict[str, Any]:
    """A change as the API and ``data.updated`` show it (``base``: the public URL)."""
    return {
        "id": record.id,
        "changed_at": instants.iso(record.changed_at),
        "source": record.source_kind,
        "load": {"id": record.load_id, "kind": record.load_kind},
        "sigungu_code": record.sigungu_code,
        "sigungu": region_name(record.sigungu_code),
        "month": record.month,
        "property_types": list(record.property_types),
        "transaction_types": list(record.transaction_types),
        "added": record.added,
        "retracted": record.retracted,
        "changed": record.changed,
        "digest_before": record.digest_before,
        "digest_after": record.digest_after,
        "complete": record.complete,
        "pulse_url": pulse_url(record, base),
        "transactions_url": transactions_url(record, base),
    }


# the feed's position ---------------------------------------------------------------------


def encode_cursor(after_id: int) -> str:
    """The opaque cursor of the position after change ``after_id``."""
    if type(after_id) is not int or not 0 <= after_id < _MAX_ID:
        raise ValueError(f"not a change id: {after_id!r}")
    body = json.dumps(["changes", after_id], separators=(",", ":")).encode("ascii")
    return base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")


def _refuse(why: str) -> InvalidParams:
    return InvalidParams(f"Query parameter 'since' {why}", hint=CURSOR_HINT)


def decode_cursor(text: str) -> int:
    """The change id a cursor holds; ``InvalidParams`` (400) for anything else."""
    if re.fullmatch(CURSOR_PATTERN, text, re.ASCII) is None:
        raise _refuse("is not a cursor this API returned nor a time.")
    try:
        value = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        raise _refuse("is not a cursor this API returned nor a time.") from None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or value[0] != "changes"
        or type(value[1]) is not int
        or not 0 <= value[1] < _MAX_ID
    ):
        raise _refuse("is not a cursor this API returned nor a time.")
    return int(value[1])


@attrs.frozen(kw_only=True)
class Since:
    """Where the feed starts: after a change id, at a time (unix seconds), or the
    beginning (both None)."""

    after_id: int | None = None
    at: int | None = None


def parse_since(text: str | None) -> Since:
    """``since``: a cursor of a previous answer or an ISO-8601 time with a zone."""
    if text is None or text == "":
        return Since()
    if _TIME.fullmatch(text):
        try:
            return Since(at=instants.unix(instants.parse_iso(text, "since")))
        except ValueError:
            raise _refuse(
                "is not a time: give a zone, e.g. 2026-11-01T00:00:00Z or +09:00."
            ) from None
    return Since(after_id=decode_cursor(text))


def matches(
    record: ChangeRecord,
    *,
    sigungu_codes: Iterable[str] = (),
    property_types: Iterable[str] = (),
    transaction_types: Iterable[str] = (),
) -> bool:
    """Whether a filter keeps ``record`` (an empty list keeps any value): its district is
    one of ``sigungu_codes`` and it touched one of the types of each list."""
    codes, ptypes, ttypes = set(sigungu_codes), set(property_types), set(transaction_types)
    return (
        (not codes or record.sigungu_code in codes)
        and (not ptypes or bool(ptypes & set(record.property_types)))
        and (not ttypes or bool(ttypes & set(record.transaction_types)))
    )
