"""Issue 25 in a real browser: a webhook delivery's payload, reply and resend; the
invitation link handed over by hand and the account switcher; round chart ticks and a
one-period band; and the whole dashboard mounted under a prefix (examples/mount.py).

Each test saves screenshots under tests/browser/artifacts/ and reads the browser
console: no errors (a 404 of an asset or a call would be one).
"""

from __future__ import annotations

import itertools
import os
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from svc_core.webhooks import signing
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import open_store
from tests.browser.conftest import KEY_PATTERN, Person, leave, require_browser, unique_email
from tests.conftest import TEST_SECRET, Receiver, free_port

require_browser()
Select = pytest.importorskip("selenium.webdriver.support.ui").Select


def make_owner(db_url: str, company: str, plan: str = "pro") -> tuple[str, str]:
    """A new account named ``company`` owned by a new email: (email, its first key)."""
    email = unique_email("owner")
    store = open_store(db_url)
    try:
        made = consumers.create_consumer(
            store,
            plan=plan,
            now=time.time(),
            entropy=os.urandom(16),
            ids=new_id,
            email=email,
            company=company,
        )
    finally:
        store.close()
    return email, str(made.api_key)


def key_prefixes(person: Person) -> set[str]:
    """The prefixes the keys page lists; the page is opened unless the browser is on it
    already (switching accounts reloads the page the person is on)."""
    if person.driver.current_url == person.base + "/dashboard/keys":
        person.wait_ready()
    else:
        person.open("/dashboard/keys")
    person.wait.until(
        lambda d: d.find_elements("css selector", "#keys-table tbody tr[data-key-id]")
    )
    cells = person.driver.find_elements("css selector", "#keys-table tbody tr td:nth-child(2)")
    return {c.text for c in cells}


# webhooks ----------------------------------------------------------------------------------


def test_a_delivery_is_viewed_and_resent(
    person: Person, receiver: Callable[..., Receiver], demo_db_url: str
) -> None:
    hook = receiver(status=500, reply=b'{"error": "not ready"}')
    email, _ = make_owner(demo_db_url, "Hooks Inc")
    person.enter(email, "/dashboard/webhooks")
    hint = person.text("#hook-url-hint")
    assert "private" in hint and "SVC_WEBHOOK_ALLOW_PRIVATE=true" in hint
    person.by_label("Endpoint URL (https)").send_keys(hook.url)
    person.button("Add endpoint").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))
    panel = person.text("#secret-panel")
    assert "digest" not in panel and "svc keeps the secret to sign" in panel
    field = person.by_label("Signing secret")
    secret = str(field.get_attribute("value"))
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", secret)
    # the whole secret is in view: nothing scrolled out of the field
    width = person.driver.execute_script(
        "return [arguments[0].scrollWidth, arguments[0].clientWidth]", field
    )
    assert width[0] <= width[1], width
    person.shot("webhook-secret")
    person.button("I have saved it").click()

    person.button("Send test", within=person.row("hooks-table", hook.url)).click()
    person.wait_text("#test-result", "failed, HTTP 500")
    person.button("Deliveries", within=person.row("hooks-table", hook.url)).click()
    row = person.row("deliveries-table", "webhook.test")
    person.button("View", within=row).click()
    person.wait.until(lambda d: person.visible("#delivery-detail"))
    [first] = hook.requests
    event_id = first.headers["X-Svc-Event-Id"]
    assert f'"id": "{event_id}"' in person.text("#delivery-payload")
    assert person.text("#delivery-response-status") == "HTTP 500"
    assert person.text("#delivery-response") == '{"error": "not ready"}'
    assert "same event" in person.text("#delivery-detail")
    person.shot("webhook-delivery")

    hook.status, hook.reply = 200, b"thanks"
    person.button("Resend").click()
    result = person.wait_text("#resend-result", "delivered")
    assert "HTTP 200" in result and event_id in result
    assert len(hook.requests) == 2
    again = hook.requests[-1]
    assert again.headers["X-Svc-Event-Id"] == event_id and again.body == first.body
    event = signing.verify(again.body, again.headers["X-Svc-Signature"], secret, now=time.time())
    assert event["id"] == event_id
    person.wait_text("#deliveries-page", "of 2")
    # the view now shows the new delivery: a resend, and the receiver's new answer
    assert "resend of delivery" in person.text("#delivery-facts")
    assert person.text("#delivery-response") == "thanks"
    person.shot("webhook-resent")
    assert person.console_errors() == []


# invitations and accounts --------------------------------------------------------------------


