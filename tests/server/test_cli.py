"""The ``svc`` command as an operator runs it: exit codes, one-line errors, help."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from tests.svc_cli import run_svc


def svc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``svc ARGS`` in process; ``test_the_installed_command_runs_as_a_process`` covers
    the process itself."""
    return run_svc(*args, env=env)


def test_the_installed_command_runs_as_a_process(sqlite_url: str) -> None:
    """The console script and ``python -m svc_server`` are real processes with real
    exit statuses and streams (every other test here runs the command in process)."""
    script = Path(sys.executable).with_name("svc")
    made = subprocess.run(
        [str(script), "init", "--database-url", sqlite_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0 and "applied" in made.stdout, made.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "svc_server", "init", "--database-url", "mysql://nope"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("svc: error: "), bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_init_twice_is_a_no_op(db_url: str) -> None:
    first = svc("init", "--database-url", db_url)
    assert first.returncode == 0, first.stderr
    assert "applied" in first.stdout
    second = svc("init", "--database-url", db_url)
    assert second.returncode == 0, second.stderr
    assert "up to date" in second.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["init", "--database-url", "mysql://nope"],
        ["serve", "--port", "not-a-port"],
    ],
)
def test_bad_configuration_is_one_line_and_exit_2(args: list[str]) -> None:
    result = svc(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("svc: error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_bad_environment_is_exit_2() -> None:
    result = svc("init", env={"SVC_DATABASE_URL": "sqlite:///"})
    assert result.returncode == 2
    assert "SVC_DATABASE_URL" in result.stderr


def test_every_command_has_help() -> None:
    from svc_server.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        result = svc(name, "--help")
        assert result.returncode == 0, name
        assert "usage: svc" in result.stdout


def _commands(parser: argparse.ArgumentParser, prefix: str = "svc") -> list[str]:
    """Every command line ``svc`` takes, down to its leaves (``svc key create``)."""
    found: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.extend(_commands(child, f"{prefix} {name}") or [f"{prefix} {name}"])
    return found


def test_docs_configuration_lists_every_command() -> None:
    from svc_server.cli import build_parser

    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    commands = _commands(build_parser())
    assert "svc key create" in commands and "svc sync status" in commands
    missing = [c for c in commands if f"`{c}" not in text]
    assert missing == []
    assert "`svc --version`" in text
