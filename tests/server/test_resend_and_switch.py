"""Issue 25 in process: who may resend a delivery and when, the limit resends share with
test sends, the once-per-event rule that spares only resends, the receiver's reply as
stored, and the choice of the account a person acts on."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client

from svc_core.accounts.plans import HIGHEST_PLAN_PRIORITY
from svc_server.delivery import attempt, sender
from svc_server.services.membership import primary_consumer
from svc_server.store import Store
from svc_server.store.account_rows import MemberConsumer
from tests.conftest import ORIGIN, Accounts, FakeClock, Receiver

HOOKS = "/api/auth/me/webhooks"


def owner_with_delivery(
    accounts: Accounts, receiver: Callable[..., Receiver]
) -> tuple[Client, str, str, Receiver]:
    """A pro owner's browser, an endpoint to a local receiver and one test delivery."""
    hook = receiver()
    email = f"{uuid.uuid4().hex[:8]}@example.com"
    accounts.consumer("pro", email=email)
    browser = accounts.browser(email)
    r = browser.post(HOOKS, json={"url": hook.url}, headers=ORIGIN)
    endpoint = r.get_json()["data"]["id"]
    assert browser.post(f"{HOOKS}/{endpoint}/test", headers=ORIGIN).status_code == 200
    [row] = browser.get(f"{HOOKS}/{endpoint}/deliveries").get_json()["data"]["rows"]
    return browser, endpoint, row["id"], hook


def test_a_member_reads_a_delivery_but_cannot_resend_it(
    hook_accounts: Accounts, receiver: Callable[..., Receiver]
) -> None:
    browser, endpoint, delivery, hook = owner_with_delivery(hook_accounts, receiver)
    member = f"m-{uuid.uuid4().hex[:8]}@example.com"
    r = browser.post("/api/auth/me/team", json={"email": member, "role": "member"}, headers=ORIGIN)
    invite = r.get_json()["data"]["id"]
    reader = hook_accounts.browser(member)
    assert reader.post(f"/api/auth/me/invites/{invite}/accept", headers=ORIGIN).status_code == 200
    seen = reader.get(f"{HOOKS}/{endpoint}/deliveries/{delivery}")
    assert seen.status_code == 200 and seen.get_json()["data"]["response_excerpt"] == "ok"
    r = reader.post(f"{HOOKS}/{endpoint}/deliveries/{delivery}/resend", headers=ORIGIN)
    assert (r.status_code, r.get_json()["error"]["code"]) == (403, "FORBIDDEN")
    assert len(hook.requests) == 1


def test_resends_share_the_test_send_limit(
    store: Store, make_app: Callable[..., Any], clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    accounts = Accounts(
        store, make_app(store, webhook_allow_private=True, webhook_test_sends_per_minute=3), clock
    )
    browser, endpoint, delivery, hook = owner_with_delivery(accounts, receiver)  # 1 of 3
    resend = f"{HOOKS}/{endpoint}/deliveries/{delivery}/resend"
    assert browser.post(resend, headers=ORIGIN).status_code == 200  # 2 of 3
    assert browser.post(f"{HOOKS}/{endpoint}/test", headers=ORIGIN).status_code == 200
    r = browser.post(resend, headers=ORIGIN)
    assert (r.status_code, r.get_json()["error"]["code"]) == (429, "RATE_LIMITED")
    assert "Retry-After" in r.headers
    assert len(hook.requests) == 3
    clock.advance(61)
    assert browser.post(resend, headers=ORIGIN).status_code == 200


def test_an_unfinished_delivery_is_not_resent(
    hook_accounts: Accounts, store: Store, receiver: Callable[..., Receiver]
) -> None:
    browser, endpoint, delivery, hook = owner_with_delivery(hook_accounts, receiver)
    with store.db.transaction() as tx:
        tx.execute("UPDATE deliveries SET status = 'pending' WHERE id = ?", (delivery,))
    r = browser.post(f"{HOOKS}/{endpoint}/deliveries/{delivery}/resend", headers=ORIGIN)
    assert (r.status_code, r.get_json()["error"]["code"]) == (409, "DELIVERY_NOT_FINISHED")
    assert len(hook.requests) == 1


def test_one_scheduled_delivery_per_event_and_endpoint_but_any_number_of_resends(
    hook_accounts: Accounts, store: Store, receiver: Callable[..., Receiver]
) -> None:
    _, _, delivery, _ = owner_with_delivery(hook_accounts, receiver)
    with store.db.transaction(write=False) as tx:
        original = tx.fetchone("SELECT * FROM deliveries WHERE id = ?", (delivery,))
    assert original is not None

    def row(**changes: Any) -> dict[str, Any]:
        base = {
            k: original[k] for k in ("endpoint_id", "event_id", "event_type", "created_at", "seq")
        }
        return {**base, "id": str(uuid.uuid4()), "status": "pending", **changes}

    with store.db.transaction() as tx:
        assert store.webhooks.enqueue(tx, row(trigger="scheduled")) is False
        assert store.webhooks.enqueue(tx, row(trigger="resend", resend_of=delivery)) is True
        assert store.webhooks.enqueue(tx, row(trigger="resend", resend_of=delivery)) is True


@given(st.text(max_size=3000))
def test_the_stored_reply_is_a_prefix_without_nul(body: str) -> None:
    result = sender.SendResult(
        ok=True, http_status=200, duration_ms=1, error=None, response_excerpt=body, address=None
    )
    stored = attempt.reply_excerpt(result)
    if not body:
        assert stored is None
        return
    assert stored is not None and "\x00" not in stored
    assert len(stored) == min(len(body), attempt.RESPONSE_EXCERPT)
    assert stored == body[: attempt.RESPONSE_EXCERPT].replace("\x00", "\ufffd")


def member_consumer(consumer_id: str, plan: str, chosen: int) -> MemberConsumer:
    """A membership row as ``active_consumers_of_user`` returns it."""
    return MemberConsumer(
        id=consumer_id,
        plan=plan,
        chosen=chosen,
        company_name=None,
        monthly_quota_override=None,
        rate_limit_override=None,
        subscription_status=None,
        trial_ends_at=None,
        founding_member=0,
        trial_will_end_sent_for=None,
        status="active",
        created_at=0,
        role="member",
        owner_email=None,
    )


consumer_rows = st.lists(
    st.builds(
        member_consumer,
        st.uuids().map(str),
        st.sampled_from(HIGHEST_PLAN_PRIORITY),
        st.sampled_from((0, 1)),
    ),
    max_size=6,
    unique_by=lambda c: c.id,
)


@given(consumer_rows)
def test_the_current_account_is_the_chosen_membership_else_the_highest_plan(
    rows: list[MemberConsumer],
) -> None:
    picked = primary_consumer(rows)
    if not rows:
        assert picked is None
        return
    assert picked is not None and any(picked is r for r in rows)  # only ever a membership
    chosen = [r for r in rows if r.chosen]
    if chosen:
        assert picked is chosen[0]
    else:
        rank = HIGHEST_PLAN_PRIORITY.index
        assert rank(picked.plan) == min(rank(r.plan) for r in rows)
