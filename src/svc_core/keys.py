"""API keys: the plaintext format, hashing, status, and the create/patch/rotate bodies.

A key is ``svc_pk_{live|test}_<32 lowercase hex>``: 16 random bytes, so 128 bits of
entropy. That makes a fast digest the right storage (SHA-256, or HMAC-SHA256 with a
pepper): a slow password hash would only add latency to every request. Text that does
not match the format exactly is refused before any lookup.

Stored status moves ``active -> grace`` (rotated) ``-> expired`` (past ``grace_until``),
and ``active|grace -> revoked``; ``key_status`` derives the status in force at ``now``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Mapping

import attrs

from svc_core.errors import InvalidBody, Unauthorized
from svc_core.iprules import format_allowlist, parse_allowlist

MODES: tuple[str, ...] = ("live", "test")
SCOPES: tuple[str, ...] = ("read_only", "admin")
STATUSES: tuple[str, ...] = ("active", "grace", "revoked", "expired")
ENTROPY_BYTES = 16
PREFIX_CHARS = 16
MAX_LABEL_CHARS = 64
DEFAULT_GRACE_SECONDS = 86_400
MAX_GRACE_SECONDS = 604_800

_KEY = re.compile(r"svc_pk_(live|test)_[0-9a-f]{32}")
_KEY_CHARS = len("svc_pk_live_") + 32
_KEY_HINT = "API keys look like svc_pk_live_ (or svc_pk_test_) followed by 32 lowercase hex digits."

READ_ONLY_FIELDS: tuple[str, ...] = (
    "id",
    "key",
    "key_hash",
    "prefix",
    "status",
    "created_at",
    "grace_until",
    "last_used_at",
    "revoked_at",
)
CREATE_FIELDS: tuple[str, ...] = ("label", "mode", "scope", "ip_allowlist")
PATCH_FIELDS: tuple[str, ...] = ("label", "ip_allowlist")
ROTATE_FIELDS: tuple[str, ...] = ("grace_period_seconds",)

# Bidirectional controls can make a label display as something else (U+202E and friends).
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


@attrs.frozen(kw_only=True)
class ParsedKey:
    """A well-formed plaintext key: its mode and display prefix."""

    mode: str
    prefix: str


@attrs.frozen(kw_only=True)
class KeyCreate:
    """A validated ``POST /api/auth/me/keys`` body; ``ip_allowlist`` in canonical CIDR text."""

    label: str
    mode: str = attrs.field(validator=attrs.validators.in_(MODES))
    scope: str = attrs.field(validator=attrs.validators.in_(SCOPES))
    ip_allowlist: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class KeyPatch:
    """A validated ``PATCH /api/auth/me/keys/{id}`` body; None leaves a field unchanged."""

    label: str | None = None
    ip_allowlist: tuple[str, ...] | None = None


# format --------------------------------------------------------------------------------


def generate_key(mode: str, entropy: bytes) -> str:
    """A new plaintext key from 16 random bytes."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}: {mode!r}")
    if not isinstance(entropy, bytes) or len(entropy) != ENTROPY_BYTES:
        raise ValueError(f"entropy must be exactly {ENTROPY_BYTES} bytes")
    return f"svc_pk_{mode}_{entropy.hex()}"


def parse_key(text: object) -> ParsedKey:
    """Check a presented key's format, or raise ``Unauthorized`` (401) without echoing it."""
    if not isinstance(text, str) or len(text) != _KEY_CHARS:
        raise Unauthorized("Malformed API key.", hint=_KEY_HINT)
    match = _KEY.fullmatch(text)
    if match is None:
        raise Unauthorized("Malformed API key.", hint=_KEY_HINT)
    return ParsedKey(mode=match.group(1), prefix=text[:PREFIX_CHARS])


def hash_key(plaintext: str, pepper: bytes | None = None) -> str:
    """The stored digest: SHA-256 hex, or HMAC-SHA256 hex keyed with ``pepper``."""
    data = plaintext.encode("utf-8")
    if pepper is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(pepper, data, hashlib.sha256).hexdigest()


def key_prefix(plaintext: str) -> str:
    """The first 16 characters (``svc_pk_live_ab12``): shown in lists, never secret."""
    return plaintext[:PREFIX_CHARS]


# status --------------------------------------------------------------------------------


def key_status(stored_status: str, grace_until: float | None, now: float) -> str:
    """The status in force at ``now`` (Unix seconds).

    A key with a ``grace_until`` works while ``now < grace_until`` and is ``expired`` from
    that instant; a ``grace`` key without one is treated as expired (fail closed).
    """
    if stored_status not in STATUSES:
        raise ValueError(f"unknown stored key status {stored_status!r}")
    if stored_status in ("revoked", "expired"):
        return stored_status
    if grace_until is not None:
        return "grace" if now < grace_until else "expired"
    return "expired" if stored_status == "grace" else "active"