def test_an_invitation_link_brings_the_invitee_into_the_account_and_they_switch(
    person: Person, demo_db_url: str
) -> None:
    owner, owner_key = make_owner(demo_db_url, "Switch Co")
    invitee = unique_email("invitee")
    person.enter(owner, "/dashboard/team")
    assert person.text("#account-name") == "Switch Co"
    assert not person.visible("#account-form")  # one account: nothing to switch to
    assert "svc sends no email" in person.text("#invite-how")
    person.by_label("Email").send_keys(invitee)
    person.button("Invite").click()
    person.wait_text("#notice", "no email is sent")
    person.wait.until(lambda d: person.visible("#invite-link-panel"))
    field = person.by_label("Link to hand over")
    link = str(field.get_attribute("value"))
    width = person.driver.execute_script(
        "return [arguments[0].scrollWidth, arguments[0].clientWidth]", field
    )
    assert width[0] <= width[1], width  # the whole link is in view
    assert re.fullmatch(re.escape(person.base) + r"/dashboard/team\?invite=[0-9a-f-]{36}", link)
    assert invitee in person.text("#invite-link-note")
    person.button("Copy").click()
    person.wait.until(lambda d: person.text("#invite-copy-status") != "")
    person.shot("team-invite-link")
    # the link stays available from the pending row
    person.driver.refresh()
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready"))
    person.button("Show link", within=person.row("members-table", invitee)).click()
    assert person.by_label("Link to hand over").get_attribute("value") == link
    person.sign_out()

    # The invitee opens the link signed out: sign-in, then back to the invitation.
    person.driver.get(link)
    person.wait.until(lambda d: "/signin?next=" in d.current_url)
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready"))
    person.by_label("Email").send_keys(invitee)
    person.button("Sign in").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))  # a new user's first key
    own_key = str(person.by_label("API key").get_attribute("value"))
    assert KEY_PATTERN.fullmatch(own_key)
    person.button("I have saved it").click()
    person.driver.find_element("link text", "Continue to the dashboard").click()
    person.wait.until(lambda d: d.current_url == link)
    person.wait_text("#notice", "You were invited to Switch Co as member")
    invite = person.row("invites-table", "Switch Co")
    assert "wanted" in str(invite.get_attribute("class"))
    assert person.driver.switch_to.active_element.text == "Accept"
    person.shot("team-invited")
    person.driver.switch_to.active_element.click()
    person.wait_text("#notice", "You joined Switch Co as member")
    assert person.text("#account-name") == "Switch Co"
    assert owner in person.text("#members-table")
    person.shot("team-joined")
    assert key_prefixes(person) == {owner_key[:16]}

    # Two accounts: the header switches between them; the data follows.
    switch = Select(person.by_label("Switch account"))
    assert len(switch.options) == 2
    switch.select_by_visible_text(f"{invitee} (owner, starter)")
    person.button("Switch").click()
    person.wait.until(lambda d: person.text("#account-name") == invitee)
    assert key_prefixes(person) == {own_key[:16]}
    person.shot("account-switched")
    Select(person.by_label("Switch account")).select_by_visible_text("Switch Co (member, pro)")
    person.button("Switch").click()
    person.wait.until(lambda d: person.text("#account-name") == "Switch Co")
    assert key_prefixes(person) == {owner_key[:16]}
    assert person.console_errors() == []


def test_a_link_for_someone_else_says_so(person: Person, demo_db_url: str) -> None:
    person.enter(unique_email("stranger"), f"/dashboard/team?invite={new_id()}")
    message = person.wait_text("#messages", "no pending invitation")
    assert "Sign in with the address that was invited" in message
    errors = person.console_errors()
    assert errors == [], errors


# charts ----------------------------------------------------------------------------------------


def _round(v: float, step: float) -> bool:
    return abs(v / step - round(v / step)) < 1e-4


def _step(ticks: list[float]) -> float:
    """The step between ticks, rid of the float noise of the subtraction."""
    return float(f"{ticks[1] - ticks[0]:.6g}")  # a nice step has 1 or 2 digits


def _nice(step: float) -> bool:
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    return any(abs(mantissa - f) < 1e-9 for f in (1, 2, 2.5, 5))


