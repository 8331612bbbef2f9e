"""The ``svc`` command as an operator runs it: real processes, real exit codes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def svc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "svc_server", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        check=False,
    )


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
