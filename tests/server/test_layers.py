"""Who may import whom in the account and webhook shell, read from the source.

``delivery/`` owns the network: no module under ``services/`` imports a network module
or starts a lookup thread (that ``delivery/`` never reaches into ``services/`` is the
``server-floors`` import-linter contract). Services get ids injected: none calls
``uuid.uuid4``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import svc_server

SERVER = Path(svc_server.__file__).parent
NETWORK = {"socket", "ssl", "http.client", "urllib.request", "selectors"}
ACCOUNT_SERVICES = ("membership", "consumers", "keys", "team", "usage", "webhooks")


def imports(path: Path) -> set[str]:
    """Every module named by an import statement of ``path``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_service_does_network_io_itself() -> None:
    for path in sorted((SERVER / "services").glob("*.py")):
        assert not imports(path) & NETWORK, f"{path.name} imports a network module"
        # a lookup thread (getaddrinfo has no timeout) is network code too
        assert "threading.Thread" not in path.read_text(encoding="utf-8"), path.name


def test_account_services_take_their_ids_from_outside() -> None:
    for name in ACCOUNT_SERVICES:
        source = (SERVER / "services" / f"{name}.py").read_text(encoding="utf-8")
        assert "uuid4" not in source, f"services/{name}.py makes its own ids"
