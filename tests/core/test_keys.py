"""API keys: format, hashing, status over time, and the create/patch/rotate bodies."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.accounts.keys import (
    DEFAULT_GRACE_SECONDS,
    MAX_GRACE_SECONDS,
    KeyCreate,
    KeyPatch,
    generate_key,
    hash_key,
    key_prefix,
    key_status,
    parse_key,
    validate_key_create,
    validate_key_patch,
    validate_rotate,
)
from svc_core.errors import InvalidParams, Unauthorized

KEY_FORMAT = re.compile(r"svc_pk_(live|test)_[0-9a-f]{32}")
GOOD = "svc_pk_live_" + "0123456789abcdef" * 2
entropy = st.binary(min_size=16, max_size=16)
modes = st.sampled_from(["live", "test"])


# format ---------------------------------------------------------------------------------


@given(modes, entropy)
def test_generated_keys_have_the_documented_format(mode: str, raw: bytes) -> None:
    key = generate_key(mode, raw)
    assert KEY_FORMAT.fullmatch(key)
    assert key == f"svc_pk_{mode}_{raw.hex()}"
    parsed = parse_key(key)
    assert parsed.mode == mode
    assert parsed.prefix == key_prefix(key) == key[:16]


def test_prefix_is_the_first_sixteen_characters() -> None:
    assert key_prefix(GOOD) == "svc_pk_live_0123"


@pytest.mark.parametrize("raw", [b"", b"\x00" * 15, b"\x00" * 17])
def test_generation_needs_exactly_sixteen_bytes(raw: bytes) -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        generate_key("live", raw)


def test_generation_refuses_unknown_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        generate_key("prod", b"\x00" * 16)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " " + GOOD,
        GOOD + " ",
        GOOD + "\n",
        GOOD.upper(),
        GOOD[:-1] + "A",
        GOOD[:-1],
        GOOD + "0",
        "svc_pk_prod_" + "0" * 32,
        "svc_sk_live_" + "0" * 32,
        "svc_pk_live_" + "g" * 32,
        "svc_pk_live-" + "0" * 32,
        "svc_pk_live_" + "０" * 32,  # full-width digits
        GOOD + "\r\nX-Injected: 1",
        "x" * 10_000,
    ],
)
def test_malformed_keys_are_401_without_echo(text: str) -> None:
    with pytest.raises(Unauthorized) as info:
        parse_key(text)
    assert info.value.status == 401
    assert info.value.code == "UNAUTHORIZED"
    assert text not in info.value.message or not text


def test_non_string_key_is_401() -> None:
    with pytest.raises(Unauthorized):
        parse_key(None)


@given(st.text(max_size=60))
def test_only_the_exact_format_parses(text: str) -> None:
    if KEY_FORMAT.fullmatch(text):
        assert parse_key(text).mode in ("live", "test")
    else:
        with pytest.raises(Unauthorized):
            parse_key(text)


def test_hash_is_sha256_hex_or_hmac_with_pepper() -> None:
    assert hash_key(GOOD) == hashlib.sha256(GOOD.encode()).hexdigest()
    pepper = b"pepper-0123456789"
    assert hash_key(GOOD, pepper) == hmac.new(pepper, GOOD.encode(), "sha256").hexdigest()
    assert hash_key(GOOD, pepper) != hash_key(GOOD)


@given(entropy, entropy)
def test_distinct_keys_hash_apart_and_never_contain_the_plaintext(a: bytes, b: bytes) -> None:
    ka, kb = generate_key("live", a), generate_key("live", b)
    assert (hash_key(ka) == hash_key(kb)) is (a == b)
    assert a.hex() not in hash_key(ka)


# status ---------------------------------------------------------------------------------


def test_status_of_a_rotated_key_around_grace_until() -> None:
    until = 1_000_000
    assert key_status("grace", until, until - 1) == "grace"
    assert key_status("grace", until, until) == "expired"
    assert key_status("grace", until, until + 1) == "expired"


def test_status_of_other_keys() -> None:
    assert key_status("active", None, 5) == "active"
    assert key_status("revoked", None, 5) == "revoked"
    assert key_status("revoked", 10, 5) == "revoked"  # revoke kills a key in grace too
    assert key_status("expired", None, 5) == "expired"
    assert key_status("grace", None, 5) == "expired"  # grace without an end: fail closed
    with pytest.raises(ValueError):
        key_status("paused", None, 5)


@given(
    st.sampled_from(["active", "grace", "revoked", "expired"]),
    st.none() | st.integers(min_value=0, max_value=2**40),
    st.integers(min_value=0, max_value=2**40),
)
def test_status_is_grace_only_before_grace_until(
    stored: str, grace_until: int | None, now: int
) -> None:
    status = key_status(stored, grace_until, now)
    assert status in ("active", "grace", "revoked", "expired")
    if status == "grace":
        assert grace_until is not None and now < grace_until
    if stored == "revoked":
        assert status == "revoked"


# create body ----------------------------------------------------------------------------


def _create(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"label": "backend", "mode": "live", "scope": "read_only"}
    body.update(fields)
    return {k: v for k, v in body.items() if v is not ...}


def test_valid_create_body() -> None:
    spec = validate_key_create(_create(ip_allowlist=["10.0.0.0/8", "2001:DB8::/32", "203.0.113.7"]))
    assert spec == KeyCreate(
        label="backend",
        mode="live",
        scope="read_only",
        ip_allowlist=("10.0.0.0/8", "2001:db8::/32", "203.0.113.7/32"),
    )
    assert validate_key_create(_create()).ip_allowlist == ()
    assert validate_key_create(_create(label="x" * 64, ip_allowlist=[])).label == "x" * 64


def test_create_keeps_label_text_as_sent() -> None:
    assert validate_key_create(_create(label="서울 백엔드 👨‍👩‍👧")).label == "서울 백엔드 👨‍👩‍👧"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (None, "JSON object"),
        ([], "JSON object"),
        ("label", "JSON object"),
        (_create(label=...), "label is required"),
        (_create(mode=...), "mode is required"),
        (_create(scope=...), "scope is required"),
        (_create(label=""), "empty"),
        (_create(label="   "), "empty"),
        (_create(label="x" * 65), "at most 64"),
        (_create(label=" padded"), "whitespace"),
        (_create(label="padded\t"), "whitespace"),
        (_create(label="a\x00b"), "control"),
        (_create(label="a\nb"), "control"),
        (_create(label="a\u202eb"), "control"),
        (_create(label="a\ud800b"), "control"),
        (_create(label=5), "string"),
        (_create(label=True), "string"),
        (_create(label=None), "string"),
        (_create(mode="prod"), "mode must be one of"),
        (_create(mode="LIVE"), "mode must be one of"),
        (_create(mode=True), "mode must be one of"),
        (_create(scope="write"), "scope must be one of"),
        (_create(scope=["admin"]), "scope must be one of"),
        (_create(ip_allowlist=None), "not null"),
        (_create(ip_allowlist="10.0.0.0/8"), "array"),
        (_create(ip_allowlist=["10.0.0.1/8"]), "host bits"),
        (_create(ip_allowlist=["10.0.0.0/33"]), "not a valid"),
        (_create(ip_allowlist=[" 10.0.0.0/8"]), "not CIDR"),
        (_create(ip_allowlist=[""]), "not CIDR"),
        (_create(ip_allowlist=[10]), "CIDR string"),
        (_create(ip_allowlist=["10.0.0.0/8"] * 33), "at most 32"),
        (_create(extra=1), "Unknown field(s): 'extra'"),
        (_create(id="k1"), "Read-only"),
        (_create(key=GOOD), "Read-only"),
        (_create(status="active"), "Read-only"),
        (_create(created_at=1), "Read-only"),
    ],
)
def test_bad_create_bodies_are_400(body: object, needle: str) -> None:
    with pytest.raises(InvalidParams) as info:
        validate_key_create(body)
    assert info.value.status == 400
    assert info.value.code == "INVALID_PARAMS"
    assert needle in info.value.message


def test_unknown_fields_are_all_named_with_a_hint() -> None:
    with pytest.raises(InvalidParams) as info:
        validate_key_create(_create(zeta=1, alpha=2))
    assert "'alpha', 'zeta'" in info.value.message
    assert info.value.hint is not None
    assert "label, mode, scope, ip_allowlist" in info.value.hint


@given(st.text(min_size=1, max_size=64))
def test_any_printable_trimmed_label_up_to_64_is_kept(label: str) -> None:
    printable = label.strip() == label and label.strip() and label.isprintable()
    if printable:
        assert validate_key_create(_create(label=label)).label == label


@given(
    st.text(max_size=30),
    st.characters(categories=["Cc"]),
    st.text(max_size=30),
)
def test_labels_with_control_characters_are_refused(head: str, control: str, tail: str) -> None:
    with pytest.raises(InvalidParams):
        validate_key_create(_create(label="a" + head + control + tail + "z"))


@given(st.text(min_size=65, max_size=200))
def test_labels_over_64_are_refused(label: str) -> None:
    with pytest.raises(InvalidParams):
        validate_key_create(_create(label=label))


# patch body -----------------------------------------------------------------------------


def test_valid_patch_bodies() -> None:
    assert validate_key_patch({}) == KeyPatch()
    assert validate_key_patch({"label": "new"}) == KeyPatch(label="new")
    assert validate_key_patch({"ip_allowlist": []}) == KeyPatch(ip_allowlist=())
    assert validate_key_patch({"ip_allowlist": ["::/0", "0.0.0.0/0"]}) == KeyPatch(
        ip_allowlist=("::/0", "0.0.0.0/0")
    )


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"scope": "admin"}, "Read-only"),
        ({"mode": "test"}, "Read-only"),
        ({"id": "x"}, "Read-only"),
        ({"prefix": "svc_pk_live_0000"}, "Read-only"),
        ({"key_hash": "00"}, "Read-only"),
        ({"label": None}, "string"),
        ({"label": "x" * 65}, "at most 64"),
        ({"ip_allowlist": None}, "not null"),
        ({"ip_allowlist": ["1.2.3.4/8"]}, "host bits"),
        ({"colour": "red"}, "Unknown"),
        ([{"label": "x"}], "JSON object"),
    ],
)
def test_bad_patch_bodies_are_400(body: object, needle: str) -> None:
    with pytest.raises(InvalidParams) as info:
        validate_key_patch(body)
    assert needle in info.value.message


# rotate body ----------------------------------------------------------------------------


def test_rotate_defaults_to_one_day() -> None:
    assert validate_rotate(None) == DEFAULT_GRACE_SECONDS == 86_400
    assert validate_rotate({}) == DEFAULT_GRACE_SECONDS


@given(st.integers(min_value=0, max_value=MAX_GRACE_SECONDS))
def test_rotate_accepts_the_whole_range(seconds: int) -> None:
    assert validate_rotate({"grace_period_seconds": seconds}) == seconds


@pytest.mark.parametrize(
    "value", [-1, MAX_GRACE_SECONDS + 1, 10**400, 3600.0, 3600.5, "3600", True, None, [1]]
)
def test_rotate_refuses_other_values(value: object) -> None:
    with pytest.raises(InvalidParams) as info:
        validate_rotate({"grace_period_seconds": value})
    assert "grace_period_seconds" in info.value.message


def test_rotate_refuses_other_fields() -> None:
    with pytest.raises(InvalidParams, match="Unknown"):
        validate_rotate({"grace": 10})
    with pytest.raises(InvalidParams, match="JSON object"):
        validate_rotate([])
