#!/usr/bin/env python3
"""Break behaviours on purpose, one at a time, and check that the suite notices.

Issue 40 made the suite fast by sharing servers, stores and browsers among tests and by
running ``svc`` in process. This script is the check that those tests still catch what
they caught before: each entry below names a behaviour users rely on, the source line that
keeps it, a broken version of that line, and the tests that must then fail.

For each entry the script copies ``src/`` to a temporary folder, breaks the line there,
and runs the entry's tests against the copy: ``PYTHONPATH`` puts the copy first, so the
``svc serve`` and ``svc`` processes the tests start run the broken code too. The working
tree is never changed. It prints one line per entry and exits with 1 when a break went
unnoticed (or its line is no longer in the source: update the entry).

    .venv/bin/python scripts/break_on_purpose.py            # every entry
    .venv/bin/python scripts/break_on_purpose.py tenant     # entries whose name holds "tenant"
    .venv/bin/python scripts/break_on_purpose.py --control  # the same tests on an intact copy

``--control`` runs each entry's tests on an unbroken copy and expects them to pass, so a
"caught" is known to come from the break, not from a test that fails anyway.

Set ``SVC_TEST_POSTGRES_URL`` to run the PostgreSQL halves of the tests as well.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Break:
    name: str
    behaviour: str
    path: str  # under src/
    edits: tuple[tuple[str, str], ...]  # (kept, broken): each ``kept`` occurs exactly once
    tests: tuple[str, ...]  # pytest arguments


BREAKS = (
    Break(
        "tenant-share",
        "an account has at most SVC_TENANT_CALLS calls in progress; a third waits, then 429",
        "svc_server/servers/front.py",
        (
            (
                "Tenants(min(tenant_calls, max(1, threads - 1)), tenant_wait)",
                "Tenants(64, tenant_wait)",
            ),
        ),
        ("tests/http/test_tenant_share.py", "-k", "third_call"),
    ),
    Break(
        "session-lifetime",
        "a session ends at its absolute lifetime however busy it is",
        "svc_server/services/sessions.py",
        (
            (
                "ends = int(row.created_at) + config.session_max_age",
                "ends = int(row.created_at) + 100 * SESSION_SECONDS",
            ),
        ),
        ("tests/http/test_identity_live.py", "-k", "absolute_lifetime"),
    ),
    Break(
        "revoke-one-winner",
        "of concurrent revokes of one key one wins and one key.revoked event is sent",
        "svc_server/services/keys.py",
        (
            (
                'if row.status == "revoked" or not store.accounts.revoke_key(tx, row.id, int(now)):',
                "if not (store.accounts.revoke_key(tx, row.id, int(now)) or True):",
            ),
        ),
        ("tests/http/test_identity_live.py", "-k", "six_revokes"),
    ),
    Break(
        "request-log-own-account",
        "an account's request log shows its own calls only",
        "svc_server/store/request_log.py",
        (
            (
                'where = ["r.consumer_id = ?", "r.at_ms >= ?"]',
                'where = ["(r.consumer_id = ? OR 1 = 1)", "r.at_ms >= ?"]',
            ),
        ),
        ("tests/http/test_request_log_live.py",),
    ),
    Break(
        "quota-across-servers",
        "a monthly quota counted through leases is exact across two servers on one store",
        "svc_server/services/leases.py",
        (("lease.ok[day] = lease.ok.get(day, 0) + 1", "lease.ok[day] = lease.ok.get(day, 0) + 2"),),
        ("tests/http/test_multihost.py", "-k", "quota_is_exact"),
    ),
    Break(
        "key-cache-bound",
        "a key revoked through one server is refused by another within KEY_STAMP_TTL",
        "svc_server/store/keycache.py",
        (
            ("now - known[0] < KEY_STAMP_TTL", "now - known[0] < KEY_STAMP_TTL * 1000"),
            (
                "self.clock() - known[0] >= KEY_STAMP_TTL",
                "self.clock() - known[0] >= KEY_STAMP_TTL * 1000",
            ),
        ),
        ("tests/http/test_key_cache.py", "-k", "revocation"),
    ),
    Break(
        "signed-data-events",
        "every data event is delivered signed over its exact body",
        "svc_core/webhooks/signing.py",
        (
            (
                "{SCHEME}={_digest(secret_key(secret), timestamp, bytes(payload))}",
                "{SCHEME}={_digest(secret_key(secret), timestamp, bytes(payload) + b' ')}",
            ),
        ),
        ("tests/server/test_data_events.py", "-k", "signed_event"),
    ),
    Break(
        "rejections-follow-corrections",
        "a corrected file forgets the rejection it no longer holds",
        "svc_server/store/rejections.py",
        (
            (
                "        if not months:\n            return 0",
                "        if months or not months:\n            return 0",
            ),
        ),
        ("tests/http/test_traces.py", "-k", "corrected_file"),
    ),
    Break(
        "answer-cache-version",
        "a load by another process reaches every cached answer within the bound",
        "svc_server/http/answer_cache.py",
        (
            (
                "            if version != self._version:\n                return None",
                "            if version != self._version and not self._entries:\n"
                "                return None",
            ),
        ),
        ("tests/http/test_answer_cache.py", "-k", "other_processes"),
    ),
    Break(
        "sync-every-page",
        "a month of several pages is synced complete, every page read",
        "svc_server/services/sync.py",
        (("for page_no in range(2, needed + 1):", "for page_no in range(2, min(needed, 1) + 1):"),),
        ("tests/server/test_sync.py", "-k", "multi_page_month"),
    ),
    Break(
        "first-key-shown-once",
        "the dashboard shows a first sign-in's API key once (a real browser)",
        "svc_server/web/static/dashboard.js",
        (("if (data.data.api_key) {", "if (false) {"),),
        ("tests/browser/test_dashboard.py", "-k", "first_sign_in_shows_its_key_once"),
    ),
)


def broken_copy(entry: Break, folder: Path, *, intact: bool = False) -> Path:
    """``src/`` copied into ``folder`` with ``entry``'s lines broken (checked to be there
    and left alone when ``intact``); its path."""
    src = folder / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    target = src / entry.path
    text = target.read_text()
    for kept, broken in entry.edits:
        if text.count(kept) != 1:
            raise LookupError(f"{entry.path} no longer holds exactly one {kept!r}")
        text = text if intact else text.replace(kept, broken)
    target.write_text(text)
    return src


def caught(entry: Break, *, control: bool = False) -> tuple[bool, str]:
    """Whether the entry's tests fail against the broken copy (with ``control``: pass
    against an intact one), and a short account."""
    with tempfile.TemporaryDirectory(prefix="svc-break-") as folder:
        try:
            src = broken_copy(entry, Path(folder), intact=control)
        except LookupError as exc:
            return False, str(exc)
        env = dict(os.environ, PYTHONPATH=f"{src}{os.pathsep}{ROOT}")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        started = time.monotonic()
        done = subprocess.run(  # noqa: S603 (this interpreter, this script's arguments)
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p",
             "no:cacheprovider", *entry.tests],
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        took = time.monotonic() - started
        last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        # 1: tests failed (caught); 0: all passed (missed); anything else: no verdict
        return done.returncode == (0 if control else 1), f"{last} ({took:.0f} s)"


def main(argv: list[str]) -> int:
    control = "--control" in argv
    words = [a for a in argv if a != "--control"]
    chosen = [b for b in BREAKS if not words or any(word in b.name for word in words)]
    verdicts = ("passes", "FAILS") if control else ("caught", "MISSED")
    missed = 0
    for entry in chosen:
        ok, account = caught(entry, control=control)
        missed += not ok
        print(f"{verdicts[not ok]}  {entry.name}: {entry.behaviour}\n        {account}")
    what = "intact copies passed" if control else "broken behaviours caught"
    print(f"{len(chosen) - missed} of {len(chosen)} {what}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
