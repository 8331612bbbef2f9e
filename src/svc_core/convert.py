"""One converter from typed results to JSON-ready values, used by the server and by
library users alike, so both produce the same bytes.

attrs values become dicts with their fields in declaration order (SPEC order for rows);
tuples, lists and sets become lists; dicts keep their order; every ``datetime`` becomes
ISO-8601 UTC with ``Z`` (``svc_core.instants.iso``). Fields whose type holds
only plain values (``str``, ``int``, ``float``, ``bool``, ``None``, and dicts of them)
are copied by reference, not walked, and sequences of them are copied with ``list``:
the pulse hot path converts cached rows on every call, and results are never mutated.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence, Set
from datetime import datetime
from typing import Any

import cattrs
from cattrs.fns import identity

from svc_core.instants import iso

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


converter = cattrs.Converter(unstruct_collection_overrides={Sequence: list, Set: list})
converter.register_unstructure_hook_func(_plain, identity)
converter.register_unstructure_hook_func(_plain_sequence, list)
converter.register_unstructure_hook(tuple, lambda value: [converter.unstructure(v) for v in value])
converter.register_unstructure_hook(datetime, iso)


def to_json(value: Any) -> Any:
    """``value`` (attrs values, containers of them, plain values) as JSON-ready data."""
    return converter.unstructure(value)
