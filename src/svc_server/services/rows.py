"""Service rows built from store rows by their shared fields."""

from __future__ import annotations

from typing import Any, TypeVar

import attrs
from attrs import AttrsInstance

T = TypeVar("T", bound=AttrsInstance)


def same_fields(cls: type[T], row: object, **given: Any) -> T:
    """A ``cls`` (an attrs class) whose fields are ``row``'s fields of the same names,
    but for the values ``given`` (a field converted on the way, such as a stored instant
    served as a ``datetime``, or one ``row`` does not have)."""
    copied = {f.name: getattr(row, f.name) for f in attrs.fields(cls) if f.name not in given}
    return cls(**copied, **given)
