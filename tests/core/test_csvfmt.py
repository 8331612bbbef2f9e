"""CSV: RFC 4180 with one BOM, typed cells, and formula-injection neutralizing."""

from __future__ import annotations

import csv
import io
import json
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.csvfmt import cell_text, csv_chunks, neutralize, quote, render_csv

BOM_BYTES = b"\xef\xbb\xbf"


def parse(data: bytes) -> list[list[str]]:
    assert data.startswith(BOM_BYTES)
    text = data[len(BOM_BYTES) :].decode("utf-8")
    return list(csv.reader(io.StringIO(text, newline=""), strict=True))


def test_header_rows_crlf_and_one_bom() -> None:
    data = render_csv(["a", "b"], [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    assert data == BOM_BYTES + b"a,b\r\n1,x\r\n2,y\r\n"
    assert data.count(BOM_BYTES) == 1


def test_no_rows_is_just_the_header() -> None:
    assert render_csv(["period", "median"], []) == BOM_BYTES + b"period,median\r\n"


def test_quoting_follows_rfc_4180() -> None:
    data = render_csv(
        ["v"], [{"v": "a,b"}, {"v": 'say "hi"'}, {"v": "two\nlines"}, {"v": "cr\rhere"}]
    )
    body = data[len(BOM_BYTES) :].decode()
    assert body == 'v\r\n"a,b"\r\n"say ""hi"""\r\n"two\nlines"\r\n"cr\rhere"\r\n'
    assert parse(data)[1:] == [["a,b"], ['say "hi"'], ["two\nlines"], ["cr\rhere"]]


def test_plain_cells_are_not_quoted() -> None:
    assert quote("강남구 office") == "강남구 office"
    assert quote(" spaced ") == " spaced "


def test_a_lone_empty_cell_is_quoted_so_the_row_survives() -> None:
    data = render_csv(["v"], [{"v": None}, {"v": ""}, {"v": "x"}])
    assert parse(data) == [["v"], [""], [""], ["x"]]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-7, "-7"),
        (10**20, "100000000000000000000"),
        (1.5, "1.5"),
        (-1.5, "-1.5"),
        (100.0, "100.0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e-7, "0.0000001"),
        (1.5e20, "150000000000000000000"),
        (-2.5e-5, "-0.000025"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (Decimal("1E+3"), "1000"),
        (Decimal("-0.50"), "-0.50"),
        ({"b": 1, "a": "서울"}, '{"b":1,"a":"서울"}'),
        ([1, "x", None], '[1,"x",null]'),
        (datetime(2026, 5, 1, 9, 0, tzinfo=timezone(timedelta(hours=9))), "2026-05-01T00:00:00Z"),
        (date(2026, 5, 1), "2026-05-01"),
    ],
)
def test_cell_text_by_type(value: object, text: str) -> None:
    assert cell_text(value) == text


def test_unsupported_cells_are_programming_errors() -> None:
    with pytest.raises(TypeError):
        cell_text(object())
    with pytest.raises(ValueError, match="aware"):
        cell_text(datetime(2026, 5, 1))


@pytest.mark.parametrize("text", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "=HYPERLINK()"])
def test_formula_text_is_neutralized(text: str) -> None:
    assert cell_text(text) == "'" + text
    rows = parse(render_csv(["v"], [{"v": text}]))
    assert rows[1] == ["'" + text]


@pytest.mark.parametrize("value", [-1.5, -1, Decimal("-3.25"), -1e-9])
def test_negative_numbers_stay_numeric(value: object) -> None:
    assert not cell_text(value).startswith("'")
    assert float(cell_text(value)) == float(value)  # type: ignore[arg-type]


def test_safe_text_is_untouched() -> None:
    for text in ["office", "1-2", "a=b", "'quoted", " =spaced", "", "서울"]:
        assert cell_text(text) == text


def test_missing_keys_are_empty_and_extra_keys_ignored() -> None:
    data = render_csv(["a", "b"], [{"a": 1, "zzz": 9}])
    assert parse(data) == [["a", "b"], ["1", ""]]


def test_nested_values_round_trip_as_json() -> None:
    value = {"geo": ["11680", "11650"], "note": 'a "q", b'}
    rows = parse(render_csv(["x"], [{"x": value}]))
    assert json.loads(rows[1][0]) == value


def test_rows_may_be_a_generator() -> None:
    data = render_csv(["n"], ({"n": i} for i in range(3)))
    assert parse(data) == [["n"], ["0"], ["1"], ["2"]]


cells = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)


@settings(max_examples=100)
@given(
    st.lists(
        st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    st.data(),
)
def test_arbitrary_text_parses_back(columns: list[str], data: st.DataObject) -> None:
    rows = data.draw(
        st.lists(st.fixed_dictionaries({c: cells for c in columns}), max_size=6), label="rows"
    )
    out = render_csv(columns, rows)
    assert out.startswith(BOM_BYTES) and not out[len(BOM_BYTES) :].startswith(BOM_BYTES)
    parsed = parse(out)
    assert parsed[0] == columns
    assert parsed[1:] == [[neutralize(r[c]) for c in columns] for r in rows]


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=10))
def test_floats_are_exact_and_exponent_free(values: list[float]) -> None:
    rows = parse(render_csv(["f"], [{"f": v} for v in values]))[1:]
    for (text,), value in zip(rows, values, strict=True):
        assert "e" not in text.lower()
        assert float(text) == value


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_integers_are_exact(value: int) -> None:
    assert parse(render_csv(["n"], [{"n": value}]))[1] == [str(value)]


@settings(max_examples=100)
@given(
    st.lists(
        st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    st.integers(min_value=1, max_value=4),
    st.data(),
)
def test_streamed_chunks_are_the_rendered_bytes(
    columns: list[str], per_chunk: int, data: st.DataObject
) -> None:
    rows = data.draw(st.lists(st.fixed_dictionaries({c: cells for c in columns}), max_size=9))
    chunks = list(csv_chunks(columns, rows, per_chunk=per_chunk))
    assert b"".join(chunks) == render_csv(columns, rows)
    assert len(chunks) == 1 + -(-len(rows) // per_chunk)
