"""The shape of the code: no import circles, no lazy import dodging one, and modules
that say why when they grow long. Which floor may import which is not here: it is the
import-linter contracts in pyproject.toml (``tests/test_import_contracts.py``).

Imports are read from the source (``ast``), so the test sees what a reader sees:
``from svc_server.x import y`` is an edge to ``svc_server.x`` (its ``__init__``, whose
namespace the statement reads) and, when ``svc_server.x.y`` is a module, to that module
too. So a package ``__init__`` that re-exports a submodule which imports the package back
is a circle, as it is when Python runs it. Imports under ``if TYPE_CHECKING:`` and
inside functions count too: a circle that exists only for the type checker, or only
once a function runs, is still a circle for the reader. No edge is dropped.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 800
"""One concept per module; past this many lines its docstring says why (``REASON_MARK``).
A module is not split to stay under it: a concept in two modules is harder to read."""
REASON_MARK = "Long because"
LAZY_ALLOWED = {
    # The PostgreSQL backend imports psycopg, an optional extra: a SQLite deployment
    # must not need it installed. Not a circle: store/postgres imports nothing above it.
    ("svc_server.store", "svc_server.store.postgres"),
    ("svc_server.store", "svc_server.store.sqlite"),
    # The gunicorn adapter imports gunicorn, an optional server a deployment may choose.
    ("svc_server.commands.core", "svc_server.servers.wire"),
    # `svc --version` and `svc --help` answer without the server (issue 42): the command
    # line imports the configuration and the settings flags only when it needs them.
    ("svc_server.cli", "svc_server.config"),
    ("svc_server.cli", "svc_server.commands.base"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    _module_name(p): p for p in sorted(SRC.rglob("*.py")) if "svc_" in p.relative_to(SRC).parts[0]
}


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, here: str) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = here if MODULES[here].name == "__init__.py" else here.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}".rstrip(".")
        # ``from package import name`` reads the package's namespace (its __init__) even
        # when ``name`` is a submodule: inside a circle, a half-made module.
        names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
    out = []
    for name in names:
        target = _resolve(name)
        if target is not None and target != here:
            out.append(target)
    return out


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(module-level imports, imports inside functions) of svc modules."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top: set[str] = set()
    lazy: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                (lazy if in_function else top).update(_targets(child, module))
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, nested)

    visit(tree, False)
    return top, lazy


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _graph(prefix: str) -> dict[str, set[str]]:
    """Every import edge between modules under ``prefix``, lazy ones included."""
    return {
        m: {t for t in set().union(*_imports(m)) if t.startswith(prefix)}
        for m in MODULES
        if m.startswith(prefix)
    }


def test_no_import_circles_in_svc_server() -> None:
    assert _cycles(_graph("svc_server")) == []


def test_no_import_circles_in_svc_core() -> None:
    assert _cycles(_graph("svc_core")) == []


def test_no_lazy_imports_of_our_own_modules() -> None:
    lazy = {(m, t) for m in MODULES for t in _imports(m)[1]}
    assert lazy - LAZY_ALLOWED == set()


def test_long_modules_say_why_at_their_top() -> None:
    long_without_reason = []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MAX_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if REASON_MARK not in docstring:
            long_without_reason.append(f"{name} ({text.count(chr(10))} lines)")
    assert long_without_reason == []


def test_a_from_import_is_an_edge_to_the_package_face_too() -> None:
    """``from svc_server.store import holds`` inside the store reads the store's
    ``__init__``, which imports the store's modules: the finder sees that circle."""
    node = ast.parse("from svc_server.store import holds, base").body[0]
    assert isinstance(node, ast.ImportFrom)
    edges = set(_targets(node, "svc_server.store.accounts"))
    assert edges == {"svc_server.store", "svc_server.store.holds", "svc_server.store.base"}
    graph = _graph("svc_server")
    graph["svc_server.store.accounts"] |= edges
    assert any({"svc_server.store", "svc_server.store.accounts"} <= set(c) for c in _cycles(graph))


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
