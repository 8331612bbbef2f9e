"""Schemathesis over every operation of the OpenAPI document, against a real server.

A ``svc serve`` (gunicorn) process runs on the session's demo database; a pro consumer's
key (with a raised per-minute limit so the fuzzer measures behaviour, not 429s) and a
signed-in session of its owner authenticate the calls, and writes carry the configured
site ``Origin``. One test per operation runs schemathesis' engine (the examples, coverage
and fuzzing phases, as ``schemathesis run`` does) on that operation alone. Every case
must pass: no 5xx, only documented status codes and content types, bodies that match
the documented schemas, and rejection of data that violates them. The number of cases
and their statuses per operation are written to the terminal (stderr under xdist).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator

import pytest
import schemathesis
from schemathesis.engine import Status, events, from_schema

from svc_server.app import routes
from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.openapi import build_document, operation_key
from svc_server.runtime.deps import new_id
from svc_server.services import sessions
from svc_server.store import open_store
from tests.conftest import TEST_SECRET, LiveServer
from tests.svc_cli import run_svc

ORIGIN = "https://app.example.com"
OWNER = "fuzz-owner@example.com"
MAX_EXAMPLES = 25
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
)
Tally = dict[str, collections.Counter[int]]


def _svc(db_url: str, *args: str) -> str:
    """``svc ARGS`` on ``db_url``, in this process (the command's process is not what
    this file tests); its stdout."""
    done = run_svc(*args, env={"SVC_DATABASE_URL": db_url, "SVC_SECRET_KEY": TEST_SECRET})
    assert done.returncode == 0, done.stderr
    return done.stdout


class Target:
    """The server under test and the credentials the fuzzer sends."""

    def __init__(self, server: LiveServer, db_url: str, api_key: str) -> None:
        self.server = server
        self.db_url = db_url
        self.api_key = api_key
        self.store = open_store(db_url)
        self.config = Config(secret_key=TEST_SECRET)

    def sign_in(self) -> str:
        """A fresh session cookie for the consumer's owner, minted against the same DB."""
        data = sessions.sign_in(
            self.store,
            self.config,
            Identity(sub="idp|fuzz", email=OWNER),
            time.time(),
            os.urandom(16),
            ids=new_id,
        )
        return str(data["_cookie"])


@pytest.fixture(scope="module")
def target(demo_db_url: str) -> Iterator[Target]:
    db_url = demo_db_url  # the session's demo database; the fuzzer adds only account rows
    created = json.loads(
        _svc(
            db_url,
            "consumer",
            "create",
            "--plan",
            "pro",
            "--email",
            OWNER,
            "--rate-limit",
            "1000000",
            "--monthly-quota",
            "1000000000",
            # under `pytest -n` without --dist loadfile each worker makes its own
            "--allow-duplicate-owner",
            "--json",
        )
    )
    server = LiveServer(
        db_url,
        env={
            "SVC_SITE_ORIGINS": ORIGIN,
            "SVC_JWT_HS256_SECRET": "fuzz-idp-hs256-secret-0123456789abcdef",
            "SVC_THREADS": "8",
            # Registering a webhook looks its host up (5 s at most). The sandbox CI runs
            # in loses about one DNS answer in 25, and glibc asks again only after 5 s,
            # so a lost answer cost a case the whole bound; it now asks again after 1 s.
            "RES_OPTIONS": " ".join(filter(None, [os.environ.get("RES_OPTIONS"), "timeout:1"])),
        },
    )
    out = Target(server, db_url, created["api_key"])
    try:
        yield out
    finally:
        server.stop()
        out.store.close()


