"""``svc export``: write the loaded deals and the pulse rollups to Parquet files, one per
dataset (``transactions.parquet``, ``rollups.parquet``), typed as
``svc_core.realestate.export_schema`` says and documented in docs/export.md.

Parquet needs ``pyarrow``, an optional extra (``pip install 'svc[parquet]'``) so the core
install stays light: without it the command says so in one line and exits 2, before
touching the store. Records are written in row groups of ``BATCH`` as they are read, so
the store is never held in memory; each file is written under a temporary name and moved
into place when complete, so a reader never sees half a file.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svc_core.convert import to_json
from svc_core.realestate.export_schema import DATASETS, Column
from svc_server.commands.base import command_parser, counted, store_from_args
from svc_server.services import export

if TYPE_CHECKING:
    import pyarrow as pa

BATCH = 50_000
"""Rows per Parquet row group (and per batch held in memory)."""
MISSING = "svc: error: svc export needs pyarrow: pip install 'svc[parquet]'"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(sub, common, "export", cmd_export)
    p.add_argument(
        "directory", type=Path, nargs="?", default=Path("."), help="where to write (default .)"
    )


def arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    """The Parquet schema of a dataset's columns, each with its description."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "double": pa.float64(),
        "bool": pa.bool_(),
        "date": pa.date32(),
    }
    return pa.schema(
        [
            pa.field(
                c.name, types[c.type], nullable=c.nullable, metadata={"description": c.description}
            )
            for c in columns
        ]
    )


def _cell(column: Column, value: Any) -> Any:
    if column.type == "date" and value is not None:
        return datetime.date.fromisoformat(value)
    return value


def write_parquet(path: Path, columns: Sequence[Column], rows: Iterable[Any]) -> int:
    """Write ``rows`` (attrs values served as the columns say) to ``path``; their count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(columns)
    partial = path.with_name(path.name + ".partial")
    written = 0
    served: Iterator[Any] = (to_json(row) for row in rows)
    with pq.ParquetWriter(partial, schema, compression="zstd") as writer:
        while batch := list(islice(served, BATCH)):
            arrays = {c.name: [_cell(c, row[c.name]) for row in batch] for c in columns}
            writer.write_table(pa.table(arrays, schema=schema))
            written += len(batch)
        if written == 0:
            writer.write_table(schema.empty_table())
    partial.replace(path)
    return written


def cmd_export(args: argparse.Namespace) -> int:
    """Write every loaded deal (kept and excluded, with its contract_id) and the pulse
    rollup rows to DIR/transactions.parquet and DIR/rollups.parquet (docs/export.md has
    their schema). Needs pyarrow: pip install 'svc[parquet]'."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print(MISSING, file=sys.stderr)
        return 2
    directory: Path = args.directory
    directory.mkdir(parents=True, exist_ok=True)
    with closing(store_from_args(args)) as store:
        for name, rows in (
            ("transactions", export.deal_records(store)),
            ("rollups", export.rollup_rows(store)),
        ):
            path = directory / f"{name}.parquet"
            n = write_parquet(path, DATASETS[name], rows)
            print(f"{path}: {counted(n, 'row', 'rows')}")
    return 0
