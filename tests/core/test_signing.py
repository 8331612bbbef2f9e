"""Webhook signatures: the published vectors, receiver checks and their order."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
import stripe
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.errors import InvalidParams, SignatureVerificationError
from svc_core.webhooks.signing import generate_secret, secret_key, sign, verify

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"

# The test vectors published in docs/webhooks.md: (secret, timestamp, body, header).
VECTORS: list[tuple[str, int, bytes, str]] = [
    (
        "whsec_000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        1767225600,
        b'{"id":"evt_webhook_test_0001","type":"webhook.test"}',
        "t=1767225600,v1=05674cfe926213bb5bcbd6797ad4f976ca70a1c2a2808eb4f3543fba476f9a39",
    ),
    (
        "whsec_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        1790000000,
        '{"id":"evt_1","note":"서울 강남구"}'.encode(),
        "t=1790000000,v1=57491c2d16f5b0c7d9b65537e240ccceb8e2747c2cfb5acafb33cedd9afa1214",
    ),
    (
        "whsec_5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5aa5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5",
        0,
        b"{}",
        "t=0,v1=1e1e1010ed8ed54a9b984cb003a6286027b9e2487215508bd4adfbc16b3478f3",
    ),
]
VECTOR_IDS = ["ascii", "korean", "empty-object"]

SECRET = VECTORS[0][0]
OTHER_SECRET = VECTORS[1][0]
BODY = b'{"id":"evt_1","type":"webhook.test","created":1790000000,"data":{}}'
NOW = 1_790_000_000

secrets_st = st.binary(min_size=32, max_size=32).map(generate_secret)
json_objects = st.dictionaries(
    st.text(max_size=8),
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    max_size=5,
)


def reason_of(excinfo: pytest.ExceptionInfo[SignatureVerificationError]) -> str:
    return excinfo.value.reason


def hand_signature(secret: str, timestamp: int, body: bytes) -> str:
    """The receiver recipe from the docs, written without svc code."""
    key = bytes.fromhex(secret.removeprefix("whsec_"))
    return hmac.new(key, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


# published vectors -------------------------------------------------------------------


@pytest.mark.parametrize(("secret", "timestamp", "body", "header"), VECTORS, ids=VECTOR_IDS)
def test_sign_reproduces_the_published_vectors(
    secret: str, timestamp: int, body: bytes, header: str
) -> None:
    assert sign(body, secret, timestamp) == header
    assert header == f"t={timestamp},v1={hand_signature(secret, timestamp, body)}"
    assert verify(body, header, secret, now=timestamp) == json.loads(body)


@pytest.mark.parametrize(("secret", "timestamp", "body", "header"), VECTORS, ids=VECTOR_IDS)
def test_the_docs_publish_exactly_these_vectors(
    secret: str, timestamp: int, body: bytes, header: str
) -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for part in (secret, str(timestamp), body.decode("utf-8"), header):
        assert part in docs


@pytest.mark.parametrize(("secret", "timestamp", "body", "header"), VECTORS, ids=VECTOR_IDS)
def test_stripe_python_rejects_our_signatures(
    secret: str, timestamp: int, body: bytes, header: str
) -> None:
    # Our key is the hex-decoded part after whsec_, Stripe's is the whole string. If this
    # test fails, someone changed the key derivation and broke every receiver.
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.WebhookSignature.verify_header(body.decode("utf-8"), header, secret)
    stripe_style = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256
    ).hexdigest()
    stripe.WebhookSignature.verify_header(
        body.decode("utf-8"), f"t={timestamp},v1={stripe_style}", secret
    )
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(body, f"t={timestamp},v1={stripe_style}", secret, now=timestamp)
    assert reason_of(excinfo) == "signature_mismatch"


# secrets -------------------------------------------------------------------------------


def test_generate_secret_is_whsec_and_64_lowercase_hex() -> None:
    secret = generate_secret(bytes(range(200, 232)))
    assert secret == "whsec_" + bytes(range(200, 232)).hex()
    assert secret_key(secret) == bytes(range(200, 232))
    with pytest.raises(ValueError, match="32 bytes"):
        generate_secret(b"short")


@given(st.binary(min_size=32, max_size=32))
def test_secret_key_inverts_generate_secret(entropy: bytes) -> None:
    secret = generate_secret(entropy)
    assert len(secret) == 70 and secret == secret.lower()
    assert secret_key(secret) == entropy
    assert secret_key(f"  {secret}\n") == entropy


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("", "must start with 'whsec_'"),
        ("svc_pk_live_" + "a" * 32, "an API key was given"),
        ("sk_test_" + "a" * 64, "must start with 'whsec_'"),
        ("whsec_" + "a" * 63, "64 hex characters"),
        ("whsec_" + "a" * 65, "64 hex characters"),
        ("whsec_" + "g" * 64, "64 hex characters"),
        ("whsec_" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "64 hex characters"),
    ],
)
def test_a_malformed_secret_is_a_clear_error_that_hides_it(bad: str, message: str) -> None:
    with pytest.raises(InvalidParams, match=message) as excinfo:
        secret_key(bad)
    if len(bad) > 12:
        assert bad[6:] not in str(excinfo.value)
    with pytest.raises(InvalidParams):
        verify(BODY, sign(BODY, SECRET, NOW), bad, now=NOW)


def test_verify_needs_at_least_one_secret() -> None:
    with pytest.raises(InvalidParams, match="At least one"):
        verify(BODY, sign(BODY, SECRET, NOW), [], now=NOW)


@pytest.mark.parametrize("timestamp", [-1, 1.5, True, "1"])
def test_sign_needs_whole_non_negative_seconds(timestamp: Any) -> None:
    with pytest.raises(ValueError, match="timestamp"):
        sign(BODY, SECRET, timestamp)


# round trip and tampering ---------------------------------------------------------------


@settings(max_examples=60)
@given(json_objects, secrets_st, st.integers(0, 2**40))
def test_round_trip_returns_the_event(event: dict[str, Any], secret: str, ts: int) -> None:
    body = json.dumps(event).encode()
    header = sign(body, secret, ts)
    assert verify(body, header, secret, now=ts) == event
    assert verify(body.decode(), header, secret, now=ts) == event
    assert verify(bytearray(body), header, secret, now=ts) == event


@settings(max_examples=60)
@given(st.binary(min_size=1, max_size=200), st.data())
def test_any_single_byte_change_fails(body: bytes, data: st.DataObject) -> None:
    header = sign(body, SECRET, NOW)
    index = data.draw(st.integers(0, len(body) - 1))
    flip = data.draw(st.integers(1, 255))
    tampered = bytearray(body)
    tampered[index] ^= flip
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(bytes(tampered), header, SECRET, now=NOW)
    assert reason_of(excinfo) == "signature_mismatch"


@given(st.binary(max_size=50))
def test_a_body_with_a_byte_added_or_dropped_fails(body: bytes) -> None:
    header = sign(body, SECRET, NOW)
    for changed in (body + b" ", body[:-1] if body else b"x"):
        with pytest.raises(SignatureVerificationError):
            verify(changed, header, SECRET, now=NOW)


def test_the_wrong_secret_or_timestamp_fails() -> None:
    header = sign(BODY, SECRET, NOW)
    for secret, bad_header in (
        (OTHER_SECRET, header),
        (SECRET, header.replace(f"t={NOW}", f"t={NOW + 1}")),
    ):
        with pytest.raises(SignatureVerificationError) as excinfo:
            verify(BODY, bad_header, secret, now=NOW)
        assert reason_of(excinfo) == "signature_mismatch"


# tolerance --------------------------------------------------------------------------------


@given(st.integers(0, 10_000), st.integers(0, 2**33), st.sampled_from([-1, 1]))
def test_tolerance_is_symmetric_and_inclusive(tolerance: int, ts: int, sign_: int) -> None:
    header = sign(BODY, SECRET, ts)
    verify(BODY, header, SECRET, now=ts + sign_ * tolerance, tolerance=tolerance)
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(BODY, header, SECRET, now=ts + sign_ * (tolerance + 1), tolerance=tolerance)
    assert reason_of(excinfo) == "timestamp_out_of_tolerance"


@pytest.mark.parametrize(("offset", "ok"), [(-301, False), (-300, True), (300, True), (301, False)])
def test_default_tolerance_is_300_seconds_either_way(offset: int, ok: bool) -> None:
    header = sign(BODY, SECRET, NOW)
    if ok:
        assert verify(BODY, header, SECRET, now=NOW + offset)["id"] == "evt_1"
    else:
        with pytest.raises(SignatureVerificationError, match="300 s"):
            verify(BODY, header, SECRET, now=NOW + offset)


def test_a_fractional_clock_is_compared_exactly() -> None:
    header = sign(BODY, SECRET, NOW)
    verify(BODY, header, SECRET, now=NOW + 300.0)
    with pytest.raises(SignatureVerificationError):
        verify(BODY, header, SECRET, now=NOW + 300.5)


@pytest.mark.parametrize("tolerance", [-1, 1.5, None])
def test_tolerance_must_be_whole_seconds(tolerance: Any) -> None:
    with pytest.raises(ValueError, match="tolerance"):
        verify(BODY, sign(BODY, SECRET, NOW), SECRET, now=NOW, tolerance=tolerance)


# rotation -----------------------------------------------------------------------------


def test_any_v1_value_may_match() -> None:
    good = sign(BODY, SECRET, NOW).split(",")[1]
    bad = "v1=" + "0" * 64
    for header in (f"t={NOW},{good},{bad}", f"t={NOW},{bad},{good}", f"{good}, t={NOW}"):
        assert verify(BODY, header, SECRET, now=NOW)["id"] == "evt_1"
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(BODY, f"t={NOW},{bad},{bad}", SECRET, now=NOW)
    assert reason_of(excinfo) == "signature_mismatch"


def test_any_of_several_secrets_may_match() -> None:
    header = sign(BODY, SECRET, NOW)
    assert verify(BODY, header, [OTHER_SECRET, SECRET], now=NOW)["id"] == "evt_1"
    assert verify(BODY, header, (SECRET,), now=NOW)["id"] == "evt_1"
    with pytest.raises(SignatureVerificationError):
        verify(BODY, header, [OTHER_SECRET], now=NOW)


def test_uppercase_hex_and_other_schemes_are_tolerated() -> None:
    header = sign(BODY, SECRET, NOW)
    digest = header.split("v1=")[1]
    assert verify(BODY, f"t={NOW},v0=abc,v1={digest.upper()}", SECRET, now=NOW)


# malformed headers and the order of checks -------------------------------------------


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("", "malformed_header"),
        ("   ", "malformed_header"),
        ("garbage", "malformed_header"),
        ("v1=" + "0" * 64, "malformed_header"),
        ("t=abc,v1=" + "0" * 64, "malformed_header"),
        ("t=-5,v1=" + "0" * 64, "malformed_header"),
        ("t=,v1=" + "0" * 64, "malformed_header"),
        (f"t={NOW},t={NOW},v1=" + "0" * 64, "malformed_header"),
        ("t=1" + "0" * 20 + ",v1=" + "0" * 64, "malformed_header"),
        (f"t={NOW},v1=" + "0" * 10_000, "malformed_header"),
        (f"t={NOW}", "no_v1_signature"),
        (f"t={NOW},v0=" + "0" * 64, "no_v1_signature"),
        (f"t={NOW},V1=" + "0" * 64, "no_v1_signature"),
        (f"t={NOW},v1=", "signature_mismatch"),
        (f"t={NOW},v1=zz", "signature_mismatch"),
        (f"t={NOW},v1=" + "é" * 64, "signature_mismatch"),
    ],
)
def test_malformed_headers_have_distinct_reasons(header: str, reason: str) -> None:
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(BODY, header, SECRET, now=NOW)
    assert reason_of(excinfo) == reason
    assert excinfo.value.code == "INVALID_SIGNATURE"


def test_signature_is_checked_before_the_timestamp() -> None:
    stale = sign(BODY, OTHER_SECRET, NOW - 10_000)
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(BODY, stale, SECRET, now=NOW)
    assert reason_of(excinfo) == "signature_mismatch"


def test_timestamp_is_checked_before_the_json() -> None:
    body = b"not json"
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(body, sign(body, SECRET, NOW - 10_000), SECRET, now=NOW)
    assert reason_of(excinfo) == "timestamp_out_of_tolerance"


@pytest.mark.parametrize(
    "body",
    [b"not json", b"", b"[1, 2]", b'"text"', b"null", b'{"a": NaN}', b"\xff\xfe{", b"[" * 100_000],
)
def test_a_correctly_signed_non_object_is_invalid_json(body: bytes) -> None:
    with pytest.raises(SignatureVerificationError) as excinfo:
        verify(body, sign(body, SECRET, NOW), SECRET, now=NOW)
    assert reason_of(excinfo) == "invalid_json"
