"""A SQLite store's data file lost or damaged, through the real ``svc serve`` (issue 29,
items 4 and 13).

- ``svc.db`` without its ``svc-data.db``: ``svc serve`` refuses with one line saying how
  to restore or how to start empty on purpose (``SVC_EMPTY_DATA_FILE=true``), exit 2,
  and creates nothing; with the setting it starts.
- The data file deleted while the server runs: ``/api/status`` answers 503 naming it,
  and no empty file takes its place.
- A damaged data file: ``svc serve`` refuses with one line, exit 2, no traceback; a
  table damaged past the file's header makes the status probe 503, never ``ok`` while
  data calls answer 500.

Each test starts (or fails to start) a server on a store of its own, since the store's
state at start is what it is about; the store is a copy of one loaded once per module.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from svc_server.ingest import demo
from svc_server.store import open_store
from tests.conftest import RE_NOW, TEST_SECRET, LiveServer, Templates, copy_sqlite_store, free_port
from tests.http import multihost_support as mh
from tests.server.test_demo_load import use_small_demo

DATA = "/api/v1/real-estate/dimensions"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> tuple[str, str]:
    """A SQLite store with the first records of the demo set and a key, loaded once per
    module for the tests to copy: (URL, the key)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('loaded') / 'svc.db'}"
    templates.fill(url)
    store = open_store(url)
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            use_small_demo(monkeypatch)
            demo.load_demo(store, seed=1, now=RE_NOW)
        _, key = mh.consumer(store, "loss@example.com", monthly_quota=1_000, rate_limit=1_000)
    finally:
        store.close()
    return url, key


@pytest.fixture
def files(tmp_path: Path, loaded: tuple[str, str]) -> tuple[str, Path, str]:
    """A copy of ``loaded`` of this test's own: (URL, the data file, the key)."""
    url, key = loaded
    copied = copy_sqlite_store(url, tmp_path)
    return copied, tmp_path / "svc-data.db", key


def serve_once(url: str, **env: str) -> tuple[int, str]:
    """Run ``svc serve`` expecting it to refuse: (exit status, stderr)."""
    full = dict(os.environ)
    full.update(
        {
            "SVC_DATABASE_URL": url,
            "SVC_SECRET_KEY": TEST_SECRET,
            "SVC_PORT": str(free_port()),
            "SVC_WORKERS": "1",
            **env,
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "svc_server", "serve"],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its workers too can be stopped, by the group
    )
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("svc serve started instead of refusing") from None
    return proc.returncode, err.decode()


def get(server: LiveServer, path: str, key: str | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(server.url + path, headers={"X-API-Key": key} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def errors(body: dict[str, Any]) -> list[str]:
    return [check.get("error", "") for check in body["checks"] if not check["ok"]]


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("svc: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_serve_refuses_a_missing_data_file(files: tuple[str, Path, str]) -> None:
    url, data_file, _ = files
    data_file.unlink()
    status, stderr = serve_once(url)
    assert status == 2
    line = one_error_line(stderr)
    assert "svc-data.db is missing" in line
    assert "restore it from a backup" in line and "--empty-data-file true" in line
    assert not data_file.exists()


def test_an_empty_data_file_on_purpose(
    files: tuple[str, Path, str], live_server_factory: Any
) -> None:
    url, data_file, key = files
    data_file.unlink()
    server = live_server_factory(url, env={"SVC_EMPTY_DATA_FILE": "true"})
    assert get(server, "/api/status")[0] == 200
    assert get(server, DATA, key)[0] == 200
    assert data_file.exists()


def test_status_fails_when_the_data_file_vanishes(
    files: tuple[str, Path, str], live_server_factory: Any
) -> None:
    url, data_file, key = files
    server = live_server_factory(url)
    status, before = get(server, DATA, key)
    assert status == 200 and before["data"]
    assert get(server, "/api/status")[0] == 200
    data_file.unlink()
    status, body = get(server, "/api/status")
    assert status == 503 and body["status"] == "degraded"
    assert errors(body) and all("svc-data.db is missing" in e for e in errors(body))
    for _ in range(8):  # every request thread: the old data or a 500, never a new file
        status, answer = get(server, DATA, key)
        assert (status, answer.get("data")) in ((200, before["data"]), (500, None)), answer
    assert not data_file.exists()


def test_serve_refuses_a_damaged_data_file(files: tuple[str, Path, str]) -> None:
    url, data_file, _ = files
    with data_file.open("r+b") as f:
        f.write(b"not a database at all, " * 8)
    status, stderr = serve_once(url)
    assert status == 2
    line = one_error_line(stderr)
    assert "svc-data.db is damaged" in line and "restore it from a backup" in line


def test_status_is_not_ok_while_data_calls_fail_on_a_damaged_table(
    files: tuple[str, Path, str], live_server_factory: Any
) -> None:
    url, data_file, key = files
    with sqlite3.connect(data_file) as conn:
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'transactions'"
        ).fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with data_file.open("r+b") as f:  # the table's first page, not its indexes
        f.seek((root - 1) * page_size)
        f.write(os.urandom(page_size))
    server = live_server_factory(url)
    assert get(server, DATA, key)[0] == 500
    status, body = get(server, "/api/status")
    assert status == 503 and body["status"] == "degraded"
    assert errors(body) and all("svc-data.db is damaged" in e for e in errors(body))
