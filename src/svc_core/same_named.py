"""Views of one record built from another: the fields they share by name are copied,
so a view names only the fields it renames or computes (``SameNamed``)."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, Generic, TypeVar

import attrs

T = TypeVar("T")


def field_names(cls: Any) -> tuple[str, ...]:
    """The fields of an attrs class or a NamedTuple, in order."""
    if attrs.has(cls):
        return tuple(f.name for f in attrs.fields(cls))
    return tuple(cls._fields)


class SameNamed(Generic[T]):
    """Builds ``target`` values (an attrs class or a NamedTuple) from ``source`` values:
    each field of ``target`` that ``source`` has under the same name is copied as it is;
    the call gives the others (and a value it gives for a shared field takes that
    field's place)."""

    def __init__(self, target: Callable[..., T], source: type) -> None:
        theirs = set(field_names(source))
        self._target = target
        self.names = tuple(name for name in field_names(target) if name in theirs)
        get = attrgetter(*self.names)  # a tuple of the values, but for a single name
        self._get = get if len(self.names) > 1 else lambda value: (get(value),)

    def __call__(self, value: object, **given: Any) -> T:
        copied = dict(zip(self.names, self._get(value), strict=True))
        copied.update(given)
        return self._target(**copied)
