"""Developer sessions: ``nox -s tests lint typecheck demo``."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite (PostgreSQL tests run when SVC_TEST_POSTGRES_URL is set)."""
    session.install("-e", ".[dev]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the code, and the floors of the code (import-linter contracts)."""
    session.install("ruff", "import-linter", "-e", ".")
    session.run("ruff", "check", "src", "tests", "examples", "bench")
    session.run("ruff", "format", "--check", "src")
    session.run("lint-imports")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on src/ and bench/ (a bench calls the code it measures)."""
    session.install("-e", ".[dev]")
    session.run("mypy", "--strict", "src", "bench")


@nox.session
def demo(session: nox.Session) -> None:
    """Load the demo data into demo.db and serve it."""
    session.install("-e", ".[server,mcp]")
    env = {"SVC_DATABASE_URL": "sqlite:///demo.db", "SVC_COOKIE_SECURE": "false"}
    session.run("svc", "init", env=env)
    session.run("svc", "demo-data", "--if-empty", env=env)
    session.run("svc", "serve", *session.posargs, env=env)
