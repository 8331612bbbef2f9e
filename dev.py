#!/usr/bin/env python3
"""Bootstrap for a fresh clone: needs only Python 3.11+ and pip.

    python3 dev.py demo    # install, load the demo data, serve on http://127.0.0.1:8000
                           # (dashboard with development sign-in at /signin)
    python3 dev.py test    # install, then lint, type-check and run the whole test suite
    python3 dev.py bench   # install, then run the benchmarks in bench/

Everything installs into ./.venv (created on first use); nothing is installed globally.
``python3 dev.py COMMAND --help`` tells what one command does, and does nothing else.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import venv
from collections.abc import Mapping
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
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    # the dev extra holds every other one: after `dev.py test`, the demo installs nothing
    for done in {extras, "dev"}:
        stamp = VENV / f".installed-{done}"
        if stamp.exists() and stamp.read_text() == digest:
            return
    stamp = VENV / f".installed-{extras}"
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


DEMO_EMAIL = "demo@example.com"


def refuse_busy_port(host: str, port: str) -> None:
    """Exit with one line when another program listens on the port, before installing,
    loading or printing anything: `svc serve`'s own check (src/svc_server/servers/ports.py,
    standard library only, loaded by its path since nothing is installed yet)."""
    spec = importlib.util.spec_from_file_location("svc_ports", ROOT / "src/svc_server/servers/ports.py")
    assert spec is not None and spec.loader is not None
    ports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ports)
    try:
        taken = ports.port_in_use(host, int(port))
    except (OSError, ValueError):
        return  # svc serve reports a bad host or port in its own words
    if taken:
        sys.exit(
            f"dev.py: port {port} on {host} is in use by another program; stop it, "
            f"or pick another port: python3 dev.py demo --port N"
        )


def demo(args: list[str]) -> None:
    """python3 dev.py demo [--host H] [--port P] [svc serve options...]

    Install svc into ./.venv, create the SQLite database demo.db (SVC_DATABASE_URL to
    use another), load the synthetic demo data once, make the pro consumer of
    demo@example.com once (its API key is printed when it is made), then serve the API,
    the dashboard (development sign-in at /signin; a first sign-in makes a pro account)
    and the API reference (/docs). Webhooks may go to a receiver on this machine, and
    the server's own worker sends them.
    Running it again reuses all of it: nothing is loaded or created twice. Options are
    passed to `svc serve` (see `.venv/bin/svc serve --help`).
    """
    host = _flag(args, "--host", os.environ.get("SVC_HOST", "127.0.0.1"))
    port = _flag(args, "--port", os.environ.get("SVC_PORT", "8000"))
    refuse_busy_port(host, port)
    ensure_venv("server,postgres,mcp")
    env = demo_env(host, port, os.environ)
    shown = shown_host(host)
    svc = BIN / "svc"
    run(svc, "init", env=env)
    run(svc, "demo-data", "--if-empty", env=env)
    demo_consumer(svc, env)
    if env["SVC_DEV_SIGNIN"].strip().lower() in ("1", "true", "yes", "on"):
        print(
            f"\ndev.py: dashboard: open http://{shown}:{port}/signin and sign in with "
            f"{DEMO_EMAIL} (the pro account above) or any email (a new pro account)."
            f"\ndev.py: API reference: http://{shown}:{port}/docs",
            flush=True,
        )
    if env["SVC_WEBHOOK_ALLOW_PRIVATE"].strip().lower() in ("1", "true", "yes", "on"):
        print(
            "dev.py: webhooks: add a receiver on this machine (e.g. http://127.0.0.1:8001/, "
            "python examples/webhook_receiver.py) on the dashboard's Webhooks page; the "
            "server's own worker sends the deliveries.",
            flush=True,
        )
    print(flush=True)
    run(svc, "serve", *args, env=env)


def shown_host(host: str) -> str:
    """The host a browser on this machine reaches ``host`` at (a wildcard: loopback)."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104


