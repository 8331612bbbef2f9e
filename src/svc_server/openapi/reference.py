"""The API reference in Markdown, rendered from the OpenAPI document.

``render_pages(document)`` returns ``{file name: text}``: ``index.md`` (overview,
authentication, shared errors and headers), one page per tag (its operations with
parameters, bodies, responses and examples), ``webhook-events.md`` (the outbound events)
and ``schemas.md`` (every component schema as a field table). The pages hold nothing the
document does not, so the reference cannot disagree with the server that serves it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

Json = Mapping[str, Any]

GENERATED_NOTE = (
    "_Generated from the OpenAPI document served at `/api/v1/openapi.json` "
    "(`svc openapi --docs docs/api`); do not edit by hand._"
)
SCHEMAS_PAGE = "schemas.md"
EVENTS_PAGE = "webhook-events.md"
AUTH_NAMES = {"apiKey": "API key (`X-API-Key`)", "sessionCookie": "session cookie (`svc_session`)"}


def slug(text: str) -> str:
    """A GitHub-style heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    kept = re.sub(r"[^\w\- ]", "", text.lower())
    return kept.replace(" ", "-")


def page_name(tag: str) -> str:
    """The file of a tag's page: ``API keys`` -> ``api-keys.md``."""
    return re.sub(r"[^a-z0-9]+", "-", tag.lower()).strip("-") + ".md"


def cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _ref_name(schema: Json) -> str | None:
    ref = schema.get("$ref")
    return str(ref).rsplit("/", 1)[-1] if isinstance(ref, str) else None


