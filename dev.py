#!/usr/bin/env python3
"""Bootstrap for a fresh clone: needs only Python 3.11+ and pip.

    python3 dev.py demo    # install, load the demo data, serve on http://127.0.0.1:8000
    python3 dev.py test    # install, then lint, type-check and run the whole test suite
    python3 dev.py bench   # install, then run the benchmarks in bench/

Everything installs into ./.venv (created on first use); nothing is installed globally.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def run(*cmd: str | Path, env: dict[str, str] | None = None) -> None:
    code = subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env)
    if code:
        sys.exit(code)


def ensure_venv(extras: str) -> None:
    """Create .venv and install the project with ``extras`` unless already current."""
    if sys.version_info < (3, 11):
        sys.exit(f"svc needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PY.exists():
        print("dev.py: creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".installed-{extras}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    print(f"dev.py: installing svc[{extras}] into .venv", flush=True)
    run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PY, "-m", "pip", "install", "--quiet", "-e", f".[{extras}]")
    stamp.write_text(digest)


def demo(args: list[str]) -> None:
    ensure_venv("server,postgres")
    env = dict(os.environ)
    env.setdefault("SVC_DATABASE_URL", "sqlite:///demo.db")
    env.setdefault("SVC_COOKIE_SECURE", "false")
    svc = BIN / "svc"
    run(svc, "init", env=env)
    run(svc, "demo-data", "--if-empty", env=env)
    run(svc, "consumer", "create", "--plan", "pro", "--email", "demo@example.com", env=env)
    run(svc, "serve", *args, env=env)


def test(args: list[str]) -> None:
    ensure_venv("dev")
    run(PY, "-m", "ruff", "check", "src", "tests", "examples", "bench")
    run(PY, "-m", "mypy", "--strict", "src")
    # Two processes (the machine size CI runs on); a file's tests stay in one process so
    # module-scoped fixtures (the demo database) are built once per file.
    run(PY, "-m", "pytest", "-n", "2", "--dist", "loadfile", *args)


def bench(args: list[str]) -> None:
    ensure_venv("dev")
    run(PY, "bench/run.py", *args)


COMMANDS = {"demo": demo, "test": test, "bench": bench}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](sys.argv[2:])
