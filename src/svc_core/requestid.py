"""The request-id rule (SPEC "Common behaviours" 3).

A caller's ``X-Request-ID`` is kept when it is 8 to 128 characters of ``[A-Za-z0-9_-]``;
anything else is replaced by ``req_`` plus 22 base64url characters made from 16 bytes
of entropy the caller passes in.
"""

from __future__ import annotations

import base64
import re

_ACCEPTED = re.compile(r"[A-Za-z0-9_-]{8,128}")
GENERATED = re.compile(r"req_[A-Za-z0-9_-]{22}")


def is_acceptable(value: str) -> bool:
    """True when a caller-supplied id may be echoed unchanged."""
    return _ACCEPTED.fullmatch(value) is not None


def generate(entropy: bytes) -> str:
    """A fresh id from 16 random bytes: ``req_`` + 22 base64url characters."""
    if len(entropy) != 16:
        raise ValueError("a request id needs exactly 16 bytes of entropy")
    return "req_" + base64.urlsafe_b64encode(entropy).decode("ascii").rstrip("=")


def resolve(supplied: str | None, entropy: bytes) -> str:
    """The id a response carries: the caller's when acceptable, else a generated one."""
    if supplied is not None and is_acceptable(supplied):
        return supplied
    return generate(entropy)
