"""Tests, examples, benchmarks and the library read only what the repository holds.

A plain clone has nothing beside it: a path that climbs out of the checkout (to a
``shared`` folder, a home directory, a sibling repository) works on one machine and
fails on every other. Each Python file under ``src/``, ``tests/``, ``examples/`` and
``bench/`` is parsed, every path built from ``__file__`` (``Path(__file__).parents[N]``,
``.parent`` chains, ``os.path.dirname``, names bound to such paths, ``/ ".."``) is
followed to where it points, and string constants naming a climb into a sibling folder
or an absolute home are refused.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path, PurePosixPath

import pytest

from tests.http.realestate_support import ROOT

SCANNED = ("src", "tests", "examples", "bench")
UP = ".."
# A relative climb (one or more ".." steps) into a folder named shared, data, samples or
# fixtures: what a test reads from beside the checkout. Hostile inputs that climb to
# etc/passwd, sent to the server, are strings, not paths read, and name no such folder.
# Comments count too: a path written in one is a path someone will copy.
_CLIMB_TO_SIBLING = re.compile(r"(^|[\s\"'(=#])(\.\./)+(shared|data|samples|fixtures)\b")
_ABSOLUTE_HOME = re.compile(r"^/(work|home|root|Users)/")


class _Escapes(ast.NodeVisitor):
    """Collects the lines of one file whose paths leave the repository."""

    def __init__(self, path: PurePosixPath, root: PurePosixPath) -> None:
        self.path, self.root = path, root
        self.names: dict[str, PurePosixPath] = {}
        self.found: list[str] = []

    def where(self, node: ast.expr) -> PurePosixPath | None:
        """The folder or file ``node`` evaluates to, when it is built from ``__file__``."""
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return self.path
            return self.names.get(node.id)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("Path", "PurePath") and node.args:
                return self.where(node.args[0])
            if isinstance(func, ast.Attribute):
                if func.attr in ("resolve", "absolute") and not node.args:
                    return self.where(func.value)
                if func.attr == "dirname" and node.args:
                    base = self.where(node.args[0])
                    return None if base is None else base.parent
                if func.attr in ("join", "joinpath") and node.args:
                    first = node.args[0] if func.attr == "join" else func.value
                    rest = node.args[1:] if func.attr == "join" else node.args
                    base = self.where(first)
                    return None if base is None else self.joined(base, rest)
            return None
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            base = self.where(node.value)
            return None if base is None else base.parent
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents"
            and isinstance(node.slice, ast.Constant)
        ):
            base = self.where(node.value.value)
            if base is None or not isinstance(node.slice.value, int):
                return None
            return self.up(base, node.slice.value + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            base = self.where(node.left)
            return None if base is None else self.joined(base, [node.right])
        return None

    @staticmethod
    def up(path: PurePosixPath, levels: int) -> PurePosixPath:
        for _ in range(levels):
            path = path.parent
        return path

    def joined(self, base: PurePosixPath, parts: list[ast.expr]) -> PurePosixPath | None:
        for part in parts:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                return base  # a computed segment: judge the part known so far
            for segment in PurePosixPath(part.value).parts:
                base = base.parent if segment == UP else base / segment
        return base

    def inside(self, path: PurePosixPath) -> bool:
        return path == self.root or self.root in path.parents

    def check(self, node: ast.expr) -> None:
        target = self.where(node)
        if target is not None and not self.inside(target):
            self.found.append(f"{node.lineno}: {ast.unparse(node)} -> {target}")

    def visit_Assign(self, node: ast.Assign) -> None:
        target = self.where(node.value)
        if target is not None:
            for name in node.targets:
                if isinstance(name, ast.Name):
                    self.names[name.id] = target
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.check(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.check(node)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.check(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.check(node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and (
            _CLIMB_TO_SIBLING.search(node.value) or _ABSOLUTE_HOME.match(node.value)
        ):
            self.found.append(f"{node.lineno}: {node.value[:80]!r}")


def escapes(source: str, path: PurePosixPath, root: PurePosixPath) -> list[str]:
    """The places in ``source`` (the text of ``path``) that name a path outside ``root``:
    in its code and in its comments."""
    visitor = _Escapes(path, root)
    visitor.visit(ast.parse(source))
    comments = [
        f"{token.start[0]}: {token.string[:80]!r}"
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT and _CLIMB_TO_SIBLING.search(token.string)
    ]
    return visitor.found + comments


def scanned_files() -> list[PurePosixPath]:
    files = [p for top in SCANNED for p in sorted((ROOT / top).rglob("*.py"))]
    return [PurePosixPath(p) for p in files if ".venv" not in p.parts]


def test_no_file_names_a_path_outside_the_repository() -> None:
    root = PurePosixPath(ROOT)
    files = scanned_files()
    assert len(files) > 100  # the walk found the tree
    found = {
        str(path.relative_to(root)): hits
        for path in files
        if (hits := escapes(Path(path).read_text(encoding="utf-8"), path, root))
    }
    assert found == {}


# What the check catches: each of these was (or is shaped like) a line that read the
# samples from beside the checkout.
SIBLING = "sha" + "red"
ESCAPING = [
    f'S = Path(__file__).resolve().parents[3] / "{SIBLING}" / "data" / "samples"',
    f'ROOT = Path(__file__).resolve().parents[2]\nS = ROOT.parent / "{SIBLING}" / "data"',
    f'S = Path(__file__).parent.parent.parent.parent / "{SIBLING}"',
    f'S = os.path.join(os.path.dirname(__file__), "{UP}", "{UP}", "{UP}", "{SIBLING}")',
    f'S = Path(__file__).resolve().parents[1] / "{UP}" / "{UP}" / "data"',
    f'open("{UP}/{UP}/{SIBLING}/data/samples/NRG_11680_202506.xml")',
    'S = "/' + 'work/shared/data"',
    f"S = 1  # the samples are in {UP}/{SIBLING}/data/samples",
]
INSIDE = [
    'S = Path(__file__).resolve().parents[1] / "fixtures" / "molit"',
    'ROOT = Path(__file__).resolve().parents[2]\nS = ROOT / "docs" / "webhooks.md"',
    'S = os.path.join(os.path.dirname(__file__), "static")',
    'client.get("/static/../pages.py")',
    f'bad = "{UP}/{UP}/etc/passwd"',
    f"S = 1  # a hostile path: {UP}/{UP}/etc/passwd",
]
# a file two folders below the root: tests/server/x.py
HERE = PurePosixPath("/repo/tests/server/x.py")


@pytest.mark.parametrize("source", ESCAPING)
def test_the_check_catches_a_path_outside(source: str) -> None:
    assert escapes(source, HERE, PurePosixPath("/repo")), source


@pytest.mark.parametrize("source", INSIDE)
def test_the_check_passes_paths_inside(source: str) -> None:
    assert escapes(source, HERE, PurePosixPath("/repo")) == [], source
