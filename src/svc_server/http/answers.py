"""Encoded answers kept per process: the bytes and headers of a data answer built once
per (route, query, format, kind of caller, UTC day) and *data version*.

An answer's body is the same for every call of one query on the same data except for
the few ``_meta`` fields that belong to the call (``svc_core.envelope.PER_CALL_FIELDS``:
``generated_at``, ``rate_limit``, ``request_id``). ``render_json`` encodes the body once
with a unique placeholder in each of those fields and keeps the bytes between them;
``Rendered.response`` joins the pieces around the call's own values, so a cached call
encodes three small values instead of the whole answer and builds no rows, envelope or
headers. Headers that carry a per-call field (CSV's ``X-Svc-Generated-At``) are filled
the same way.

``Rendered.respond`` adds what the request's headers ask for: a weak ``ETag`` (a digest
of the constant pieces and headers, ``http.conditional``; the per-call fields are not in
it), a 304 when ``If-None-Match`` holds it, and the gzip form when ``Accept-Encoding``
allows it: the constant parts compressed once and kept with the answer, each call's
values spliced in uncompressed (``http.gzipped``). A call without either header takes
the same path as before they existed.

The data version (``services.versioned``: the loads logged in ``ingest_log``, read from
the database at most once per ``VERSION_TTL`` second) is part of every key,
so a load committed by any process is served within that bound; when it changes, the
entries of older versions are dropped. The caller's plan and authentication method are
in the key (the tier gate and ``_meta.tier`` depend on them), and so is the UTC day, so
an answer that depends on the date is never served across midnight.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
from werkzeug.datastructures import Headers
from werkzeug.wrappers import Response

from svc_core.envelope import PER_CALL_FIELDS
from svc_core.instants import iso
from svc_server.http.conditional import entity_tag, gzip_tag, none_match, not_modified
from svc_server.http.gzipped import deflate_parts, splice
from svc_server.http.negotiation import content_coding
from svc_server.http.responses import dumps

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

MAX_BYTES = 32 * 1024 * 1024
"""What one process keeps at most (unencoded bodies; an answer's gzip form, made when
a call first asks for it, rides along uncounted and is a fraction of its size); the
least recently used go first."""
MAX_ENTRY_BYTES = 2 * 1024 * 1024
"""A larger answer is not kept (it would push out many small ones)."""

_TOKEN = secrets.token_hex(8)
Reply = tuple[int, list[tuple[str, str]], bytes]
"""A status, header pairs and a body: an answer as a server sends it."""


def _checked(name: str, value: object) -> tuple[str, str]:
    """werkzeug's rule for a header value: its text, refused with a line break in it."""
    text = value if type(value) is str else str(value)
    if "\n" in text or "\r" in text:
        raise ValueError(f"Header {name!r} must not contain newline characters.")
    return name, text


def _all_checked(items: Iterable[tuple[str, Any]]) -> tuple[tuple[str, str], ...]:
    return tuple(_checked(name, value) for name, value in items)


@attrs.frozen(kw_only=True)
class _Gzipped:
    """A ``Rendered`` answer's gzip form: each constant part compressed once
    (``gzipped.deflate_parts``), the whole body when it has no per-call part, and the
    headers of the coded answer."""

    segments: tuple[bytes, ...]
    whole: bytes | None
    headers: tuple[tuple[str, str], ...]


