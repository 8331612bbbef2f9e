"""The request log, usage per key and the public pages, as a person sees them: headless
Chromium against ``svc serve`` (the fixtures of ``tests/browser``)."""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import open_store
from tests.browser.conftest import KEY_PATTERN, Person, require_browser, unique_email
from tests.conftest import LiveServer

require_browser()
Select = pytest.importorskip(
    "selenium.webdriver.support.ui", reason="selenium is not installed"
).Select

DIMENSIONS = "/api/v1/real-estate/dimensions"
BAD_PULSE = "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office&nope=1"


def call(base: str, path: str, key: str) -> tuple[int, str]:
    """The status and X-Request-ID of one call with ``key``."""
    request = urllib.request.Request(base + path, headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status), str(response.headers["X-Request-ID"])
    except urllib.error.HTTPError as err:
        return int(err.code), str(err.headers["X-Request-ID"])


@pytest.fixture
def pro_account(demo_db_url: str) -> tuple[str, str]:
    """A new pro account: its owner's email and its first key."""
    email = unique_email("logger")
    store = open_store(demo_db_url)
    try:
        out = consumers.create_consumer(
            store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id, email=email
        )
    finally:
        store.close()
    return email, str(out.api_key)


def log_rows(person: Person) -> list[list[str]]:
    """The cells of the request log's rows as shown (none for the "no calls" row): read
    in one call to the page, not one per cell, since waits read them over and over."""
    cells = person.driver.execute_script(
        "return [...document.querySelectorAll('#log-table tbody tr')]"
        ".map(r => [...r.querySelectorAll('td')].map(c => c.innerText.trim()));"
    )
    return [[str(c) for c in row] for row in cells if len(row) == 7]


def wait_rows(person: Person, check: Callable[[list[list[str]]], bool]) -> list[list[str]]:
    person.wait.until(lambda d: check(log_rows(person)))
    return log_rows(person)


def test_a_failed_call_shows_in_the_log_with_its_status_and_request_id(
    person: Person, web_server: LiveServer, pro_account: tuple[str, str]
) -> None:
    email, first = pro_account
    person.enter(email, "/dashboard/keys")
    person.by_label("Label").send_keys("second key")
    person.button("Create key").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))
    second = str(person.by_label("API key").get_attribute("value"))
    assert KEY_PATTERN.fullmatch(second)
    person.button("I have saved it").click()

    base = web_server.url
    made = {
        "first ok": call(base, DIMENSIONS, first),
        "first bad": call(base, BAD_PULSE, first),
        "first 404": call(base, "/api/v1/nope", first),
        "second ok": call(base, DIMENSIONS, second),
        "second bad": call(base, BAD_PULSE, second),
    }
    assert {name: status for name, (status, _) in made.items()} == {
        "first ok": 200,
        "first bad": 400,
        "first 404": 404,
        "second ok": 200,
        "second bad": 400,
    }
    assert call(base, DIMENSIONS, "svc_pk_live_" + "0" * 32)[0] == 401  # no account's

    person.open("/dashboard/requests")
    rows = wait_rows(person, lambda rows: len(rows) == 5)
    by_id = {r[5]: r for r in rows}
    assert set(by_id) == {rid for _, rid in made.values()}
    bad = by_id[made["first bad"][1]]
    assert bad[1].startswith(first[:16]) and bad[2] == "GET"
    assert bad[3] == BAD_PULSE and bad[4] == "400\nINVALID_PARAMS"
    assert by_id[made["first 404"][1]][4] == "404\nNOT_FOUND"
    assert by_id[made["first ok"][1]][4] == "200"
    assert by_id[made["second bad"][1]][1].startswith(second[:16])
    assert "second key" in by_id[made["second bad"][1]][1]
    assert "kept 7 days" in person.text("#log-note")
    person.shot("request-log")

    Select(person.by_label("Status")).select_by_value("4xx")
    rows = wait_rows(person, lambda rows: len(rows) == 3)
    assert sorted(r[4][:3] for r in rows) == ["400", "400", "404"]
    assert person.driver.current_url.endswith("#status=4xx")  # the filter is in the address
    person.shot("request-log-4xx")

    Select(person.by_label("Key")).select_by_visible_text(
        next(o.text for o in Select(person.by_label("Key")).options if "second key" in o.text)
    )
    rows = wait_rows(person, lambda rows: len(rows) == 1)
    assert rows[0][5] == made["second bad"][1]

    Select(person.by_label("Status")).select_by_value("2xx")
    rows = wait_rows(person, lambda rows: len(rows) == 1 and rows[0][4] == "200")
    assert rows[0][5] == made["second ok"][1]

    person.driver.refresh()  # the filters come back from the address
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready"))
    rows = wait_rows(person, lambda rows: len(rows) == 1)
    assert rows[0][5] == made["second ok"][1]

    Select(person.by_label("Status")).select_by_value("429")
    person.wait.until(lambda d: "No calls match these filters." in person.text("#log-table"))
    assert person.console_errors() == []


def test_usage_per_key_beside_the_account_total(
    person: Person, web_server: LiveServer, pro_account: tuple[str, str]
) -> None:
    email, key = pro_account
    for _ in range(3):
        assert call(web_server.url, DIMENSIONS, key)[0] == 200
    assert call(web_server.url, BAD_PULSE, key)[0] == 400  # refused: not counted
    person.enter(email)
    table = "#key-usage-table"
    person.wait.until(lambda d: key[:16] in person.text(table))
    row = person.row("key-usage-table", key[:16])
    cells = [c.text for c in row.find_elements("tag name", "td")]
    assert cells[-1] == "3" and cells[2] == "live" and cells[3] == "active"
    total = person.driver.find_element("css selector", f"{table} tr.total")
    assert total.text.endswith("3")
    assert "Used\n3" in person.text("#quota-facts") or "3" in person.text("#quota-facts")
    person.shot("overview-key-usage")
    assert person.console_errors() == []


def test_home_and_pricing_pages(person: Person) -> None:
    person.driver.get(person.base + "/")
    assert "Korean commercial real-estate statistics" in person.text("main")
    person.shot("home")
    person.driver.find_element("link text", "Plans").click()
    person.wait.until(lambda d: d.current_url.endswith("/pricing"))
    text = person.text("#plans-table")
    assert "starter" in text and "100,000" in text and "enterprise" in text
    person.shot("pricing")
    person.driver.find_element("link text", "Sign in").click()
    person.wait.until(lambda d: d.current_url.endswith("/signin"))
    assert person.console_errors() == []
