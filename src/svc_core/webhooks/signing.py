"""Webhook secrets and the ``X-Svc-Signature`` header (SPEC "Delivery request").

The header looks like Stripe's, ``t=<unix seconds>,v1=<hex>``, but the HMAC key is not:
it is the secret with ``whsec_`` removed and the remaining 64 hex characters decoded to 32
bytes. stripe-python keys its HMAC with the whole secret string, so its verifier rejects
our signatures (a test keeps it that way). The signed message is ``b"<t>." + raw body``.

``verify`` is the receiver side. It takes the clock as the keyword ``now`` instead of
reading it, so this module stays pure and tests need no clock freezing. Checks run in a
fixed order, each with its own ``SignatureVerificationError.reason``:

1. parse the header (``malformed_header``, ``no_v1_signature``);
2. compare every ``v1`` value against every secret in constant time
   (``signature_mismatch``): any match passes, which covers secret rotation;
3. the timestamp must be within ``tolerance`` seconds of ``now`` in either direction
   (``timestamp_out_of_tolerance``): a future timestamp is as suspect as a stale one;
4. the body must be a JSON object (``invalid_json``).

The signature is checked before the timestamp so that an attacker learns nothing about
the clock window from an unsigned request.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from typing import Any

from svc_core.errors import InvalidParams, SignatureVerificationError

__all__ = [
    "DEFAULT_TOLERANCE",
    "MAX_HEADER_LENGTH",
    "SCHEME",
    "SECRET_PREFIX",
    "generate_secret",
    "secret_key",
    "sign",
    "verify",
]

SECRET_PREFIX = "whsec_"  # noqa: S105  (a prefix, not a secret)
SCHEME = "v1"
DEFAULT_TOLERANCE = 300
"""Seconds a receiver accepts between the signed timestamp and its own clock (SPEC)."""

_SECRET_HEX = re.compile(r"[0-9a-fA-F]{64}")
_SIGNATURE_HEX = re.compile(r"[0-9a-fA-F]{64}")
_TIMESTAMP = re.compile(r"[0-9]{1,15}")
MAX_HEADER_LENGTH = 8192
"""Longer headers are refused as malformed before any work is done."""


def generate_secret(entropy: bytes) -> str:
    """A new endpoint secret: ``whsec_`` + 64 lowercase hex from 32 random bytes."""
    if len(entropy) != 32:
        raise ValueError("a webhook secret needs exactly 32 bytes of entropy")
    return SECRET_PREFIX + entropy.hex()


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: the 32 bytes hex-encoded after ``whsec_``.

    Surrounding whitespace (a trailing newline from an env file) is ignored; anything
    else that is not ``whsec_`` + 64 hex characters is ``InvalidParams``. The message
    never repeats the secret.
    """
    if not isinstance(secret, str):
        raise InvalidParams("The webhook secret must be a string.")
    text = secret.strip()
    if not text.startswith(SECRET_PREFIX):
        hint = " (an API key was given)" if text.startswith("svc_pk_") else ""
        raise InvalidParams(
            f"The webhook secret must start with {SECRET_PREFIX!r}{hint}.",
            hint="Use the secret_plaintext returned when the endpoint was created.",
        )
    body = text[len(SECRET_PREFIX) :]
    if _SECRET_HEX.fullmatch(body) is None:
        raise InvalidParams(
            f"The webhook secret must be {SECRET_PREFIX!r} followed by 64 hex characters "
            f"(got {len(body)} characters after the prefix)."
        )
    return bytes.fromhex(body)


def _digest(key: bytes, timestamp: int, payload: bytes) -> str:
    message = b"%d.%b" % (timestamp, payload)
    return hmac.digest(key, message, hashlib.sha256).hex()  # one C call, no HMAC object


