"""What a newcomer trips on, checked through a real ``svc serve``: each refusal names its
real cause, and content negotiation follows RFC 9110."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from tests.conftest import LiveServer

HS256_SECRET = "newcomer-idp-hs256-secret-0123456789abcd"
ORIGIN = "https://app.example.com"


def svc(server: LiveServer, *args: str) -> str:
    """Run the real ``svc`` command against the server's database; its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", *args],
        env=server.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def send(
    server: LiveServer, method: str, path: str, data: bytes | None, headers: dict[str, str]
) -> tuple[int, Any, bytes]:
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def sign_in(server: LiveServer, email: str) -> tuple[str, str, str]:
    """A session for ``email`` (a new starter account): cookie, consumer id, API key."""
    now = int(time.time())
    token = jwt.encode(
        {"sub": "idp|" + email, "email": email, "iat": now, "exp": now + 300},
        HS256_SECRET,
        algorithm="HS256",
    )
    status, headers, raw = send(
        server,
        "POST",
        "/api/auth/session",
        json.dumps({"jwt": token}).encode(),
        {"Content-Type": "application/json"},
    )
    assert status == 200, raw
    data = json.loads(raw)["data"]
    return headers["Set-Cookie"].split(";", 1)[0], data["consumer"]["id"], data["api_key"]


def pro_owner(server: LiveServer, email: str) -> tuple[dict[str, str], str]:
    """Write headers of a new account an operator moved to pro, and its consumer id."""
    cookie, consumer_id, _ = sign_in(server, email)
    svc(server, "consumer", "set-plan", consumer_id, "pro")
    headers = {"Content-Type": "application/json", "Cookie": cookie, "Origin": ORIGIN}
    return headers, consumer_id


@pytest.fixture(scope="module")
def signed_in(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, str, str]]:
    """A real server, a signed-in session cookie and that user's API key."""
    db = tmp_path_factory.mktemp("newcomer") / "svc.db"
    server = LiveServer(
        f"sqlite:///{db}",
        env={"SVC_JWT_HS256_SECRET": HS256_SECRET, "SVC_SITE_ORIGINS": ORIGIN},
    )
    try:
        now = int(time.time())
        token = jwt.encode(
            {"sub": "idp|new", "email": "new@example.com", "iat": now, "exp": now + 300},
            HS256_SECRET,
            algorithm="HS256",
        )
        status, headers, raw = send(
            server,
            "POST",
            "/api/auth/session",
            json.dumps({"jwt": token}).encode(),
            {"Content-Type": "application/json"},
        )
        assert status == 200, raw
        cookie = headers["Set-Cookie"].split(";", 1)[0]
        yield server, cookie, json.loads(raw)["data"]["api_key"]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        (b'{"label": "a", "label": "b", "mode": "live", "scope": "read_only"}', "Duplicate key"),
        (b'{"label": NaN, "mode": "live", "scope": "read_only"}', "NaN is not a valid JSON"),
        (b'{"label": Infinity}', "Infinity is not a valid JSON"),
        (b'{"label": -Infinity}', "-Infinity is not a valid JSON"),
        (b'{"n": 1' + b"0" * 5000 + b"}", "number too long"),
    ],
)
def test_each_invalid_json_body_is_refused_for_its_real_cause(
    signed_in: tuple[LiveServer, str, str], body: bytes, cause: str
) -> None:
    server, cookie, _ = signed_in
    headers = {"Content-Type": "application/json", "Cookie": cookie, "Origin": ORIGIN}
    status, _, raw = send(server, "POST", "/api/auth/me/keys", body, headers)
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (400, "INVALID_PARAMS")
    assert cause in error["message"]


def _pulse_accept(server: LiveServer, key: str, accept: str) -> tuple[int, str]:
    status, headers, _ = send(
        server,
        "GET",
        "/api/v1/real-estate/coverage",
        None,
        {"X-API-Key": key, "Accept": accept},
    )
    return status, headers.get("Content-Type", "")


@pytest.mark.parametrize(
    ("accept", "kind"),
    [
        ("text/csv", "text/csv"),
        ("text/*", "text/csv"),
        ("text/*, application/json;q=0.5", "text/csv"),
        ("*/*;q=0.1, text/csv", "text/csv"),
        ("application/json, text/csv;q=0.9", "application/json"),
        ("*/*", "application/json"),
        ("application/*", "application/json"),
        ("text/csv;q=0.5, application/json;q=0.9", "application/json"),
    ],
)
def test_accept_negotiates_as_rfc_9110_says(
    signed_in: tuple[LiveServer, str, str], accept: str, kind: str
) -> None:
    server, _, key = signed_in
    status, content_type = _pulse_accept(server, key, accept)
    assert status == 200
    assert content_type.startswith(kind)


def test_inviting_a_member_returns_the_pending_invite_row_spec_names(
    signed_in: tuple[LiveServer, str, str],
) -> None:
    server, _, _ = signed_in
    # a starter account has one seat: an operator moves it to pro (three seats)
    headers, consumer_id = pro_owner(server, "inviter@example.com")
    status, _, raw = send(
        server,
        "POST",
        "/api/auth/me/team",
        json.dumps({"email": "mate@example.com"}).encode(),
        headers,
    )
    assert status == 200, raw
    row = json.loads(raw)["data"]
    assert {"id", "consumer_id", "company_name", "role", "invited_at"} <= set(row)
    assert row["consumer_id"] == consumer_id
    assert "company_name" in row
    assert row["role"] == "member"
    assert row["status"] == "pending"


