"""The ``svc`` command as an operator runs it: exit codes, one-line errors, help."""

from __future__ import annotations

import argparse
import os
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


SERVER_MODULES = ("werkzeug", "granian", "gunicorn", "psycopg", "sqlite3", "svc_server.app")


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_server(flag: str) -> None:
    """``svc --version`` and ``svc --help`` answer at once: they import the command
    index and (for the help's list of settings) the configuration, no command module,
    store or server (``python -X importtime`` lists every module imported)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "svc_server", flag],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.startswith("svc 0" if flag == "--version" else "usage: svc")
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if "|" in line}
    ours = sorted(m for m in imported if m.startswith("svc_server"))
    allowed = ["svc_server", "svc_server.cli", "svc_server.commands", "svc_server.commands.index"]
    if flag == "--help":
        allowed.append("svc_server.config")
    assert ours == sorted(allowed)
    assert not [m for m in imported if m.startswith(SERVER_MODULES)]


def test_the_command_index_lists_every_command_as_its_module_defines_it() -> None:
    from svc_server.cli import build_parser
    from svc_server.commands import index

    full = next(a for a in build_parser()._actions if a.dest == "command")
    listed = next(a for a in build_parser(None)._actions if a.dest == "command")
    names = [name for name, _, _ in index.COMMANDS]
    assert list(full.choices) == list(listed.choices) == names  # type: ignore[arg-type]
    helps = [(c.dest, c.help) for c in full._choices_actions]  # type: ignore[attr-defined]
    assert helps == [(name, summary) for name, _, summary in index.COMMANDS]


@pytest.mark.parametrize(
    "command", ["sync status", "consumer list", "consumer show x", "webhook endpoints"]
)
def test_a_read_only_command_on_a_missing_database_says_so_and_creates_none(
    command: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/typo/svc.db"
    done = svc(*command.split(), env={"SVC_DATABASE_URL": url})
    assert done.returncode == 2
    assert done.stderr == (
        f"svc: error: there is no database at {tmp_path}/typo/svc.db (SVC_DATABASE_URL "
        f"{url}); this command only reads one: point SVC_DATABASE_URL at yours, or make "
        "one with svc init\n"
    )
    assert list(tmp_path.iterdir()) == []


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    kept = "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


@pytest.mark.parametrize(
    ("command", "env"),
    [
        ("sync rtms --sigungu 11680 --from 2025-01", "SVC_DATA_GO_KR_KEY"),
        ("sync rone", "SVC_RONE_KEY"),
    ],
)
def test_a_sync_without_its_key_points_at_the_section_on_getting_one(
    command: str, env: str, tmp_path: Path
) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ("SVC_DATA_GO_KR_KEY", "SVC_RONE_KEY")}
    clean["SVC_DATABASE_URL"] = f"sqlite:///{tmp_path}/svc.db"
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", *command.split()],
        capture_output=True,
        text=True,
        env=clean,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert f"--service-key KEY or {env} (how to get one: docs/sync.md#" in done.stderr
    anchor = done.stderr.split("docs/sync.md#", 1)[1].split(")", 1)[0]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "sync.md").read_text()
    headings = [line.lstrip("#") for line in doc.splitlines() if line.startswith("## ")]
    section = next(h for h in headings if _slug(h) == anchor)
    assert "key" in section.lower() or "rone" in section.lower()
