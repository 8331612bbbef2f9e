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
