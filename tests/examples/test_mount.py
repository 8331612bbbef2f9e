"""The mount example: svc answers under a prefix beside another application, and its
dashboard works there: every link, asset, redirect and script call carries the prefix
(``SCRIPT_NAME``); the browser test of the same is in tests/browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from werkzeug.test import Client

from examples.mount import build

ORIGIN = "https://host.example"
STATIC = Path(__file__).resolve().parents[2] / "src" / "svc_server" / "web" / "static"
LINK = re.compile(r"""\b(?:href|src|action)="([^"]*)\"""")


def test_svc_answers_under_its_prefix(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DATABASE_URL", sqlite_url)
    client = Client(build())
    assert client.get("/").get_data(as_text=True) == "the host application\n"
    r = client.get("/data/api/status")
    assert r.status_code == 200
    assert r.get_json()["status"] == "ok"
    assert client.get("/data/nope").get_json()["error"]["code"] == "NOT_FOUND"


def links(html: str) -> list[str]:
    return [u for u in LINK.findall(html) if not u.startswith(("#", "https://", "http://"))]


def test_the_dashboard_links_and_redirects_stay_under_the_prefix(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "SVC_DATABASE_URL": sqlite_url,
        "SVC_DEV_SIGNIN": "true",
        "SVC_SITE_ORIGINS": ORIGIN,
        "SVC_COOKIE_SECURE": "false",
        "SVC_SECRET_KEY": "mount-test-secret-0123456789abcdef",
    }.items():
        monkeypatch.setenv(name, value)
    browser = Client(build())
    r = browser.get("/data/dashboard/keys")
    assert r.status_code == 303
    assert r.headers["Location"] == "/data/signin?next=/dashboard/keys"
    page = browser.get("/data/signin?next=/dashboard/keys").get_data(as_text=True)
    assert 'data-base="/data"' in page
    assert links(page) and all(u.startswith("/data/") for u in links(page)), links(page)

    r = browser.post(
        "/data/api/auth/dev-session",
        json={"email": "mounted@example.com"},
        headers={"Origin": ORIGIN},
    )
    assert r.status_code == 200, r.get_json()
    for path in ("", "/keys", "/webhooks", "/team", "/explorer"):
        r = browser.get(f"/data/dashboard{path}")
        assert r.status_code == 200, path
        html = r.get_data(as_text=True)
        found = links(html)
        assert found and all(u.startswith("/data/") for u in found), (path, found)
        for url in {u for u in found if u.startswith("/data/static/")}:
            assert browser.get(url).status_code == 200, url
    assert browser.get("/data/docs").status_code == 200
    assert browser.get("/data/api/v1/openapi.json").status_code == 200


def test_the_scripts_never_call_an_absolute_path() -> None:
    """Every path the scripts fetch or open is built on the prefix the page gives them: a
    bare path literal is only ever an API path handed to ``api()``, which prefixes it."""
    for script in ("dashboard.js", "docs.js"):
        text = (STATIC / script).read_text(encoding="utf-8")
        bare = re.findall(
            r"""(?<![}\w])["'`](/(?:api|static|signin|dashboard|docs)\b[^"'`]*)""", text
        )
        assert all(path.startswith("/api/") for path in bare), (script, bare)
        assert "document.body.dataset.base" in text, script
    dashboard = (STATIC / "dashboard.js").read_text(encoding="utf-8")
    assert "fetch(BASE + path" in dashboard
    assert not re.search(r"""location\.(assign|href)\s*\(?\s*["'`]/""", dashboard)
    assert not re.search(r"""href: ["'`]/""", dashboard)
