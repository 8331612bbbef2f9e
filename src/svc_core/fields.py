"""JSON body fields, declared once: each ``Field`` validates request bodies and documents
the API, as ``Param`` does for query parameters.

A declaration names the field, its JSON kind (``string``, ``enum``, ``integer``,
``strings``, ``array``, or ``any`` when ``check`` alone decides), bounds, choices and description, and optionally ``check``: the domain's
own rule for the value (an ``array``'s items, a key label's characters, a CIDR list, a webhook URL, an email),
which runs after the shape is right and returns the value to use. ``read_body`` applies
a list of declarations to a parsed body: unknown and read-only fields, missing required
ones and malformed values are ``InvalidBody`` (400) with messages of one style.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

from svc_core.errors import InvalidBody

FieldKind = Literal["string", "enum", "integer", "strings", "array", "any"]


def kind_of(value: object) -> str:
    """A JSON value's kind, for messages (``a string``, ``null``, ``an array``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def shown(value: object) -> str:
    """A short, safe rendering of a client value for a hint."""
    if isinstance(value, str):
        return repr(value[:64])
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**15:
        return repr(value)
    if isinstance(value, float) and abs(value) < 1e15:
        return repr(value)
    return kind_of(value)


@attrs.frozen(kw_only=True)
class Field:
    """One body field: how it is read and how the API reference describes it.

    ``max_length`` bounds a string (characters) or a ``strings`` list (items); ``low``
    and ``high`` bound an integer; ``hint`` is added to messages about this field;
    ``doc`` holds JSON Schema keywords that describe what ``check`` enforces (a format, a
    pattern, the items of a list) for the API reference.
    """

    name: str
    description: str
    kind: FieldKind = "string"
    required: bool = False
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    low: int | None = None
    high: int | None = None
    default: Any = None
    nullable: bool = False
    check: Callable[[Any], Any] | None = None
    hint: str | None = None
    doc: Mapping[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.kind == "enum" and not self.choices:
            raise ValueError(f"enum field {self.name!r} needs choices")
        if self.kind == "integer" and (self.low is None or self.high is None):
            raise ValueError(f"integer field {self.name!r} needs low and high")

    def read(self, value: object) -> Any:
        """This field's value after its shape and ``check`` (``InvalidBody`` otherwise)."""
        if value is None and self.nullable:
            return None
        if self.kind == "enum":
            if not isinstance(value, str) or value not in self.choices:
                raise InvalidBody(
                    f"{self.name} must be one of: {', '.join(self.choices)}.",
                    hint=f"Got {shown(value)}.",
                )
        elif self.kind == "integer":
            assert self.low is not None and self.high is not None  # checked at declaration
            if type(value) is not int or not self.low <= value <= self.high:
                raise InvalidBody(
                    f"{self.name} must be an integer from {self.low} to {self.high}.",
                    hint=f"Got {shown(value)}." + (f" {self.hint}" if self.hint else ""),
                )
        elif self.kind in ("strings", "array"):
            strings = self.kind == "strings"
            if not isinstance(value, list) or (
                strings and not all(isinstance(v, str) for v in value)
            ):
                what = "an array of strings" if strings else "an array"
                raise InvalidBody(
                    f"{self.name} must be {what}, not {kind_of(value)}.", hint=self.hint
                )
            if self.max_length is not None and len(value) > self.max_length:
                raise InvalidBody(
                    f"{self.name} has {len(value)} entries; at most {self.max_length} are allowed.",
                    hint=self.hint,
                )
        elif self.kind == "string":
            if not isinstance(value, str):
                raise InvalidBody(
                    f"{self.name} must be a string, not {kind_of(value)}.", hint=self.hint
                )
            if self.max_length is not None and len(value) > self.max_length:
                raise InvalidBody(
                    f"{self.name} is {len(value)} characters long; at most {self.max_length} "
                    "are allowed.",
                    hint=self.hint,
                )
        return value if self.check is None else self.check(value)


def allowed_text(fields: Sequence[Field]) -> str:
    return ", ".join(f.name for f in fields) or "none"


def read_body(
    fields: Sequence[Field], body: object, *, read_only: Sequence[str] = ()
) -> dict[str, Any]:
    """The declared fields present in ``body`` (a parsed JSON object), read and checked in
    declaration order; absent optional fields with a default get it. ``read_only`` names
    fields a client may see but not set (a clearer refusal than "unknown")."""
    allowed = allowed_text(fields)
    if not isinstance(body, Mapping):
        raise InvalidBody(
            "The request body must be a JSON object.", hint=f"Allowed fields: {allowed}."
        )
    fixed = sorted(str(name) for name in body if name in read_only)
    if fixed:
        raise InvalidBody(
            f"Read-only field(s) cannot be set: {', '.join(fixed)}.",
            hint=f"Allowed fields: {allowed}.",
        )
    names = {f.name for f in fields}
    unknown = sorted(repr(name)[:66] for name in body if name not in names)
    if unknown:
        raise InvalidBody(
            f"Unknown field(s): {', '.join(unknown)}.", hint=f"Allowed fields: {allowed}."
        )
    out: dict[str, Any] = {}
    for field in fields:
        if field.name in body:
            out[field.name] = field.read(body[field.name])
        elif field.required:
            hint = field.hint
            if hint is None and field.kind == "enum":
                hint = f"{field.name} must be one of: {', '.join(field.choices)}."
            raise InvalidBody(f"{field.name} is required.", hint=hint)
        elif field.default is not None:
            out[field.name] = field.default
    return out
