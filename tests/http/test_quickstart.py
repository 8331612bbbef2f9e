"""docs/quickstart.md's "By hand" path, followed as written: its ``svc`` commands run as
real processes (the virtualenv and the install are the test's own), then a real ``svc
serve`` on the database they filled answers its ``curl`` lines with data, using the
key ``svc consumer create`` printed."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "docs" / "quickstart.md"
DOC_BASE = "http://127.0.0.1:8000"


def by_hand_blocks() -> list[list[str]]:
    """The shell blocks of the "By hand" section, each as its lines."""
    section = QUICKSTART.read_text(encoding="utf-8").split("## By hand", 1)[1]
    return [block.strip().splitlines() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_the_by_hand_path_ends_with_data_and_a_key_that_reads_it(
    db_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    setup, calls = by_hand_blocks()
    env = {**os.environ, "SVC_DATABASE_URL": db_url}
    printed: dict[str, str] = {}
    commands = [shlex.split(line, comments=True) for line in setup]
    ran = []
    for words in commands:
        if not words or words[0] != "svc" or words[1] == "serve":
            continue  # the venv, the install and the export are this test's own
        done = subprocess.run(
            [sys.executable, "-m", "svc_server", *words[1:]],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (words, done.stderr)
        printed[words[1]] = done.stdout
        ran.append(words[1])
    assert ran == ["--version", "init", "ingest", "consumer"]
    assert "total (6 of 6 files loaded)" in printed["ingest"]
    [key] = re.findall(r"svc_pk_live_[0-9a-f]{32}", printed["consumer"])

    server = live_server_factory(db_url)
    answers = []
    for line in calls:
        words = shlex.split(line, comments=True)
        if not words or words[0] != "curl":
            continue
        url = words[-1].replace(DOC_BASE, server.url)
        headers = {}
        if "-H" in words:
            name, value = words[words.index("-H") + 1].split(": ", 1)
            headers[name] = value.replace("$KEY", key)
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            assert r.status == 200, url
            answers.append(r.read().decode("utf-8-sig"))
    status, pulse, deals = answers
    assert json.loads(status)["status"] == "ok"
    rows = {
        (r["property_type"], r["transaction_type"]): r["sample_count"]
        for r in json.loads(pulse)["data"]
    }
    # what the page says the answer holds
    assert (rows[("office", "sale")], rows[("officetel", "sale")]) == (24, 55)
    assert rows[("officetel", "monthly_lease")] == 264
    listed = list(csv.DictReader(io.StringIO(deals)))
    assert len(listed) == 24 and {d["property_type"] for d in listed} == {"office"}
