"""Services read typed values, never rows by string (issue 26, item 4).

The store returns frozen attrs values (``store/account_rows.py``, ``store/webhook_rows.py``
and the like); a ``thing["field"]`` in ``services/`` is a row read by name that the type
checker cannot see, so a renamed column would fail at run time only. Read from the
source (``ast``): any subscript whose index is a string constant, read or written.
"""

from __future__ import annotations

import ast
from pathlib import Path

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
