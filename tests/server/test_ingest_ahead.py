"""``svc ingest`` of many files parses the next ones in a second process while it
commits (``commands.ahead``): the files come back in order, a bounded number ahead,
each with its load or the reason it has none, and a directory loads into exactly the
store that loading its files one by one makes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_server.cli import main
from svc_server.commands import ahead
from svc_server.store import open_store

MOLIT = Path(__file__).resolve().parents[1] / "fixtures" / "molit"


class Counting(ThreadPoolExecutor):
    """An executor that counts the files submitted and not yet taken by the caller."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.lock = threading.Lock()
        self.out = 0
        self.most = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self.lock:
            self.out += 1
            self.most = max(self.most, self.out)
        return super().submit(fn, *args, **kwargs)


@given(st.integers(min_value=0, max_value=30))
def test_files_come_back_in_order_and_never_more_than_ahead(count: int) -> None:
    paths = [Path(f"f{n}") for n in range(count)]
    with Counting() as pool:
        got = []
        for parsed in ahead._ahead(paths, lambda p: ahead.Parsed(path=p, error="x"), pool):
            got.append(parsed.path)
            pool.out -= 1
    assert got == paths
    assert pool.most <= ahead.AHEAD + 1


def test_an_unreadable_file_is_named_with_its_reason(tmp_path: Path) -> None:
    good = tmp_path / "a.xml"
    shutil.copy(MOLIT / "NRG_11680_202506.xml", good)
    missing = tmp_path / "b.xml"
    reading = ahead.Reading(kind="rtms-commercial", limit=10**8)
    first, second = ahead.parsed([good, missing], reading)
    assert first.load is not None and first.error is None
    assert second.load is None and second.error


def stored(url: str) -> list[tuple[Any, ...]]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            rows = tx.fetchall(
                "SELECT natural_key, sigungu_code, property_type, price_krw "
                "FROM transactions ORDER BY natural_key"
            )
        return [tuple(r.values()) if hasattr(r, "values") else tuple(r) for r in rows]
    finally:
        store.close()


def test_a_directory_loads_what_its_files_load_one_by_one(tmp_path: Path, capsys: Any) -> None:
    files = tmp_path / "files"
    files.mkdir()
    names = ["NRG_11680_202506.xml", "NRG_11110_202505.xml", "OFFICETEL_11680_202506.xml"]
    for name in names:
        shutil.copy(MOLIT / name, files / name)
    together, alone = f"sqlite:///{tmp_path / 'together.db'}", f"sqlite:///{tmp_path / 'alone.db'}"
    for url in (together, alone):
        assert main(["init", "--database-url", url]) == 0
    assert main(["ingest", "--database-url", together, str(files)]) == 0
    for name in names:
        assert main(["ingest", "--database-url", alone, str(files / name)]) == 0
    assert stored(together) == stored(alone)
    assert len(stored(together)) > 0


def _parents() -> dict[int, int]:
    """Every live process's parent (zombies, which hold nothing open, left out)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state not in ("Z", "X"):
            found[int(entry.name)] = int(ppid)
    return found


def descendants(pid: int) -> set[int]:
    """The live processes under ``pid``."""
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    return pids & set(_parents())


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="parses ahead with two cores or more")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_stopped_ingest_of_a_directory_leaves_no_process_holding_its_output(
    tmp_path: Path, stop: signal.Signals
) -> None:
    """Issue 44 item 5: stopped while it loads a directory, ``svc ingest`` leaves neither
    the process parsing ahead nor multiprocessing's resource tracker running: its output
    ends (a pipeline or cron job reading it finishes), and SIGTERM is handled as SIGINT
    (exit 143, no traceback)."""
    files = tmp_path / "files"
    files.mkdir()
    for number in range(40):
        shutil.copy(MOLIT / "NRG_11680_202506.xml", files / f"NRG_{number:02d}.xml")
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    assert main(["init", "--database-url", url]) == 0
    command = [sys.executable, "-m", "svc_server", "ingest", "--database-url", url, str(files)]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    helpers: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while len(helpers) < 2 and proc.poll() is None:  # the tracker and the parser
            assert time.monotonic() < deadline, "no process parsing ahead after 30 s"
            helpers = descendants(proc.pid)
            time.sleep(0.01)
        assert len(helpers) >= 2 and proc.poll() is None, "the load ended before it was stopped"
        os.kill(proc.pid, stop)
        _, err = proc.communicate(timeout=20)  # the output's end: nothing holds it open
        deadline = time.monotonic() + 5
        while alive(helpers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(helpers)
        if stop == signal.SIGTERM:
            assert proc.returncode == 143, err
            assert b"Traceback" not in err, err.decode()
    finally:
        for pid in alive(helpers) | ({proc.pid} if proc.poll() is None else set()):
            os.kill(pid, signal.SIGKILL)  # only what this test started
        proc.wait(timeout=10)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_second_process_starts_is_taken_once_it_has_started(
    stop: signal.Signals,
) -> None:
    """A stop arriving while multiprocessing writes the new process its start-up data is
    held, then raised at once when the start is done (so the command still stops, and
    the second process never reads half its data)."""
    taken: list[int] = []

    def handler(number: int, _: Any) -> None:
        taken.append(number)

    before = signal.signal(stop, handler)
    try:
        with ahead._stops_held():
            os.kill(os.getpid(), stop)
            time.sleep(0.05)  # delivered by now: held, not taken
            assert taken == []
        assert taken == [stop]  # raised again, to the command's own handler
        assert signal.getsignal(stop) is handler  # which is in place again
    finally:
        signal.signal(stop, before)
