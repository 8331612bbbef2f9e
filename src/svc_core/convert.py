"""One converter from typed results to JSON-ready values, used by the server and by
library users alike, so both produce the same bytes.

attrs values become dicts with their fields in declaration order (SPEC order for rows);
tuples, lists and sets become lists; dicts keep their order; every ``datetime`` becomes
ISO-8601 UTC with ``Z`` (``svc_core.instants.iso``). Fields whose type holds
only plain values (``str``, ``int``, ``float``, ``bool``, ``None``, and dicts of them)
are copied by reference, not walked, and sequences of them are copied with ``list``:
the pulse hot path converts cached rows on every call, and results are never mutated.

A stored row is served as declared, so no second class repeats its fields: a field with
``metadata=HIDDEN`` (a secret, a hash, bookkeeping) is left out, and one with
``metadata=INSTANT`` (Unix seconds, as stored) becomes ISO-8601 text like a ``datetime``.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping, Sequence, Set
from datetime import datetime
from typing import Any

import attrs
import cattrs
from cattrs.fns import identity
from cattrs.gen import make_dict_unstructure_fn, override

from svc_core.instants import iso, iso_or_none

SERVED = "svc.served"
"""The attrs metadata key that says how a field is served."""
HIDDEN: Mapping[str, str] = {SERVED: "hidden"}
"""Field metadata: left out when the row is served."""
INSTANT: Mapping[str, str] = {SERVED: "instant"}
"""Field metadata: Unix seconds (or None), served as ISO-8601 UTC text."""

PLAIN: frozenset[Any] = frozenset({str, int, float, bool, type(None)})


def _plain(kind: Any) -> bool:
    """Whether values of ``kind`` are already JSON-ready (plain scalars, their unions and
    dicts of them)."""
    if kind in PLAIN:
        return True
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType, dict):
        return all(_plain(arg) for arg in typing.get_args(kind))
    return False


def _plain_sequence(kind: Any) -> bool:
    """A tuple, list or set type of plain values (``tuple[str, ...]``)."""
    if typing.get_origin(kind) not in (tuple, list, set, frozenset):
        return False
    return all(arg is Ellipsis or _plain(arg) for arg in typing.get_args(kind))


def _marked(cls: Any) -> bool:
    """An attrs class with a field marked ``HIDDEN`` or ``INSTANT``."""
    return attrs.has(cls) and any(SERVED in f.metadata for f in attrs.fields(cls))


def _served(cls: Any) -> Callable[[Any], dict[str, Any]]:
    """The unstructure function of a marked class: hidden fields out, instants as text."""
    overrides: dict[str, Any] = {
        f.name: override(omit=True)
        if f.metadata[SERVED] == "hidden"
        else override(unstruct_hook=iso_or_none)
        for f in attrs.fields(cls)
        if SERVED in f.metadata
    }
    return make_dict_unstructure_fn(cls, converter, **overrides)


converter = cattrs.Converter(unstruct_collection_overrides={Sequence: list, Set: list})
converter.register_unstructure_hook_func(_plain, identity)
converter.register_unstructure_hook_func(_plain_sequence, list)
converter.register_unstructure_hook(tuple, lambda value: [converter.unstructure(v) for v in value])
converter.register_unstructure_hook(datetime, iso)
converter.register_unstructure_hook_factory(_marked, _served)


def to_json(value: Any) -> Any:
    """``value`` (attrs values, containers of them, plain values) as JSON-ready data."""
    return converter.unstructure(value)
