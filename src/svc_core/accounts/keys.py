"""API keys: the plaintext format, hashing, status, and the create/patch/rotate bodies.

A key is ``svc_pk_{live|test}_<32 lowercase hex>``: 16 random bytes, so 128 bits of
entropy. That makes a fast digest the right storage (SHA-256, or HMAC-SHA256 with a
pepper): a slow password hash would only add latency to every request. Text that does
not match the format exactly is refused before any lookup.

Stored status moves ``active -> grace`` (rotated) ``-> expired`` (past ``grace_until``),
and ``active|grace -> revoked``; ``key_status`` derives the status in force at ``now``.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import re
import unicodedata

import attrs

from svc_core.accounts.iprules import MAX_ALLOWLIST, format_allowlist, parse_allowlist
from svc_core.errors import InvalidBody, Unauthorized
from svc_core.fields import Field, read_body

MODES: tuple[str, ...] = ("live", "test")
SCOPES: tuple[str, ...] = ("read_only", "admin")
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


class KeyStatus(enum.StrEnum):
    """A key's status, as stored and as ``key_status`` derives it."""

    ACTIVE = "active"
    GRACE = "grace"
    """Rotated: works until ``grace_until``."""
    REVOKED = "revoked"
    EXPIRED = "expired"


_STORED = {status.value: status for status in KeyStatus}
"""Statuses by stored text (a dict lookup: ``KeyStatus(text)`` costs a key check more
than the rest of it, on every call of a key)."""
WORKING = frozenset({KeyStatus.ACTIVE, KeyStatus.GRACE})
"""The statuses whose key admits a call."""


def key_status(stored_status: str, grace_until: float | None, now: float) -> KeyStatus:
    """The status in force at ``now`` (Unix seconds).

    A key with a ``grace_until`` works while ``now < grace_until`` and is ``expired`` from
    that instant; a ``grace`` key without one is treated as expired (fail closed).
    """
    stored = _STORED.get(stored_status)
    if stored is None:
        raise ValueError(f"unknown stored key status {stored_status!r}")
    if stored is KeyStatus.REVOKED or stored is KeyStatus.EXPIRED:
        return stored
    if grace_until is not None:
        return KeyStatus.GRACE if now < grace_until else KeyStatus.EXPIRED
    return KeyStatus.EXPIRED if stored is KeyStatus.GRACE else KeyStatus.ACTIVE


# bodies --------------------------------------------------------------------------------


def _label(value: str) -> str:
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


def _allowlist(value: list[object]) -> tuple[str, ...]:
    return tuple(format_allowlist(parse_allowlist(value, field="ip_allowlist")))


LABEL = Field(
    name="label",
    description=f"1 to {MAX_LABEL_CHARS} printable characters, no surrounding whitespace.",
    required=True,
    check=_label,
    hint=f"Send 1 to {MAX_LABEL_CHARS} characters.",
    doc={"minLength": 1, "maxLength": MAX_LABEL_CHARS, "pattern": "^\\S(.*\\S)?$"},
)
MODE = Field(
    name="mode",
    description="live keys count against the monthly quota; test keys never do.",
    kind="enum",
    choices=MODES,
    required=True,
)
SCOPE = Field(
    name="scope",
    description="Recorded and shown; both scopes read every /api/v1 endpoint.",
    kind="enum",
    choices=SCOPES,
    required=True,
)
IP_ALLOWLIST = Field(
    name="ip_allowlist",
    description="Addresses allowed to use the key; empty = any.",
    kind="array",
    max_length=MAX_ALLOWLIST,
    check=_allowlist,
    hint="Send [] to allow any address, or omit the field.",
    doc={
        "items": {
            "type": "string",
            "description": "IPv4 or IPv6 CIDR such as 203.0.113.0/24.",
            "maxLength": 64,
        }
    },
)
GRACE_PERIOD = Field(
    name="grace_period_seconds",
    description="How long the old key keeps working.",
    kind="integer",
    low=0,
    high=MAX_GRACE_SECONDS,
    default=DEFAULT_GRACE_SECONDS,
    hint=f"The default is {DEFAULT_GRACE_SECONDS} (one day).",
)
CREATE_FIELDS: tuple[Field, ...] = (LABEL, MODE, SCOPE, IP_ALLOWLIST)
PATCH_FIELDS: tuple[Field, ...] = (attrs.evolve(LABEL, required=False), IP_ALLOWLIST)
ROTATE_FIELDS: tuple[Field, ...] = (GRACE_PERIOD,)
"""The bodies of create, patch and rotate, declared once (validation and the reference)."""


def validate_key_create(body: object) -> KeyCreate:
    """Validate a create body: ``label``, ``mode`` and ``scope`` required; 400 otherwise."""
    fields = read_body(CREATE_FIELDS, body, read_only=READ_ONLY_FIELDS)
    return KeyCreate(
        label=fields["label"],
        mode=fields["mode"],
        scope=fields["scope"],
        ip_allowlist=fields.get("ip_allowlist", ()),
    )


def validate_key_patch(body: object) -> KeyPatch:
    """Validate a patch body: only ``label`` and ``ip_allowlist`` may change."""
    fields = read_body(PATCH_FIELDS, body, read_only=(*READ_ONLY_FIELDS, "mode", "scope"))
    return KeyPatch(label=fields.get("label"), ip_allowlist=fields.get("ip_allowlist"))


def validate_rotate(body: object) -> int:
    """The grace period of a rotation in seconds: 0 to 604800, default 86400.

    An absent body (None) or ``{}`` takes the default.
    """
    if body is None:
        return DEFAULT_GRACE_SECONDS
    return int(read_body(ROTATE_FIELDS, body)["grace_period_seconds"])
