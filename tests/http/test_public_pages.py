"""``/`` and ``/pricing``: server-rendered pages styled like the dashboard, whose links
keep working when the app is mounted under a prefix; API paths keep their JSON 404."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from werkzeug.test import Client

from examples.mount import build
from svc_core.accounts import plans, requestlog
from svc_server.app import SvcApp

LINKS_HOME = ("/signin", "/docs", "/pricing", "/disclosure", "/dashboard")


class Links(HTMLParser):
    """Every href and src of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [v for k, v in attrs if k in ("href", "src") and v]


def links(html: str) -> list[str]:
    parser = Links()
    parser.feed(html)
    return parser.found


def page(client: Client, path: str) -> str:
    r = client.get(path)
    assert r.status_code == 200, path
    assert r.mimetype == "text/html"
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    html = r.get_data(as_text=True)
    assert "<script" not in html and "<style" not in html and " style=" not in html
    return html


def test_home_says_what_svc_is_and_links_the_way_in(client: Client) -> None:
    html = page(client, "/")
    assert "Korean commercial real-estate statistics" in html
    found = links(html)
    for target in LINKS_HOME:
        assert target in found, target
    assert "/static/dashboard.css" in found  # the dashboard's look
    assert "X-API-Key" in html


def test_every_local_link_of_the_pages_answers(client: Client) -> None:
    for path in ("/", "/pricing"):
        for target in links(page(client, path)):
            if target.startswith("http") or target.startswith("#"):
                continue
            status = client.get(target).status_code
            assert status in (200, 303), (path, target, status)  # 303: dashboard to sign-in


def test_favicon_ico_answers_with_the_pages_icon(client: Client) -> None:
    """Browsers and bookmarks ask /favicon.ico without reading a page: the pages' icon,
    not a 404 in every server log."""
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.mimetype == "image/svg+xml"
    assert icon.data == client.get("/static/favicon.svg").data
    assert (
        client.get("/favicon.ico", headers={"If-None-Match": icon.headers["ETag"]}).status_code
        == 304
    )


def test_pricing_lists_every_plan_for_sale_from_the_plan_table(client: Client) -> None:
    html = page(client, "/pricing")
    rows = re.findall(r'<tr><th scope="row">([a-z]+)</th>(.*?)</tr>', html)
    assert [name for name, _ in rows] == sorted(plans.TIER_ORDER, key=plans.TIER_ORDER.get)
    for name, cells in rows:
        plan = plans.DEFAULT_PLANS[name]
        values = re.findall(r"<td[^>]*>([^<]*)</td>", cells)
        assert values[:4] == [
            f"{plan.monthly_quota:,}",
            f"{plan.rate_limit_per_minute:,}",
            f"{plan.max_keys:,}",
            f"{plan.seats:,}",
        ]
    assert "internal" not in html  # the operators' plan is not for sale
    assert f"{requestlog.RETENTION_SECONDS // 86400} days" in html
    assert f"{requestlog.MAX_ROWS_PER_ACCOUNT:,} calls" in html


def test_api_paths_keep_their_json_404(client: Client) -> None:
    for path in ("/api/v1/nope", "/api/nope", "/nope"):
        r = client.get(path)
        assert r.status_code == 404
        assert r.get_json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("path", ["/data", "/data/", "/data/pricing"])
def test_links_keep_the_mount_prefix(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.setenv("SVC_DATABASE_URL", sqlite_url)
    client = Client(build())
    html = page(client, path)
    found = [t for t in links(html) if not t.startswith(("http", "#"))]
    assert found and all(t.startswith("/data/") for t in found), found
    for target in found:
        assert client.get(target).status_code in (200, 303), target


def test_the_pages_are_the_same_for_everyone_and_cacheable(app: SvcApp) -> None:
    for path in ("/", "/pricing"):
        r = Client(app).get(path)
        assert r.headers["Cache-Control"] == "public, max-age=300"
        assert "Set-Cookie" not in r.headers
