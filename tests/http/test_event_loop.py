"""``svc serve`` runs its workers on uvloop whatever other event loop is installed.

granian's default loop ("auto") takes rloop when it can import it, else uvloop, else
asyncio: which loop a deployment ran on depended on what else happened to be installed
(the bench extra pulls uvloop in, a plain install did not). A warm call is answered on
the loop, so the loop is part of what a call costs (bench/loops.py). The test puts an
``rloop`` on the server's path that cannot make a loop: a server left to "auto" picks
it and never answers; ``svc serve`` must answer, from a worker that has uvloop loaded.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import LiveServer

BROKEN_RLOOP = """
def new_event_loop():
    raise RuntimeError("this rloop must not be chosen")
"""


def workers(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in found.split()]


def test_svc_serve_runs_on_uvloop_even_with_another_loop_installed(tmp_path: Path) -> None:
    (tmp_path / "rloop.py").write_text(BROKEN_RLOOP)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    server = LiveServer(f"sqlite:///{tmp_path / 'svc.db'}", env={"PYTHONPATH": path})
    try:
        pids = workers(server.proc.pid)
        assert pids, "granian runs its app in worker processes"
        for pid in pids:
            maps = Path(f"/proc/{pid}/maps").read_text()
            assert "uvloop" in maps, f"worker {pid} has no uvloop loaded"
    finally:
        server.stop()