@attrs.frozen(kw_only=True)
class Rendered:
    """An answer encoded once: body pieces around the per-call ``slots`` (``_meta``
    fields, in body order), constant headers, and headers filled from a per-call field.

    ``etag`` is the weak tag of what every call of the answer shares (``conditional``);
    the gzip form is made on the first call that asks for it and kept with the answer."""

    parts: tuple[bytes, ...]
    slots: tuple[str, ...]
    headers: tuple[tuple[str, str], ...] = attrs.field(converter=_all_checked)
    """Checked once here, so every call's copy is taken as it is."""
    header_slots: tuple[tuple[str, str], ...] = ()
    version: int | None = None
    """The answer's ``_meta.data_version``: the tag starts with it (``conditional``)."""
    size: int = attrs.field(init=False)
    """The length of the constant parts (every call's body is a little longer)."""
    etag: str = attrs.field(init=False)
    _sent: tuple[tuple[str, str], ...] = attrs.field(init=False, repr=False)
    _gzipped: list[_Gzipped] = attrs.field(init=False, factory=list, eq=False, repr=False)

    @size.default
    def _size(self) -> int:
        return sum(len(p) for p in self.parts)

    @etag.default
    def _etag(self) -> str:
        described = (f"{name}: {value}".encode() for name, value in self.headers)
        return entity_tag((*described, ",".join(self.slots).encode(), *self.parts), self.version)

    @_sent.default
    def _headers_sent(self) -> tuple[tuple[str, str], ...]:
        return (*self.headers, ("ETag", self.etag))

    @property
    def gzip_etag(self) -> str:
        return gzip_tag(self.etag)

    def respond(
        self,
        environ: Mapping[str, Any],
        values: Mapping[str, Any],
        header_value: Callable[[Any], str] = str,
    ) -> Response:
        """The response for one call of the request ``environ``: gzip-coded when its
        ``Accept-Encoding`` asks for it (never for HEAD, nor for a body under
        ``GZIP_MIN_BYTES`` unless identity is refused), a 304 when its
        ``If-None-Match`` holds the tag of the form it would get."""
        gzipped, unchanged = self._coding(environ)
        if unchanged:
            return not_modified(self.gzip_etag if gzipped else self.etag, self.headers)
        return AnswerResponse(*self._reply(gzipped, values, header_value)[1:])

    def reply(
        self,
        environ: Mapping[str, Any],
        values: Mapping[str, Any],
        header_value: Callable[[Any], str] = str,
    ) -> Reply | None:
        """``respond``'s answer as a status, header pairs and the body, for a server that
        sends those as they are (``app.warm``); None when it is a 304."""
        gzipped, unchanged = self._coding(environ)
        return None if unchanged else self._reply(gzipped, values, header_value)

    def _coding(self, environ: Mapping[str, Any]) -> tuple[bool, bool]:
        """Whether the answer to ``environ`` is gzip-coded, and whether it is a 304."""
        accept_encoding = environ.get("HTTP_ACCEPT_ENCODING")
        if_none_match = environ.get("HTTP_IF_NONE_MATCH")
        if accept_encoding is None and if_none_match is None:  # the common call
            return False, False
        coding = content_coding(accept_encoding)
        gzipped = coding.uses_gzip(self.size) and environ.get("REQUEST_METHOD") != "HEAD"
        return gzipped, none_match(if_none_match, self.gzip_etag if gzipped else self.etag)

    def _reply(
        self, gzipped: bool, values: Mapping[str, Any], header_value: Callable[[Any], str]
    ) -> Reply:
        """The 200 for one call: the unencoded body joined around the call's ``values``,
        or the kept compressed parts spliced around them (``gzipped.splice``), nothing
        compressed again; the constant headers, the per-call ones and the length."""
        parts = self.parts
        if gzipped:
            form = self._gzip_form()
            constant = form.headers
            if form.whole is not None:
                body = form.whole
            else:
                filled = [dumps(values[slot]) for slot in self.slots]
                body = splice(form.segments, parts, filled)
        elif self.slots:
            constant = self._sent
            pieces = [parts[0]]
            for slot, part in zip(self.slots, parts[1:], strict=True):
                pieces.append(dumps(values[slot]))
                pieces.append(part)
            body = b"".join(pieces)
        else:
            constant = self._sent
            body = parts[0]
        headers = list(constant)  # checked when this answer was rendered
        for name, field in self.header_slots:
            lower = name.lower()
            headers = [item for item in headers if item[0].lower() != lower]
            headers.append(_checked(name, header_value(values[field])))
        headers.append(("Content-Length", str(len(body))))
        return 200, headers, body

    def _gzip_form(self) -> _Gzipped:
        if not self._gzipped:  # two threads may both make it: the same bytes either way
            segments = deflate_parts(self.parts)
            whole = splice(segments, self.parts, ()) if not self.slots else None
            headers = (*self.headers, ("Content-Encoding", "gzip"), ("ETag", self.gzip_etag))
            self._gzipped.append(_Gzipped(segments=segments, whole=whole, headers=headers))
        return self._gzipped[0]


@attrs.frozen(kw_only=True)
class CachedAnswer:
    """How the calls of one request are answered from the ``AnswerCache``, by its
    handler and from memory alone (``app.warm``): the answer's key, the request headers
    it is negotiated for, and how the call's own ``_meta`` fields (``values``, of the
    admitted call's context) fill it."""

    key: Hashable
    environ: Mapping[str, Any]
    values: Callable[[Any], Mapping[str, Any]]
    header_value: Callable[[Any], str] = str


