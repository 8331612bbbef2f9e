"""Query parameters, declared once: each ``Param`` validates requests and documents the API.

A declaration names the parameter, its kind (``string``, ``enum``, ``integer``,
``boolean``), choices, ASCII pattern, bounds, default and description. ``read`` turns a
strict-parsed query (``strict_query``) into typed values in declaration order; the
OpenAPI document is built from the same declarations, so the validator and the document
cannot disagree.

Unknown, repeated and malformed parameters are ``InvalidParams`` (400) with a hint that
names what is allowed, so a typo never silently falls back to a default. Every pattern
and every number is ASCII-only: ``１１６８０`` or Arabic-Indic digits are malformed, not a
district.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Literal

import attrs

from svc_core.errors import InvalidParams

Kind = Literal["string", "enum", "integer", "boolean"]
Value = str | int | bool | None

_INT = re.compile(r"-?[0-9]{1,18}", re.ASCII)
BOOLEANS = {"true": True, "false": False}


@attrs.frozen(kw_only=True)
class Param:
    """One query parameter: how it is read and how the API reference describes it.

    ``pattern`` is a regular expression the whole value must match (ASCII classes only);
    ``doc_pattern`` documents the shape of a value that a core grammar checks itself
    (periods), so the reference shows it without a second, weaker check here;
    ``message`` is what a malformed value is told (a default follows from the kind);
    ``allow_empty`` makes ``?name=`` mean "absent" (else an empty value is malformed,
    or "required" for a required parameter).
    """

    name: str
    description: str
    kind: Kind = "string"
    required: bool = False
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    doc_pattern: str | None = None
    max_length: int | None = None
    low: int | None = None
    high: int | None = None
    default: Value = None
    message: str | None = None
    hint: str | None = None
    example: str | None = None
    allow_empty: bool = True

    def __attrs_post_init__(self) -> None:
        if self.kind == "enum" and not self.choices:
            raise ValueError(f"enum parameter {self.name!r} needs choices")
        if self.kind == "integer" and (self.low is None or self.high is None):
            raise ValueError(f"integer parameter {self.name!r} needs low and high")

    def _bad(self, value: str) -> InvalidParams:
        if self.kind == "enum":
            text = f"must be one of: {', '.join(self.choices)}."
        elif self.kind == "integer":
            text = f"must be an integer from {self.low} to {self.high}."
        elif self.kind == "boolean":
            text = "must be true or false."
        else:
            text = "is malformed."
        message = f"Query parameter {self.name!r} {self.message or text}"
        return InvalidParams(message, hint=self.hint or f"Got {value[:64]!r}.")

    def read(self, query: Mapping[str, str]) -> Value:
        """This parameter's typed value from a strict-parsed query, or its default."""
        raw = query.get(self.name)
        if raw is None or (raw == "" and (self.allow_empty or self.required)):
            if self.required:
                raise InvalidParams(f"Query parameter {self.name!r} is required.", hint=self.hint)
            return self.default
        if self.kind == "enum":
            if raw not in self.choices:
                raise self._bad(raw)
            return raw
        if self.kind == "integer":
            assert self.low is not None and self.high is not None  # checked at declaration
            if not _INT.fullmatch(raw) or not self.low <= int(raw) <= self.high:
                raise self._bad(raw)
            return int(raw)
        if self.kind == "boolean":
            if raw not in BOOLEANS:
                raise self._bad(raw)
            return BOOLEANS[raw]
        if self.max_length is not None and len(raw) > self.max_length:
            raise self._bad(raw)
        if self.pattern is not None and not re.fullmatch(self.pattern, raw, re.ASCII):
            raise self._bad(raw)
        return raw


FORMAT = Param(
    name="format",
    description="csv for CSV, json for JSON; wins over the Accept header. A generated "
    "client parses this operation's answer as JSON: for CSV it calls the operation at "
    "this path plus .csv instead.",
    kind="enum",
    choices=("json", "csv"),
)
"""The answer's format on routes that offer CSV (the server's content negotiation)."""
STREAM_FORMAT = attrs.evolve(
    FORMAT,
    description="csv for CSV, ndjson for newline-delimited JSON (one record a line, "
    "streamed), json for JSON; wins over the Accept header. A generated client parses "
    "this operation's answer as JSON: for CSV it calls the operation at this path plus "
    ".csv instead.",
    choices=("json", "csv", "ndjson"),
)
"""``FORMAT`` on the listings that stream their records, which also offer NDJSON."""


def ascii_int(text: str) -> int:
    """An integer written with ASCII digits (and an optional ``-``), surrounding spaces
    allowed; ``ValueError`` otherwise. ``int()`` alone reads any Unicode digits
    (``１１６８０``, Arabic-Indic), so every number svc reads from text goes through here."""
    raw = text.strip()
    if not _INT.fullmatch(raw):
        raise ValueError(f"not an integer in ASCII digits: {text[:32]!r}")
    return int(raw)


def names(decls: Iterable[Param]) -> frozenset[str]:
    """The names a list of declarations accepts."""
    return frozenset(p.name for p in decls)


def read_all(decls: Sequence[Param], query: Mapping[str, str]) -> dict[str, Value]:
    """Every declared parameter's typed value, validated in declaration order."""
    return {p.name: p.read(query) for p in decls}


def strict_query(pairs: Sequence[tuple[str, str]], allowed: Collection[str]) -> dict[str, str]:
    """Turn query pairs into a dict, refusing unknown, repeated, empty-named or NUL values."""
    allowed_text = ", ".join(sorted(allowed)) or "none"
    out: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            raise InvalidParams(
                f"Unknown query parameter {name[:64]!r}.",
                hint=f"Allowed parameters: {allowed_text}.",
            )
        if name in out:
            raise InvalidParams(
                f"Query parameter {name!r} is repeated.", hint="Send each parameter at most once."
            )
        if "\x00" in value:
            raise InvalidParams(f"Query parameter {name!r} contains a NUL byte.")
        out[name] = value
    return out
