"""What a webhook endpoint receives of ``data.updated``: its filters (issue 31).

An endpoint may narrow the change records it is sent to districts, property types and
transaction types; a key left out keeps every value. Pure: checked here from a request
body (``validate_filters``, a 400 ``InvalidBody`` for anything else) and applied to a
change record as the API serves it (``filter_keeps``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from svc_core.errors import InvalidBody
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.regions import aliases

FILTER_KEYS: tuple[str, ...] = ("sigungu_codes", "property_types", "transaction_types")
"""What an endpoint's ``filters`` may hold."""
MAX_FILTER_VALUES = 100
_CODE = re.compile(r"[0-9]{5}", re.ASCII)

Filters = dict[str, list[str]]
"""An endpoint's ``data.updated`` filters: ``FILTER_KEYS`` to the values kept (a key
absent keeps any value)."""


def validate_filters(value: object) -> Filters:
    """An endpoint's ``filters`` field from a request body, checked: an object of
    ``sigungu_codes`` (5-digit codes), ``property_types`` and ``transaction_types``
    (``svc_core.models``), each a non-empty list of at most ``MAX_FILTER_VALUES``
    values, de-duplicated in order; ``None`` or ``{}`` keeps every change."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidBody(
            "filters must be an object.",
            hint='For example {"sigungu_codes": ["11680"], "property_types": ["office"]}.',
        )
    unknown = sorted(repr(k)[:40] for k in value if k not in FILTER_KEYS)
    if unknown:
        raise InvalidBody(
            f"Unknown filter(s): {', '.join(unknown)}.", hint=f"Allowed: {', '.join(FILTER_KEYS)}."
        )
    out: Filters = {}
    for key in FILTER_KEYS:
        if key not in value:
            continue
        items = value[key]
        if not isinstance(items, list) or not items or len(items) > MAX_FILTER_VALUES:
            raise InvalidBody(
                f"filters.{key} must be a list of 1 to {MAX_FILTER_VALUES} values.",
                hint="Leave the key out to keep every value.",
            )
        allowed = _filter_values(key)
        kept: list[str] = []
        for item in items:
            if not isinstance(item, str) or not (
                _CODE.fullmatch(item) if allowed is None else item in allowed
            ):
                shown = item[:64] if isinstance(item, str) else type(item).__name__
                hint = (
                    "A 5-digit district code such as 11680."
                    if allowed is None
                    else (f"Allowed: {', '.join(allowed)}.")
                )
                raise InvalidBody(f"filters.{key} holds {shown!r}.", hint=hint)
            if item not in kept:
                kept.append(item)
        out[key] = kept
    return out


def _filter_values(key: str) -> tuple[str, ...] | None:
    """The values a filter key allows (None: district codes, checked by pattern)."""
    if key == "property_types":
        return PROPERTY_TYPES
    if key == "transaction_types":
        return TRANSACTION_TYPES
    return None


def filter_keeps(filters: Mapping[str, Sequence[str]], change: Mapping[str, Any]) -> bool:
    """Whether an endpoint's ``filters`` keep a change record (``record_json``): its
    district is listed (or one the district was stored under before a renumbering),
    and it touched a listed property type and a listed transaction type."""
    codes = set(filters.get("sigungu_codes") or ())
    code = str(change["sigungu_code"])
    if codes and code not in codes and not codes & aliases(code):
        return False
    for key in ("property_types", "transaction_types"):
        wanted = set(filters.get(key) or ())
        if wanted and not wanted & set(change[key]):
            return False
    return True
