"""The one converter at the edge: typed service results (frozen attrs values) to JSON.

Attributes become object fields in declaration order, tuples become arrays and every
``datetime`` becomes ISO-8601 UTC with ``Z`` (``svc_core.instants.iso``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import cattrs

from svc_core.instants import iso

_converter = cattrs.Converter()
_converter.register_unstructure_hook(datetime, iso)


def to_json(value: Any) -> Any:
    """``value`` as plain JSON-ready data (dicts, lists, strings, numbers, None)."""
    return _converter.unstructure(value)
