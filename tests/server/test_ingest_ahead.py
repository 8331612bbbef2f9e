"""``svc ingest`` of many files parses the next ones in a second process while it
commits (``commands.ahead``): the files come back in order, a bounded number ahead,
each with its load or the reason it has none, and a directory loads into exactly the
store that loading its files one by one makes."""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

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
