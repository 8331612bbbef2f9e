"""``not_csv``: binary formats and markup are named; CSV text never is."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from svc_core.sources.sniff import SIGNATURES, binary_format, not_csv

CELL = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"),
    max_size=12,
).filter(lambda c: not c.lstrip(" \t\r\n\ufeff").startswith(("<", "{", "[")))


@given(st.lists(st.lists(CELL, min_size=1, max_size=6), min_size=1, max_size=5))
def test_csv_text_is_never_taken_for_another_format(rows: list[list[str]]) -> None:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    for encoding in ("utf-8", "utf-8-sig"):
        assert not_csv(out.getvalue().encode(encoding)) is None


@given(st.sampled_from(SIGNATURES), st.binary(max_size=64))
def test_a_signature_names_its_format_whatever_follows(
    signature: tuple[bytes, str], rest: bytes
) -> None:
    magic, name = signature
    assert binary_format(magic + rest) == name == not_csv(magic + rest)


@given(st.sampled_from(["", " ", "\n", "\ufeff", "\r\n  "]), st.text(max_size=40))
def test_markup_and_json_are_named_after_leading_blanks(blank: str, rest: str) -> None:
    assert not_csv(f"{blank}<?xml version='1.0'?>{rest}".encode()) == "an XML document"
    assert not_csv(f"{blank}<!DOCTYPE html>{rest}".encode()) == "an HTML page"
    assert not_csv(f'{blank}{{"a": 1}}{rest}'.encode()) == "a JSON document"
