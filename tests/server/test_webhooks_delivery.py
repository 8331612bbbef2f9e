"""The delivery worker against real local receivers: the request, outcomes, auto-disable,
SSRF at send time, ordering, and what a crashed worker leaves behind."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import threading
import uuid
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from svc_core.errors import InvalidParams
from svc_core.webhooks import events as core_events
from svc_core.webhooks import signing
from svc_server.delivery import attempt as delivery
from svc_server.delivery.worker import STOPPED_DURING_SEND, Worker
from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.services import events as event_service
from svc_server.services import webhooks
from svc_server.store import Store
from tests.conftest import FakeClock, Receiver

PUBLIC_IP = "93.184.216.34"


def owner(store: Store, clock: FakeClock, email: str | None = None) -> tuple[str, str]:
    """A pro consumer and its owner: (consumer_id, user_id)."""
    email = email or f"{uuid.uuid4().hex[:8]}@example.com"
    out = consumer_service.create_consumer(
        store, plan="pro", now=clock(), entropy=os.urandom(16), email=email, ids=new_id
    )
    with store.db.transaction(write=False) as tx:
        user = store.accounts.get_user_by_email(tx, email)
    assert user is not None
    return str(out.consumer_id), str(user.id)


def endpoint(
    store: Store,
    clock: FakeClock,
    user_id: str,
    url: str,
    events: list[str] | None = None,
    *,
    allow_private: bool = True,
    resolver: Callable[[str, int], list[str]] | None = None,
) -> webhooks.CreatedEndpoint:
    body: dict[str, Any] = {"url": url}
    if events is not None:
        body["events"] = events
    return webhooks.create_endpoint(
        store,
        user_id,
        body,
        clock(),
        os.urandom(32),
        allow_private=allow_private,
        resolver=resolver,
        ids=new_id,
    )


def publish_key_revoked(store: Store, consumer_id: str, now: float) -> dict[str, Any]:
    event = core_events.key_revoked(
        key_id=str(uuid.uuid4()),
        prefix="svc_pk_live_ab12",
        revoked_at=now,
        actor="admin",
        now=now,
    )
    with store.db.transaction() as tx:
        event_service.publish(store, tx, consumer_id, event, now)
    return event


def delivery_rows(store: Store, endpoint_id: str) -> list[dict[str, Any]]:
    with store.db.transaction(write=False) as tx:
        return tx.fetchall(
            "SELECT * FROM deliveries WHERE endpoint_id = ? ORDER BY seq", (endpoint_id,)
        )


def endpoint_state(store: Store, endpoint_id: str) -> dict[str, Any]:
    with store.db.transaction(write=False) as tx:
        row = store.webhooks.get_endpoint(tx, endpoint_id)
    assert row is not None
    return attrs.asdict(row)


def test_delivery_request_headers_body_and_signature(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    event = publish_key_revoked(store, consumer_id, clock())
    clock.advance(42)  # the signature is made when sending, not when the event happened
    sent = Worker(store, allow_private=True, clock=clock).run_once()

    assert sent == 1
    [request] = hook.requests
    assert request.path == "/hook"
    assert request.body == core_events.serialize(event)
    headers = request.headers
    assert headers["X-Svc-Event"] == "key.revoked"
    assert headers["X-Svc-Event-Id"] == event["id"]
    assert headers["User-Agent"] == "Svc-Webhooks/1.0"
    assert headers["Content-Type"] == "application/json"
    match = re.fullmatch(r"t=(\d+),v1=([0-9a-f]{64})", headers["X-Svc-Signature"])
    assert match is not None
    assert int(match.group(1)) == int(clock())
    key = bytes.fromhex(ep.secret_plaintext.removeprefix("whsec_"))
    expected = hmac.new(key, match.group(1).encode() + b"." + request.body, hashlib.sha256)
    assert hmac.compare_digest(expected.hexdigest(), match.group(2))
    assert (
        signing.verify(request.body, headers["X-Svc-Signature"], ep.secret_plaintext, now=clock())
        == event
    )

    [row] = delivery_rows(store, ep.id)
    assert row["status"] == "delivered"
    assert row["http_status"] == 200
    assert row["attempt_count"] == 1
    assert row["error_message"] is None
    assert row["duration_ms"] >= 0


def test_server_error_is_failed_with_an_excerpt_and_counted(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver(status=500, reply=b"boom\x00 database\n down")
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=True, clock=clock).run_once()

    [row] = delivery_rows(store, ep.id)
    assert row["status"] == "failed"
    assert row["http_status"] == 500
    assert row["error_message"] == "HTTP 500: boom database down"
    assert endpoint_state(store, ep.id)["consecutive_failures"] == 1
    hook.status = 204
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=True, clock=clock).run_once()
    assert endpoint_state(store, ep.id)["consecutive_failures"] == 0


def test_redirect_is_a_failure_and_is_not_followed(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    elsewhere = receiver()
    hook = receiver(status=307)
    hook.headers = {"Location": elsewhere.url}
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=True, clock=clock).run_once()
    [row] = delivery_rows(store, ep.id)
    assert (row["status"], row["http_status"]) == ("failed", 307)
    assert "redirect" in row["error_message"]
    assert len(hook.requests) == 1
    assert elsewhere.requests == []


def test_receiver_slower_than_the_deadline_is_failed(
    sqlite_store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    """SPEC's deadline is 5 s, the worker's default; this worker is given 0.5 s, so the
    receiver that answers after 6 s outlives it without the test waiting 5 s."""
    store = sqlite_store
    assert Worker(store).timeout == delivery.DELIVERY_TIMEOUT == 5.0
    hook = receiver(delay=6.0)
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=True, clock=clock, timeout=0.5).run_once()
    [row] = delivery_rows(store, ep.id)
    assert row["status"] == "failed"
    assert row["http_status"] is None
    assert row["error_message"].startswith("timeout after 0.5s")
    assert 490 <= row["duration_ms"] < 1500
    assert endpoint_state(store, ep.id)["consecutive_failures"] == 1
    assert len(hook.requests) == 1


def test_eleventh_consecutive_failure_disables_and_later_events_are_not_sent(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver(status=503)
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    for _ in range(12):
        publish_key_revoked(store, consumer_id, clock())
        clock.advance(1)
    Worker(store, allow_private=True, clock=clock).run_once()

    assert len(hook.requests) == 11
    state = endpoint_state(store, ep.id)
    assert state["status"] == "disabled_after_failure"
    assert state["consecutive_failures"] == 11
    assert state["disabled_at"] == int(clock())
    rows = delivery_rows(store, ep.id)
    assert [r["attempt_count"] for r in rows] == [1] * 11 + [0]
    assert rows[-1]["status"] == "failed"
    assert rows[-1]["error_message"] == delivery.NOT_SENT_DISABLED
    # a disabled endpoint is not queued for new events
    publish_key_revoked(store, consumer_id, clock())
    assert len(delivery_rows(store, ep.id)) == 12


def test_failures_below_the_limit_keep_the_endpoint_active(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver(status=500)
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    for _ in range(10):
        publish_key_revoked(store, consumer_id, clock())
        clock.advance(1)
    Worker(store, allow_private=True, clock=clock).run_once()
    state = endpoint_state(store, ep.id)
    assert (state["status"], state["consecutive_failures"]) == ("active", 10)


def test_event_filter_and_wildcard(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    only_rotated, everything = receiver(), receiver()
    consumer_id, user_id = owner(store, clock)
    endpoint(store, clock, user_id, only_rotated.url, ["key.rotated"])
    endpoint(store, clock, user_id, everything.url)
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=True, clock=clock).run_once()
    assert only_rotated.requests == []
    assert len(everything.requests) == 1


def test_per_endpoint_order_is_creation_order(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hooks = [receiver(), receiver(), receiver()]
    consumer_id, user_id = owner(store, clock)
    for hook in hooks:
        endpoint(store, clock, user_id, hook.url)
    published = [publish_key_revoked(store, consumer_id, clock())["id"] for _ in range(6)]
    Worker(store, allow_private=True, clock=clock, concurrency=2).run_once()
    for hook in hooks:
        assert [e["id"] for e in hook.events()] == published


def test_two_workers_at_once_send_each_delivery_exactly_once(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hooks = [receiver() for _ in range(4)]
    consumer_id, user_id = owner(store, clock)
    for hook in hooks:
        endpoint(store, clock, user_id, hook.url)
    published = [publish_key_revoked(store, consumer_id, clock())["id"] for _ in range(5)]
    workers = [Worker(store, allow_private=True, clock=clock, concurrency=3) for _ in range(3)]
    threads = [threading.Thread(target=w.run_once) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for hook in hooks:
        assert [e["id"] for e in hook.events()] == published


def test_revoking_settles_queued_deliveries_unsent(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    publish_key_revoked(store, consumer_id, clock())
    webhooks.revoke_endpoint(store, user_id, ep.id, clock())
    Worker(store, allow_private=True, clock=clock).run_once()
    assert hook.requests == []
    [row] = delivery_rows(store, ep.id)
    assert (row["status"], row["error_message"], row["attempt_count"]) == (
        "failed",
        delivery.NOT_SENT_REVOKED,
        0,
    )


# crash safety --------------------------------------------------------------------------------


def test_claim_of_a_crashed_worker_is_sent_later_exactly_once(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    publish_key_revoked(store, consumer_id, clock())
    crashed = Worker(store, allow_private=True, clock=clock, worker_id="crashed")
    [job] = crashed.claim(8)  # ... and the process dies before sending

    healthy = Worker(store, allow_private=True, clock=clock)
    assert healthy.run_once() == 0  # the claim is fresh: maybe that worker is only slow
    clock.advance(61)
    assert healthy.run_once() == 1
    assert crashed.deliver(job) is None  # the old claim is gone: no second send
    assert len(hook.requests) == 1
    [row] = delivery_rows(store, ep.id)
    assert row["status"] == "delivered"


def test_send_interrupted_by_a_crash_is_failed_and_never_resent(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)
    publish_key_revoked(store, consumer_id, clock())
    crashed = Worker(store, allow_private=True, clock=clock, worker_id="crashed")
    [job] = crashed.claim(8)
    with store.db.transaction() as tx:  # it started sending, then the process died
        assert store.webhooks.mark_sending(tx, job.id, "crashed", int(clock()))

    clock.advance(61)
    maintenance = Worker(store, allow_private=True, clock=clock).maintain()
    assert (maintenance.released, maintenance.failed) == (0, 1)
    assert Worker(store, allow_private=True, clock=clock).run_once() == 0
    assert hook.requests == []
    [row] = delivery_rows(store, ep.id)
    assert (row["status"], row["error_message"]) == ("failed", STOPPED_DURING_SEND)
    assert endpoint_state(store, ep.id)["consecutive_failures"] == 0


def test_inline_worker_thread_delivers_and_stops(
    store: Store,
    clock: FakeClock,
    receiver: Callable[..., Receiver],
    make_app: Callable[..., Any],
) -> None:
    from svc_server.delivery.worker import start_inline

    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    endpoint(store, clock, user_id, hook.url)
    app = make_app(store, webhook_allow_private=True)
    inline = start_inline(app.store, app.config, clock=app.clock, interval=0.05)
    try:
        event = publish_key_revoked(store, consumer_id, clock())
        for _ in range(200):
            if hook.requests:
                break
            threading.Event().wait(0.02)
    finally:
        inline.stop()
    assert not inline.thread.is_alive()
    assert [e["id"] for e in hook.events()] == [event["id"]]


# SSRF at send time ------------------------------------------------------------------------------


def test_loopback_target_is_refused_when_the_development_setting_is_off(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    ep = endpoint(store, clock, user_id, hook.url)  # registered while it was on
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=False, clock=clock).run_once()
    assert hook.requests == []
    [row] = delivery_rows(store, ep.id)
    assert row["status"] == "failed"
    assert row["error_message"].startswith("refused:")
    assert row["http_status"] is None


class Rebinding:
    """A DNS answer that changes: public at registration, then ``later``."""

    def __init__(self, later: list[str]) -> None:
        self.later = later
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return [PUBLIC_IP] if self.calls == 1 else self.later


@pytest.mark.parametrize(
    "later",
    [
        ["127.0.0.1"],
        [PUBLIC_IP, "127.0.0.1"],
        ["10.0.0.1"],
        ["169.254.169.254"],
        ["::1"],
        ["fd00::5"],
    ],
)
def test_host_that_resolves_differently_at_send_time_is_refused(
    sqlite_store: Store, clock: FakeClock, receiver: Callable[..., Receiver], later: list[str]
) -> None:
    store = sqlite_store
    hook = receiver()
    consumer_id, user_id = owner(store, clock)
    dns = Rebinding(later)
    url = f"https://rebind.example.com:{hook.port}/hook"
    ep = endpoint(store, clock, user_id, url, allow_private=False, resolver=dns)
    assert dns.calls == 1
    publish_key_revoked(store, consumer_id, clock())
    Worker(store, allow_private=False, clock=clock, resolver=dns).run_once()
    assert dns.calls == 2
    assert hook.requests == []
    [row] = delivery_rows(store, ep.id)
    assert row["status"] == "failed"
    assert row["error_message"].startswith("refused: The webhook url resolves to a non-public")


def test_registration_refuses_a_host_resolving_to_a_private_address(
    store: Store, clock: FakeClock
) -> None:
    _, user_id = owner(store, clock)
    with pytest.raises(InvalidParams, match="non-public"):
        endpoint(
            store,
            clock,
            user_id,
            "https://hooks.example.com/x",
            allow_private=False,
            resolver=lambda host, port: ["10.0.0.8"],
        )
    with store.db.transaction(write=False) as tx:
        assert tx.fetchall("SELECT id FROM webhook_endpoints") == []
