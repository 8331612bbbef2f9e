"""Credentials hidden from any text that shows a URL (a reason, a log line, a status).

svc sends two secrets in query strings: data.go.kr's ``serviceKey`` and R-ONE's
``KEY``; a database URL may carry a password. An upstream that redirects to the
request's own URL, an error that quotes the URL called, or a printed database URL
would show them. ``redact_url`` is the one function every such text passes through.
"""

from __future__ import annotations

import re

HIDDEN = "***"
"""What a hidden value is shown as."""

CREDENTIAL_PARAMS = ("serviceKey", "KEY")
"""Query parameters that carry a key (matched without regard to case, as data.go.kr
reads ``ServiceKey`` too)."""

_PARAM = re.compile(
    r"(?<![A-Za-z_])(" + "|".join(CREDENTIAL_PARAMS) + r")(=|%3D)[^&#\s'\"<>]*",
    re.IGNORECASE,
)
_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]*):[^\s'\"]*@")
# A password runs to the last ``@`` of the URL: one typed with a raw ``/`` or ``@`` in it
# is hidden whole (an ``@`` later in a URL hides what lies before it too).


def redact_url(text: str) -> str:
    """``text`` with the value of every ``serviceKey`` or ``KEY`` query parameter, and
    the password of every ``scheme://user:password@host``, shown as ``***``; the
    rest unchanged. Works on any text, so a reason quoting a URL passes through whole."""
    return _PASSWORD.sub(rf"\1:{HIDDEN}@", _PARAM.sub(rf"\1\2{HIDDEN}", text))
