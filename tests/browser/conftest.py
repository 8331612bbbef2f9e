"""A real browser against a real server: headless Chromium (selenium) and ``svc serve``.

One Chromium (``driver``) and one ``svc serve`` on the demo data (``web_server``) are
shared by every browser test of a test process (session fixtures; a module that needs
other data starts its own server, once). Each test signs in as an email of its own
(``unique_email``) and makes its own accounts, keys and webhook receivers, so none
depends on another's leftovers or order; between tests the browser leaves the page
(``about:blank``) and forgets every cookie (``leave``).

The server runs on the session's demo database with development sign-in on, the page
origin as its site origin (so the browser's ``Origin`` passes the CSRF check) and
private webhook targets allowed (the receiver listens on 127.0.0.1). Outside CI the tests
skip with the reason when Chromium or its driver is missing; in CI (``CI`` set) a
missing browser is a failure, since ``.ci/run`` installs it.

``Person`` drives the browser as a person does, by labels and button names. Its waits
look again every 50 ms (selenium's default is every 500 ms, which a page that is
ready in 100 ms pays in full at every step); no test sleeps for a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterable, Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest

from svc_server.ingest import ingest
from svc_server.store import open_store
from tests.conftest import LiveServer, free_port

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
    "--window-size=1280,1000",
)
KEY_PATTERN = re.compile(r"svc_pk_live_[0-9a-f]{32}")
POLL = 0.05
"""Seconds between two looks of a wait."""


def _browser_paths() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def require_browser() -> tuple[str, str]:
    """Chromium and chromedriver; else skip the calling module (fail it in CI)."""
    found = _browser_paths()
    if found is None:
        reason = "no Chromium and chromedriver on PATH (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')", allow_module_level=True)
    return found


def unique_email(who: str) -> str:
    return f"{who}-{uuid.uuid4().hex[:8]}@example.com"


def xpath_str(text: str) -> str:
    """An XPath string literal."""
    return f'"{text}"' if '"' not in text else f"'{text}'"


class Person:
    """One browser, driven by labels and button names, plus what it may check."""

    def __init__(self, driver: Any, base: str) -> None:
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        self.base = base
        # a table re-rendered while a condition reads it (a stale element), or a page
        # reloading under it (chromedriver's "unhandled inspector error"): look again;
        # a condition that never holds still times out
        self.wait = WebDriverWait(
            driver, 20, poll_frequency=POLL, ignored_exceptions=(WebDriverException,)
        )

    # finding things as a person does -------------------------------------------------------

    def by_label(self, text: str, within: str | None = None) -> Any:
        from selenium.webdriver.common.by import By

        scope = self.driver.find_element(By.CSS_SELECTOR, within) if within else self.driver
        label = scope.find_element(By.XPATH, f".//label[normalize-space()={xpath_str(text)}]")
        return self.driver.find_element(By.ID, label.get_attribute("for"))

    def button(self, name: str, within: Any = None) -> Any:
        from selenium.webdriver.common.by import By

        scope = within if within is not None else self.driver
        buttons = [
            b
            for b in scope.find_elements(
                By.XPATH, f".//button[normalize-space()={xpath_str(name)}]"
            )
            if b.is_displayed()
        ]
        assert len(buttons) == 1, f"{len(buttons)} visible buttons named {name!r}"
        return buttons[0]

    def row(self, table_id: str, text: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.wait.until(
            lambda d: next(
                (
                    r
                    for r in d.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
                    if text in r.text
                ),
                None,
            )
        )

    def text(self, selector: str) -> str:
        from selenium.webdriver.common.by import By

        return str(self.driver.find_element(By.CSS_SELECTOR, selector).text)

    def wait_text(self, selector: str, expected: str) -> str:
        self.wait.until(lambda d: expected in self.text(selector))
        return self.text(selector)

    def visible(self, selector: str) -> bool:
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.by import By

        found = self.driver.find_elements(By.CSS_SELECTOR, selector)
        try:
            return bool(found) and bool(found[0].is_displayed())
        except WebDriverException:  # the page moved on between finding and asking
            return False

    # moving around --------------------------------------------------------------------------

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)
        self.wait_ready()

    def wait_ready(self) -> None:
        """Wait until the page's script has done its first drawing (``data-ready``)."""
        self.wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")

    def sign_in(self, email: str) -> str | None:
        """Sign in by the form; the first sign-in's key plaintext, if one is shown."""
        self.open("/signin")
        self.by_label("Email").send_keys(email)
        self.button("Sign in").click()
        self.wait.until(
            lambda d: d.current_url.endswith("/dashboard") or self.visible("#secret-panel")
        )
        if self.driver.current_url.endswith("/dashboard"):
            self.wait_ready()
            return None
        return str(self.by_label("API key").get_attribute("value"))

    def enter(self, email: str, path: str = "/dashboard") -> str | None:
        """Signed in as ``email`` on ``path``: the session comes from the development
        sign-in endpoint and its cookie is handed to the browser, which then opens
        ``path`` only. For tests about another page than sign-in (the form has its own
        tests: it costs two page loads more). Returns the first sign-in's key plaintext,
        if this was one."""
        request = urllib.request.Request(
            self.base + "/api/auth/dev-session",
            data=json.dumps({"email": email}).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Origin": self.base},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            cookies = SimpleCookie(response.headers["Set-Cookie"])
            data = json.loads(response.read())["data"]
        for name, morsel in cookies.items():
            self.driver.execute_cdp_cmd(
                "Network.setCookie",
                {
                    "name": name,
                    "value": morsel.value,
                    "url": self.base,
                    "path": morsel["path"] or "/",
                    "httpOnly": True,
                    "sameSite": "Lax",
                },
            )
        self.open(path)
        key = data.get("api_key")
        return None if key is None else str(key)

    def sign_out(self) -> None:
        self.button("Sign out").click()
        self.wait.until(lambda d: d.current_url.endswith("/signin"))

    def confirm(self, dialog: str, name: str) -> None:
        from selenium.webdriver.common.by import By

        box = self.driver.find_element(By.ID, f"{dialog}-dialog")
        self.wait.until(lambda d: box.is_displayed())
        self.button(name, within=box).click()
        self.wait.until(lambda d: not box.is_displayed())

    def shot(self, name: str) -> None:
        self.driver.execute_script("window.scrollTo(0, 0)")
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.set_window_size(1280, max(1000, min(int(height) + 40, 6000)))
        self.driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
        self.driver.set_window_size(1280, 1000)

    def console_errors(self) -> list[str]:
        return [
            str(e["message"])
            for e in self.driver.get_log("browser")
            if e["level"] in ("SEVERE", "ERROR")
        ]


def leave(driver: Any) -> None:
    """Leave the page (its pending calls stop) and forget every cookie of every host
    (the servers all listen on 127.0.0.1, and cookies do not keep ports apart), then
    empty the console."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get_log("browser")


@pytest.fixture(scope="session")
def browser_paths() -> tuple[str, str]:
    return require_browser()


@contextlib.contextmanager
def signin_server(
    url: str,
    files: Iterable[tuple[str | None, str, bytes]] = (),
    env: dict[str, str] | None = None,
) -> Iterator[LiveServer]:
    """``svc serve`` on the store at ``url``, serving pages to this origin with
    development sign-in (``person.enter``), after loading ``files`` (kind or None for
    the kind the content says, file name, bytes) into it."""
    if files:
        store = open_store(url)
        try:
            for kind, name, body in files:
                ingest(store, kind, body, path=name, now=time.time())
        finally:
            store.close()
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    settings = {"SVC_DEV_SIGNIN": "true", "SVC_SITE_ORIGINS": origin, "SVC_PUBLIC_URL": origin}
    server = LiveServer(url, port=port, env={**settings, **(env or {})})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def web_server(browser_paths: tuple[str, str], demo_db_url: str) -> Iterator[LiveServer]:
    extra = {
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        # The disable-after-failure flow sends 11 tests in a row; the per-minute limit
        # itself is tested in tests/http/test_webhook_limits_live.py.
        "SVC_WEBHOOK_TEST_SENDS_PER_MINUTE": "60",
    }
    with signin_server(demo_db_url, env=extra) as server:
        yield server


@pytest.fixture(scope="session")
def driver(browser_paths: tuple[str, str]) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = browser_paths
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="svc-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(chromedriver), options=options)
    chrome.set_page_load_timeout(30)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        yield chrome
    finally:
        chrome.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def site(web_server: LiveServer) -> LiveServer:
    """The server ``person`` visits: the shared one, unless a module serves its own
    files under this name (``signin_server``)."""
    return web_server


@pytest.fixture
def person(driver: Any, site: LiveServer) -> Iterator[Person]:
    """The browser on ``site``, signed out, with an empty console."""
    leave(driver)
    yield Person(driver, site.url)
    leave(driver)
