"""``svc ingest`` of hostile files through the real ``svc`` command: JSON nested 200,000
deep or holding a 6,000-digit number, a link to the zero device, a FIFO, a file over the
size cap, and a file whose items show two kinds. Each is one ``svc: error`` line, a
non-zero exit and nothing written (or, for two kinds, a load as the kind the user names).

The command runs under an address-space limit, so a build that reads ``/dev/zero``
whole fails here with a MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from svc_server.commands.infile import DEFAULT_MAX_BYTES
from svc_server.store import open_store
from tests.http.realestate_support import (
    FIXTURES,
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    xml_items,
)

DEPTH = 200_000
MEMORY_LIMIT = 2 * 1024 * 1024 * 1024


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def svc(url: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """The real ``svc``; returns the finished process and how long it ran."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", *args, "--database-url", url],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
        preexec_fn=_limit_memory,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done, time.monotonic() - started


def stored(url: str) -> dict[str, int]:
    store = open_store(url)
    store.migrate()
    try:
        with store.data.transaction(write=False) as tx:
            return {
                table: tx.fetchall(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"]
                for table in ("transactions", "index_observations", "ingest_log")
            }
    finally:
        store.close()


def one_error(done: Any, path: Path, message: str) -> None:
    """Exit 1 and exactly one stderr line: ``svc: error: PATH: message...``."""
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"svc: error: {path}: {message}"), lines[0]


# Item 10: deep and huge-number JSON ------------------------------------------------------


def _commercial_json(value: str) -> bytes:
    """An RTMS JSON answer whose one item shows it is commercial and holds ``value``."""
    return (
        '{"response": {"header": {"resultCode": "000", "resultMsg": "OK"}, "body": '
        '{"items": {"item": [{"buildingUse": "업무", "buildingAr": 100, "dealAmount": '
        + value
        + '}]}, "totalCount": 1}}}'
    ).encode()


