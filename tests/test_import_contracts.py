"""The floors of the code are import-linter contracts (``[tool.importlinter]`` in
pyproject.toml), run by ``python3 dev.py test`` and ``nox -s lint``. These tests run the
real ``lint-imports`` on the source as it is (every contract kept) and on copies with one
import that breaks a floor, to show the contracts are the check and not a formality."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed")


def lint(src: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run(
        [str(LINT), "--no-cache", str(ROOT / "pyproject.toml")],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=120,
    )  # fmt: skip


def with_import(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of src/ where ``module`` (a path under src/) starts with ``line``."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    path = src / module
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + sep + line + "\n" + rest, encoding="utf-8")
    return src


def test_every_contract_is_kept() -> None:
    done = lint(ROOT / "src")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        (  # a handler reaching the store past the services
            "svc_server/handlers/accounts.py",
            "import svc_server.store.base",
            "handlers and pages reach the stores and the loader only through services",
        ),
        (  # a handler importing the admission step that runs before it
            "svc_server/handlers/accounts.py",
            "import svc_server.app.admission",
            "svc_server: every module on a floor, imports only downward",
        ),
        (  # the request/response kit reaching a service
            "svc_server/http/cookies.py",
            "import svc_server.services.sessions",
            "the request/response kit and the bundled servers touch no store and no service",
        ),
        (  # a bundled server importing the dispatcher it is handed as a WSGI app
            "svc_server/servers/wire.py",
            "import svc_server.app.dispatch",
            "svc_server: every module on a floor, imports only downward",
        ),
        (  # a service importing the handlers' bundle above it
            "svc_server/services/keys.py",
            "import svc_server.runtime.replies",
            "svc_server: every module on a floor, imports only downward",
        ),
        (  # a service writing public data past the one commit
            "svc_server/services/sync_rone.py",
            "import svc_server.store.loading",
            "only the one write path (ingest) opens a load: the writers of public data",
        ),
        (  # the pure library opening a socket
            "svc_core/periods.py",
            "import socket",
            "svc_core does no I/O and knows nothing of the server",
        ),
        (  # a reader of the real formats importing the answers built on it
            "svc_core/sources/rtms.py",
            "import svc_core.realestate.pulse",
            "svc_core: every module on a floor, imports only downward",
        ),
        (  # the kernel importing a concern built on it
            "svc_core/periods.py",
            "import svc_core.cohorts.stats",
            "svc_core: every module on a floor, imports only downward",
        ),
    ],
)
def test_an_import_across_a_floor_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    done = lint(with_import(tmp_path, module, line))
    assert done.returncode == 1, done.stdout + done.stderr
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken and line.split()[-1] in broken, done.stdout
