"""Email addresses as identities: one documented rule for reading and comparing them.

An address is compared after ``normalize_email``: surrounding and inner whitespace,
control and format characters are refused (a no-break space is not invisible padding
here, it is a different address), it must hold exactly one ``@`` with a non-empty local
part and a dotted domain, at most 254 characters, and it is lower-cased **in ASCII
only**, local part and domain alike. Unicode case folding is never applied: it maps
``\u212a`` (KELVIN SIGN) to ``k``, so ``\u212aelly@example.com`` would become
``kelly@example.com`` and sign in as Kelly; so would NFC normalisation, which maps the
KELVIN SIGN to ``K``. Non-ASCII characters are compared exactly as sent.

Addresses in the reserved ``.invalid`` top-level domain (RFC 6761: it never resolves, so
no mailbox lives there) are refused too: svc names users without a usable address
``<subject>@users.invalid``, and no token, invitation or operator may claim one of those.
"""

from __future__ import annotations

import unicodedata

from svc_core.errors import InvalidBody

MAX_EMAIL = 254
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def normalize_email(text: str, *, field: str = "email") -> str:
    """``text`` as a comparable address (see the module docstring), or ``InvalidBody``."""
    bad = InvalidBody(
        f"'{field}' must be an email address such as ana@example.com.",
        hint="No spaces or invisible characters; one @ between a name and a domain.",
    )
    if not isinstance(text, str) or not 0 < len(text) <= MAX_EMAIL:
        raise bad
    for char in text:
        if char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Zs"):
            raise bad
    local, at, domain = text.partition("@")
    if not at or not local or "@" in domain or "." not in domain.strip("."):
        raise bad
    if domain.startswith(".") or domain.endswith(".") or ".." in domain:
        raise bad
    lowered = text.translate(_ASCII_LOWER)
    if lowered.endswith(".invalid"):
        raise bad
    return lowered