HOSTILE_JSON = {
    "deep": (_commercial_json("[" * DEPTH + "]" * DEPTH), "JSON nested too deeply to read"),
    "huge-number": (_commercial_json("1" * 6000), "JSON holds a number too long to read"),
    "rone-deep": (
        b'{"SttsApiTblData": ' + b"[" * DEPTH + b"]" * DEPTH + b"}",
        "JSON nested too deeply to read",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
@pytest.mark.parametrize("named", [False, True], ids=["recognised", "named"])
def test_deep_or_huge_number_json_is_one_error_line_and_writes_nothing(
    sqlite_url: str, tmp_path: Path, name: str, named: bool
) -> None:
    data, message = HOSTILE_JSON[name]
    # NrgTrade's fields are also InduTrade's: MOLIT's file name tells which
    path = tmp_path / f"{'' if name.startswith('rone') else 'NRG_'}{name}.json"
    path.write_bytes(data)
    before = stored(sqlite_url)
    kind = ("rone-index" if name.startswith("rone") else "rtms-commercial",) if named else ()
    done, _ = svc(sqlite_url, "ingest", *kind, str(path))
    one_error(done, path, message)
    assert stored(sqlite_url) == before


# Item 11: regular files only, up to a cap --------------------------------------------------


def test_a_link_to_the_zero_device_is_refused_at_once(sqlite_url: str, tmp_path: Path) -> None:
    link = tmp_path / "NRG_11680_202506.xml"
    link.symlink_to("/dev/zero")
    done, took = svc(sqlite_url, "ingest", "rtms-commercial", str(link))
    one_error(done, link, "a character device, not a regular file: svc reads regular files only")
    assert took < 20
    assert stored(sqlite_url)["ingest_log"] == 0


def test_a_fifo_is_refused_at_once_without_waiting_for_a_writer(
    sqlite_url: str, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    for args in (("rtms-commercial", str(fifo)), (str(fifo),)):
        done, took = svc(sqlite_url, "ingest", *args)
        one_error(done, fifo, "a FIFO (named pipe), not a regular file")
        assert took < 20


def test_a_fifo_given_as_the_area_map_is_refused_too(sqlite_url: str, tmp_path: Path) -> None:
    fifo = tmp_path / "areas.csv"
    os.mkfifo(fifo)
    indices = FIXTURES / "rone" / "indices.csv"
    done, _ = svc(sqlite_url, "ingest", "rone-index", "--area-map", str(fifo), str(indices))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"svc: error: {fifo}: a FIFO (named pipe), not a regular file: svc reads regular files only"
    )


def test_a_file_over_the_size_cap_is_refused_and_the_cap_is_a_flag_or_a_setting(
    sqlite_url: str,
) -> None:
    size = NRG_JONGNO_PAGE.stat().st_size
    done, _ = svc(sqlite_url, "ingest", "--max-bytes", str(size - 1), str(NRG_JONGNO_PAGE))
    one_error(done, NRG_JONGNO_PAGE, f"larger than the {size - 1:,} bytes svc reads")
    assert "SVC_INGEST_MAX_BYTES or --max-bytes raises the cap" in done.stderr
    env = {"SVC_INGEST_MAX_BYTES": str(size - 1)}
    done, _ = svc(sqlite_url, "ingest", str(NRG_JONGNO_PAGE), env=env)
    one_error(done, NRG_JONGNO_PAGE, f"larger than the {size - 1:,} bytes svc reads")
    assert stored(sqlite_url)["ingest_log"] == 0
    done, _ = svc(sqlite_url, "ingest", "--max-bytes", str(size), str(NRG_JONGNO_PAGE), env=env)
    assert done.returncode == 0, done.stderr  # the flag wins; a file of the cap loads
    assert DEFAULT_MAX_BYTES >= 64 * 1024 * 1024  # far above any real export
    done, _ = svc(sqlite_url, "ingest", str(NRG_JONGNO_PAGE), env={"SVC_INGEST_MAX_BYTES": "x"})
    assert done.returncode == 2 and "SVC_INGEST_MAX_BYTES must be a number" in done.stderr


# Item 12: a file whose items show two kinds -----------------------------------------------


_ITEM = re.compile(rb"<item>.*?</item>", re.S)


def lease_file_with_a_sale(tmp_path: Path) -> Path:
    """The real officetel lease month with one commercial sale item appended, alone in
    a directory."""
    sale = _ITEM.findall(NRG_GANGNAM.read_bytes())[0]
    data = OFFI_RENT.read_bytes().replace(b"</items>", sale + b"</items>", 1)
    (tmp_path / "drop").mkdir()
    path = tmp_path / "drop" / "OFFICETEL_RENT_11680_202506.xml"
    path.write_bytes(data)
    return path


def test_a_file_whose_items_show_two_kinds_is_refused_naming_both(
    sqlite_url: str, tmp_path: Path
) -> None:
    path = lease_file_with_a_sale(tmp_path)
    leases = len(xml_items(OFFI_RENT))
    done, _ = svc(sqlite_url, "ingest", str(path))
    one_error(done, path, "its items show 2 kinds: ")
    assert (
        f"{leases} items of an officetel lease file (RTMS OffiRent) (rtms-officetel-rent) and "
        "1 item of a commercial-building sale file (RTMS NrgTrade) (rtms-commercial); nothing loaded"
    ) in done.stderr, done.stderr
    assert f"svc ingest rtms-officetel-rent {path}" in done.stderr
    done, _ = svc(sqlite_url, "ingest", "rtms-officetel-trade", str(path))
    one_error(done, path, "its items show 2 kinds: ")
    assert "(none is rtms-officetel-trade)" in done.stderr
    assert stored(sqlite_url) == {"transactions": 0, "index_observations": 0, "ingest_log": 0}


def test_naming_the_kind_loads_a_mixed_file_as_that_kind(sqlite_url: str, tmp_path: Path) -> None:
    path = lease_file_with_a_sale(tmp_path)
    leases = len(xml_items(OFFI_RENT))
    done, _ = svc(sqlite_url, "ingest", "rtms-officetel-rent", str(path))
    assert done.returncode == 0, done.stderr
    assert f"{path}: read {leases + 1}, loaded " in done.stdout
    assert "rejected 1" in done.stdout  # the sale item, by the lease reader
    store = open_store(sqlite_url)
    try:
        with store.data.transaction(write=False) as tx:
            kinds = tx.fetchall("SELECT DISTINCT property_type FROM transactions")
    finally:
        store.close()
    assert kinds == [{"property_type": "officetel"}]
    # a directory given with the kind loads it too (nothing new: loaded above)
    done, _ = svc(sqlite_url, "ingest", "rtms-officetel-rent", str(path.parent))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert f"{path}: read {leases + 1}, loaded 0, duplicate " in done.stdout


# Issue 44 item 3: a CSV file cut short --------------------------------------------------


def _cut(data: bytes, before: bytes) -> bytes:
    """``data`` cut as a killed copy cuts it: inside its last line, just before
    ``before`` (the last occurrence of it)."""
    return data[: data.rindex(before)]


CUT_CSV = {
    # the last deal's 33.1 m² cut to 3 m²: a record that reads as valid
    "samples": (FIXTURES / "samples" / "samples.csv", "samples", b".1\r\n"),
    # the RTMS web export cut inside its last (quoted) cell
    "rtms-csv": (
        FIXTURES / "rtms_csv" / "commercial_11680_202506_cp949.csv",
        "rtms-commercial",
        '강남구"\r\n'.encode("cp949"),
    ),
    "rone-csv": (FIXTURES / "rone" / "indices.csv", "rone-index", b"4.2,%"),
}


@pytest.mark.parametrize("name", sorted(CUT_CSV))
def test_a_csv_cut_inside_its_last_line_is_refused_and_the_whole_file_loads_once(
    sqlite_url: str, tmp_path: Path, name: str
) -> None:
    source, kind, before = CUT_CSV[name]
    path = tmp_path / source.name
    path.write_bytes(_cut(source.read_bytes(), before))
    done, _ = svc(sqlite_url, "ingest", kind, str(path))
    lines = source.read_bytes().count(b"\n")  # the last line is the one cut
    one_error(done, Path(f"{path}:{lines}"), "the file ends inside its last row (no line")
    assert stored(sqlite_url) == {"transactions": 0, "index_observations": 0, "ingest_log": 0}
    if name != "samples":
        return  # the whole file loading once is shown on one reader: the refusal is shared
    path.write_bytes(source.read_bytes())  # the copy finished
    done, _ = svc(sqlite_url, "ingest", kind, str(path))
    assert done.returncode == 0, done.stderr
    again = tmp_path / "again.db"
    done, _ = svc(f"sqlite:///{again}", "ingest", kind, str(source))
    assert done.returncode == 0, done.stderr
    assert stored(sqlite_url) == stored(f"sqlite:///{again}")
