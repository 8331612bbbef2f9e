"""The columns of ``svc export``'s files, one dataset each, with their types.

``transactions``: every loaded deal as ``GET /api/v1/real-estate/transactions`` serves
it (``TransactionRecord``, kept and excluded alike, ``excluded`` flagging the latter):
its columns are the record's fields in order, each typed from the field's declared JSON
schema, so the file follows the record as the API does. ``rollups``: the pulse rollup
rows (``RollupRow``, what coverage and dimensions count from). Types are named as
pyarrow names them (``string``, ``int64``, ``double``, ``bool``; ``date``, a day, is
pyarrow's ``date32[day]``); a column is nullable where its value can be null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from svc_core.json_schema import field_schemas
from svc_core.realestate.record import TransactionRecord
from svc_core.realestate.rollup import COUNTS, KEYS

TYPES = {"string": "string", "integer": "int64", "number": "double", "boolean": "bool"}
"""JSON Schema types → the column types they are written as."""


@attrs.frozen(kw_only=True)
class Column:
    """One column of an exported dataset: its name, type, nullability and meaning."""

    name: str
    type: str
    nullable: bool
    description: str


def column_of(name: str, schema: Mapping[str, Any]) -> Column:
    """The column of a field served as ``schema``: a ``date`` string is a ``date``; an
    enum without a description is described by its values."""
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    kind = next(k for k in kinds if k != "null")
    written = "date" if schema.get("format") == "date" else TYPES[kind]
    values = [v for v in schema.get("enum", ()) if v is not None]
    listed = f"One of {', '.join(values)}." if values else ""
    return Column(
        name=name,
        type=written,
        nullable="null" in kinds,
        description=str(schema.get("description") or listed),
    )


TRANSACTION_COLUMNS: tuple[Column, ...] = tuple(
    column_of(name, schema) for name, schema in field_schemas(TransactionRecord).items()
)
"""The ``transactions`` dataset: the listing's record, field by field."""

ROLLUP_MEANINGS = {
    "sigungu_code": "The district's 5-digit code, as its records carry it.",
    "dong": "The legal dong; empty on a district-level row (every deal of the district).",
    "property_type": "office, retail, commercial_complex, mixed_use or officetel.",
    "transaction_type": "sale, chartered_lease or monthly_lease.",
    "month": "The contract month, YYYY-MM.",
    "source": "The source id (rtms_official, ...).",
    "building_type": "whole_building or unit; empty when the source does not say.",
    "samples": "Kept records (rows as published).",
    "contracts": "Contracts among them (the rows of one bulk sale are one).",
    "bulk_contracts": "Contracts of more than one row.",
}
ROLLUP_COLUMNS: tuple[Column, ...] = tuple(
    Column(
        name=name,
        type="int64" if name in COUNTS else "string",
        nullable=False,
        description=ROLLUP_MEANINGS[name],
    )
    for name in (*KEYS, *COUNTS)
)
"""The ``rollups`` dataset: one row per cohort (district, or dong), month, source and
building type, with its counts."""

DATASETS: Mapping[str, tuple[Column, ...]] = {
    "transactions": TRANSACTION_COLUMNS,
    "rollups": ROLLUP_COLUMNS,
}
"""Every dataset ``svc export`` writes, by its file's name (``<name>.parquet``)."""
