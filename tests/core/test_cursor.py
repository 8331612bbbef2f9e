"""The listing's paging cursors: what ``encode`` makes ``decode`` gives back for the same
selection, and nothing else decodes: any other text is a 400, never another error."""

from __future__ import annotations

import base64
import datetime
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.realestate import cursor

DATES = st.dates(datetime.date(1990, 1, 1), datetime.date(2100, 12, 31)).map(str)
KEYS = st.text(st.characters(codec="utf-8", exclude_categories=("Cc",)), min_size=1, max_size=200)
FLAGS = st.sampled_from((0, 1))
FINGERPRINTS = st.text("0123456789abcdef", min_size=16, max_size=16)


@given(DATES, KEYS, FLAGS, FINGERPRINTS)
def test_a_cursor_decodes_to_the_key_it_was_made_from(
    date: str, key: str, flag: int, selection: str
) -> None:
    text = cursor.encode((date, key, flag), selection)
    assert len(text) <= cursor.CURSOR_MAX_LENGTH
    assert set(text) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert cursor.decode(text, selection) == (date, key, flag)


@given(DATES, KEYS, FLAGS, FINGERPRINTS, FINGERPRINTS)
def test_a_cursor_of_another_selection_is_refused(
    date: str, key: str, flag: int, made_for: str, used_for: str
) -> None:
    text = cursor.encode((date, key, flag), made_for)
    if made_for == used_for:
        assert cursor.decode(text, used_for) == (date, key, flag)
    else:
        with pytest.raises(InvalidParams, match="another query"):
            cursor.decode(text, used_for)


@given(st.text(max_size=1300), FINGERPRINTS)
def test_any_other_text_is_invalid_params_or_a_valid_key(text: str, selection: str) -> None:
    try:
        key = cursor.decode(text, selection)
    except InvalidParams:
        return
    assert cursor.valid_key(key)


@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=30), DATES), max_size=5))
def test_forged_structures_are_refused(parts: list[object]) -> None:
    """Lists of up to five plain values: never the four-part shape with a valid key and
    this fingerprint, so always refused."""
    text = base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")
    with pytest.raises(InvalidParams):
        cursor.decode(text, "0" * 16)


def test_encode_refuses_what_decode_would_refuse() -> None:
    for key in (("2025-02-30", "k", 0), ("2025-06-01", "", 0), ("2025-06-01", "k", 2)):
        with pytest.raises(ValueError, match="not a listing position"):
            cursor.encode(key, "0" * 16)
    with pytest.raises(ValueError, match="not a listing position"):
        cursor.encode(("2025-06-01", "k", 0), "not hex")


def test_the_fingerprint_names_the_selection() -> None:
    one = cursor.fingerprint({"sigungu_code": "11680", "months": ["2025-06"]})
    assert one == cursor.fingerprint({"months": ["2025-06"], "sigungu_code": "11680"})
    assert one != cursor.fingerprint({"sigungu_code": "11680", "months": ["2025-05"]})
    assert len(one) == 16


def test_deep_nesting_is_refused_not_a_crash() -> None:
    text = base64.urlsafe_b64encode(b"[" * 890).decode().rstrip("=")
    with pytest.raises(InvalidParams):
        cursor.decode(text, "0" * 16)