def demo_env(host: str, port: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of the demo's svc commands: ``environ`` with every feature
    switched on for one machine (a setting already in ``environ`` is kept)."""
    env = dict(environ)
    env.setdefault("SVC_DATABASE_URL", "sqlite:///demo.db")
    env.setdefault("SVC_COOKIE_SECURE", "false")
    # The dashboard's sign-in form (no identity provider needed) and the browser's Origin
    # for its cookie-authenticated writes.
    env.setdefault("SVC_DEV_SIGNIN", "true")
    # A newcomer's first sign-in gets a pro account, so every page (several keys, a team)
    # can be tried; a deployment keeps SPEC's starter default.
    env.setdefault("SVC_SIGNUP_PLAN", "pro")
    # Webhooks to a receiver on this machine (loopback, http), sent by the worker the
    # server runs in its own process: no second command to start.
    env.setdefault("SVC_WEBHOOK_ALLOW_PRIVATE", "true")
    env.setdefault("SVC_INLINE_WORKER", "true")
    shown = shown_host(host)
    origins = {f"http://{shown}:{port}", f"http://127.0.0.1:{port}", f"http://localhost:{port}"}
    env.setdefault("SVC_SITE_ORIGINS", ",".join(sorted(origins)))
    return env


def demo_consumer(svc: Path, env: dict[str, str]) -> None:
    """Make the demo owner's pro consumer unless it exists (a rerun makes no second)."""
    listed = subprocess.run(
        [str(svc), "consumer", "list", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode:
        sys.exit(listed.stderr.strip() or "dev.py: svc consumer list failed")
    for line in listed.stdout.splitlines():
        row = json.loads(line)
        if row.get("owner_email") == DEMO_EMAIL and row.get("status") == "active":
            print(
                f"dev.py: {DEMO_EMAIL} already has consumer {row['id']} (plan {row['plan']}); "
                "its API key was printed when it was made and still works (keys are never "
                "stored in plaintext). Lost it? Sign in as "
                f"{DEMO_EMAIL} and make another on the dashboard's API keys page.",
                flush=True,
            )
            return
    run(svc, "consumer", "create", "--plan", "pro", "--email", DEMO_EMAIL, env=env)


def test(args: list[str]) -> None:
    """python3 dev.py test [pytest options...]

    Install svc with its development tools into ./.venv, then run ruff, mypy --strict
    and the test suite (pytest, two processes); options go to pytest, e.g.
    `python3 dev.py test tests/http -x`. PostgreSQL tests run when SVC_TEST_POSTGRES_URL
    names a database.
    """
    ensure_venv("dev")
    run(PY, "-m", "ruff", "check", "src", "tests", "examples", "bench")
    run(BIN / "lint-imports", "--no-cache")  # the floors of the code (pyproject.toml)
    # mypy (about 20 s on a fresh clone, one core) checks while the suite starts its
    # processes; what it says is printed after the tests
    mypy = subprocess.Popen(
        [str(PY), "-m", "mypy", "--strict", "src", "bench"],  # bench: its calls must not rot
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    env = test_environment()
    run(PY, "-m", "compileall", "-q", "src", env=env)  # once here, not in each process
    tests = subprocess.call([str(PY), "-m", "pytest", *PYTEST_OPTIONS, *args], cwd=ROOT, env=env)
    said, _ = mypy.communicate()
    print(f"mypy --strict src bench: {said}", end="", flush=True)
    if tests or mypy.returncode:
        sys.exit(tests or mypy.returncode)


# Two processes (the machine size CI runs on). worksteal keeps both busy to the end (a
# worker that runs out takes half of the other's queue); the files that start servers,
# browsers and commands are queued first (tests/conftest.py). The 20 slowest tests are
# printed so a slow newcomer is seen (docs/testing.md).
PYTEST_OPTIONS = ("-n", "2", "--dist", "worksteal", "--durations=20")


def test_environment() -> dict[str, str]:
    """The tests' environment: compiled modules are kept in their usual `__pycache__`
    folders (git ignores them), since every `svc serve` and `svc` process a test starts
    would otherwise compile svc again, and pytest its assertion rewriting (a third of a
    process's start on this machine); PYTHONDONTWRITEBYTECODE, where a shell sets it, is
    lifted for the tests only. Not a PYTHONPYCACHEPREFIX: Python would then ignore the
    modules pip compiled into .venv and compile all of them again during the run, some
    in the tests' threads, beside hypothesis parsing source in another (CPython 3.11's
    parser is not safe across threads: gh-106905; a fresh clone's run crashed so once)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def bench(args: list[str]) -> None:
    """python3 dev.py bench [--quick] [--only NAME...]

    Install svc with its development tools into ./.venv, then run the benchmarks in
    bench/ and print one table of figures beside their baselines (`--quick`: small data
    sets, about a minute). Options go to bench/run.py.
    """
    ensure_venv("dev,bench")
    run(PY, "bench/run.py", *args)


COMMANDS = {"demo": demo, "test": test, "bench": bench}


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    if argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    command = COMMANDS.get(argv[0])
    if command is None:
        sys.exit(f"dev.py: unknown command {argv[0]!r}; choose demo, test or bench\n{__doc__}")
    if "-h" in argv[1:] or "--help" in argv[1:]:
        print(inspect.cleandoc(command.__doc__ or ""))  # only the help
        return
    command(argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
