"""``svc ingest`` of many files: the next files read and parsed in a second process
while this one commits the file before them.

Parsing (reading XML or CSV into records) is pure and was a third of a national load;
committing is the rest. Run one after the other they take the sum of both; here they
overlap on a machine with two cores or more, and the load takes about the longer of
the two. At most ``AHEAD`` files wait parsed, so memory stays that of a few files. The
second process is started fresh (``spawn``), never forked from one holding a store.

The second process never outlives the command: stopped by a signal or an error, the
command ends it at once (the file it parses is discarded); killed outright (SIGKILL),
the command cannot, so the second process ends itself when its parent dies (Linux's
``PR_SET_PDEATHSIG``; elsewhere it polls its parent). It ignores SIGINT, which a
terminal sends to both: its parent stops it. Otherwise it (and multiprocessing's
resource tracker, which waits on it) would keep the load's output open, and a pipeline
or cron job reading that output would never end.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path

import attrs

from svc_core.errors import SourceError
from svc_server import ingest
from svc_server.commands.infile import read_regular
from svc_server.ingest.load import Load

AHEAD = 3
"""Files parsed ahead of the one being committed, at most."""
PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process gets when its parent dies."""
PARENT_POLL = 0.5
"""Seconds between the second process's checks that its parent lives, where the
operating system cannot signal it (not Linux)."""


@attrs.frozen(kw_only=True)
class Parsed:
    """One file, parsed: its load, or why it cannot be loaded (nothing is written)."""

    path: Path
    load: Load | None = None
    error: str | None = None


@attrs.frozen(kw_only=True)
class Reading:
    """How each file is read: ``svc ingest``'s kind, size limit and R-ONE options."""

    kind: str | None
    limit: int
    area_map: ingest.AreaMap | None = None
    table_name: str | None = None
    property_type: str | None = None

    def parse(self, path: Path, progress: ingest.Progress | None = None) -> Parsed:
        """Read and parse the file at ``path`` (pure apart from reading it)."""
        try:
            data = read_regular(path, self.limit)
            load = ingest.read(
                self.kind,
                data,
                path=str(path),
                area_map=self.area_map,
                table_name=self.table_name,
                property_type=self.property_type,
                progress=progress,
            )
        except SourceError as exc:
            return Parsed(path=path, error=exc.message)
        return Parsed(path=path, load=load)


def parsed(paths: Sequence[Path], reading: Reading) -> Generator[Parsed, None, None]:
    """Each of ``paths`` parsed, in order: in a second process, ``AHEAD`` files ahead
    of the caller, when there are several files and more than one core."""
    if len(paths) < 2 or (os.cpu_count() or 1) < 2:
        yield from map(reading.parse, paths)
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=1, mp_context=context, initializer=_second, initargs=(os.getpid(),)
    )
    finished = False
    try:
        yield from _ahead(paths, functools.partial(_parse, reading), pool)
        finished = True
    finally:
        if not finished:  # stopped early: what is being parsed will not be read
            for process in list((pool._processes or {}).values()):  # no public way in 3.11
                process.kill()
        pool.shutdown(wait=True, cancel_futures=True)


def _ahead(
    paths: Sequence[Path], parse: Callable[[Path], Parsed], pool: Executor
) -> Iterator[Parsed]:
    waiting: deque[Future[Parsed]] = deque()
    rest = iter(paths)
    with _stops_held():  # the first submit starts the second process
        for path in rest:
            waiting.append(pool.submit(parse, path))
            if len(waiting) >= AHEAD:
                break
    while waiting:
        done = waiting.popleft().result()
        following = next(rest, None)
        if following is not None:
            waiting.append(pool.submit(parse, following))
        yield done


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the second process starts, then raised again:
    a stop taken midway would leave it reading half its start-up data from the pipe and
    printing that traceback on the command's stderr."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread handles signals (an embedding application's thread)
        return
    held: list[int] = []
    stops = (signal.SIGINT, signal.SIGTERM)
    before = {stop: signal.signal(stop, lambda number, _: held.append(number)) for stop in stops}
    try:
        yield
    finally:
        for stop, handler in before.items():
            signal.signal(stop, handler)
        if held:
            signal.raise_signal(held[0])


def _second(parent: int) -> None:
    """Set up the second process: SIGINT ignored (its parent stops it), and its end
    when ``parent`` (the command) dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            _watch(parent)
    else:
        _watch(parent)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


def _watch(parent: int) -> None:
    """End this process within ``PARENT_POLL`` seconds of ``parent`` dying."""

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=poll, name="svc-parent-watch", daemon=True).start()


def _parse(reading: Reading, path: Path) -> Parsed:
    """``Reading.parse`` in the second process (a module function: it is pickled)."""
    return reading.parse(path)
