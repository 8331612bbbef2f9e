"""The browser pages over WSGI: development sign-in, the dashboard shells, /docs, assets.

What a browser does with them is in tests/browser; here are the rules a browser cannot
see: the refusal to start development sign-in beside real security settings, the
sign-in endpoint's checks, the redirect of signed-out visitors, the strict
Content-Security-Policy, and that asset paths cannot leave the static folder.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from svc_core.errors import ConfigError
from svc_server.app import SvcApp, create_app
from svc_server.config import Config, load_config
from svc_server.store import Store, open_store
from svc_server.web import pages
from tests.conftest import ORIGIN, TEST_SECRET, Accounts, FakeClock

DEV = {"dev_signin": True, "cookie_secure": False}


class Served:
    """One store, clock and pair of apps (without and with development sign-in) per
    module and backend: building them for each test cost more than most tests take.
    No test advances the clock; each signs in with an email of its own and
    reads back only that email's rows."""

    def __init__(self, url: str) -> None:
        self.store = open_store(url, pool_size=4)
        self.clock = FakeClock()
        self.app = self.make()
        self.dev_app = self.make(**DEV)

    def make(self, **overrides: object) -> SvcApp:
        """An app as ``tests.conftest.make_app`` makes it, on this store and clock."""
        fields: dict[str, object] = {
            "secret_key": TEST_SECRET,
            "cookie_secure": False,
            "site_origins": ("https://app.example.com",),
            **overrides,
        }
        return create_app(Config(**fields), store=self.store, clock=self.clock)  # type: ignore[arg-type]

    def close(self) -> None:
        self.app.close()
        self.dev_app.close()
        self.store.close()


@pytest.fixture(scope="module")
def served(module_db_url: str) -> Iterator[Served]:
    made = Served(module_db_url)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def store(served: Served) -> Store:
    return served.store


@pytest.fixture
def clock(served: Served) -> FakeClock:
    return served.clock


@pytest.fixture
def app(served: Served) -> SvcApp:
    return served.app


@pytest.fixture
def dev_app(served: Served) -> SvcApp:
    return served.dev_app


@pytest.fixture
def email() -> str:
    """An address no other test of the module uses."""
    return f"ana-{uuid.uuid4().hex[:12]}@example.com"


def dev_sign_in(client: Client, email: str, headers: dict[str, str] | None = None) -> Any:
    return client.post(
        "/api/auth/dev-session",
        json={"email": email},
        headers=ORIGIN if headers is None else headers,
    )


# the refusal ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"SVC_DEV_SIGNIN": "true"}, "SVC_COOKIE_SECURE"),
        ({"SVC_DEV_SIGNIN": "true", "SVC_COOKIE_SECURE": "true"}, "SVC_COOKIE_SECURE"),
        (
            {
                "SVC_DEV_SIGNIN": "true",
                "SVC_COOKIE_SECURE": "false",
                "SVC_JWT_HS256_SECRET": "x" * 32,
            },
            "identity provider",
        ),
        (
            {
                "SVC_DEV_SIGNIN": "true",
                "SVC_COOKIE_SECURE": "false",
                "SVC_JWT_JWKS_FILE": "/etc/idp/jwks.json",
            },
            "identity provider",
        ),
    ],
)
def test_dev_signin_refuses_secure_cookies_and_identity_providers(
    env: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError, match=named):
        load_config(env)


def test_dev_signin_is_off_by_default_and_loads_for_local_http() -> None:
    assert Config().dev_signin is False
    assert load_config({"SVC_DEV_SIGNIN": "true", "SVC_COOKIE_SECURE": "false"}).dev_signin


