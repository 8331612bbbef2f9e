"""Entity tags of data answers and ``If-None-Match`` (RFC 9110 sections 8.8.3, 13.1.2).

A data answer's body holds a few per-call ``_meta`` fields (``request_id``,
``generated_at``, ``rate_limit``), so two answers of one query are never byte-identical
and their tag is weak (``W/"..."``): it says "the same data in the same representation".
It is a digest of what every call of that answer shares (``entity_tag``): the encoded
body around the per-call fields and the headers that describe it (content type, the
envelope's ``X-Svc-*`` headers), never the request id or the clock. A gzip-coded answer
is another representation and gets its own tag (``gzip_tag``: the same digest with
``-gzip``), so a tag validates only the coding it was sent with.

``If-None-Match`` on GET and HEAD uses weak comparison: a listed tag matches when its
opaque part equals the answer's, ``W/`` or not; ``*`` matches any answer.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable

from werkzeug.wrappers import Response

_TAG = re.compile(r'[\s,]*(?:W/)?"([^"]*)"\s*(?:,|$)')
_REST = re.compile(r"[\s,]*$")
_DIGEST_CHARS = 32
"""128 bits of SHA-256: enough that two different answers never share a tag."""


def entity_tag(pieces: Iterable[bytes], version: int | None = None) -> str:
    """The weak tag of a representation made of ``pieces`` (in order; each piece's
    length is hashed too, so moving bytes between pieces changes the tag). A data
    answer's tag starts with its ``_meta.data_version`` (``W/"v12-..."``), so it is
    derived from it: it changes when the data behind the answer does."""
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(len(piece).to_bytes(8, "big"))
        digest.update(piece)
    prefix = "" if version is None else f"v{version}-"
    return f'W/"{prefix}{digest.hexdigest()[:_DIGEST_CHARS]}"'


def gzip_tag(tag: str) -> str:
    """The tag of the gzip-coded form of the representation tagged ``tag``."""
    return tag[:-1] + '-gzip"'


@functools.lru_cache(maxsize=1024)
def listed(if_none_match: str) -> frozenset[str] | None:
    """The opaque tags of an ``If-None-Match`` value (weak or strong alike); None for
    ``*``; an empty set for a value that is not a list of tags (it matches nothing)."""
    text = if_none_match.strip()
    if text == "*":
        return None
    tags: set[str] = set()
    at = 0
    while not _REST.match(text, at):  # linear: no copy of the rest per tag
        found = _TAG.match(text, at)
        if found is None or found.end() == at:
            return frozenset()
        tags.add(found.group(1))
        at = found.end()
    return frozenset(tags)


def none_match(if_none_match: str | None, tag: str) -> bool:
    """True when ``If-None-Match`` (the header's text, None when absent) holds ``tag``
    by weak comparison, or is ``*``: the client's copy is current."""
    if if_none_match is None:
        return False
    tags = listed(if_none_match)
    return tags is None or opaque(tag) in tags


def opaque(tag: str) -> str:
    """``W/"abc"`` and ``"abc"`` -> ``abc``."""
    return tag.removeprefix("W/")[1:-1]


KEPT = ("Cache-Control", "Vary", "Content-Location", "Expires")
"""The headers a 304 repeats from the 200 it stands for (RFC 9110 section 15.4.5)."""


def not_modified(tag: str, headers: Iterable[tuple[str, str]]) -> Response:
    """A 304 for the answer tagged ``tag`` whose 200 would carry ``headers``: no body,
    the tag and the caching headers of that 200."""
    out = Response(status=304)
    out.headers["ETag"] = tag
    for name, value in headers:
        if name in KEPT:
            out.headers.add(name, value)
    return out
