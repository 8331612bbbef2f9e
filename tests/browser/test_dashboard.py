"""The dashboard as a person uses it: headless Chromium against ``svc serve``.

Each test signs in (through the development sign-in form where signing in is what it
tests, else with a development session handed to the browser: ``Person.enter``), works
through one page by its visible labels and button names, checks the outcome on the page
and through the API, saves a screenshot of the page under tests/browser/artifacts/, and
reads the browser console: no errors, other than the failed request a test provokes on
purpose.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import open_store
from tests.browser.conftest import KEY_PATTERN, Person, require_browser, unique_email, xpath_str
from tests.conftest import LiveServer, Receiver

require_browser()  # skips this module when there is no browser (fails it in CI)
Select = pytest.importorskip(
    "selenium.webdriver.support.ui", reason="selenium is not installed"
).Select


def failures(person: Person, url: str) -> str:
    """The "Consecutive failures" cell of an endpoint's row."""
    return str(person.row("hooks-table", url).find_elements("tag name", "td")[4].text)


def call(base: str, path: str, key: str) -> int:
    request = urllib.request.Request(base + path, headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


@pytest.fixture(scope="module")
def pro_owner(demo_db_url: str) -> Callable[[], str]:
    """Make a pro account (5 keys, 3 seats) owned by a new email; returns the email."""

    def make() -> str:
        email = unique_email("owner")
        store = open_store(demo_db_url)
        try:
            consumers.create_consumer(
                store,
                plan="pro",
                now=time.time(),
                entropy=os.urandom(16),
                ids=new_id,
                email=email,
                company="Browser Test Co",
            )
        finally:
            store.close()
        return email

    return make


def test_sign_in_and_the_overview(person: Person, pro_owner: Callable[[], str]) -> None:
    person.sign_in(pro_owner())
    assert "Development sign-in" in person.text("body")
    facts = person.text("#plan-facts")
    assert "pro" in facts and "100,000 live calls" in facts and "120 calls per minute" in facts
    assert person.by_label("Live calls used this month").tag_name == "progress"
    assert "Resets at" in person.text("#quota-facts")
    assert "no trial" in person.text("#trial-facts")
    person.shot("overview")
    assert person.console_errors() == []


def test_a_first_sign_in_shows_its_key_once(person: Person, web_server: LiveServer) -> None:
    key = person.sign_in(unique_email("newcomer"))
    assert key is not None and KEY_PATTERN.fullmatch(key)
    assert "you will not see this again" in person.text("#secret-panel")
    person.shot("signin-first-key")
    person.button("I have saved it").click()
    assert not person.visible("#secret-panel")
    person.driver.find_element("link text", "Continue to the dashboard").click()
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready"))
    assert key not in person.driver.page_source
    assert call(web_server.url, "/api/v1/real-estate/dimensions", key) == 200
    assert person.console_errors() == []


def test_keys_create_once_use_rotate_revoke(
    person: Person, web_server: LiveServer, pro_owner: Callable[[], str]
) -> None:
    person.enter(pro_owner(), "/dashboard/keys")
    person.by_label("Label").send_keys("browser test")
    person.button("Create key").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))
    key = str(person.by_label("API key").get_attribute("value"))
    assert KEY_PATTERN.fullmatch(key)
    assert "you will not see this again" in person.text("#secret-panel")
    assert person.button("Copy").is_displayed()
    person.shot("keys-created")

    person.driver.refresh()  # the plaintext is gone for good
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready"))
    assert not person.visible("#secret-panel")
    assert key not in person.driver.page_source
    row = person.row("keys-table", "browser test")
    assert key[:16] in row.text and "active" in row.text

    pulse = "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office"
    assert call(web_server.url, pulse, key) == 200

    # Edit the label and the allowlist: another network locks this browser's host out.
    for label, allowlist, status in (
        ("browser test, elsewhere", "203.0.113.0/24", 403),
        ("browser test, here", "127.0.0.1/32", 200),
    ):
        person.button("Edit", within=person.row("keys-table", key[:16])).click()
        edit_label = person.by_label("Label", within="#edit-dialog")
        edit_label.clear()
        edit_label.send_keys(label)
        allow = person.by_label("IP allowlist (one address or CIDR per line)")
        allow.clear()
        allow.send_keys(allowlist)
        person.confirm("edit", "Save changes")
        person.wait.until(lambda d, a=allowlist: a in person.row("keys-table", key[:16]).text)
        assert label in person.row("keys-table", key[:16]).text
        assert call(web_server.url, pulse, key) == status

    person.button("Rotate", within=person.row("keys-table", key[:16])).click()
    Select(person.by_label("Grace period of the old key")).select_by_value("0")
    person.confirm("rotate", "Rotate key")
    person.wait.until(lambda d: person.visible("#secret-panel"))
    new_key = str(person.by_label("API key").get_attribute("value"))
    assert KEY_PATTERN.fullmatch(new_key) and new_key != key
    assert "no longer works" in person.text("#notice")
    assert call(web_server.url, pulse, key) == 401
    assert call(web_server.url, pulse, new_key) == 200
    person.button("I have saved it").click()

    new_row = person.row("keys-table", new_key[:16])
    person.button("Revoke", within=new_row).click()
    person.confirm("revoke", "Revoke key")
    person.wait_text("#notice", "revoked")
    person.wait.until(lambda d: "revoked" in person.row("keys-table", new_key[:16]).text)
    assert call(web_server.url, pulse, new_key) == 401
    person.shot("keys")
    assert person.console_errors() == []