def test_svc_serve_refuses_dev_signin_with_a_secure_cookie_in_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
            "SVC_DEV_SIGNIN": "true",
            "SVC_COOKIE_SECURE": "true",
        }
    )
    result = subprocess.run(
        [sys.executable, "-m", "svc_server", "serve", "--port", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("svc: error: SVC_DEV_SIGNIN=true needs SVC_COOKIE_SECURE=false")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()  # refused before anything was opened


# the sign-in endpoint -------------------------------------------------------------------------


def test_dev_session_is_404_when_the_setting_is_off(app: SvcApp) -> None:
    response = dev_sign_in(Client(app), "ana@example.com")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "NOT_FOUND"
    assert "svc_session" not in response.headers.get("Set-Cookie", "")


def test_dev_session_signs_in_like_an_identity_provider(dev_app: SvcApp, email: str) -> None:
    browser = Client(dev_app)
    first = dev_sign_in(browser, email.replace("ana-", "Ana-").replace("example", "Example"))
    assert first.status_code == 200, first.get_json()
    data = first.get_json()["data"]
    assert data["user"]["email"] == email
    assert data["consumer"]["plan"] == "starter"
    assert re.fullmatch(r"svc_pk_live_[0-9a-f]{32}", data["api_key"])
    cookie = first.headers["Set-Cookie"]
    assert "svc_session=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    usage = browser.get("/api/auth/me/usage")
    assert usage.status_code == 200
    assert usage.get_json()["data"]["plan"] == "starter"
    # The key the first sign-in made works, and a second sign-in shows no key again.
    pulse = Client(dev_app).get(
        "/api/v1/real-estate/dimensions", headers={"X-API-Key": data["api_key"]}
    )
    assert pulse.status_code == 200
    again = dev_sign_in(Client(dev_app), email).get_json()["data"]
    assert "api_key" not in again and again["user"]["id"] == data["user"]["id"]


def test_dev_session_claims_an_account_an_operator_made_for_the_email(
    dev_app: SvcApp, store: Store, clock: FakeClock, email: str
) -> None:
    consumer_id, _ = Accounts(store, dev_app, clock).consumer("pro", email=email)
    data = dev_sign_in(Client(dev_app), email).get_json()["data"]
    assert data["consumer"] == {"id": consumer_id, "plan": "pro"}
    assert "api_key" not in data


EMAIL = "<the test's own email>"


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        ({"email": EMAIL}, {}, 403, "CSRF_REJECTED"),
        ({"email": EMAIL}, {"Origin": "https://evil.example"}, 403, "CSRF_REJECTED"),
        ({"email": "not an email"}, ORIGIN, 400, "INVALID_PARAMS"),
        ({}, ORIGIN, 400, "INVALID_PARAMS"),
        ({"email": EMAIL, "plan": "enterprise"}, ORIGIN, 400, "INVALID_PARAMS"),
    ],
)
def test_dev_session_refusals_store_nothing(
    dev_app: SvcApp,
    store: Store,
    email: str,
    body: dict[str, str],
    headers: dict[str, str],
    status: int,
    code: str,
) -> None:
    sent = {name: email if value == EMAIL else value for name, value in body.items()}
    response = Client(dev_app).post("/api/auth/dev-session", json=sent, headers=headers)
    assert response.status_code == status
    assert response.get_json()["error"]["code"] == code
    with store.db.transaction(write=False) as tx:
        assert store.accounts.get_user_by_email(tx, email) is None


# the pages ------------------------------------------------------------------------------------

SECTIONS = [
    "/dashboard",
    "/dashboard/keys",
    "/dashboard/requests",
    "/dashboard/webhooks",
    "/dashboard/team",
    "/dashboard/explorer",
]


def assert_strict_page(response: Any) -> str:
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "style-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp
    html = response.get_data(as_text=True)
    # no inline script or style for the policy to refuse: every script has a src
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert "<style" not in html and " style=" not in html
    assert not re.search(r"<[^>]+\son[a-z]+\s*=", html)  # no inline event handlers
    return html


@pytest.mark.parametrize("path", SECTIONS)
def test_signed_out_visitors_are_sent_to_signin(dev_app: SvcApp, path: str) -> None:
    response = Client(dev_app).get(path)
    assert response.status_code == 303
    # sign-in returns to the page asked for
    assert response.headers["Location"] == f"/signin?next={path}"


@pytest.mark.parametrize("path", SECTIONS)
def test_dashboard_pages_are_strict_labelled_html(dev_app: SvcApp, path: str, email: str) -> None:
    browser = Client(dev_app)
    dev_sign_in(browser, email)
    html = assert_strict_page(browser.get(path))
    assert "Development sign-in" in html
    assert 'aria-current="page"' in html and email in html
    # every form control has a visible label
    ids = re.findall(r'<(?:input|select|textarea)[^>]*\bid="([^"]+)"', html)
    for control in ids:
        assert f'for="{control}"' in html, f"{path}: #{control} has no label"
    for table in re.findall(r"<table.*?</table>", html, flags=re.S):
        assert '<th scope="col">' in table