@pytest.fixture(scope="module")
def cases_per_operation(request: pytest.FixtureRequest) -> Iterator[Tally]:
    tally: Tally = {}
    yield tally
    total = sum(sum(statuses.values()) for statuses in tally.values())
    lines = [f"schemathesis: {total} cases over {len(tally)} operations (cases, statuses)"]
    for label, statuses in sorted(tally.items()):
        mix = " ".join(f"{status}:{n}" for status, n in sorted(statuses.items()))
        lines.append(f"  {sum(statuses.values()):5d}  {label:<50} {mix}")
    # Shown whatever -s/-q say, and from an xdist worker too (its stderr is the run's):
    # the CI log must carry the number of cases per operation.
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    text = "\n" + "\n".join(lines) + "\n"
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        if reporter is not None and not hasattr(request.config, "workerinput"):
            reporter.write(text)
        else:
            sys.stderr.write(text)
            sys.stderr.flush()


DOCUMENT = build_document(routes.ROUTES)
# The server serves this document with its own address in ``servers``
# (tests/http/test_openapi.py proves they are equal); cases go to the live server.
LABELS = [f"{m.upper()} {path}" for path, item in DOCUMENT["paths"].items() for m in item]


def fuzz(target: Target, label: str) -> tuple[collections.Counter[int], list[str]]:
    """Run schemathesis (examples, coverage and fuzzing phases) on one operation.

    Returns the statuses of every case sent, and a description of every failed check
    or engine error (with the curl command that reproduces it).
    """
    method, path = label.split(" ", 1)
    config = schemathesis.Config.from_dict(
        {
            "base-url": target.server.url,
            "seed": 20260131,
            "workers": 1,
            # Our credentials: a real key, a fresh session of the owner (signing out
            # then only ends this operation's session), the configured site Origin.
            "headers": {
                "X-API-Key": target.api_key,
                "Cookie": f"svc_session={target.sign_in()}",
                "Origin": ORIGIN,
            },
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "allow-x00": True,
                "with-security-parameters": False,
            },
            "phases": {"stateful": {"enabled": False}},
            "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
            "request-timeout": 30,
        }
    )
    schema = schemathesis.openapi.from_dict(DOCUMENT, config=config)
    statuses: collections.Counter[int] = collections.Counter()
    failures: list[str] = []
    for event in from_schema(schema.include(method=method, path=path)).execute():
        if isinstance(event, events.ScenarioFinished):
            for interaction in event.recorder.interactions.values():
                if interaction.response is not None:
                    statuses[interaction.response.status_code] += 1
            for checks in event.recorder.checks.values():
                for check in checks:
                    if check.status == Status.FAILURE and check.failure_info is not None:
                        failure = check.failure_info.failure
                        failures.append(
                            f"{check.name}: {failure.title}\n{failure.message}\n"
                            f"{check.failure_info.code_sample}"
                        )
            if event.status == Status.ERROR:
                failures.append(f"scenario error in {event.phase}")
        elif isinstance(event, events.NonFatalError):
            failures.append(f"engine error: {event.info.format()}")
        elif isinstance(event, events.FatalError):
            failures.append(f"engine failure: {event.exception!r}")
    return statuses, sorted(set(failures))


@pytest.mark.parametrize("label", LABELS)
def test_operation_conforms(
    label: str, target: Target, cases_per_operation: Tally, monkeypatch: pytest.MonkeyPatch
) -> None:
    # requests looks for a proxy for every case in the whole environment, twice (a tenth
    # of the fuzzer's CPU); a no_proxy naming the server's host settles it at once. The
    # local server is never to be reached through a proxy anyway.
    monkeypatch.setenv(
        "no_proxy", ",".join(filter(None, [os.environ.get("no_proxy"), "127.0.0.1"]))
    )
    statuses, failures = fuzz(target, label)
    cases_per_operation[label] = statuses
    assert not failures, f"{len(failures)} distinct failures:\n\n" + "\n\n".join(failures)
    assert sum(statuses.values()) >= MAX_EXAMPLES


def test_the_fuzzer_covers_every_route() -> None:
    expected = {operation_key(m, r.path) for r in routes.ROUTES for m in r.methods}
    assert set(LABELS) == expected
