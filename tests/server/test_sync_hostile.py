"""``svc sync rtms`` and ``svc sync rone`` through the real ``svc`` command against a
hostile upstream (``hostile_upstream``: a real local server in front of the stand-ins)
that redirects, drips, sends decompression bombs and oversized bodies, ignores
``pageNo``, nests JSON 200,000 deep and writes 6,000-digit counts. Each answer fails its
month (or table) with a reason that is recorded and printed, the run goes on with the
others, memory stays bounded, ``--timeout`` bounds the whole call, and nothing is ever
a traceback.

The tests of memory run ``svc`` as a process of its own (its peak RSS is what they
measure); the others run the command in this process (``run_svc``), where a traceback
is an exception that fails the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from svc_server.delivery.fetch import MAX_ANSWER_BYTES
from svc_server.store import open_store
from tests.server import rone_standin
from tests.server.hostile_upstream import HUGE, Hostile
from tests.server.hostile_upstream import serve as hostile_serve
from tests.server.rtms_standin import KEY, SERVICES, StandIn
from tests.svc_cli import run_svc

SVC = Path(sys.executable).with_name("svc")
NRG = SERVICES["NRG"]
MAY_JUNE = ("--sigungu", "11680", "--from", "2025-05", "--to", "2025-06")
MAY = "202505"
PEAK_RSS_MIB = 250
"""What a sync of small pages may hold at its peak, imports included (it holds one
answer of at most 16 MiB at a time; a decompression bomb used to take 1 GB)."""


@pytest.fixture
def hostile(standin: StandIn) -> Iterator[Hostile]:
    with hostile_serve(standin.url) as state:
        yield state


LAUNCHER = """
import os, subprocess, sys, time
proc = subprocess.Popen(sys.argv[3:])
deadline = time.monotonic() + float(sys.argv[2])
while not (done := os.wait4(proc.pid, os.WNOHANG))[0]:
    if time.monotonic() > deadline:
        proc.kill()
        done = os.wait4(proc.pid, 0)
        break
    time.sleep(0.05)
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(done[1])} {done[2].ru_maxrss} {time.monotonic() > deadline}")
"""
"""Runs ``svc`` as the child of a small process and writes its exit code, its peak RSS
(KiB) and whether it was killed. Linux starts a child's peak RSS at its parent's RSS at
``fork``: measured as pytest's own child, ``svc`` would report pytest's size (hundreds
of MiB late in a run), not its own."""


def run(
    url: str,
    base: str,
    *args: str,
    env_extra: dict[str, str] | None = None,
    measured: bool = False,
) -> Any:
    """``svc ARGS``; returns (exit code, stdout, stderr, peak RSS in MiB). The peak is
    measured (``measured``) in a real ``svc`` process under ``LAUNCHER``; otherwise the
    command runs in this process (``run_svc``: no process start) and the peak is None.
    Either way a traceback fails the test: in process it is raised."""
    env = {
        "SVC_RTMS_BASE_URL": base,
        "SVC_RONE_BASE_URL": base,
        "SVC_DATABASE_URL": url,
        "SVC_DATA_GO_KR_KEY": KEY,
        "SVC_RONE_KEY": rone_standin.KEY,
        **(env_extra or {}),
    }
    if not measured:
        done = run_svc(*args, env=env)
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, done.stdout, done.stderr, None
    env = {**os.environ, **env}
    with tempfile.TemporaryDirectory() as tmp:
        report, out, err = (Path(tmp) / name for name in ("report", "out", "err"))
        with out.open("wb") as stdout, err.open("wb") as stderr:
            launch = [sys.executable, "-c", LAUNCHER, str(report), "90", str(SVC), *args]
            subprocess.run(launch, stdout=stdout, stderr=stderr, env=env, check=True)
        code, peak, killed = report.read_text().split()
        output, errors = out.read_text(), err.read_text()
    if killed == "True":
        pytest.fail(f"svc {' '.join(args)} ran for more than 90 s")
    assert "Traceback" not in errors, errors
    return int(code), output, errors, int(peak) / 1024


def sync(url: str, hostile: Hostile, *args: str, measured: bool = False) -> Any:
    fast = ("--backoff", "0", "--rate", "1000", "--kinds", "commercial")
    return run(url, hostile.url, "sync", "rtms", *fast, *args, measured=measured)


def state_rows(url: str, table: str = "sync_months") -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            return tx.fetchall(f"SELECT * FROM {table}")
    finally:
        store.close()


def months(url: str) -> dict[str, dict[str, Any]]:
    return {r["month"]: r for r in state_rows(url)}


def transactions(url: str) -> list[str]:
    store = open_store(url)
    try:
        with store.data.transaction(write=False) as tx:
            found = tx.fetchall("SELECT natural_key FROM transactions ORDER BY 1")
    finally:
        store.close()
    return [r["natural_key"] for r in found]


def june_calls(standin: StandIn) -> int:
    return sum(1 for c in standin.calls if c.get("DEAL_YMD") == "202506")


def assert_may_failed_june_complete(url: str, stderr: str, reason: str) -> None:
    found = months(url)
    assert found["2025-05"]["status"] == "failed", found
    assert reason in found["2025-05"]["detail"], found["2025-05"]["detail"]
    assert f"failed: commercial 11680 2025-05: {found['2025-05']['detail']}" in stderr
    assert reason in stderr
    assert found["2025-06"]["status"] == "complete"


# Item 5: redirects ----------------------------------------------------------------------


def test_a_redirect_to_an_internal_address_fails_the_month_naming_it_and_is_not_followed(
    sqlite_url: str, standin: StandIn, hostile: Hostile
) -> None:
    # the redirect points at an internal address serving a valid page: June's deals
    june = f"{standin.url}/{NRG}?serviceKey=x&LAWD_CD=11680&DEAL_YMD=202506&pageNo=1"
    hostile.redirect_to = june
    hostile.when("redirect", DEAL_YMD=MAY)
    code, out, err, _ = sync(sqlite_url, hostile, *MAY_JUNE, "--timeout", "5")
    assert code == 1, out + err
    assert_may_failed_june_complete(sqlite_url, err, "HTTP 302: a redirect to")
    shown = june.replace("serviceKey=x", "serviceKey=***")  # a key in a URL is never shown
    assert repr(shown) in err and "svc follows no redirects" in err
    assert june_calls(standin) == 1  # June's own call: the redirect was never followed
    assert "sync rtms: 2 calls" in out  # and not retried


def no_key_in(key: str, *texts: str) -> None:
    """Neither ``key`` nor its percent-encoded form is in any of ``texts``."""
    for text in texts:
        assert key not in text and quote(key, safe="") not in text, text


def test_a_redirect_loop_fails_its_month_at_once_and_never_shows_the_key(
    sqlite_url: str, standin: StandIn, hostile: Hostile
) -> None:
    """The redirect goes to the very URL asked, service key included (issue 44 item 7):
    the reason printed and recorded shows it as ``serviceKey=***``."""
    hostile.when("redirect-loop", DEAL_YMD=MAY)
    code, out, err, _ = sync(sqlite_url, hostile, *MAY_JUNE, "--timeout", "5")
    assert code == 1, out + err
    assert_may_failed_june_complete(sqlite_url, err, "HTTP 302: a redirect to")
    assert sum(1 for s in hostile.seen if s[1].get("DEAL_YMD") == MAY) == 1
    assert "serviceKey=***&LAWD_CD=11680&DEAL_YMD=202505" in err
    no_key_in(KEY, out, err, *(m["detail"] for m in months(sqlite_url).values()))


# Item 3: bounded memory ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("trick", "reason"),
    [
        ("gzip-bomb", f"larger than the {MAX_ANSWER_BYTES:,} bytes svc reads (once gzip"),
        ("deflate-bomb", f"larger than the {MAX_ANSWER_BYTES:,} bytes svc reads (once deflate"),
        ("announce-huge", f"announces {HUGE:,} bytes, more than the {MAX_ANSWER_BYTES:,}"),
        ("oversize", f"larger than the {MAX_ANSWER_BYTES:,} bytes svc reads"),
    ],
)
def test_an_oversized_answer_fails_its_month_within_bounded_memory(
    sqlite_url: str, standin: StandIn, hostile: Hostile, trick: str, reason: str
) -> None:
    hostile.when(trick, DEAL_YMD=MAY)
    started = time.monotonic()
    code, out, err, peak = sync(sqlite_url, hostile, *MAY_JUNE, "--timeout", "20", measured=True)
    assert code == 1, out + err
    assert_may_failed_june_complete(sqlite_url, err, reason)
    assert peak < PEAK_RSS_MIB, f"peak RSS {peak:.0f} MiB"
    assert "(not retried)" in err
    if trick == "announce-huge":  # refused at once, not at the timeout
        held = hostile.held_calls(1)
        assert held and held[0] < 2.0, held
        assert time.monotonic() - started < 15


# Item 7: --timeout bounds the whole call ---------------------------------------------------


@pytest.mark.parametrize("trick", ["drip-head", "drip-body"])
def test_a_dripped_answer_ends_at_the_timeout_not_when_the_drip_does(
    sqlite_url: str, standin: StandIn, hostile: Hostile, trick: str
) -> None:
    hostile.when(trick, DEAL_YMD=MAY)  # a byte every 0.5 s: hours for a page
    hostile.drip_limit = 15  # svc runs in this process: a missed deadline fails, not hangs
    code, out, err, _ = sync(sqlite_url, hostile, *MAY_JUNE, "--timeout", "2", "--retries", "0")
    assert code == 1, out + err
    assert_may_failed_june_complete(sqlite_url, err, "no complete answer within --timeout 2 s")
    held = hostile.held_calls(1)
    assert len(held) == 1
    assert held[0] < 2 + 1.5, held  # the client left at about 2 s


# Item 8: any hostile answer fails its month; the run goes on -------------------------------


@pytest.mark.parametrize(
    ("trick", "reason"),
    [
        ("deep-json", "JSON nested too deeply to read"),
        ("long-total", "JSON holds a number too long to read"),
        ("long-total-xml", "the answer has no totalCount"),
        ("big-total", "totalCount 999,999,999 is more than a month holds"),
    ],
)
def test_a_hostile_answer_fails_its_month_and_later_months_are_read(
    sqlite_url: str, standin: StandIn, hostile: Hostile, trick: str, reason: str
) -> None:
    hostile.when(trick, DEAL_YMD=MAY)
    code, out, err, _ = sync(sqlite_url, hostile, *MAY_JUNE, "--timeout", "5", "--retries", "1")
    assert code == 1, out + err
    assert_may_failed_june_complete(sqlite_url, err, reason)
    assert "1 complete" in out and "1 failed" in out


# Item 6: an upstream that ignores pageNo ------------------------------------------------


JONGNO = ("--sigungu", "11110", "--from", "2025-05", "--to", "2025-05", "--page-size", "5")
"""Ten items in two pages of five: served page 1 twice, the count matches totalCount."""


@pytest.mark.parametrize(
    ("trick", "reason"),
    [
        ("ignore-page", "page 2 was asked and the answer is page 1 (pageNo ignored?)"),
        ("ignore-page-silent", "page 2 repeats page 1 item for item (pageNo ignored?)"),
    ],
)
def test_an_upstream_that_ignores_page_no_never_replaces_a_complete_month(
    sqlite_url: str, tmp_path: Path, standin: StandIn, hostile: Hostile, trick: str, reason: str
) -> None:
    code, out, err, _ = sync(sqlite_url, hostile, *JONGNO, "--refresh-months", "240")
    assert code == 0, out + err
    before = transactions(sqlite_url)
    assert len(before) > 0 and months(sqlite_url)["2025-05"]["status"] == "complete"

    hostile.when(trick)
    code, out, err, _ = sync(sqlite_url, hostile, *JONGNO, "--refresh-months", "240")
    assert code == 1, out + err
    state = months(sqlite_url)["2025-05"]
    assert state["status"] == "complete" and reason in state["detail"], state
    assert transactions(sqlite_url) == before  # not one record twice
    assert reason in err

    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"  # a first read is not written either
    code, out, err, _ = sync(fresh, hostile, *JONGNO)
    assert code == 1 and transactions(fresh) == []
    assert months(fresh)["2025-05"]["status"] == "partial"


# R-ONE: the same fetch ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("trick", "reason"),
    [
        ("redirect", "HTTP 302: a redirect to"),
        ("gzip-bomb", f"larger than the {MAX_ANSWER_BYTES:,} bytes svc reads (once gzip"),
        ("announce-huge", f"announces {HUGE:,} bytes"),
        ("drip-body", "no complete answer within --timeout 2 s"),
        ("deep-json", "nested too deeply"),
    ],
)
def test_r_one_answers_are_bounded_the_same_way(sqlite_url: str, trick: str, reason: str) -> None:
    with rone_standin.serve(area_limit=4) as rone, hostile_serve(rone.url) as hostile:
        hostile.when(trick, times=1, path="SttsApiTblData.do")
        args = ("--backoff", "0", "--retries", "0", "--timeout", "2")
        code, out, err, peak = run(sqlite_url, hostile.url, "sync", "rone", *args, measured=True)
        redirected = [c for c in rone.calls if c["path"].endswith("SttsApiTblData.do")]
    assert code == 1, out + err
    tables = [t for t in state_rows(sqlite_url, "sync_tables") if t["status"] != "not_read"]
    failed = [t for t in tables if t["status"] == "failed"]
    assert len(failed) == 1 and reason in failed[0]["detail"], failed
    assert reason in out
    assert sum(t["status"] == "complete" for t in tables) == len(tables) - 1 > 0
    assert peak < PEAK_RSS_MIB, f"peak RSS {peak:.0f} MiB"
    if trick == "redirect":  # the stand-in saw the complete tables' calls, nothing more
        assert len(redirected) == sum(t["pages"] for t in tables if t["status"] == "complete")
        # the redirect named the call itself, R-ONE's KEY included: never shown
        assert "KEY=***" in failed[0]["detail"]
        _, status, status_err, _ = run(sqlite_url, hostile.url, "sync", "status", "--json")
        no_key_in(rone_standin.KEY, out, err, status, status_err, failed[0]["detail"])
        assert "KEY=***" in status


# The fetch's other promises --------------------------------------------------------------


def test_the_environment_s_http_proxy_is_used(sqlite_url: str, standin: StandIn) -> None:
    """The base URL names a host that does not exist: only the proxy can answer."""
    proxy = {"http_proxy": standin.url, "HTTP_PROXY": standin.url, "no_proxy": "", "NO_PROXY": ""}
    june = ("--sigungu", "11110", "--from", "2025-05", "--to", "2025-05")
    code, out, err, _ = run(
        sqlite_url,
        "http://rtms.invalid",
        "sync",
        "rtms",
        "--kinds",
        "commercial",
        *june,
        env_extra=proxy,
    )
    assert code == 0, out + err
    assert months(sqlite_url)["2025-05"]["status"] == "complete"
    assert standin.calls and all(c.get("LAWD_CD") == "11110" for c in standin.calls)


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(
    sqlite_url: str, standin: StandIn, timeout: str
) -> None:
    for command in ("rtms", "rone"):
        where = ("--sigungu", "11110", "--from", "2025-05") if command == "rtms" else ()
        code, _, err, _ = run(
            sqlite_url, standin.url, "sync", command, *where, "--timeout", timeout
        )
        assert (code, err) == (2, "svc: error: --timeout must be a positive number of seconds\n")