def test_pages_show_the_banner_only_with_dev_signin(
    app: SvcApp, store: Store, clock: FakeClock, email: str
) -> None:
    browser = Accounts(store, app, clock).browser(email)
    assert "Development sign-in" not in browser.get("/dashboard").get_data(as_text=True)
    signin = assert_strict_page(Client(app).get("/signin"))
    assert "Development sign-in" not in signin and 'id="token-signin-form"' in signin


def test_signin_page_offers_the_email_form_with_its_banner(dev_app: SvcApp) -> None:
    html = assert_strict_page(Client(dev_app).get("/signin"))
    assert "Development sign-in" in html
    assert '<label for="signin-email">Email</label>' in html
    assert '<button type="submit">Sign in</button>' in html


def test_signin_page_says_who_is_signed_in_already(dev_app: SvcApp, email: str) -> None:
    browser = Client(dev_app)
    assert "You are signed in" not in browser.get("/signin").get_data(as_text=True)
    dev_sign_in(browser, email)
    html = assert_strict_page(browser.get("/signin"))
    assert f"You are signed in as {email}" in html
    assert '<a href="/dashboard">go to the dashboard</a>' in html


def test_an_unknown_section_is_a_json_404(dev_app: SvcApp, email: str) -> None:
    browser = Client(dev_app)
    dev_sign_in(browser, email)
    response = browser.get("/dashboard/billing")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "NOT_FOUND"


def test_docs_serves_swagger_ui_from_the_package(app: SvcApp) -> None:
    client = Client(app)
    html = assert_strict_page(client.get("/docs"))
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert "/static/swagger-ui/swagger-ui-bundle.js" in assets
    assert "/static/swagger-ui/swagger-ui.css" in assets
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert (
        (pages.STATIC_DIR / "swagger-ui" / "LICENSE")
        .read_text()
        .lstrip()
        .startswith("Apache License")
    )
    assert "/api/v1/openapi.json" in client.get("/static/docs.js").get_data(as_text=True)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/static/dashboard.js", "text/javascript"),
        ("/static/dashboard.css", "text/css"),
        ("/static/favicon.svg", "image/svg+xml"),
        ("/static/swagger-ui/NOTICE", "text/plain"),
    ],
)
def test_assets_have_their_types_and_revalidate(app: SvcApp, path: str, kind: str) -> None:
    client = Client(app)
    first = client.get(path)
    assert first.status_code == 200 and first.mimetype == kind
    again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    "path",
    [
        "/static/../pages.py",
        "/static/%2e%2e/pages.py",
        "/static/..%2fpages.py",
        "/static//etc/passwd",
        "/static/nothing.js",
        "/static/swagger-ui",
        "/static/a%00b",
        "/static/" + "%CC%BA" * 300,  # a name longer than the file system allows
    ],
)
def test_assets_cannot_leave_the_static_folder(app: SvcApp, path: str) -> None:
    response = Client(app).get(path)
    assert response.status_code in (404, 400)
    assert response.mimetype == "application/json"


def test_the_compressed_bundle_is_served_to_both_kinds_of_client(dev_app: SvcApp) -> None:
    """The vendored Swagger UI bundle ships gzip-compressed: a browser accepting gzip gets
    those bytes with Content-Encoding, any other client the plain script."""
    client = Client(dev_app)
    path = "/static/swagger-ui/swagger-ui-bundle.js"
    packed = client.get(path, headers={"Accept-Encoding": "gzip, br"})
    plain = client.get(path, headers={"Accept-Encoding": "identity"})
    assert packed.status_code == plain.status_code == 200
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Type"] == plain.headers["Content-Type"]
    assert plain.headers["Content-Type"].startswith("text/javascript")
    assert gzip.decompress(packed.get_data()) == plain.get_data()
    assert b"SwaggerUIBundle" in plain.get_data()
    assert client.get(path + ".gz").status_code == 404  # only the served name exists
