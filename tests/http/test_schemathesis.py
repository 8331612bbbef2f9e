"""Schemathesis over every operation of the served OpenAPI document, against a real server.

A ``svc serve`` (gunicorn) process runs on the session's demo database; a pro consumer's
key (with a raised per-minute limit so the fuzzer measures behaviour, not 429s) and a
signed-in session of its owner authenticate the calls, and writes carry the configured
site ``Origin``. Every generated case must pass: no 5xx, only documented status codes and
content types, bodies that match the documented schemas, and rejection of data that
violates them. The number of cases per operation is written to the terminal.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import schemathesis

from svc_server import routes
from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.openapi import build_document, operation_key
from svc_server.services import sessions
from svc_server.store import open_store
from tests.conftest import ROOT, TEST_SECRET, LiveServer

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
SIGN_OUT = "DELETE /api/auth/session"
Tally = collections.defaultdict[str, collections.Counter[int]]


def _svc(db_url: str, *args: str) -> str:
    env = dict(os.environ, SVC_DATABASE_URL=db_url, SVC_SECRET_KEY=TEST_SECRET)
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout


class Target:
    """The server under test and the credentials the fuzzer sends."""

    def __init__(self, server: LiveServer, db_url: str, api_key: str) -> None:
        self.server = server
        self.db_url = db_url
        self.api_key = api_key
        self.store = open_store(db_url)
        self.config = Config(secret_key=TEST_SECRET)
        self.cookie = self.sign_in()

    def sign_in(self) -> str:
        """A fresh session cookie for the consumer's owner, minted against the same DB."""
        data = sessions.sign_in(
            self.store,
            self.config,
            Identity(sub="idp|fuzz", email=OWNER),
            time.time(),
            os.urandom(16),
        )
        return str(data["_cookie"])

    def headers(self, label: str) -> dict[str, str]:
        # Signing out revokes the session it is sent with: give it a throwaway one.
        cookie = self.sign_in() if label == SIGN_OUT else self.cookie
        return {"X-API-Key": self.api_key, "Cookie": f"svc_session={cookie}", "Origin": ORIGIN}


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
            "--json",
        )
    )
    server = LiveServer(
        db_url,
        env={
            "SVC_SITE_ORIGINS": ORIGIN,
            "SVC_JWT_HS256_SECRET": "fuzz-idp-hs256-secret-0123456789abcdef",
            "SVC_THREADS": "8",
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
    tally: Tally = collections.defaultdict(collections.Counter)
    yield tally
    total = sum(sum(statuses.values()) for statuses in tally.values())
    lines = [f"schemathesis: {total} cases over {len(tally)} operations (cases, statuses)"]
    for label, statuses in sorted(tally.items()):
        mix = " ".join(f"{status}:{n}" for status, n in sorted(statuses.items()))
        lines.append(f"  {sum(statuses.values()):5d}  {label:<50} {mix}")
    # Shown whatever -s/-q say: the CI log must carry the count per operation.
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for line in lines:
                reporter.write_line(line)


CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 20260131,
        "generation": {
            "max-examples": MAX_EXAMPLES,
            "allow-x00": True,
            # Credentials are ours (a real key and cookie), not generated values.
            "with-security-parameters": False,
        },
        "phases": {"stateful": {"enabled": False}},
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        "request-timeout": 30,
    }
)
# The document the server serves is build_document(ROUTES) with its own address in
# ``servers`` (tests/http/test_openapi.py proves they are equal); the cases go to the
# live server's address.
schema = schemathesis.openapi.from_dict(build_document(routes.ROUTES), config=CONFIG)


@schema.parametrize()
def test_every_operation_conforms(
    case: schemathesis.Case, target: Target, cases_per_operation: Tally
) -> None:
    headers = target.headers(case.operation.label)
    response = case.call(base_url=target.server.url, headers=headers)
    cases_per_operation[case.operation.label][response.status_code] += 1
    case.validate_response(response, headers=headers)


def test_the_fuzzer_covers_every_route() -> None:
    expected = {operation_key(m, r.path) for r in routes.ROUTES for m in r.methods}
    labels = {op.ok().label for op in schema.get_all_operations()}
    assert labels == expected
