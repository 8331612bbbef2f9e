"""The encoded-answer cache's splicing (``svc_server.http.answers``): an answer encoded
once with its per-call fields left open, then filled, is byte for byte the answer
encoded whole with those values."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from werkzeug.datastructures import Headers

from svc_core.envelope import PER_CALL_FIELDS
from svc_server.http import answers
from svc_server.http.answer_cache import AnswerCache
from svc_server.http.answers import AnswerHeaders, Rendered, render_json
from svc_server.http.responses import dumps

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
per_call_values = st.fixed_dictionaries(
    {
        "generated_at": st.text(max_size=25),
        "rate_limit": st.fixed_dictionaries(
            {"limit_per_min": st.integers(0, 10**6), "remaining": st.none() | st.integers(0, 10**6)}
        ),
        "request_id": st.text(max_size=30),
    }
)


@given(
    data=json_values,
    meta=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    fields=st.lists(st.sampled_from(PER_CALL_FIELDS), unique=True),
    first=per_call_values,
    second=per_call_values,
)
def test_a_spliced_answer_is_the_answer_encoded_whole(
    data: Any,
    meta: dict[str, Any],
    fields: list[str],
    first: dict[str, Any],
    second: dict[str, Any],
) -> None:
    meta = {k: v for k, v in meta.items() if k not in PER_CALL_FIELDS}
    for field in fields:
        meta[field] = first[field]
    body = {"data": data, "_meta": meta}
    rendered = render_json(body, PER_CALL_FIELDS, [("Content-Type", "application/json")])
    assert rendered is not None
    assert set(rendered.slots) == set(fields)
    # Filled with the values it was built from, and with another call's values.
    assert rendered.respond({}, first).get_data() == dumps(body)
    other = {"data": data, "_meta": {k: second[k] if k in fields else v for k, v in meta.items()}}
    assert rendered.respond({}, second).get_data() == dumps(other)
    assert rendered.respond({}, second).headers["Content-Type"] == "application/json"


def test_a_placeholder_in_the_data_is_not_spliced() -> None:
    """Data that happens to hold a placeholder's text is never mistaken for a slot."""
    collide = answers._placeholder("request_id")
    body = {"data": [collide], "_meta": {"request_id": "r1"}}
    assert render_json(body, PER_CALL_FIELDS, []) is None


def test_the_cache_keeps_one_data_version_and_a_byte_budget() -> None:
    cache = AnswerCache(max_bytes=100)
    small = Rendered(parts=(b"x" * 40,), slots=(), headers=())
    cache.put((1, 1), "a", small)
    cache.put((1, 1), "b", small)
    assert cache.get((1, 1), "a") is small
    cache.put((1, 1), "c", small)  # over budget: the least recently used ("b") goes
    assert cache.get((1, 1), "b") is None and cache.get((1, 1), "a") is small
    assert cache.get((2, 5), "a") is None  # a newer version: nothing old is served
    cache.put((2, 5), "d", small)
    assert len(cache) == 1 and cache.get((1, 1), "a") is None
    cache.put((1, 1), "late", small)  # computed under an older version: not kept
    assert cache.get((2, 5), "late") is None and len(cache) == 1


def _werkzeug_takes(value: str) -> bool:
    try:
        Headers([("X-Test", value)])
    except ValueError:
        return False
    return True


@given(value=st.text(alphabet=st.sampled_from("ab \t\r\n\x00\x0b\x85\u2028é"), max_size=6))
def test_answer_headers_refuse_exactly_what_werkzeug_refuses(value: str) -> None:
    """The cheaper header checks keep werkzeug's rule: a value with a line break (header
    injection) is refused by every way of adding it, anything else is kept as given."""
    takes = _werkzeug_takes(value)
    ways = {
        "extend": lambda h: h.extend([("X-Test", value)]),
        "setitem": lambda h: h.__setitem__("X-Test", value),
        "rendered": lambda h: (
            Rendered(parts=(b"{}",), slots=(), headers=(("X-Test", value),)).respond({}, {}).headers
        ),
    }
    for way, add in ways.items():
        headers = AnswerHeaders()
        try:
            made = add(headers)
        except ValueError:
            assert not takes, way
            continue
        assert takes, way
        got = made if isinstance(made, AnswerHeaders) else headers
        assert got.get("X-Test") == value, way


def test_answer_headers_replace_a_header_set_twice_and_count_the_body() -> None:
    response = Rendered(
        parts=(b'{"a":1}',), slots=(), headers=(("Content-Type", "application/json"),)
    ).respond({}, {})
    response.headers["x-request-id"] = "first-id"
    response.headers["X-Request-ID"] = "second-id"
    assert response.headers.getlist("X-Request-ID") == ["second-id"]
    assert response.headers["Content-Length"] == "7" and response.get_data() == b'{"a":1}'
    assert response.headers.getlist("Content-Length") == ["7"]


SMALL = st.one_of(
    st.none(),
    st.integers(),
    st.text(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(
    st.one_of(
        SMALL,
        st.dictionaries(st.text(), SMALL, max_size=4),
        st.lists(SMALL, max_size=3),
        st.dictionaries(st.text(), st.dictionaries(st.text(), SMALL, max_size=2), max_size=2),
    )
)
def test_dumps_writes_what_json_writes_whichever_path_it_takes(value: Any) -> None:
    """Texts and flat objects (a call's id, time and rate limit) are written without
    building json's encoder: the same bytes as compact UTF-8 ``json.dumps``."""
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    assert dumps(value) == expected