def test_api_errors_are_readable_messages(person: Person, pro_owner: Callable[[], str]) -> None:
    person.enter(pro_owner(), "/dashboard/keys")
    person.by_label("Label").send_keys("bad allowlist")
    person.by_label(
        "IP allowlist (one address or CIDR per line; empty allows any address)"
    ).send_keys("10.0.0.1/8")
    person.button("Create key").click()
    # a 400 the person can fix says so; "Something went wrong" is for the server's failures
    message = person.wait_text("#messages", "Please check:")
    assert "Something went wrong" not in message
    assert "INVALID_PARAMS" in message and "10.0.0.1/8" in message
    assert not person.visible("#secret-panel")
    person.shot("keys-error")
    errors = person.console_errors()  # only the refused request itself
    assert len(errors) == 1 and "400" in errors[0], errors


def test_a_data_endpoint_is_registered_with_its_filters(
    person: Person, receiver: Callable[..., Receiver], pro_owner: Callable[[], str]
) -> None:
    """The event picker lists data.updated (named only), and the form sends its filters."""
    hook = receiver()
    person.enter(pro_owner(), "/dashboard/webhooks")
    person.by_label("Endpoint URL (https)").send_keys(hook.url)
    person.by_label("data.updated").click()
    assert not person.by_label("all account events (*)").is_selected()
    person.by_label("District codes").send_keys("11680, 11110")
    person.by_label("office").click()
    person.by_label("sale").click()
    person.button("Add endpoint").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))
    person.button("I have saved it").click()
    row = person.row("hooks-table", hook.url)
    assert "data.updated (data.updated: 11680, 11110; office; sale)" in row.text
    person.shot("webhooks-data-filters")


def test_webhooks_create_test_log_reenable_revoke(
    person: Person, receiver: Callable[..., Receiver], pro_owner: Callable[[], str]
) -> None:
    hook = receiver(status=500)
    person.enter(pro_owner(), "/dashboard/webhooks")
    person.by_label("Endpoint URL (https)").send_keys(hook.url)
    person.by_label("Description").send_keys("local receiver")
    person.button("Add endpoint").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))
    secret = str(person.by_label("Signing secret").get_attribute("value"))
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", secret)
    person.button("I have saved it").click()
    row = person.row("hooks-table", hook.url)
    assert "active" in row.text

    # Eleven failed tests: the endpoint is disabled after failure (SPEC: more than 10).
    for attempt in range(1, 12):
        person.button("Send test", within=person.row("hooks-table", hook.url)).click()
        person.wait.until(lambda d, n=attempt: failures(person, hook.url) == str(n))
        assert "failed, HTTP 500" in person.text("#test-result")
    person.wait.until(
        lambda d: "disabled_after_failure" in person.row("hooks-table", hook.url).text
    )
    person.button("Re-enable", within=person.row("hooks-table", hook.url)).click()
    person.wait_text("#notice", "active again")

    hook.status = 200
    person.button("Send test", within=person.row("hooks-table", hook.url)).click()
    result = person.wait_text("#test-result", "delivered")
    assert "HTTP 200" in result
    assert len(hook.requests) == 12
    assert hook.requests[-1].headers["X-Svc-Event"] == "webhook.test"
    assert hook.requests[-1].headers["X-Svc-Signature"].startswith("t=")

    person.button("Deliveries", within=person.row("hooks-table", hook.url)).click()
    person.wait_text("#deliveries-page", "Showing 1–10 of 12")
    first = person.text("#deliveries-table tbody tr")
    assert "webhook.test" in first and "delivered" in first
    person.shot("webhooks")
    person.button("Next page").click()
    person.wait_text("#deliveries-page", "Showing 11–12 of 12")
    assert "failed" in person.text("#deliveries-table tbody")
    assert not person.button("Next page").is_enabled()

    person.button("Revoke", within=person.row("hooks-table", hook.url)).click()
    person.confirm("revoke", "Revoke endpoint")
    person.wait_text("#notice", "revoked")
    assert person.console_errors() == []


