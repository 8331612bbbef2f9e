"""``svc mcp --url`` against a hostile server, through the real command driven over
stdio (issue 44 item 4): a gzip bomb, a dripped body and JSON nested 200,000 deep each
give the tool call an error answer within ``--timeout``, in bounded memory and without
a traceback, and the process goes on answering; a plain-http URL to another machine
is refused before serving (the command run in this process: it stops before serving)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from svc_server.delivery.fetch import MAX_ANSWER_BYTES
from tests.server.hostile_upstream import Hostile
from tests.server.hostile_upstream import serve as hostile_serve
from tests.server.rtms_standin import serve as rtms_serve
from tests.svc_cli import run_svc

pytest.importorskip("mcp")

KEY = "svc_pk_live_" + "0" * 32
PEAK_RSS_MIB = 250
"""What ``svc mcp`` may hold at its peak: the SDK and one answer of at most 16 MiB (a
256 MiB gzip bomb, inflated whole, took it past 300 MiB)."""


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    with rtms_serve() as standin, hostile_serve(standin.url) as state:
        yield state


class Stdio:
    """``svc mcp`` spoken to over its stdin and stdout, one JSON-RPC message a line."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "SVC_LOG_LEVEL": "WARNING"}
        env.pop("SVC_API_KEY", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "svc_server", "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.errors: list[bytes] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self.reader.start()
        self.drain = threading.Thread(target=self.errors.extend, args=(self.proc.stderr,))
        self.drain.start()
        self.ids = 0

    def _read(self, stdout: Any) -> None:
        for line in stdout:
            self.lines.put(line)

    def send(self, method: str, params: dict[str, Any] | None = None, *, wait: float = 30) -> Any:
        """Send a request (a notification with ``wait`` 0) and return its result."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if wait:
            self.ids += 1
            message["id"] = self.ids
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + wait
        while wait:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to {method} within {wait} s"
            answer = json.loads(self.lines.get(timeout=left))
            if answer.get("id") == self.ids:
                return answer["result"]
        return None

    def call(self, tool: str, **arguments: Any) -> tuple[Any, float]:
        started = time.monotonic()
        result = self.send("tools/call", {"name": tool, "arguments": arguments})
        return result, time.monotonic() - started

    def peak_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as status:
            line = next(x for x in status if x.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024

    def close(self) -> str:
        """Close stdin (the client left); the process's stderr once it ended."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.drain.join(timeout=10)
            self.reader.join(timeout=10)
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()
        return b"".join(self.errors).decode()


def test_hostile_answers_are_error_answers_within_the_timeout_in_bounded_memory(
    hostile: Hostile,
) -> None:
    for trick in ("gzip-bomb", "drip-body", "deep-json"):
        hostile.when(trick, times=1)
    mcp = Stdio("--api-key", KEY, "--url", hostile.url, "--timeout", "2")
    try:
        mcp.send(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        mcp.send("notifications/initialized", wait=0)
        bomb, _ = mcp.call("find_district", query="강남")
        dripped, took = mcp.call("find_district", query="강남")
        deep, _ = mcp.call("find_district", query="강남")
        peak = mcp.peak_mib()
    finally:
        err = mcp.close()
    assert [s[2] for s in hostile.seen] == ["gzip-bomb", "drip-body", "deep-json"]
    assert bomb["isError"] is True
    assert f"larger than the {MAX_ANSWER_BYTES:,} bytes svc reads (once gzip" in str(bomb)
    assert peak < PEAK_RSS_MIB, f"peak RSS {peak:.0f} MiB"
    assert dripped["isError"] is True and took < 6, took
    assert "no complete answer within --timeout 2 s" in str(dripped)
    assert deep["isError"] is True and "without JSON" in str(deep)
    assert "Traceback" not in err, err


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://example.com", "is plain http to another machine"),
        ("ftp://example.com", "--url must be https://HOST"),
        ("https://", "--url must be https://HOST"),
    ],
)
def test_a_url_that_would_send_the_key_in_clear_is_refused(url: str, said: str) -> None:
    done = run_svc("mcp", "--api-key", KEY, "--url", url)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("svc: error: ") and said in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1
