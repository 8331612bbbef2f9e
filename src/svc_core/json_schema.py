"""JSON Schema 2020-12 pieces (the OpenAPI 3.1 dialect), and the attrs field metadata
that carries one.

A served row declares each field once: its name and type on the attrs class, its JSON
schema (description included) in the field's metadata (``doc``). The OpenAPI document
reads the schemas back from the declaration (``field_schemas``) instead of restating
the fields, so a field added to a row reaches the document with its description.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

Schema = dict[str, Any]

SCHEMA = "json_schema"
"""The metadata key under which a field keeps its schema."""


def doc(schema: Schema) -> dict[str, Schema]:
    """The ``attrs.field`` metadata of a field served as ``schema``."""
    return {SCHEMA: schema}


def field_schemas(cls: type) -> dict[str, Schema]:
    """The schema of every field of attrs class ``cls`` that declares one, in field order."""
    return {f.name: f.metadata[SCHEMA] for f in attrs.fields(cls) if SCHEMA in f.metadata}


def attrs_schema(
    cls: type, *, required: Iterable[str] | None = None, description: str | None = None
) -> Schema:
    """The closed object schema of attrs class ``cls`` served as JSON: its fields'
    declared schemas (every one required unless ``required`` says otherwise)."""
    return obj(field_schemas(cls), required=required, description=description)


def ref(name: str) -> Schema:
    """A reference to a component schema."""
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null, in the 3.1 spelling (``type: [T, "null"]``)."""
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str) and "$ref" not in out:
        out["type"] = [kind, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


def obj(
    properties: Mapping[str, Schema],
    *,
    required: Iterable[str] | None = None,
    description: str | None = None,
    closed: bool = True,
) -> Schema:
    """An object schema; every property is required unless ``required`` says otherwise."""
    out: Schema = {"type": "object"}
    if description:
        out["description"] = description
    out["properties"] = dict(properties)
    names = list(properties) if required is None else list(required)
    if names:
        out["required"] = names
    if closed:
        out["additionalProperties"] = False
    return out


def scalar(kind: str, description: str | None = None, **keywords: Any) -> Schema:
    """A schema of JSON type ``kind`` with ``keywords`` (format, minimum, enum, ...)."""
    out: Schema = {"type": kind, **keywords}
    if description:
        out["description"] = description
    return out


def string(description: str | None = None, **keywords: Any) -> Schema:
    return scalar("string", description, **keywords)


def integer(description: str | None = None, **keywords: Any) -> Schema:
    return scalar("integer", description, **keywords)


def number(description: str | None = None, **keywords: Any) -> Schema:
    return scalar("number", description, **keywords)


def boolean(description: str | None = None) -> Schema:
    return scalar("boolean", description)


def enum(values: Iterable[str], description: str | None = None) -> Schema:
    return string(description, enum=list(values))


def array(items: Schema, description: str | None = None, **keywords: Any) -> Schema:
    out: Schema = {"type": "array", "items": items, **keywords}
    if description:
        out["description"] = description
    return out


def counts(description: str) -> Schema:
    """An object mapping source ids (or other identifiers) to integers."""
    return {
        "type": "object",
        "description": description,
        "propertyNames": {"pattern": "^[a-z][a-z0-9_]{1,39}$"},
        "additionalProperties": {"type": "integer"},
    }


def mix(description: str) -> Schema:
    """An object mapping values as published (any text) to their samples."""
    return {
        "type": "object",
        "description": description,
        "additionalProperties": {"type": "integer", "minimum": 1},
    }