def test_invite_a_member_who_accepts(person: Person, pro_owner: Callable[[], str]) -> None:
    owner = pro_owner()
    member = unique_email("member")
    person.enter(owner, "/dashboard/team")
    assert "1 of 3 seats taken" in person.text("#seats")
    person.by_label("Email").send_keys(member)
    Select(person.by_label("Role")).select_by_value("admin")
    person.button("Invite").click()
    person.wait_text("#notice", f"{member} is invited as admin; no email is sent")
    assert "pending" in person.row("members-table", member).text
    assert "2 of 3 seats taken" in person.text("#seats")
    person.sign_out()

    # a new user: a starter account and its key
    assert person.enter(member, "/dashboard/team") is not None
    invite = person.row("invites-table", "Browser Test Co")
    assert "admin" in invite.text
    person.button("Accept", within=invite).click()
    person.wait_text("#notice", "You joined Browser Test Co as admin")
    # The member now acts on the pro account (the highest plan) and sees its team.
    person.wait.until(lambda d: "active" in person.row("members-table", member).text)
    assert owner in person.text("#members-table")
    assert "No invitations for you." in person.text("#invites-table")
    person.shot("team")
    person.sign_out()

    person.enter(owner, "/dashboard/team")  # the owner removes the member again, after confirming
    person.button("Remove", within=person.row("members-table", member)).click()
    person.confirm("remove", "Remove member")
    person.wait_text("#notice", f"{member} removed")
    person.wait.until(lambda d: "removed" in person.row("members-table", member).text)
    assert "1 of 3 seats taken" in person.text("#seats")
    assert person.console_errors() == []


def test_the_explorer_draws_the_series_of_a_demo_district(person: Person) -> None:
    person.enter(unique_email("analyst"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#chart svg"))
    points = person.driver.find_elements("css selector", "#chart svg circle.chart-point")
    rows = person.driver.find_elements("css selector", "#points-table tbody tr")
    assert len(points) >= 2 and len(points) == len(rows)
    assert person.driver.find_elements("css selector", "#chart svg polygon.chart-band")
    assert re.fullmatch(r"\d{5}", str(person.by_label("District").get_attribute("value")))
    first = rows[0].text
    assert re.search(r"(low|medium|high)", first) and "rtms_official" in first
    assert person.driver.find_elements("css selector", "#coverage-table tbody tr")
    # The demo says it is synthetic, above the chart and among the answer's limitations.
    assert person.text("#chart-note").startswith("Synthetic demo data")
    assert "Synthetic demo data" in person.text("#limits-list")

    # Another cohort, fewer periods: the chart follows what is chosen.
    periods = person.by_label("Periods (up to 12; the latest are chosen for you)")
    chosen = [o for o in periods.find_elements("tag name", "option") if o.is_selected()]
    keep = min(3, len(chosen))
    person.driver.execute_script(
        "arguments[0].forEach(o => { o.selected = false; });", chosen[:-keep]
    )
    person.button("Show chart").click()
    person.wait.until(
        lambda d: len(d.find_elements("css selector", "#chart svg circle.chart-point")) == keep
    )

    link = person.driver.find_element("link text", "Download CSV of this series")
    assert "format=csv" in str(link.get_attribute("href"))
    csv_text = person.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.text()).then(done);",
        link.get_attribute("href"),
    )
    lines = [line for line in str(csv_text).lstrip("\ufeff").splitlines() if line]
    assert lines[0].startswith("sigungu_code,") and len(lines) == 1 + keep
    person.shot("explorer")
    assert person.console_errors() == []