def type_text(schema: Json, here: str = "") -> str:
    """A short human rendering of a schema's type, linking component schemas."""
    name = _ref_name(schema)
    if name is not None:
        target = "" if here == SCHEMAS_PAGE else SCHEMAS_PAGE
        return f"[{name}]({target}#{slug(name)})"
    if "anyOf" in schema:
        return " or ".join(type_text(s, here) for s in schema["anyOf"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'], ensure_ascii=False)}`"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    parts = []
    for k in kinds:
        if k == "array":
            parts.append("array of " + type_text(schema.get("items", {}), here))
        elif k == "object" and "properties" in schema:
            inner = ", ".join(
                f"{prop}: {type_text(sub, here)}" for prop, sub in schema["properties"].items()
            )
            parts.append("{" + inner + "}")
        elif k is not None:
            parts.append(str(k))
    text = " or ".join(parts) or "any"
    if "format" in schema:
        text += f" ({schema['format']})"
    return text


def constraints(schema: Json) -> str:
    """Enumerations, bounds, patterns and defaults of a schema, as one line."""
    out = []
    if "enum" in schema:
        shown = [v if isinstance(v, str) else json.dumps(v) for v in schema["enum"]]
        out.append("one of " + ", ".join(f"`{v}`" for v in shown))
    for key, label in (
        ("minimum", "min"),
        ("maximum", "max"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
    ):
        if key in schema:
            out.append(f"{label} {schema[key]}")
    if "pattern" in schema:
        out.append(f"pattern `{schema['pattern']}`")
    if "default" in schema:
        out.append(f"default `{json.dumps(schema['default'], ensure_ascii=False)}`")
    return "; ".join(out)


def notes(*parts: str) -> str:
    """Sentences from fragments: each capitalized and closed with a full stop."""
    out = []
    for part in parts:
        text = part.strip()
        if not text:
            continue
        text = text[0].upper() + text[1:]
        out.append(text if text.endswith((".", "?", "!", ")")) else text + ".")
    return " ".join(out)


def _items_of(schema: Json) -> Json:
    if schema.get("type") == "array" or "array" in (schema.get("type") or []):
        return dict(schema.get("items", {}))
    return {}


def field_rows(schema: Json, here: str, prefix: str = "") -> list[str]:
    """Table rows for an object's properties; inline nested objects become dotted rows."""
    rows = []
    required = set(schema.get("required", ()))
    for name, sub in schema.get("properties", {}).items():
        full = prefix + name
        description = sub.get("description", "")
        rule = constraints(sub) or constraints(_items_of(sub))
        nested = sub if "properties" in sub and "$ref" not in sub else None
        if nested is None and "anyOf" in sub:
            nested = next((s for s in sub["anyOf"] if "properties" in s), None)
        kind = type_text(sub, here)
        if nested is not None:  # its fields follow as dotted rows
            can_be_null = nested is not sub or "null" in (sub.get("type") or ())
            kind = "object or null" if can_be_null else "object"
        rows.append(
            f"| `{cell(full)}` | {cell(kind)} | "
            f"{'yes' if name in required else 'no'} | {cell(notes(description, rule))} |"
        )
        if nested is not None:
            rows += field_rows(nested, here, full + ".")
    return rows


FIELD_HEAD = ["| field | type | required | notes |", "|---|---|---|---|"]


def _auth(operation: Json) -> str:
    security = operation.get("security", [])
    if not security:
        return "none (public)"
    return " or ".join(AUTH_NAMES.get(name, name) for req in security for name in req)


def _example_block(example: Any) -> list[str]:
    if isinstance(example, str):
        return ["```", example.replace("\r\n", "\n").strip("\ufeff").rstrip(), "```"]
    return ["```json", json.dumps(example, ensure_ascii=False, indent=2), "```"]


def _response_ref(response: Json, document: Json) -> tuple[Json, str | None]:
    name = _ref_name(response)
    if name is None:
        return response, None
    return document["components"]["responses"][name], name


def operation_section(method: str, path: str, operation: Json, document: Json) -> list[str]:
    """One operation: summary, auth, parameters, body, responses, examples."""
    here = page_name(operation["tags"][0])
    lines = [f"## {method.upper()} {path}", "", f"**{operation['summary']}**", ""]
    if operation.get("description"):
        lines += [operation["description"], ""]
    facts = [f"operationId `{operation['operationId']}`", f"auth: {_auth(operation)}"]
    if operation.get("x-svc-quota-counted"):
        facts.append("counts against the monthly quota when it succeeds")
    lines += ["- " + fact for fact in facts] + [""]
    params = operation.get("parameters", [])
    if params:
        lines += [
            "### Parameters",
            "",
            "| name | in | type | required | notes |",
            "|---|---|---|---|---|",
        ]
        for p in params:
            parts = [p.get("description", ""), constraints(p.get("schema", {}))]
            if p.get("allowEmptyValue"):
                parts.append("an empty value means absent")
            if "example" in p:
                parts.append(f"example `{p['example']}`")
            lines.append(
                f"| `{cell(p['name'])}` | {p['in']} | {cell(type_text(p.get('schema', {}), here))} "
                f"| {'yes' if p.get('required') else 'no'} | {cell(notes(*parts))} |"
            )
        lines.append("")
    body = operation.get("requestBody")
    if body:
        for media, content in body["content"].items():
            required = "required" if body.get("required") else "optional"
            lines += [
                f"### Request body ({media}, {required})",
                "",
                type_text(content["schema"], here),
                "",
            ]
            if "example" in content:
                lines += [*_example_block(content["example"]), ""]
    lines += ["### Responses", "", "| status | content | description |", "|---|---|---|"]
    examples: list[tuple[str, str, Any]] = []
    for status, raw in operation["responses"].items():
        response, shared = _response_ref(raw, document)
        contents = []
        for media, content in response.get("content", {}).items():
            contents.append(f"{media}: {type_text(content.get('schema', {}), here)}")
            if "example" in content:
                examples.append((status, media, content["example"]))
        description = response.get("description", "")
        if shared:
            description += f" (see [errors](index.md#{slug(shared)}))"
        lines.append(f"| {status} | {cell('; '.join(contents) or '-')} | {cell(description)} |")
    lines.append("")
    ok = operation["responses"].get("200", {})
    if ok.get("headers"):
        plain = [name for name in ok["headers"] if not name.startswith("X-Svc-")]
        text = "Headers of a 200: " + ", ".join(f"`{name}`" for name in plain)
        if len(plain) < len(ok["headers"]):
            text += "; on CSV answers also one `X-Svc-<Field>` per `_meta` field"
        lines += [text + ".", ""]
    for status, raw in operation["responses"].items():
        for name, link in raw.get("links", {}).items():
            lines.append(
                f"- Link `{name}` ({status}): `{link['operationId']}` with "
                + ", ".join(f"`{k}` = `{v}`" for k, v in link["parameters"].items())
            )
    if any("links" in raw for raw in operation["responses"].values()):
        lines.append("")
    for status, media, example in examples:
        lines += [f"Example {status} ({media}):", "", *_example_block(example), ""]
    return lines


def _operations(document: Json) -> Iterable[tuple[str, str, Json]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


def tag_page(tag: Json, document: Json) -> str:
    name = tag["name"]
    ops = [(m, p, o) for m, p, o in _operations(document) if o["tags"][0] == name]
    lines = [f"# {name}", "", GENERATED_NOTE, ""]
    if tag.get("description"):
        lines += [tag["description"], ""]
    for method, path, operation in ops:
        heading = f"{method.upper()} {path}"
        lines.append(f"- [{heading}](#{slug(heading)}): {operation['summary']}")
    lines.append("")
    for method, path, operation in ops:
        lines += operation_section(method, path, operation, document)
    return "\n".join(lines).rstrip() + "\n"


def events_page(document: Json) -> str:
    lines = [
        "# Webhook events",
        "",
        GENERATED_NOTE,
        "",
        "svc POSTs each event as JSON to every active endpoint subscribed to its type "
        "(or to `*`). Headers on every delivery:",
        "",
        "| header | notes |",
        "|---|---|",
    ]
    first = next(iter(document["webhooks"].values()))["post"]
    for p in first["parameters"]:
        text = notes(p.get("description", ""), constraints(p["schema"]))
        lines.append(f"| `{p['name']}` | {cell(text)} |")
    lines.append("")
    for event_type, item in document["webhooks"].items():
        post = item["post"]
        schema = post["requestBody"]["content"]["application/json"]["schema"]
        lines += [f"## {event_type}", "", post["summary"] + ".", "", *FIELD_HEAD]
        lines += field_rows(schema, EVENTS_PAGE)
        responses = "; ".join(f"{s}: {r['description']}" for s, r in post["responses"].items())
        lines += ["", f"Responses: {responses}", ""]
    return "\n".join(lines).rstrip() + "\n"


def schemas_page(document: Json) -> str:
    lines = ["# Schemas", "", GENERATED_NOTE, ""]
    for name, schema in document["components"]["schemas"].items():
        lines += [f"## {name}", ""]
        if schema.get("description"):
            lines += [schema["description"], ""]
        if "properties" in schema:
            lines += FIELD_HEAD + field_rows(schema, SCHEMAS_PAGE)
            if schema.get("additionalProperties") is False:
                lines += ["", "No other fields."]
        else:
            lines.append(f"Type: {type_text(schema, SCHEMAS_PAGE)}.")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def index_page(document: Json) -> str:
    info = document["info"]
    lines = [
        f"# {info['title']} reference (version {info['version']})",
        "",
        GENERATED_NOTE,
        "",
        info["description"].rstrip(),
        "",
        "## Pages",
        "",
    ]
    for tag in document["tags"]:
        target = EVENTS_PAGE if tag["name"] == "Webhook events" else page_name(tag["name"])
        lines.append(f"- [{tag['name']}]({target}): {tag.get('description', '')}")
    lines += [f"- [Schemas]({SCHEMAS_PAGE}): every request and response object.", ""]
    lines += ["## Authentication", "", "| scheme | where | notes |", "|---|---|---|"]
    for name, scheme in document["components"]["securitySchemes"].items():
        where = f"{scheme['in']} `{scheme['name']}`"
        lines.append(
            f"| {AUTH_NAMES.get(name, name)} | {where} | {cell(scheme.get('description', ''))} |"
        )
    lines += ["", "## Errors", "", "Every error body is [Error](schemas.md#error).", ""]
    for name, response in document["components"]["responses"].items():
        lines += [f"### {name}", "", response["description"], ""]
    lines += ["## Response headers", "", "| header | notes |", "|---|---|"]
    for name, header in document["components"]["headers"].items():
        notes = "; ".join(
            x for x in (header.get("description", ""), constraints(header["schema"])) if x
        )
        lines.append(f"| `{name}` | {cell(notes)} |")
    return "\n".join(lines).rstrip() + "\n"


def render_pages(document: Json) -> dict[str, str]:
    """Every reference page of ``document``, by file name."""
    pages = {"index.md": index_page(document)}
    for tag in document["tags"]:
        if tag["name"] == "Webhook events":
            continue
        pages[page_name(tag["name"])] = tag_page(tag, document)
    pages[EVENTS_PAGE] = events_page(document)
    pages[SCHEMAS_PAGE] = schemas_page(document)
    return pages
