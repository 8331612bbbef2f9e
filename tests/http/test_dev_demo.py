"""``python3 dev.py``, run as a newcomer runs it: each command's ``--help`` only tells,
and running the demo twice leaves one demo account whose key keeps working."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svc_server.store import open_store, sqlite_data_url
from tests.conftest import LiveServer, Receiver, free_port
from tests.svc_cli import run_svc

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "dev.py"
SVC = ROOT / ".venv" / "bin" / "svc"


def _installed() -> bool:
    """Whether ./.venv holds the current dev install (what ``dev.py test`` makes), so
    ``dev.py demo`` runs without installing anything."""
    stamp = ROOT / ".venv" / ".installed-dev"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return SVC.exists() and stamp.exists() and stamp.read_text() == digest


needs_venv = pytest.mark.skipif(
    not _installed(), reason="dev.py demo needs ./.venv from `python3 dev.py test`"
)


def env_for(db: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SVC_DATABASE_URL"] = f"sqlite:///{db}"
    env.pop("SVC_PORT", None)
    return env


@pytest.mark.parametrize("command", ["demo", "test", "bench"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_each_command_help_only_tells(tmp_path: Path, command: str, flag: str) -> None:
    db = tmp_path / "demo.db"
    done = subprocess.run(
        [sys.executable, str(DEV), command, flag],
        env=env_for(db),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"python3 dev.py {command}")
    assert "dev.py: installing" not in done.stdout and done.stderr == ""
    assert not db.exists()  # no schema, no demo data, no consumer: nothing ran


def test_the_overview_lists_the_commands() -> None:
    done = subprocess.run(
        [sys.executable, str(DEV), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    for command in ("demo", "test", "bench"):
        assert f"python3 dev.py {command}" in done.stdout
    unknown = subprocess.run(
        [sys.executable, str(DEV), "serve"], capture_output=True, text=True, timeout=60
    )
    assert unknown.returncode == 1 and "unknown command 'serve'" in unknown.stderr


def run_demo(db: Path, port: int, key: str | None = None) -> tuple[str, int | None]:
    """Run ``dev.py demo`` until its server answers, call it with ``key`` (if given),
    then stop it; its output and the call's status. The server runs one worker process
    (an option dev.py passes on to ``svc serve``): granian stopped while a second worker
    was still starting waited 30 s for it."""
    status = None
    proc = subprocess.Popen(
        [sys.executable, str(DEV), "demo", "--port", str(port), "--workers", "1"],
        env=env_for(db),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the server it starts is stopped with it
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=1)
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise AssertionError("dev.py demo did not serve within 240 s")
        if key is not None:
            status = call(port, key)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
    return out.decode(), status


def call(port: int, key: str) -> int:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/real-estate/dimensions", headers={"X-API-Key": key}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:  # not listening yet
        return 0


@needs_venv
def test_running_the_demo_twice_keeps_one_demo_account(demo_db_url: str, tmp_path: Path) -> None:
    """The real ``dev.py demo``, twice. Its data file is a copy of the session's demo
    set (what the demo's ``svc demo-data`` loads, with no account in it), so each run
    finds the set loaded, as a second run does, instead of loading it for 15 s or more:
    what is tested is the demo account."""
    db = tmp_path / "demo.db"
    data = sqlite_data_url(demo_db_url)
    assert data is not None
    shutil.copyfile(data.removeprefix("sqlite:///"), tmp_path / "demo-data.db")
    first, _ = run_demo(db, free_port())
    [key] = re.findall(r"API key \(shown once\): (svc_pk_live_[0-9a-f]{32})", first)
    # the key printed by the first run still works against the rerun's server and data
    second, status = run_demo(db, free_port(), key)
    assert status == 200
    assert "API key (shown once)" not in second
    assert "demo@example.com already has consumer" in second
    assert "its API key was printed when it was made and still works" in second

    listed = run_svc("consumer", "list", "--json", env=env_for(db))
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    demo = [r for r in rows if r["owner_email"] == "demo@example.com"]
    assert len(demo) == 1 and demo[0]["plan"] == "pro" and demo[0]["active_keys"] == 1
    assert demo[0]["id"] in second


def _dev_module() -> Any:
    spec = importlib.util.spec_from_file_location("dev_script", DEV)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _request(
    url: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data, headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_the_demo_shows_every_feature_on_one_machine(
    tmp_path: Path, receiver: Callable[..., Receiver]
) -> None:
    """A newcomer in ``dev.py demo`` (its environment, a real ``svc serve``): the
    landing page says what the demo does (pro accounts, local webhooks), the dashboard
    bears the banners, and a webhook to a receiver on this machine is delivered by the
    worker the server runs, with no other command started."""
    port = free_port()
    db_url = f"sqlite:///{tmp_path / 'demo.db'}"
    env = _dev_module().demo_env("127.0.0.1", str(port), {"SVC_DATABASE_URL": db_url})
    migrated = open_store(db_url)
    migrated.migrate()
    migrated.close()
    hook = receiver()
    server = LiveServer(db_url, env=env, port=port)
    try:
        status, _, home = _request(server.url + "/")
        text = home.decode()
        assert status == 200 and "A development server" in text
        assert "makes a <strong>pro</strong> account" in text
        assert "your first sign-in makes a pro account" in text
        assert "sent by the worker this server runs" in text

        site = {"Origin": server.url, "Content-Type": "application/json"}
        status, headers, body = _request(
            server.url + "/api/auth/dev-session", "POST", {"email": "new@example.com"}, site
        )
        assert status == 200, body
        cookie = {k.lower(): v for k, v in headers.items()}["set-cookie"].split(";", 1)[0]
        account = {"Cookie": cookie, **site}
        _, _, page = _request(server.url + "/dashboard/webhooks", headers=account)
        assert "Development sign-in" in page.decode() and "Local webhooks" in page.decode()

        status, _, made = _request(
            server.url + "/api/auth/me/webhooks", "POST", {"url": hook.url}, account
        )
        assert status == 200, made  # a loopback http receiver is accepted
        status, _, key = _request(
            server.url + "/api/auth/me/keys",
            "POST",
            {"label": "to revoke", "mode": "live", "scope": "read_only"},
            account,
        )
        assert status == 200, key
        key_id = json.loads(key)["data"]["id"]
        status, _, _ = _request(
            f"{server.url}/api/auth/me/keys/{key_id}", "DELETE", headers=account
        )
        assert status == 200
        deadline = time.monotonic() + 30  # the inline worker's sweep delivers it
        while not any(e["type"] == "key.revoked" for e in hook.events()):
            assert time.monotonic() < deadline, "no key.revoked delivered within 30 s"
            time.sleep(0.2)
    finally:
        server.stop()
