"""``svc ingest`` of many files: the next files read and parsed in a second process
while this one commits the file before them.

Parsing (reading XML or CSV into records) is pure and was a third of a national load;
committing is the rest. Run one after the other they take the sum of both; here they
overlap on a machine with two cores or more, and the load takes about the longer of
the two. At most ``AHEAD`` files wait parsed, so memory stays that of a few files. The
second process is started fresh (``spawn``), never forked from one holding a store.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path

import attrs

from svc_core.errors import SourceError
from svc_server import ingest
from svc_server.commands.infile import read_regular
from svc_server.ingest.load import Load

AHEAD = 3
"""Files parsed ahead of the one being committed, at most."""


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


def parsed(paths: Sequence[Path], reading: Reading) -> Iterator[Parsed]:
    """Each of ``paths`` parsed, in order: in a second process, ``AHEAD`` files ahead
    of the caller, when there are several files and more than one core."""
    if len(paths) < 2 or (os.cpu_count() or 1) < 2:
        yield from map(reading.parse, paths)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        yield from _ahead(paths, functools.partial(_parse, reading), pool)


def _ahead(
    paths: Sequence[Path], parse: Callable[[Path], Parsed], pool: Executor
) -> Iterator[Parsed]:
    waiting: deque[Future[Parsed]] = deque()
    rest = iter(paths)
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


def _parse(reading: Reading, path: Path) -> Parsed:
    """``Reading.parse`` in the second process (a module function: it is pickled)."""
    return reading.parse(path)