def is_usable(stored_status: str, grace_until: float | None, now: float) -> bool:
    """May the key authenticate a request at ``now``?"""
    return key_status(stored_status, grace_until, now) in ("active", "grace")


# bodies --------------------------------------------------------------------------------


def _object(
    body: object, allowed: tuple[str, ...], read_only: tuple[str, ...]
) -> Mapping[str, object]:
    if not isinstance(body, Mapping):
        raise InvalidBody(
            "The request body must be a JSON object.",
            hint=f"Allowed fields: {', '.join(allowed)}.",
        )
    fixed = sorted(str(name) for name in body if name in read_only)
    if fixed:
        raise InvalidBody(
            f"Read-only field(s) cannot be set: {', '.join(fixed)}.",
            hint=f"Allowed fields: {', '.join(allowed)}.",
        )
    unknown = sorted(repr(name)[:66] for name in body if name not in allowed)
    if unknown:
        raise InvalidBody(
            f"Unknown field(s): {', '.join(unknown)}.",
            hint=f"Allowed fields: {', '.join(allowed)}.",
        )
    return body


def _label(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidBody(
            f"label must be a string, not {_kind(value)}.",
            hint=f"Send 1 to {MAX_LABEL_CHARS} characters.",
        )
    if not value.strip():
        raise InvalidBody("label must not be empty or only whitespace.")
    if len(value) > MAX_LABEL_CHARS:
        raise InvalidBody(
            f"label is {len(value)} characters long; at most {MAX_LABEL_CHARS} are allowed."
        )
    if value != value.strip():
        raise InvalidBody(
            "label must not start or end with whitespace.", hint="Trim the label and resend."
        )
    for char in value:
        category = unicodedata.category(char)
        if category in ("Cc", "Cs") or char in _BIDI_CONTROLS:
            raise InvalidBody(
                f"label contains a control character (U+{ord(char):04X}).",
                hint="Use printable text only.",
            )
    return value


def _choice(body: Mapping[str, object], name: str, choices: tuple[str, ...]) -> str:
    if name not in body:
        raise InvalidBody(
            f"{name} is required.", hint=f"{name} must be one of: {', '.join(choices)}."
        )
    value = body[name]
    if not isinstance(value, str) or value not in choices:
        raise InvalidBody(
            f"{name} must be one of: {', '.join(choices)}.", hint=f"Got {_shown(value)}."
        )
    return value


def _allowlist(value: object) -> tuple[str, ...]:
    if value is None:
        raise InvalidBody(
            "ip_allowlist must be an array of CIDR strings, not null.",
            hint="Send [] to allow any address, or omit the field.",
        )
    return tuple(format_allowlist(parse_allowlist(value, field="ip_allowlist")))


def _shown(value: object) -> str:
    """A short, safe rendering of a client value for a hint."""
    if isinstance(value, str):
        return repr(value[:64])
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**15:
        return repr(value)
    if isinstance(value, float) and abs(value) < 1e15:
        return repr(value)
    return _kind(value)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def validate_key_create(body: object) -> KeyCreate:
    """Validate a create body: ``label``, ``mode`` and ``scope`` required; 400 otherwise."""
    fields = _object(body, CREATE_FIELDS, READ_ONLY_FIELDS)
    if "label" not in fields:
        raise InvalidBody("label is required.", hint=f"Send 1 to {MAX_LABEL_CHARS} characters.")
    label = _label(fields["label"])
    mode = _choice(fields, "mode", MODES)
    scope = _choice(fields, "scope", SCOPES)
    allowlist = _allowlist(fields["ip_allowlist"]) if "ip_allowlist" in fields else ()
    return KeyCreate(label=label, mode=mode, scope=scope, ip_allowlist=allowlist)


def validate_key_patch(body: object) -> KeyPatch:
    """Validate a patch body: only ``label`` and ``ip_allowlist`` may change."""
    fields = _object(body, PATCH_FIELDS, (*READ_ONLY_FIELDS, "mode", "scope"))
    return KeyPatch(
        label=_label(fields["label"]) if "label" in fields else None,
        ip_allowlist=_allowlist(fields["ip_allowlist"]) if "ip_allowlist" in fields else None,
    )


def validate_rotate(body: object) -> int:
    """The grace period of a rotation in seconds: 0 to 604800, default 86400.

    An absent body (None) or ``{}`` takes the default.
    """
    if body is None:
        return DEFAULT_GRACE_SECONDS
    fields = _object(body, ROTATE_FIELDS, ())
    if "grace_period_seconds" not in fields:
        return DEFAULT_GRACE_SECONDS
    value = fields["grace_period_seconds"]
    if type(value) is not int or not 0 <= value <= MAX_GRACE_SECONDS:
        raise InvalidBody(
            f"grace_period_seconds must be an integer from 0 to {MAX_GRACE_SECONDS}.",
            hint=f"Got {_shown(value)}; the default is {DEFAULT_GRACE_SECONDS} (one day).",
        )
    return value
