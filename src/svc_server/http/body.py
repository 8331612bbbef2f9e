"""Reading JSON request bodies strictly: one object, no surprises.

Refused with a 4xx and a clear message: a wrong Content-Type (415), a body over the
configured size (413), invalid UTF-8 or JSON, a byte-order mark, duplicate keys (so
``{"scope": "read_only", "scope": "admin"}`` cannot smuggle a value), ``NaN`` and
``Infinity``, integers too long to convert (over 4300 digits), lone surrogates, nesting
deeper than 32 levels, anything but an object.
"""

from __future__ import annotations

import json
from typing import Any

from werkzeug.wrappers import Request

from svc_core.errors import InvalidBody, PayloadTooLarge, UnsupportedMediaType
from svc_core.fields import kind_of

MAX_DEPTH = 32


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidBody(f"Duplicate key {key[:64]!r} in the JSON body.")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise InvalidBody(f"{name} is not a valid JSON number.")


def _check(value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise InvalidBody(f"The JSON body is nested deeper than {MAX_DEPTH} levels.")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidBody("The JSON body contains an unpaired surrogate escape.") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, depth + 1)
            _check(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check(item, depth + 1)


def parse_json(raw: bytes) -> Any:
    """Parse bytes as strict JSON (see module docstring)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise InvalidBody("The JSON body must not start with a byte-order mark.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidBody("The body is not valid UTF-8.") from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except RecursionError:
        raise InvalidBody(f"The JSON body is nested deeper than {MAX_DEPTH} levels.") from None
    except InvalidBody:  # a duplicate key or NaN/Infinity, named by the hooks above
        raise
    except json.JSONDecodeError as exc:
        raise InvalidBody(f"The body is not valid JSON: {exc.msg} at position {exc.pos}.") from None
    except ValueError:  # an integer literal over Python's 4300-digit conversion limit
        raise InvalidBody("The JSON body holds a number too long to read.") from None
    _check(value)
    return value


def read_json_object(request: Request, *, max_bytes: int, optional: bool = False) -> dict[str, Any]:
    """The request's JSON object body; ``{}`` for an empty body when ``optional``."""
    length = request.content_length
    if length is not None and length > max_bytes:
        raise PayloadTooLarge(f"The body is larger than {max_bytes} bytes.")
    raw = request.stream.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise PayloadTooLarge(f"The body is larger than {max_bytes} bytes.")
    if not raw.strip():
        if optional:
            return {}
        raise InvalidBody("A JSON object body is required.", hint='Send e.g. {"label": "ci"}.')
    if request.mimetype != "application/json":
        raise UnsupportedMediaType(
            f"Content-Type must be application/json, not {request.mimetype or 'missing'!r}."
        )
    value = parse_json(raw)
    if not isinstance(value, dict):
        raise InvalidBody(f"The JSON body must be an object, not {json_kind(value)}.")
    return value


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages: ``kind_of``'s name
    without its article (``null``, ``boolean``, ``number``, ``string``, ``array``,
    ``object``)."""
    return kind_of(value).rpartition(" ")[2]