PULSE = "/api/v1/real-estate/pulse?sigungu_code=11680&period=2026-Q1"


@pytest.mark.parametrize(
    "path", [PULSE, "/api/v1/real-estate/pulse/series?sigungu_code=11680&periods=2026-Q1"]
)
def test_a_dong_without_dong_precision_is_refused_before_the_tier_gate(
    signed_in: tuple[LiveServer, str, str], path: str
) -> None:
    server, _, key = signed_in  # a starter key: the 400 comes before any 403
    status, _, raw = send(
        server, "GET", path + "&dong=%EC%97%AD%EC%82%BC%EB%8F%99", None, {"X-API-Key": key}
    )
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (400, "INVALID_PARAMS")
    assert "geo_precision=dong" in error["message"]
    assert "geo_precision=dong" in error["hint"]


def test_the_404_at_dong_precision_names_the_unknown_dong(
    signed_in: tuple[LiveServer, str, str],
) -> None:
    server, _, _ = signed_in
    key = json.loads(svc(server, "consumer", "create", "--plan", "pro", "--json"))["api_key"]
    query = PULSE + "&geo_precision=dong&dong=%EC%97%86%EB%8A%94%EB%8F%99"  # 없는동
    status, _, raw = send(server, "GET", query, None, {"X-API-Key": key})
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (404, "NOT_FOUND")
    assert "없는동" in error["message"]


def test_links_follow_the_port_the_server_listens_on(
    signed_in: tuple[LiveServer, str, str],
) -> None:
    server, _, _ = signed_in  # a free port, never 8000, and no SVC_PUBLIC_URL
    key = json.loads(svc(server, "consumer", "create", "--plan", "starter", "--json"))["api_key"]
    assert "SVC_PUBLIC_URL" not in server.env
    status, _, raw = send(server, "GET", "/api/v1/openapi.json", None, {})
    assert status == 200
    assert [s["url"] for s in json.loads(raw)["servers"]] == [server.url]
    status, _, raw = send(server, "GET", PULSE + "&geo_precision=dong", None, {"X-API-Key": key})
    body = json.loads(raw)
    assert (status, body["error"]["code"]) == (403, "TIER_RESTRICTED")
    assert body["error"]["upgrade_url"] == server.url + "/pricing"
    status, _, raw = send(server, "GET", "/api/v1/real-estate/coverage", None, {"X-API-Key": key})
    assert status == 200
    disclosure = json.loads(raw)["_meta"]["disclosure_url"]
    assert disclosure == server.url + "/disclosure"
    for url in (disclosure, body["error"]["upgrade_url"]):
        with urllib.request.urlopen(url, timeout=10) as page:
            assert page.status == 200


def test_rotating_without_grace_says_the_old_key_expired(
    signed_in: tuple[LiveServer, str, str],
) -> None:
    server, _, _ = signed_in
    headers, _ = pro_owner(server, "rotator@example.com")  # room for a second key
    made = {"label": "rotate me", "mode": "live", "scope": "read_only"}
    status, _, raw = send(server, "POST", "/api/auth/me/keys", json.dumps(made).encode(), headers)
    assert status in (200, 201), raw
    key = json.loads(raw)["data"]
    rotate = f"/api/auth/me/keys/{key['id']}/rotate"
    body = json.dumps({"grace_period_seconds": 0}).encode()
    status, _, raw = send(server, "POST", rotate, body, headers)
    assert status == 200, raw
    assert json.loads(raw)["previous"]["status"] == "expired"
    status, _, raw = send(
        server, "GET", "/api/v1/real-estate/coverage", None, {"X-API-Key": key["key"]}
    )
    assert status == 401
    status, _, raw = send(server, "POST", rotate, body, headers)
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (409, "KEY_NOT_ACTIVE")
    assert "is grace" not in error["message"]
    assert "grace period is over" in error["message"]


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[Any]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
    yield path, parser


@pytest.mark.parametrize("command", ["init", "serve", "consumer create", "sync rone"])
def test_a_command_help_shows_its_own_options_not_the_configuration(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", *command.split(), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "--jwt-issuer" not in done.stdout and "VALUE" not in done.stdout


def test_every_option_of_every_command_has_a_one_line_description() -> None:
    from svc_server.cli import build_parser

    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if action.help != argparse.SUPPRESS and not isinstance(
                action, argparse._SubParsersAction
            ):
                assert action.help and "\n" not in action.help, (path, action.dest)


def test_a_bad_postgresql_url_fails_fast_with_one_line() -> None:
    env = dict(os.environ)
    env["SVC_DATABASE_URL"] = "postgresql://nobody@127.0.0.1:1/none"  # nothing listens on 1
    # The bound is on top of what starting `svc` costs on this machine right now (a loaded
    # CI machine takes seconds to import): the old code spent 10 s retrying the pool.
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "svc_server", "init", "--help"],
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    startup = time.monotonic() - started
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "svc_server", "init"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < startup + 5
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("svc: error: cannot connect to PostgreSQL")
