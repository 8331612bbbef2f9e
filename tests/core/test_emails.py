"""The email rule: ASCII lower-casing only, nothing invisible, one @."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svc_core.accounts.emails import normalize_email
from svc_core.errors import InvalidBody


def test_ascii_case_is_folded_and_nothing_else() -> None:
    assert normalize_email("Kelly@Example.COM") == "kelly@example.com"
    assert normalize_email("\u212aelly@example.com") == "\u212aelly@example.com"
    assert normalize_email("\u212aelly@example.com") != normalize_email("kelly@example.com")
    assert normalize_email("\u2126m@example.com") != normalize_email("\u03a9m@example.com")
    assert normalize_email("ÉLISE@example.com") == "Élise@example.com"  # É kept as sent


@pytest.mark.parametrize(
    "text",
    [
        "kelly@example.com\u00a0",
        "\u00a0kelly@example.com",
        "kel ly@example.com",
        "kelly@example.com\n",
        "kel\u200bly@example.com",  # zero-width space (format character)
        "kelly@@example.com",
        "@example.com",
        "kelly@",
        "kelly@localhost",
        "kelly@.example.com",
        "kelly@example..com",
        "a" * 250 + "@x.co",
        "idp|ana@users.invalid",  # svc's placeholder domain (RFC 6761 .invalid)
        "ana@USERS.INVALID",
        "",
    ],
)
def test_invisible_or_malformed_addresses_are_refused(text: str) -> None:
    with pytest.raises(InvalidBody, match="email address"):
        normalize_email(text)


@given(st.emails())
@example("Ana.B+tag@Sub.Example.org")
def test_valid_addresses_survive_and_are_idempotent(text: str) -> None:
    if len(text) > 254 or text.lower().endswith(".invalid"):
        return
    once = normalize_email(text)
    assert normalize_email(once) == once
    assert once.lower() == once.lower()  # stable under ASCII comparison
    assert once == text.translate(
        str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
    )


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_two_addresses_are_one_only_if_equal_after_ascii_lowering(a: str, b: str) -> None:
    try:
        na, nb = normalize_email(a + "@example.com"), normalize_email(b + "@example.com")
    except InvalidBody:
        return
    lower = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
    assert (na == nb) == (
        (a + "@example.com").translate(lower) == (b + "@example.com").translate(lower)
    )
