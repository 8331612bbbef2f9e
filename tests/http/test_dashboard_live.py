"""Issue 25 through a real ``svc serve`` on both backends: a past webhook delivery's
payload and reply, resending it (same event, signed afresh, a CSRF-checked write), and
a person in two accounts switching between them, attacked with forged ids and cross-site
requests.

One server per backend serves the module (each test signs in people of its own, with
fresh emails); the test of the production default starts one with that setting.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from svc_core.webhooks import signing
from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.runtime.deps import new_id
from svc_server.services import consumers, sessions
from svc_server.store import Store, open_store
from tests.conftest import TEST_SECRET, LiveServer, Receiver

ORIGIN = "https://app.example.com"
HOOKS = "/api/auth/me/webhooks"
ME = "/api/auth/me"


class Person:
    """A signed-in person calling a live server with their session cookie; writes carry
    the site's ``Origin`` unless told otherwise."""

    def __init__(self, store: Store, url: str, email: str) -> None:
        signed = sessions.sign_in(
            store,
            Config(secret_key=TEST_SECRET),
            Identity(sub=f"sub-{email}", email=email),
            time.time(),
            os.urandom(16),
            ids=new_id,
        )
        self.url = url
        self.email = email
        self.cookie = f"svc_session={signed['_cookie']}"

    def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        origin: str | None = ORIGIN,
    ) -> tuple[int, Any]:
        headers = {"Cookie": self.cookie, "Content-Type": "application/json"}
        if origin is not None:
            headers["Origin"] = origin
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode("utf-8")
                ctype = response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as err:
            text = err.read().decode("utf-8")
            return err.code, json.loads(text)
        return response.status, json.loads(text) if "json" in ctype else text


@pytest.fixture(scope="module")
def live(module_db_url: str) -> Iterator[tuple[Store, LiveServer]]:
    store = open_store(module_db_url)
    server = LiveServer(
        module_db_url, env={"SVC_SITE_ORIGINS": ORIGIN, "SVC_WEBHOOK_ALLOW_PRIVATE": "true"}
    )
    try:
        yield store, server
    finally:
        server.stop()
        store.close()


def stamp(request: Any) -> int:
    """The timestamp of a received delivery's signature (``t=...,v1=...``)."""
    return int(request.headers["X-Svc-Signature"].split(",")[0].removeprefix("t="))


def email(who: str) -> str:
    return f"{who}-{uuid.uuid4().hex[:8]}@example.com"


def owner(store: Store, url: str, plan: str, company: str) -> tuple[Person, str]:
    """The owner of a new consumer named ``company``, signed in; and the consumer id."""
    address = email("owner")
    made = consumers.create_consumer(
        store,
        plan=plan,
        now=time.time(),
        entropy=os.urandom(16),
        ids=new_id,
        email=address,
        company=company,
    )
    return Person(store, url, address), made.consumer_id


# webhooks: view and resend ---------------------------------------------------------------


