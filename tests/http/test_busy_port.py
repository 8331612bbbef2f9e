"""A port another program listens on is an error, never a shared port.

granian listens with ``SO_REUSEPORT``: before this check, a second ``svc serve`` on a busy
port started silently and the kernel split connections between two servers with two
databases behind one port (the same key answered ``200 200 401 200 401``). These tests
run real processes: the refusal must be one line, non-zero, within 10 s, printed before
anything says "serving", and the first server must keep answering with its own data.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from svc_server.store import open_store
from tests.conftest import TEST_SECRET, LiveServer, free_port
from tests.http import multihost_support as mh
from tests.http.test_dev_demo import call

ROOT = Path(__file__).resolve().parents[2]


def keyed_store(url: str, email: str) -> str:
    store = open_store(url)
    try:
        store.migrate()
        return mh.consumer(store, email, monthly_quota=10_000, rate_limit=10_000)[1]
    finally:
        store.close()


def second_serve(port: int, db_url: str, *extra: str, host: str = "127.0.0.1") -> tuple[int, str]:
    """Start ``svc serve`` on ``port`` (expected busy): its exit status and output."""
    env = dict(os.environ)
    env.pop("SVC_SECRET_KEY", None)  # its warning must not come before the refusal
    env.update({"SVC_DATABASE_URL": db_url, "SVC_COOKIE_SECURE": "false"})
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", "serve", "--host", host, "--port", str(port), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert time.monotonic() - started < 10
    return done.returncode, done.stdout + done.stderr


def assert_one_line_naming(port: int, out: str) -> None:
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith("svc: error: ") and f"port {port}" in lines[0], out
    assert "--port" in lines[0] and "serving" not in out and "Traceback" not in out


def test_a_second_svc_serve_on_a_busy_port_exits_and_the_first_keeps_its_data(
    tmp_path: Path, live_server_factory: Callable[..., LiveServer]
) -> None:
    first_url = f"sqlite:///{tmp_path / 'first.db'}"
    second_url = f"sqlite:///{tmp_path / 'second.db'}"
    first_key = keyed_store(first_url, "first@example.com")
    second_key = keyed_store(second_url, "second@example.com")
    first = live_server_factory(first_url, workers=2)

    code, out = second_serve(first.port, second_url, "--workers", "2")
    assert code == 2
    assert_one_line_naming(first.port, out)

    # Every call reaches the first server: its key always works, the other never does.
    assert [call(first.port, first_key) for _ in range(30)] == [200] * 30
    assert [call(first.port, second_key) for _ in range(10)] == [401] * 10


@contextmanager
def listening(host: str, port: int, *, reuse_port: bool = False) -> Iterator[None]:
    """Another program's socket listening on ``host:port``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as other:
        if reuse_port:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind((host, port))
        other.listen()
        yield


@pytest.mark.parametrize(
    ("other_host", "our_host", "reuse_port", "server"),
    [
        ("127.0.0.1", "127.0.0.1", False, "granian"),
        ("127.0.0.1", "127.0.0.1", True, "granian"),  # what granian itself does
        ("0.0.0.0", "127.0.0.1", False, "granian"),  # another's wildcard
        ("127.0.0.1", "127.0.0.1", False, "gunicorn"),
    ],
)
def test_any_other_program_on_the_port_is_refused(
    tmp_path: Path, other_host: str, our_host: str, reuse_port: bool, server: str
) -> None:
    port = free_port()
    with listening(other_host, port, reuse_port=reuse_port):
        code, out = second_serve(
            port, f"sqlite:///{tmp_path / 'x.db'}", "--server", server, host=our_host
        )
    assert code == 2
    assert_one_line_naming(port, out)
    assert not (tmp_path / "x.db").exists()  # refused before anything was made


def test_a_free_port_just_left_by_a_server_is_taken(
    tmp_path: Path, live_server_factory: Callable[..., LiveServer]
) -> None:
    """Connections of a stopped server in TIME_WAIT do not count as "in use"."""
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    key = keyed_store(url, "a@example.com")
    first = live_server_factory(url)
    assert call(first.port, key) == 200
    first.stop()
    again = live_server_factory(url, port=first.port)
    assert call(again.port, key) == 200


def test_dev_demo_on_a_busy_port_exits_with_one_line_before_anything(tmp_path: Path) -> None:
    port = free_port()
    env = dict(os.environ)
    env["SVC_DATABASE_URL"] = f"sqlite:///{tmp_path / 'demo.db'}"
    env["SVC_SECRET_KEY"] = TEST_SECRET
    with listening("127.0.0.1", port):
        done = subprocess.run(
            [sys.executable, str(ROOT / "dev.py"), "demo", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    out = (done.stdout + done.stderr).strip()
    assert len(out.splitlines()) == 1, out
    assert f"port {port}" in out and "--port" in out
    assert not (tmp_path / "demo.db").exists()