def sign(payload: bytes, secret: str, timestamp: int) -> str:
    """The ``X-Svc-Signature`` value for a raw body sent at ``timestamp`` (Unix seconds)."""
    if type(timestamp) is not int or timestamp < 0:
        raise ValueError("the signature timestamp must be a non-negative int (Unix seconds)")
    return f"t={timestamp},{SCHEME}={_digest(secret_key(secret), timestamp, bytes(payload))}"


def _parse_header(header: str) -> tuple[int, list[str]]:
    """The timestamp and the well-formed ``v1`` values of a signature header."""
    if not isinstance(header, str) or not header.strip() or len(header) > MAX_HEADER_LENGTH:
        raise SignatureVerificationError(
            "The signature header is missing or too long.", reason="malformed_header"
        )
    timestamp: int | None = None
    candidates: list[str] = []
    seen_v1 = False
    for item in header.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep:
            raise SignatureVerificationError(
                "The signature header has an item without '='.", reason="malformed_header"
            )
        name = name.strip()
        value = value.strip()
        if name == "t":
            if timestamp is not None or _TIMESTAMP.fullmatch(value) is None:
                raise SignatureVerificationError(
                    "The signature header needs exactly one numeric 't=' timestamp.",
                    reason="malformed_header",
                )
            timestamp = int(value)
        elif name == SCHEME:
            seen_v1 = True
            if _SIGNATURE_HEX.fullmatch(value) is not None:
                candidates.append(value.lower())
    if timestamp is None:
        raise SignatureVerificationError(
            "The signature header has no 't=' timestamp.", reason="malformed_header"
        )
    if not seen_v1:
        raise SignatureVerificationError(
            "The signature header has no 'v1=' signature.", reason="no_v1_signature"
        )
    return timestamp, candidates


def _keys(secret: str | Sequence[str]) -> list[bytes]:
    secrets = [secret] if isinstance(secret, str) else list(secret)
    if not secrets:
        raise InvalidParams("At least one webhook secret is needed to verify a signature.")
    return [_cached_key(s) if type(s) is str else secret_key(s) for s in secrets]


@functools.lru_cache(maxsize=64)
def _cached_key(secret: str) -> bytes:
    """``secret_key`` remembered per secret string: a receiver verifies with few of them."""
    return secret_key(secret)


def verify(
    payload: bytes | bytearray | str,
    header: str,
    secret: str | Sequence[str],
    *,
    now: int | float,
    tolerance: int = DEFAULT_TOLERANCE,
) -> dict[str, Any]:
    """Check a delivery and return its event (the parsed JSON body).

    ``payload`` is the raw request body exactly as received (a ``str`` is taken as its
    UTF-8 encoding); ``secret`` may be several secrets during a rotation; ``now`` is the
    receiver's clock in Unix seconds. Raises ``SignatureVerificationError`` with one of the
    reasons listed in the module docstring, and ``InvalidParams`` for a malformed secret.
    """
    if type(tolerance) is not int or tolerance < 0:
        raise ValueError("tolerance must be a non-negative int (seconds)")
    keys = _keys(secret)
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    timestamp, candidates = _parse_header(header)
    expected = [_digest(key, timestamp, body).encode("ascii") for key in keys]
    matched = False
    for candidate in candidates:
        for digest in expected:
            matched |= hmac.compare_digest(digest, candidate.encode("ascii"))
    if not matched:
        raise SignatureVerificationError(
            "No v1 signature matches the payload and secret.", reason="signature_mismatch"
        )
    if abs(now - timestamp) > tolerance:
        raise SignatureVerificationError(
            f"The signature timestamp is more than {tolerance} s from the current time.",
            reason="timestamp_out_of_tolerance",
        )
    try:
        # What json.loads(bytes) does, with one decoder built once instead of per call.
        event = _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))
    except (ValueError, RecursionError):
        raise SignatureVerificationError(
            "The payload is not valid JSON.", reason="invalid_json"
        ) from None
    if not isinstance(event, dict):
        raise SignatureVerificationError("The payload is not a JSON object.", reason="invalid_json")
    return event


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