def test_a_delivery_shows_its_payload_and_reply_and_is_resent_signed_afresh(
    live: tuple[Store, LiveServer], receiver: Callable[..., Receiver]
) -> None:
    store, server = live
    hook = receiver(status=500, reply=b'{"error": "boom"}')
    ana, _ = owner(store, server.url, "pro", "Ana Co")
    status, body = ana.call("POST", HOOKS, {"url": hook.url})
    assert status == 200, body
    endpoint, secret = body["data"]["id"], body["data"]["secret_plaintext"]
    status, body = ana.call("POST", f"{HOOKS}/{endpoint}/test")
    assert (status, body["data"]["delivery"]["status"]) == (200, "failed")
    [first] = hook.requests
    status, log = ana.call("GET", f"{HOOKS}/{endpoint}/deliveries")
    [row] = log["data"]["rows"]

    # The detail: exactly the bytes that were sent, and what the receiver answered.
    status, detail = ana.call("GET", f"{HOOKS}/{endpoint}/deliveries/{row['id']}")
    assert status == 200, detail
    d = detail["data"]
    assert d["payload"].encode("utf-8") == first.body
    assert (d["http_status"], d["response_excerpt"]) == (500, '{"error": "boom"}')
    assert (d["trigger"], d["resend_of"], d["url"]) == ("manual", None, hook.url)
    assert d["event_id"] == first.headers["X-Svc-Event-Id"]

    # A resend is a CSRF-checked write: without the site's Origin nothing is sent.
    hook.status, hook.reply = 200, b"thanks"
    resend = f"{HOOKS}/{endpoint}/deliveries/{row['id']}/resend"
    for origin in (None, "https://evil.example"):
        status, body = ana.call("POST", resend, origin=origin)
        assert (status, body["error"]["code"]) == (403, "CSRF_REJECTED")
    assert len(hook.requests) == 1

    # the new signature's timestamp (whole seconds) is to be later than the first one's
    deadline = time.monotonic() + 5
    while time.time() < stamp(first) + 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    status, body = ana.call("POST", resend)
    assert status == 200, body
    out = body["data"]
    assert (out["resend_of"], out["event_id"]) == (row["id"], d["event_id"])
    assert out["delivery"]["status"] == "delivered" and out["delivery"]["http_status"] == 200
    second = hook.requests[-1]
    assert len(hook.requests) == 2
    assert second.headers["X-Svc-Event-Id"] == d["event_id"]  # receivers dedupe on it
    assert second.body == first.body
    event = signing.verify(second.body, second.headers["X-Svc-Signature"], secret, now=time.time())
    assert event["id"] == d["event_id"]
    assert stamp(second) > stamp(first)

    # The log lists both; the resend's detail says what it repeats and what came back.
    status, log = ana.call("GET", f"{HOOKS}/{endpoint}/deliveries")
    assert [r["id"] for r in log["data"]["rows"]] == [out["id"], row["id"]]
    status, detail = ana.call("GET", f"{HOOKS}/{endpoint}/deliveries/{out['id']}")
    assert detail["data"]["trigger"] == "resend" and detail["data"]["resend_of"] == row["id"]
    assert detail["data"]["response_excerpt"] == "thanks"

    # A resend can itself be resent: the same event id a third time.
    status, body = ana.call("POST", f"{HOOKS}/{endpoint}/deliveries/{out['id']}/resend")
    assert status == 200, body
    assert [r.headers["X-Svc-Event-Id"] for r in hook.requests] == [d["event_id"]] * 3


def test_another_account_can_neither_read_nor_resend_a_delivery(
    live: tuple[Store, LiveServer], receiver: Callable[..., Receiver]
) -> None:
    store, server = live
    hook = receiver(reply=b"secret reply")
    ana, _ = owner(store, server.url, "pro", "Ana Co")
    eve, _ = owner(store, server.url, "pro", "Eve Co")
    status, body = ana.call("POST", HOOKS, {"url": hook.url})
    endpoint = body["data"]["id"]
    ana.call("POST", f"{HOOKS}/{endpoint}/test")
    status, log = ana.call("GET", f"{HOOKS}/{endpoint}/deliveries")
    delivery = log["data"]["rows"][0]["id"]
    for method, path in (
        ("GET", f"{HOOKS}/{endpoint}/deliveries/{delivery}"),
        ("POST", f"{HOOKS}/{endpoint}/deliveries/{delivery}/resend"),
        ("GET", f"{HOOKS}/{endpoint}/deliveries/{uuid.uuid4()}"),
        ("GET", f"{HOOKS}/{uuid.uuid4()}/deliveries/{delivery}"),
    ):
        status, body = eve.call(method, path)
        assert (status, body["error"]["code"]) == (404, "NOT_FOUND"), path
        assert "secret reply" not in json.dumps(body) and hook.url not in json.dumps(body)
    status, body = ana.call("GET", f"{HOOKS}/{endpoint}/deliveries/not-a-uuid")
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    assert len(hook.requests) == 1  # nothing was resent

    # Revoked: the endpoint gets nothing more, a resend is refused with a reason.
    ana.call("DELETE", f"{HOOKS}/{endpoint}")
    status, body = ana.call("POST", f"{HOOKS}/{endpoint}/deliveries/{delivery}/resend")
    assert (status, body["error"]["code"]) == (409, "ENDPOINT_NOT_ACTIVE")
    assert len(hook.requests) == 1


