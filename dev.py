#!/usr/bin/env python3
"""Bootstrap for a fresh clone: needs only Python 3.11+ and pip.

    python3 dev.py demo    # install, load the demo data, serve on http://127.0.0.1:8000
                           # (dashboard with development sign-in at /signin)
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


def _flag(args: list[str], name: str, default: str) -> str:
    """The value of ``--name VALUE`` or ``--name=VALUE`` in ``args``, else ``default``."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def demo(args: list[str]) -> None:
    ensure_venv("server,postgres")
    env = dict(os.environ)
    env.setdefault("SVC_DATABASE_URL", "sqlite:///demo.db")
    env.setdefault("SVC_COOKIE_SECURE", "false")
    # The dashboard's sign-in form (no identity provider needed) and the browser's Origin
    # for its cookie-authenticated writes.
    env.setdefault("SVC_DEV_SIGNIN", "true")
    # A newcomer's first sign-in gets a pro account, so every page (several keys, a team)
    # can be tried; a deployment keeps SPEC's starter default.
    env.setdefault("SVC_SIGNUP_PLAN", "pro")
    host = _flag(args, "--host", env.get("SVC_HOST", "127.0.0.1"))
    port = _flag(args, "--port", env.get("SVC_PORT", "8000"))
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104
    origins = {f"http://{shown}:{port}", f"http://127.0.0.1:{port}", f"http://localhost:{port}"}
    env.setdefault("SVC_SITE_ORIGINS", ",".join(sorted(origins)))
    svc = BIN / "svc"
    run(svc, "init", env=env)
    run(svc, "demo-data", "--if-empty", env=env)
    run(svc, "consumer", "create", "--plan", "pro", "--email", "demo@example.com", env=env)
    if env["SVC_DEV_SIGNIN"].strip().lower() in ("1", "true", "yes", "on"):
        print(
            f"\ndev.py: dashboard: open http://{shown}:{port}/signin and sign in with "
            "demo@example.com (the pro account above) or any email (a new pro account)."
            f"\ndev.py: API reference: http://{shown}:{port}/docs\n",
            flush=True,
        )
    run(svc, "serve", *args, env=env)


def test(args: list[str]) -> None:
    ensure_venv("dev")
    run(PY, "-m", "ruff", "check", "src", "tests", "examples", "bench")
    run(PY, "-m", "mypy", "--strict", "src")
    # Two processes (the machine size CI runs on); a file's tests stay in one process so
    # module-scoped fixtures (the demo database) are built once per file.
    run(PY, "-m", "pytest", "-n", "2", "--dist", "loadfile", *args)


def bench(args: list[str]) -> None:
    ensure_venv("dev,bench")
    run(PY, "bench/run.py", *args)


COMMANDS = {"demo": demo, "test": test, "bench": bench}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](sys.argv[2:])
