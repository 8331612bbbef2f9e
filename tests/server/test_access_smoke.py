"""Smoke test of the fixtures: a key and a browser session reach their endpoints."""

from __future__ import annotations

from werkzeug.test import Client

from tests.conftest import Accounts


def test_key_authenticates_and_session_reads_usage(accounts: Accounts, client: Client) -> None:
    _, key = accounts.consumer("pro")
    r = client.get("/api/v1/real-estate/dimensions", headers={"X-API-Key": key})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["_meta"]["auth_method"] == "api_key"
    assert r.headers["X-RateLimit-Limit"] == "120"
    assert r.headers["X-Quota-Limit"] == "100000"
    browser = accounts.browser("ana@example.com")
    usage = browser.get("/api/auth/me/usage")
    assert usage.status_code == 200, usage.get_json()
    assert usage.get_json()["data"]["plan"] == "starter"
    assert usage.headers["Cache-Control"] == "private, no-store"
