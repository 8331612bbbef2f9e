"""The demo's newcomer path through a real ``svc serve``: sign in with any email, create a
key, call the API with it (issue 18's acceptance), and the setting that makes it work."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from svc_core.errors import ConfigError
from svc_server.config import load_config
from tests.conftest import LiveServer, free_port


def call(
    server: LiveServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, Any]:
    data = None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.loads(exc.read())


@pytest.mark.parametrize(("plan", "second_key"), [("pro", 200), ("starter", 402)])
def test_a_newcomer_signs_in_creates_a_key_and_calls_the_api(
    tmp_path: Path, plan: str, second_key: int
) -> None:
    port = free_port()
    server = LiveServer(
        f"sqlite:///{tmp_path / 'svc.db'}",
        port=port,
        env={
            "SVC_DEV_SIGNIN": "true",
            "SVC_COOKIE_SECURE": "false",
            "SVC_SIGNUP_PLAN": plan,
            "SVC_SITE_ORIGINS": f"http://127.0.0.1:{port}",
        },
    )
    try:
        origin = {"Origin": server.url}
        status, headers, body = call(
            server, "POST", "/api/auth/dev-session", {"email": "new@example.org"}, origin
        )
        assert status == 200, body
        assert body["data"]["consumer"]["plan"] == plan
        assert body["data"]["api_key"].startswith("svc_pk_live_")
        cookie = {"Cookie": headers["Set-Cookie"].split(";", 1)[0], **origin}
        key_body = {"label": "mine", "mode": "live", "scope": "read_only"}
        status, _, created = call(server, "POST", "/api/auth/me/keys", key_body, cookie)
        assert status == second_key, created
        if status == 200:
            key = created["data"]["key"]
            status, _, data = call(
                server, "GET", "/api/v1/real-estate/dimensions", headers={"X-API-Key": key}
            )
            assert status == 200 and data["_meta"]["auth_method"] == "api_key"
    finally:
        server.stop()


def test_the_signup_plan_must_be_a_plan() -> None:
    assert load_config({}).signup_plan == "starter"  # SPEC's first sign-in
    assert load_config({"SVC_SIGNUP_PLAN": "Pro"}).signup_plan == "pro"
    with pytest.raises(ConfigError, match="SVC_SIGNUP_PLAN"):
        load_config({"SVC_SIGNUP_PLAN": "gold"})
