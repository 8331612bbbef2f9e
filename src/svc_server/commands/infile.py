"""Reading a file a command was given (``svc ingest``, ``--area-map``): regular files
only, up to a size cap, so a path that names a device (``/dev/zero`` through a link), a
FIFO or a file larger than memory can hold is refused at once in one line instead of
being read forever.

The cap is ``SVC_INGEST_MAX_BYTES`` (or ``--max-bytes``; ``DEFAULT_MAX_BYTES``, 256 MiB,
by default): a year of RTMS records of a whole province is a few tens of MB.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from svc_core.errors import InvalidParams, SourceError
from svc_core.params import ascii_int

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
MAX_BYTES_ENV = "SVC_INGEST_MAX_BYTES"
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def max_bytes(flag: int | None) -> int:
    """The cap: ``flag`` when given, else ``SVC_INGEST_MAX_BYTES``, else the default."""
    if flag is not None:
        value, source = flag, "--max-bytes"
    else:
        raw = os.environ.get(MAX_BYTES_ENV, "").strip()
        if not raw:
            return DEFAULT_MAX_BYTES
        try:
            value, source = ascii_int(raw), MAX_BYTES_ENV
        except ValueError:
            raise InvalidParams(f"{MAX_BYTES_ENV} must be a number of bytes, not {raw!r}") from None
    if value < 1:
        raise InvalidParams(f"{source} must be at least 1 byte")
    return value


def _what(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``limit`` of
    them; ``SourceError`` naming the path otherwise. The file is opened without blocking
    (a FIFO with no writer does not hang) and checked before anything is read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc), path=str(path)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise SourceError(
            f"{_what(info.st_mode)}, not a regular file: svc reads regular files only",
            path=str(path),
        )
    with os.fdopen(fd, "rb") as handle:
        too_big = SourceError(
            f"larger than the {limit:,} bytes svc reads ({MAX_BYTES_ENV} or --max-bytes "
            "raises the cap)",
            path=str(path),
        )
        if info.st_size > limit:
            raise too_big
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise SourceError(exc.strerror or str(exc), path=str(path)) from None
    if len(data) > limit:  # it grew while read
        raise too_big
    return data
