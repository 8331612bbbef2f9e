"""Strict query-parameter validation shared by every endpoint.

Unknown, repeated and malformed parameters are ``InvalidParams`` (400) with a hint that
names what is allowed, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from svc_core.errors import InvalidParams

_SIGUNGU = re.compile(r"\d{5}")
_INT = re.compile(r"-?\d{1,18}")


def strict_query(pairs: Sequence[tuple[str, str]], allowed: Collection[str]) -> dict[str, str]:
    """Turn query pairs into a dict, refusing unknown, repeated, empty-named or NUL values."""
    allowed_text = ", ".join(sorted(allowed)) or "none"
    out: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            raise InvalidParams(
                f"Unknown query parameter {name[:64]!r}.",
                hint=f"Allowed parameters: {allowed_text}.",
            )
        if name in out:
            raise InvalidParams(
                f"Query parameter {name!r} is repeated.", hint="Send each parameter at most once."
            )
        if "\x00" in value:
            raise InvalidParams(f"Query parameter {name!r} contains a NUL byte.")
        out[name] = value
    return out


def optional(params: Mapping[str, str], name: str) -> str | None:
    """A parameter's value, or None when absent. An empty value counts as absent."""
    value = params.get(name)
    return value if value else None


def required(params: Mapping[str, str], name: str, *, hint: str | None = None) -> str:
    """A parameter that must be present and non-empty."""
    value = params.get(name)
    if not value:
        raise InvalidParams(f"Query parameter {name!r} is required.", hint=hint)
    return value


def enum(
    params: Mapping[str, str], name: str, choices: Sequence[str], default: str | None = None
) -> str | None:
    """A parameter restricted to ``choices``; ``default`` when absent."""
    value = optional(params, name)
    if value is None:
        return default
    if value not in choices:
        raise InvalidParams(
            f"Query parameter {name!r} must be one of: {', '.join(choices)}.",
            hint=f"Got {value[:64]!r}.",
        )
    return value


def sigungu_code(value: str, name: str = "sigungu_code") -> str:
    """A 5-digit district code."""
    if not _SIGUNGU.fullmatch(value):
        raise InvalidParams(
            f"Query parameter {name!r} must be a 5-digit district code such as 11680.",
            hint="List valid codes with GET /api/v1/real-estate/dimensions.",
        )
    return value


def integer(params: Mapping[str, str], name: str, *, low: int, high: int, default: int) -> int:
    """A decimal integer within ``[low, high]``; ``default`` when absent."""
    value = optional(params, name)
    if value is None:
        return default
    if not _INT.fullmatch(value) or not low <= int(value) <= high:
        raise InvalidParams(
            f"Query parameter {name!r} must be an integer from {low} to {high}.",
            hint=f"Got {value[:64]!r}.",
        )
    return int(value)
