"""Large answers leave from a file: granian reads it as the client reads, never whole.

granian takes an answer handed to it as bytes (or as a stream) whole into memory and
keeps it there until the client has read it, with no word back: 24 unread CSVs of a few
tens of MB each grew a worker from 125 to 870 MiB (issue 29). So the front writes an
answer past ``SPILL_BYTES`` to a file of its own folder and hands granian the file
(``response_file``), which granian sends as the client reads; the file is removed, and
the tenant's call ends (``http.tenants``), once granian has closed it: sent whole, or
the client gone. Whether granian still has it open is read from ``/proc/self/fd``
(Linux); where that does not exist, answers are not spilled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import BinaryIO

SPILL_BYTES = 256 * 1024
"""An answer longer than this is written to a file; shorter ones stay in memory."""
SWEEP_SECONDS = 0.25
"""How often the files handed to granian are checked."""
FD_DIR = "/proc/self/fd"


class Spill:
    """The folder of this worker's spilled answers and the ones granian still sends."""

    def __init__(self) -> None:
        self.folder = (
            os.path.realpath(tempfile.mkdtemp(prefix="svc-answers-"))
            if os.path.isdir(FD_DIR)
            else None
        )
        self.sent: dict[str, Callable[[], None]] = {}
        self.sweeper: asyncio.Task[None] | None = None

    def open(self) -> tuple[str, BinaryIO] | None:
        """A new file for one answer (its path and the open file); None: no spilling."""
        if self.folder is None:
            return None
        fd, path = tempfile.mkstemp(dir=self.folder, suffix=".answer")
        return path, os.fdopen(fd, "wb")

    def handed(self, path: str, done: Callable[[], None]) -> None:
        """``path`` was handed to granian (on the event loop): ``done`` runs, and the file
        goes, once granian has closed it."""
        self.sent[path] = done
        if self.sweeper is None or self.sweeper.done():
            self.sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        while self.sent:
            await asyncio.sleep(SWEEP_SECONDS)
            self.sweep()

    def sweep(self) -> None:
        """End every handed file granian no longer has open."""
        still = _open_paths()
        for path in [p for p in self.sent if p not in still]:
            done = self.sent.pop(path)
            with contextlib.suppress(OSError):
                os.unlink(path)
            done()

    def discard(self, path: str) -> None:
        """Remove a file never handed over (its client went)."""
        with contextlib.suppress(OSError):
            os.unlink(path)

    def close(self) -> None:
        """Remove the folder and whatever is left in it (the worker stops)."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _open_paths() -> set[str]:
    """The paths of the files this process has open."""
    paths = set()
    for fd in os.listdir(FD_DIR):
        with contextlib.suppress(OSError):
            paths.add(os.readlink(f"{FD_DIR}/{fd}"))
    return paths
