"""The ``svc`` command run inside the test process, for tests of what it does rather than
of the process it runs in.

A subprocess costs a Python start and the server's imports (about 0.5 s idle, several
seconds on a busy machine) for each call. ``run_svc`` calls ``svc_server.cli.main`` with
the arguments, the environment and standard input it is given, and returns what a
subprocess would have: the exit status and the text written to stdout and stderr.
Tests of the process itself (signals, ports, exit on a broken pipe, memory, what a
child process leaves behind) keep real processes.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping

_ONE_AT_A_TIME = threading.Lock()  # the environment and sys.std* are the process's


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """Undo what a command's ``logging.basicConfig`` does to the root logger."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def _text_stream(initial: bytes = b"") -> io.TextIOWrapper:
    """A text stream with a ``.buffer``, as ``sys.stdout`` has."""
    return io.TextIOWrapper(io.BytesIO(initial), encoding="utf-8", write_through=True)


def run_svc(
    *args: str, env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """``svc ARGS`` in this process: its exit status, stdout and stderr."""
    from svc_server import cli

    out, err, inp = _text_stream(), _text_stream(), _text_stream(stdin.encode())
    with _ONE_AT_A_TIME, _environment(env), _logging_kept():
        saved_stdin = sys.stdin
        sys.stdin = inp
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main(list(args))
                except SystemExit as exit_:  # argparse: usage errors, --help, --version
                    if exit_.code is None or isinstance(exit_.code, int):
                        code = exit_.code or 0
                    else:
                        print(exit_.code, file=sys.stderr)
                        code = 1
        finally:
            sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["svc", *args], code, _read(out), _read(err))


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode("utf-8")