def test_a_private_address_is_refused_with_the_setting_that_allows_it(
    db_url: str, store: Store, live_server_factory: Callable[..., LiveServer]
) -> None:
    """A server of its own: without SVC_WEBHOOK_ALLOW_PRIVATE (the production default)."""
    server = live_server_factory(db_url, env={"SVC_SITE_ORIGINS": ORIGIN})
    ana, _ = owner(store, server.url, "pro", "Ana Co")
    for url in ("https://127.0.0.1/hook", "https://localhost/hook", "http://example.com/h"):
        status, body = ana.call("POST", HOOKS, {"url": url})
        assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), url
        assert "SVC_WEBHOOK_ALLOW_PRIVATE=true" in body["error"]["hint"], url


# accounts: switching ---------------------------------------------------------------------


def keys_of(person: Person) -> set[str]:
    status, body = person.call("GET", f"{ME}/keys")
    assert status == 200, body
    return {k["prefix"] for k in body["data"]}


def current(person: Person) -> dict[str, Any]:
    status, body = person.call("GET", f"{ME}/accounts")
    assert status == 200, body
    [chosen] = [a for a in body["data"] if a["current"]]
    return dict(chosen)


def test_a_person_in_two_accounts_switches_and_cannot_switch_into_a_third(
    live: tuple[Store, LiveServer],
) -> None:
    store, server = live
    alpha_owner, alpha = owner(store, server.url, "pro", "Alpha Ltd")
    _, beta = owner(store, server.url, "team", "Beta Secret Corp")
    pat = Person(store, server.url, email("pat"))  # a first sign-in: Pat's own starter account
    own = current(pat)
    assert own["role"] == "owner" and own["plan"] == "starter"
    own_keys = keys_of(pat)
    alpha_keys = keys_of(alpha_owner)

    # Alpha invites Pat; accepting lands Pat in Alpha.
    status, body = alpha_owner.call("POST", f"{ME}/team", {"email": pat.email, "role": "member"})
    assert status == 200, body
    status, body = pat.call("POST", f"{ME}/invites/{body['data']['id']}/accept")
    assert status == 200, body
    assert current(pat)["id"] == alpha and current(pat)["name"] == "Alpha Ltd"
    assert keys_of(pat) == alpha_keys
    status, usage = pat.call("GET", f"{ME}/usage")
    assert (usage["data"]["plan"], usage["data"]["role"]) == ("pro", "member")
    status, page = pat.call("GET", "/dashboard")
    assert '<strong id="account-name">Alpha Ltd</strong>' in page
    assert 'id="account-switch"' in page

    # Switching back is a CSRF-checked write.
    for origin in (None, "https://evil.example"):
        status, body = pat.call("POST", f"{ME}/accounts/{own['id']}/switch", origin=origin)
        assert (status, body["error"]["code"]) == (403, "CSRF_REJECTED")
        assert current(pat)["id"] == alpha
    status, body = pat.call("POST", f"{ME}/accounts/{own['id']}/switch")
    assert status == 200 and body["data"]["current"] is True
    assert current(pat)["id"] == own["id"] and keys_of(pat) == own_keys
    status, usage = pat.call("GET", f"{ME}/usage")
    assert usage["data"]["plan"] == "starter"

    # An attacker's forged ids: an account that exists but is not Pat's, one that does
    # not exist: the same 404, nothing about the account, and nothing changes.
    answers = []
    for forged in (beta, str(uuid.uuid4())):
        status, body = pat.call("POST", f"{ME}/accounts/{forged}/switch")
        assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
        assert "Beta" not in json.dumps(body) and "team" not in body["error"]["message"]
        answers.append((body["error"]["message"], body["error"]["hint"]))
        assert current(pat)["id"] == own["id"] and keys_of(pat) == own_keys
    assert answers[0] == answers[1]
    status, body = pat.call("POST", f"{ME}/accounts/not-a-uuid/switch")
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    status, body = pat.call("GET", f"{ME}/accounts")
    assert {a["id"] for a in body["data"]} == {own["id"], alpha}

    # Removed from Alpha while it is current: Pat is back in their own account at once,
    # and cannot switch into Alpha any more.
    pat.call("POST", f"{ME}/accounts/{alpha}/switch")
    assert current(pat)["id"] == alpha
    status, team = alpha_owner.call("GET", f"{ME}/team")
    [member] = [m for m in team["members"] if m["email"] == pat.email]
    status, _ = alpha_owner.call("DELETE", f"{ME}/team/{member['id']}")
    assert status == 200
    assert current(pat)["id"] == own["id"] and keys_of(pat) == own_keys
    status, body = pat.call("POST", f"{ME}/accounts/{alpha}/switch")
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