def test_chart_ticks_are_round_and_one_period_keeps_its_band(person: Person) -> None:
    person.enter(unique_email("charts"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#chart svg"))

    def ticks() -> list[float]:
        found = person.driver.find_elements("css selector", "#chart svg text.chart-tick")
        return [float(t.get_attribute("data-value")) for t in found]

    shown = ticks()
    step = _step(shown)
    assert _nice(step) and all(_round(v, step) for v in shown)
    assert all(abs((b - a) - step) < step * 1e-9 for a, b in itertools.pairwise(shown))

    # The tick maker, over many ranges: nice steps, round ends, every value covered.
    rng = random.Random(25)
    ranges = []
    for _ in range(400):
        lo = rng.uniform(0, 10 ** rng.randint(0, 10))
        width = max(lo, 1) * 10 ** rng.uniform(-4, 1)  # down to 1/10,000 of the values
        ranges.append([lo, lo + rng.choice((0, width))])
    made = person.driver.execute_script(
        "return arguments[0].map(([lo, hi]) => window.svcCharts.niceTicks(lo, hi))", ranges
    )
    for (lo, hi), out in zip(ranges, made, strict=True):
        assert 2 <= len(out) <= 6, (lo, hi, out)
        s = _step(out)
        assert _nice(s), (lo, hi, out)
        assert out[0] <= lo + s * 1e-9 and out[-1] >= hi - s * 1e-9, (lo, hi, out)
        assert all(_round(v, s) for v in out), (lo, hi, out)

    # One period: the band still shows, as a box around the point.
    periods = person.by_label("Periods (up to 12; the latest are chosen for you)")
    chosen = [o for o in periods.find_elements("tag name", "option") if o.is_selected()]
    person.driver.execute_script("arguments[0].forEach(o => { o.selected = false; });", chosen[:-1])
    person.button("Show chart").click()
    person.wait.until(
        lambda d: len(d.find_elements("css selector", "#chart svg circle.chart-point")) == 1
    )
    box = person.driver.execute_script(
        "const b = document.querySelector('#chart svg polygon.chart-band').getBBox();"
        "return [b.width, b.height];"
    )
    assert box[0] > 20 and box[1] > 1, box
    shown = ticks()
    step = _step(shown)
    assert _nice(step) and all(_round(v, step) for v in shown)
    person.shot("explorer-one-period")
    assert person.console_errors() == []


# the dashboard under a mount prefix ----------------------------------------------------------


class MountedServer:
    """``examples/mount.py``'s application (svc under /data) served on a free port by
    werkzeug's threaded server on a thread of this process (the example's ``run_simple``
    is the same server; the process boundary is not what the test is about)."""

    def __init__(self, db_url: str) -> None:
        import threading

        from werkzeug.serving import WSGIRequestHandler, make_server

        from examples.mount import build

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with pytest.MonkeyPatch.context() as env:  # build() reads os.environ
            for name, value in {
                "SVC_DATABASE_URL": db_url,
                "SVC_SECRET_KEY": TEST_SECRET,
                "SVC_COOKIE_SECURE": "false",
                "SVC_DEV_SIGNIN": "true",
                "SVC_SITE_ORIGINS": self.url,
            }.items():
                env.setenv(name, value)
            self.app = build()

        class Quiet(WSGIRequestHandler):
            def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                return None

        self.server = make_server(
            "127.0.0.1", self.port, self.app, threaded=True, request_handler=Quiet
        )
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(0.05,), name="mounted-app", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
        svc = self.app.mounts["/data"]
        svc.close()
        svc.store.close()


@pytest.fixture(scope="module")
def mounted(browser_paths: tuple[str, str], demo_db_url: str) -> Iterator[MountedServer]:
    server = MountedServer(demo_db_url)
    try:
        yield server
    finally:
        server.stop()


def resources(person: Person) -> list[tuple[str, int]]:
    """Every request the page made (assets and API calls) with its HTTP status."""
    entries = person.driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => [e.name, e.responseStatus || 0]);"
    )
    return [(str(name), int(status)) for name, status in entries]


def test_the_whole_dashboard_works_under_a_mount_prefix(
    driver: Any, mounted: MountedServer
) -> None:
    leave(driver)
    base = mounted.url + "/data"
    person = Person(driver, base)
    seen: list[tuple[str, int]] = []

    driver.get(base + "/dashboard/keys")  # signed out: to the prefixed sign-in
    person.wait.until(lambda d: d.current_url.startswith(base + "/signin?next="))
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
    seen += resources(person)
    person.by_label("Email").send_keys(unique_email("mounted"))
    person.button("Sign in").click()
    person.wait.until(lambda d: person.visible("#secret-panel"))
    key = str(person.by_label("API key").get_attribute("value"))
    person.button("I have saved it").click()
    person.driver.find_element("link text", "Continue to the dashboard").click()
    person.wait.until(lambda d: d.current_url == base + "/dashboard/keys")
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
    assert "active" in person.row("keys-table", key[:16]).text
    seen += resources(person)
    person.shot("mounted-keys")

    for section in ("", "/webhooks", "/team", "/explorer"):
        person.driver.find_element(
            "css selector", f'nav a[href="/data/dashboard{section}"]'
        ).click()
        person.wait.until(lambda d, s=section: d.current_url == f"{base}/dashboard{s}")
        person.wait.until(
            lambda d: d.execute_script("return document.body.dataset.ready") == "true"
        )
        assert person.text("#messages") == ""
        seen += resources(person)
    person.wait.until(lambda d: person.visible("#chart svg"))
    assert str(person.driver.find_element("id", "csv-link").get_attribute("href")).startswith(
        base + "/api/v1/real-estate/pulse/series?"
    )
    seen += resources(person)
    person.shot("mounted-explorer")

    person.driver.find_element("link text", "API reference").click()
    person.wait.until(lambda d: person.visible(".swagger-ui .info .title"))
    seen += resources(person)
    person.shot("mounted-docs")

    person.driver.get(base + "/dashboard")
    person.wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
    person.sign_out()
    assert person.driver.current_url.startswith(base + "/signin")

    assert seen, "no requests recorded"
    wrong = [(u, s) for u, s in seen if not u.startswith(base + "/") or not 200 <= s < 400]
    assert wrong == [], wrong
    assert {u.split("?")[0] for u, _ in seen} >= {
        base + "/static/dashboard.js",
        base + "/static/dashboard.css",
        base + "/api/auth/me/usage",
        base + "/api/auth/me/keys",
        base + "/api/v1/real-estate/dimensions",
        base + "/api/v1/openapi.json",
    }
    assert person.console_errors() == []
