"""Query parameters declared once: typed reading, strictness, ASCII-only numbers."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.params import Param, read_all, strict_query

LIMIT = Param(name="limit", description="Rows.", kind="integer", low=1, high=500, default=200)
KIND = Param(name="kind", description="Kind.", kind="enum", choices=("a", "b"))
CODE = Param(
    name="code",
    description="District.",
    required=True,
    pattern="[0-9]{5}",
    message="must be a 5-digit district code such as 11680.",
)
FLAG = Param(name="flag", description="Flag.", kind="boolean", default=False)


@given(st.integers(min_value=1, max_value=500))
def test_integer_in_bounds_reads_as_int(n: int) -> None:
    assert LIMIT.read({"limit": str(n)}) == n


@given(st.text(max_size=12))
@example("１１")  # full-width digits
@example("٣")  # Arabic-Indic digit
@example("²")
def test_integer_accepts_only_ascii_decimals_in_bounds(text: str) -> None:
    ok = text.isascii() and text.lstrip("-").isdigit() and 1 <= int(text) <= 500
    if ok:
        assert LIMIT.read({"limit": text}) == int(text)
    elif text == "":
        assert LIMIT.read({"limit": text}) == 200  # empty means absent
    else:
        with pytest.raises(InvalidParams, match="integer from 1 to 500"):
            LIMIT.read({"limit": text})


@given(st.text(max_size=8))
@example("１１６８０")
@example("١١٦٨٠")
def test_pattern_is_ascii_only(text: str) -> None:
    valid = len(text) == 5 and all(c in "0123456789" for c in text)
    if valid:
        assert CODE.read({"code": text}) == text
    else:
        with pytest.raises(InvalidParams):
            CODE.read({"code": text})


def test_required_empty_and_absent_say_required() -> None:
    for query in ({}, {"code": ""}):
        with pytest.raises(InvalidParams, match="'code' is required"):
            CODE.read(query)


def test_enum_default_and_refusal() -> None:
    assert KIND.read({}) is None
    assert KIND.read({"kind": "b"}) == "b"
    with pytest.raises(InvalidParams, match="one of: a, b"):
        KIND.read({"kind": "c"})


def test_boolean_is_true_or_false_only() -> None:
    assert FLAG.read({}) is False
    assert FLAG.read({"flag": "true"}) is True
    with pytest.raises(InvalidParams, match="true or false"):
        FLAG.read({"flag": "1"})


def test_read_all_validates_in_declaration_order() -> None:
    with pytest.raises(InvalidParams, match="'code'"):
        read_all((CODE, LIMIT), {"limit": "0"})
    assert read_all((CODE, LIMIT, KIND), {"code": "11680"}) == {
        "code": "11680",
        "limit": 200,
        "kind": None,
    }


def test_declarations_must_be_complete() -> None:
    with pytest.raises(ValueError):
        Param(name="x", description="", kind="enum")
    with pytest.raises(ValueError):
        Param(name="x", description="", kind="integer", low=1)


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "zz"]), st.text(max_size=3)), max_size=4))
def test_strict_query_refuses_unknown_and_repeated(pairs: list[tuple[str, str]]) -> None:
    names = [n for n, _ in pairs]
    bad = (
        any(n not in {"a", "b"} for n in names)
        or len(set(names)) < len(names)
        or any("\x00" in v for _, v in pairs)
    )
    if bad:
        with pytest.raises(InvalidParams):
            strict_query(pairs, {"a", "b"})
    else:
        assert strict_query(pairs, {"a", "b"}) == dict(pairs)
