"""Services read typed values, never rows by string (issue 26, item 4).

The store returns frozen attrs values (``store/account_rows.py``, ``store/webhook_rows.py``
and the like); a ``thing["field"]`` in ``services/`` is a row read by name that the type
checker cannot see, so a renamed column would fail at run time only. Read from the
source (``ast``): any subscript whose index is a string constant, read or written. The
hot reads build theirs by position (``store.base.rows_as``), each field from the column
of its name, whatever order the query names the columns in.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
from hypothesis import given
from hypothesis import strategies as st

from svc_core.realestate.listing_row import ListingRow
from svc_server.store.base import rows_as

SERVICES = Path(__file__).resolve().parents[1] / "src" / "svc_server" / "services"


def string_subscripts(source: str, filename: str = "<source>") -> list[str]:
    """Every ``x["..."]`` in ``source``, as ``file:line: text``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_services_never_subscript_with_a_string() -> None:
    modules = sorted(SERVICES.rglob("*.py"))
    assert len(modules) > 10  # the check reads the real package
    found = [hit for path in modules for hit in string_subscripts(path.read_text(), path.name)]
    assert found == [], "services read rows by string:\n" + "\n".join(found)


def test_the_check_catches_a_string_subscript() -> None:
    source = (
        "def f(row, data):\n"
        "    data['cookie'] = row[\"id\"]\n"
        "    return row[0], row[name], row.id\n"
    )
    assert string_subscripts(source) == [
        "<source>:2: data['cookie']",
        "<source>:2: row['id']",
    ]


FIELDS = [f.name for f in attrs.fields(ListingRow)]


@given(st.permutations([*FIELDS, "unread"]), st.integers(0, 3))
def test_rows_as_takes_each_field_from_its_column_in_any_order(
    columns: list[str], count: int
) -> None:
    rows = [{name: f"{name}-{i}" for name in columns} for i in range(count)]
    built = rows_as(ListingRow, rows)
    assert [attrs.asdict(r) for r in built] == [
        {name: f"{name}-{i}" for name in FIELDS} for i in range(count)
    ]
