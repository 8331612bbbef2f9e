"""The mount example: svc answers under a prefix beside another application."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from examples.mount import build


def test_svc_answers_under_its_prefix(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_DATABASE_URL", sqlite_url)
    client = Client(build())
    assert client.get("/").get_data(as_text=True) == "the host application\n"
    r = client.get("/data/api/status")
    assert r.status_code == 200
    assert r.get_json()["status"] == "ok"
    assert client.get("/data/nope").get_json()["error"]["code"] == "NOT_FOUND"
