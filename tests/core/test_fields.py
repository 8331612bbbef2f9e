"""JSON body fields declared once: shapes, bounds, checks and one style of refusal."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import InvalidBody
from svc_core.fields import Field, kind_of, read_body

LABEL = Field(name="label", description="Label.", required=True, max_length=8)
MODE = Field(name="mode", description="Mode.", kind="enum", choices=("live", "test"), required=True)
GRACE = Field(name="grace", description="Seconds.", kind="integer", low=0, high=100, default=50)
TAGS = Field(name="tags", description="Tags.", kind="strings", max_length=3)
UPPER = Field(name="upper", description="Upper-cased.", check=str.upper)
FIELDS = (LABEL, MODE, GRACE, TAGS, UPPER)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(st.dictionaries(st.sampled_from(["label", "mode", "grace", "tags", "upper"]), json_values))
def test_a_body_is_read_exactly_when_every_field_has_its_shape(body: dict[str, Any]) -> None:
    def ok(field: Field, value: Any) -> bool:
        if field.kind == "enum":
            return value in field.choices
        if field.kind == "integer":
            return type(value) is int and 0 <= value <= 100
        if field.kind == "strings":
            return (
                isinstance(value, list)
                and all(isinstance(v, str) for v in value)
                and len(value) <= 3
            )
        return isinstance(value, str) and (
            field.max_length is None or len(value) <= field.max_length
        )

    valid = all(f.name in body or not f.required for f in FIELDS) and all(
        ok(f, body[f.name]) for f in FIELDS if f.name in body
    )
    if valid:
        out = read_body(FIELDS, body)
        assert out["label"] == body["label"] and out["mode"] == body["mode"]
        assert out["grace"] == body.get("grace", 50)
        if "upper" in body:
            assert out["upper"] == body["upper"].upper()
    else:
        with pytest.raises(InvalidBody):
            read_body(FIELDS, body)


def test_refusals_name_the_field_and_what_is_allowed() -> None:
    base = {"label": "ci", "mode": "live"}
    cases: list[tuple[object, str]] = [
        ([], "must be a JSON object"),
        ({"mode": "live"}, "label is required"),
        ({"label": "ci"}, "mode is required"),
        ({**base, "mode": "prod"}, "mode must be one of: live, test"),
        ({**base, "label": 7}, "label must be a string, not a number"),
        ({**base, "label": "x" * 9}, "at most 8"),
        ({**base, "grace": 101}, "grace must be an integer from 0 to 100"),
        ({**base, "grace": True}, "grace must be an integer"),
        ({**base, "tags": "a"}, "tags must be an array of strings, not a string"),
        ({**base, "tags": ["a", "b", "c", "d"]}, "at most 3"),
        ({**base, "extra": 1}, "Unknown field(s): 'extra'"),
    ]
    for body, message in cases:
        with pytest.raises(InvalidBody) as caught:
            read_body(FIELDS, body)
        assert message in caught.value.message, body


def test_read_only_fields_are_refused_as_such() -> None:
    with pytest.raises(InvalidBody, match="Read-only field"):
        read_body(FIELDS, {"label": "a", "mode": "live", "id": "x"}, read_only=("id",))


def test_absent_optional_fields_stay_absent_unless_defaulted() -> None:
    assert read_body(FIELDS, {"label": "a", "mode": "test"}) == {
        "label": "a",
        "mode": "test",
        "grace": 50,
    }


def test_kind_names() -> None:
    assert [kind_of(v) for v in (None, True, 1, "x", [], {})] == [
        "null",
        "a boolean",
        "a number",
        "a string",
        "an array",
        "an object",
    ]