def test_docs_shows_the_reference(person: Person) -> None:
    person.driver.get(person.base + "/docs")
    person.wait.until(lambda d: person.visible(".swagger-ui .info .title"))
    assert "svc API" in person.text(".swagger-ui .info .title")
    person.wait.until(
        lambda d: any(
            "Real estate" in t.text
            for t in d.find_elements("css selector", "#swagger-ui .opblock-tag")
        )
    )
    person.shot("docs")
    assert person.console_errors() == []


def test_keyboard_reaches_every_section(person: Person) -> None:
    from selenium.webdriver.common.keys import Keys

    person.enter(unique_email("keyboard"), "/dashboard")
    body = person.driver.find_element("tag name", "body")
    body.send_keys(Keys.TAB)  # the skip link
    assert person.driver.switch_to.active_element.text == "Skip to content"
    reached = []
    for _ in range(8):
        person.driver.switch_to.active_element.send_keys(Keys.TAB)
        reached.append(person.driver.switch_to.active_element.text)
    assert reached[:7] == [
        "Overview",
        "API keys",
        "Request log",
        "Webhooks",
        "Team",
        "Explorer",
        "Sign out",
    ]
    for _ in range(2):
        person.driver.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    assert person.driver.switch_to.active_element.text == "Explorer"
    person.driver.switch_to.active_element.send_keys(Keys.ENTER)
    person.wait.until(lambda d: d.current_url.endswith("/dashboard/explorer"))
    assert person.console_errors() == []


def test_a_revocation_is_confirmed_by_keyboard_and_escape_cancels(person: Person) -> None:
    from selenium.webdriver.common.keys import Keys

    person.enter(unique_email("keys-by-keyboard"), "/dashboard/keys")
    row = person.row("keys-table", "active")
    prefix = row.find_elements("tag name", "td")[1].text
    person.button("Revoke", within=row).send_keys(Keys.ENTER)
    dialog = person.driver.find_element("id", "revoke-dialog")
    person.wait.until(lambda d: dialog.is_displayed())
    assert prefix in dialog.text
    assert person.driver.switch_to.active_element.text == "Cancel"  # Enter now would cancel
    person.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    person.wait.until(lambda d: not dialog.is_displayed())
    assert "active" in person.row("keys-table", prefix).text

    person.button("Revoke", within=person.row("keys-table", prefix)).send_keys(Keys.ENTER)
    person.wait.until(lambda d: dialog.is_displayed())
    person.driver.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    assert person.driver.switch_to.active_element.text == "Revoke key"
    person.driver.switch_to.active_element.send_keys(Keys.ENTER)
    person.wait_text("#notice", "revoked")
    assert "revoked" in person.row("keys-table", prefix).text
    assert person.console_errors() == []


def _visible_buttons(person: Person, name: str) -> list[Any]:
    found = person.driver.find_elements("xpath", f"//button[normalize-space()={xpath_str(name)}]")
    return [b for b in found if b.is_displayed()]


