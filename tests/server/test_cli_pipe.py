"""``svc ingest ... | head`` ends quietly when the reader goes away (issue 15, point 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).parents[1] / "fixtures" / "samples" / "samples.csv"
FILES = 300  # each prints several lines: far more than a pipe buffer once head is gone


def test_ingest_into_a_closed_pipe_exits_without_a_traceback(sqlite_url: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "svc_server", "ingest", "samples"]
        + [str(SAMPLES)] * FILES
        + ["--database-url", sqlite_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # what ``head -n 1`` reads before it exits
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    status = proc.wait(timeout=120)
    assert first.startswith(str(SAMPLES).encode())
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert err == ""
    assert status == 141  # 128 + SIGPIPE, as a Unix tool the signal ended