class AnswerHeaders(Headers):
    """A cached answer's headers, and the call's own (quota, rate limit, request id)
    added to them: werkzeug's rule (a value's text, refused with a line break in it)
    without its regular expression and scans, a few microseconds of a 45 us call. A list
    of pairs and a text name take this path; anything else goes through werkzeug."""

    def __init__(self, checked: Iterable[tuple[str, str]] = ()) -> None:
        """Start from headers already checked (a ``Rendered`` answer's)."""
        super().__init__()
        self._list.extend(checked)

    def extend(self, *args: Any, **kwargs: Any) -> None:
        if not kwargs and len(args) == 1 and type(args[0]) is list:
            self._list.extend(_checked(name, value) for name, value in args[0])
        else:
            super().extend(*args, **kwargs)

    def __setitem__(self, key: Any, value: Any) -> None:
        if type(key) is not str:
            super().__setitem__(key, value)
            return
        name, text = _checked(key, value)
        lower = name.lower()
        if any(item[0].lower() == lower for item in self._list):
            self._list = [item for item in self._list if item[0].lower() != lower]
        self._list.append((name, text))


class AnswerResponse(Response):
    """A cached data answer: a whole body with its length set and no ``Location`` to
    resolve, so its headers go out as they are, not copied and checked a second time."""

    def __init__(self, headers: list[tuple[str, str]], body: bytes) -> None:
        """``headers`` as ``Rendered`` made them, its ``Content-Length`` included."""
        super().__init__(headers=AnswerHeaders(headers))
        self.response = [body]

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Start the response with the headers as they are and send the one body (none
        for HEAD), skipping werkzeug's general iterable handling."""
        start_response(self.status, self.headers.to_wsgi_list())
        if environ.get("REQUEST_METHOD") == "HEAD":
            return []
        return cast("list[bytes]", self.response)  # the one body given to __init__


def _placeholder(field: str) -> str:
    # A NUL cannot occur unescaped in JSON; the random token keeps data from matching.
    return f"\x00svc-slot:{_TOKEN}:{field}"


def render_json(
    body: Mapping[str, Any],
    per_call: Sequence[str],
    headers: Sequence[tuple[str, str]],
    meta_key: str = "_meta",
) -> Rendered | None:
    """``body`` encoded with the ``per_call`` fields of ``body[meta_key]`` left open;
    None when a placeholder does not come out exactly once (then nothing is kept)."""
    meta = dict(body[meta_key])
    present = [f for f in per_call if f in meta]
    for field in present:
        meta[field] = _placeholder(field)
    encoded = dumps({**body, meta_key: meta})
    marks = []
    for field in present:
        mark = dumps(_placeholder(field))
        if encoded.count(mark) != 1:
            return None
        marks.append((encoded.index(mark), field, mark))
    marks.sort()
    parts: list[bytes] = []
    at = 0
    for position, _, mark in marks:
        parts.append(encoded[at:position])
        at = position + len(mark)
    parts.append(encoded[at:])
    return Rendered(
        parts=tuple(parts),
        slots=tuple(f for _, f, _ in marks),
        headers=tuple(headers),
        version=data_version(meta),
    )


def rendered_json(
    body: Mapping[str, Any],
    headers: Sequence[tuple[str, str]],
    per_call: Sequence[str] = PER_CALL_FIELDS,
    meta_key: str = "_meta",
) -> Rendered:
    """``render_json``, or the body encoded whole when a placeholder collided (then its
    per-call fields are part of the tag: it validates only itself)."""
    rendered = render_json(body, per_call, headers, meta_key)
    if rendered is None:
        return Rendered(
            parts=(dumps(body),),
            slots=(),
            headers=tuple(headers),
            version=data_version(body[meta_key]),
        )
    return rendered


def data_version(meta: Mapping[str, Any]) -> int | None:
    """An envelope's ``data_version`` (None when it has none: not a data answer)."""
    value = meta.get("data_version")
    return value if type(value) is int else None


def per_call_values(
    meta: Mapping[str, Any], per_call: Sequence[str] = PER_CALL_FIELDS
) -> dict[str, Any]:
    """The values of the ``per_call`` fields ``meta`` holds (for ``Rendered.respond``)."""
    return {field: meta[field] for field in per_call if field in meta}


@functools.lru_cache(maxsize=8)
def iso_second(second: int) -> str:
    """``iso`` of a whole Unix second, remembered (every call in one second shares it)."""
    return iso(second)
