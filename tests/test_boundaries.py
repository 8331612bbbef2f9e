"""svc_core does no I/O: importing all of it pulls in no driver, server or socket."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import svc_core

FORBIDDEN = ["werkzeug", "sqlite3", "sqlite_utils", "psycopg", "socket", "http.client"]


def test_core_imports_no_io_modules() -> None:
    modules = [m.name for m in pkgutil.walk_packages(svc_core.__path__, "svc_core.")]
    assert modules, "svc_core has modules"
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print([m for m in {FORBIDDEN!r} if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_ingest_and_the_marketplace_loader_do_not_import_each_other() -> None:
    """The ingest registry imports the marketplace writer; never the other way round,
    and no function-level import hides a cycle."""
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "svc_server"
    tree = ast.parse((src / "ingest" / "markets.py").read_text("utf-8"))
    names = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not {n for n in names if n.startswith(("svc_server.ingest", "svc_server.services"))}
    for path in sorted((src / "ingest").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef):
                inner = [n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
                assert not inner, f"{path.name}: {node.name} imports inside a function"