def test_the_overview_charts_calls_per_day(
    person: Person, web_server: LiveServer, demo_db_url: str
) -> None:
    email = unique_email("daily")
    today = datetime.now(UTC).date()
    # Earlier days of this month, stored as the counting would have left them (the
    # server's clock is real, so only today's calls can be made through it).
    earlier = {d: n for d, n in ((1, 4), (today.day // 2, 2)) if 1 <= d < today.day}
    store = open_store(demo_db_url)
    try:
        made = consumers.create_consumer(
            store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id, email=email
        )
        consumer_id, key = str(made.consumer_id), str(made.api_key)
        with store.db.transaction() as tx:
            for day, n in earlier.items():
                for _ in range(n):
                    store.accounts.increment_usage(tx, consumer_id, f"{today:%Y-%m}", "live")
                    store.accounts.count_day(tx, consumer_id, f"{today:%Y-%m}-{day:02d}", "live")
    finally:
        store.close()
    dims = "/api/v1/real-estate/dimensions"
    assert [call(web_server.url, dims, key) for _ in range(3)] == [200, 200, 200]
    assert call(web_server.url, dims + "?bogus=1", key) == 400  # refunded: not a call

    person.enter(email)
    person.wait.until(lambda d: person.visible("#daily-chart svg"))
    expected = {f"{today:%Y-%m}-{d:02d}": n for d, n in {**earlier, today.day: 3}.items()}
    points = person.driver.find_elements("css selector", "#daily-chart svg circle.chart-point")
    drawn = {p.get_attribute("data-date"): int(p.get_attribute("data-calls")) for p in points}
    assert len(points) == len(expected) and drawn == expected
    assert not person.driver.find_elements("css selector", "#daily-chart svg .chart-test")
    rows = person.driver.find_elements("css selector", "#days-table tbody tr")
    assert [r.get_attribute("data-date") for r in rows] == sorted(expected)
    total = sum(expected.values())
    assert f"Used\n{total}" in person.text("#quota-facts")
    assert f"{total} live call(s) on {len(expected)} day(s)" in person.text("#daily-note")
    assert "owner: manages keys" in person.text("#plan-facts")
    person.shot("overview-daily")
    assert person.console_errors() == []


def _as(base: str, method: str, path: str, cookie: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json", "Origin": base, "Cookie": cookie},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers, json.loads(response.read())


def test_a_member_sees_no_write_controls(
    person: Person, web_server: LiveServer, pro_owner: Callable[[], str]
) -> None:
    base = web_server.url
    owner, member = pro_owner(), unique_email("reader")
    headers, _ = _as(base, "POST", "/api/auth/dev-session", "", {"email": owner})
    cookie = headers["Set-Cookie"].split(";")[0]
    _as(base, "POST", "/api/auth/me/team", cookie, {"email": member, "role": "member"})
    hook = "http://127.0.0.1:9/member-view"
    _as(base, "POST", "/api/auth/me/webhooks", cookie, {"url": hook, "events": ["*"]})

    # a new user: owner of a starter account
    assert person.enter(member, "/dashboard/team") is not None
    assert _visible_buttons(person, "Invite")  # owner of the starter account: writes
    person.button("Accept", within=person.row("invites-table", "Browser Test Co")).click()
    person.wait_text("#notice", "You joined Browser Test Co as member")
    # Now on the pro account (the highest plan) as a member: a note, no write controls.
    person.wait.until(lambda d: person.visible(".role-note"))
    assert "You are a member of this account" in person.text(".role-note")
    assert owner in person.text("#members-table")
    for name in ("Invite", "Remove"):
        assert not _visible_buttons(person, name), name
    assert not person.visible("#invite-form")
    person.shot("team-member")

    person.open("/dashboard/keys")
    assert "only its owner or an admin can create, edit, rotate or revoke" in person.text(
        ".role-note"
    )
    assert "active" in person.row("keys-table", "svc_pk_live_").text
    for name in ("Create key", "Edit", "Rotate", "Revoke"):
        assert not _visible_buttons(person, name), name
    person.shot("keys-member")

    person.open("/dashboard/webhooks")
    row = person.row("hooks-table", hook)
    for name in ("Add endpoint", "Send test", "Re-enable", "Revoke"):
        assert not _visible_buttons(person, name), name
    person.button("Deliveries", within=row).click()  # reading stays open to members
    person.wait_text("#delivery-summary", "0 in all")
    person.shot("webhooks-member")

    person.open("/dashboard")
    assert "member: reads" in person.text("#plan-facts")
    assert person.console_errors() == []


def test_the_explorer_chart_is_per_m2_by_default_and_as_wide_as_the_page(
    person: Person,
) -> None:
    """A whole-building sale 100 times a unit's price flattens a chart of whole amounts:
    the explorer opens on prices per m², and draws the chart at the width the page gives
    it (not a fixed 760 units scaled into a narrower box)."""
    person.enter(unique_email("wide"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#chart svg"))
    assert person.by_label("Chart").get_attribute("value") == "m2"
    assert "per m²" in person.text("#chart svg .chart-unit")
    drawn = person.driver.execute_script(
        "const svg = document.querySelector('#chart svg');"
        "return [svg.viewBox.baseVal.width, svg.getBoundingClientRect().width,"
        " document.querySelector('main').clientWidth];"
    )
    viewbox, shown, page = (float(v) for v in drawn)
    assert abs(viewbox - shown) <= 2  # drawn at its own size
    assert shown >= page - 40 and shown > 960  # the page's width, past the old 60rem cap
    person.shot("explorer-wide")
    assert person.console_errors() == []
