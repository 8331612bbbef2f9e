"""A real browser against a real server: headless Chromium (selenium) and ``svc serve``.

The server runs on the session's demo database with development sign-in on, the page
origin as its site origin (so the browser's ``Origin`` passes the CSRF check) and
private webhook targets allowed (the receiver listens on 127.0.0.1). Outside CI the tests
skip with the reason when Chromium or its driver is missing; in CI (``CI`` set) a
missing browser is a failure, since ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture(scope="module")
def browser_paths() -> tuple[str, str]:
    return require_browser()


@pytest.fixture(scope="module")
def web_server(browser_paths: tuple[str, str], demo_db_url: str) -> Iterator[LiveServer]:
    port = free_port()
    server = LiveServer(
        demo_db_url,
        port=port,
        env={
            "SVC_DEV_SIGNIN": "true",
            "SVC_SITE_ORIGINS": f"http://127.0.0.1:{port}",
            "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
            # The disable-after-failure flow sends 11 tests in a row; the per-minute limit
            # itself is tested in tests/http/test_webhook_limits_live.py.
            "SVC_WEBHOOK_TEST_SENDS_PER_MINUTE": "60",
            "SVC_PUBLIC_URL": f"http://127.0.0.1:{port}",
        },
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
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
