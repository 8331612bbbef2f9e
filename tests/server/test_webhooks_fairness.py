"""The worker is fair across tenants (issue 15, item 3): one tenant's deliveries to
never-answering endpoints do not hold another tenant's event back, with the real worker
loop (as ``svc worker`` runs it) and local loopback listeners."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from svc_core.webhooks import events as core_events
from svc_server.delivery.worker import Worker
from svc_server.runtime.deps import new_id
from svc_server.services import consumers, webhooks
from svc_server.services import events as event_service
from svc_server.store import Store
from svc_server.store.webhooks import fair_pick
from tests.conftest import Receiver


class DeadListener:
    """A loopback TCP listener that accepts every connection and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.held: list[socket.socket] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(2)
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def dead() -> Iterator[DeadListener]:
    listener = DeadListener()
    yield listener
    listener.stop()


def owner(store: Store, name: str) -> tuple[str, str]:
    """A pro consumer and its owner: (consumer_id, user_id)."""
    email = f"{name}-{uuid.uuid4().hex[:6]}@example.com"
    out = consumers.create_consumer(
        store, plan="pro", now=time.time(), entropy=os.urandom(16), email=email, ids=new_id
    )
    with store.db.transaction(write=False) as tx:
        user = store.accounts.get_user_by_email(tx, email)
    assert user is not None
    return str(out.consumer_id), str(user.id)


def register(store: Store, user_id: str, url: str) -> None:
    webhooks.create_endpoint(
        store,
        user_id,
        {"url": url, "events": ["key.revoked"]},
        time.time(),
        os.urandom(32),
        ids=new_id,
        allow_private=True,
    )


def publish_key_revoked(store: Store, consumer_id: str) -> None:
    now = time.time()
    event = core_events.key_revoked(
        key_id=str(uuid.uuid4()), prefix="svc_pk_live_ab12", revoked_at=now, actor="admin", now=now
    )
    with store.db.transaction() as tx:
        event_service.publish(store, tx, consumer_id, event, now)


def test_another_tenants_event_is_not_stuck_behind_48_dead_deliveries(
    store: Store, dead: DeadListener, receiver: Callable[..., Receiver]
) -> None:
    """48 deliveries of one tenant to 16 never-answering endpoints are queued before
    another tenant's event; the worker delivers the other event within a few seconds
    (before: after all 48, about 30 s)."""
    hook = receiver()
    attacker, attacker_user = owner(store, "attacker")
    other, other_user = owner(store, "other")
    for _ in range(16):
        register(store, attacker_user, dead.url)
    register(store, other_user, hook.url)
    for _ in range(3):
        publish_key_revoked(store, attacker)
    publish_key_revoked(store, other)

    worker = Worker(store, allow_private=True, concurrency=8)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop, 0.2), daemon=True)
    started = time.monotonic()
    thread.start()
    try:
        deadline = started + 40
        while not hook.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        waited = time.monotonic() - started
        with store.db.transaction(write=False) as tx:
            # The attacker's sends only: the other tenant's own delivery may still be
            # "sending" (its answer not yet recorded) when its request has arrived.
            row = tx.fetchone(
                "SELECT COUNT(*) AS n FROM deliveries d "
                "JOIN webhook_endpoints e ON e.id = d.endpoint_id "
                "WHERE d.status IN ('claimed', 'sending') AND e.consumer_id = ?",
                (attacker,),
            )
        in_flight = int(row["n"]) if row else 0
    finally:
        stop.set()
        dead.stop()  # the sends in flight end now
        thread.join(15)
    assert hook.requests, "the other tenant's event was never delivered"
    assert waited < 3.0, f"the other tenant's event waited {waited:.1f} s"
    assert in_flight <= 4  # the attacker holds half of the worker's 8 slots


def row(i: int, consumer: str) -> dict[str, object]:
    return {"id": f"d{i}", "seq": i, "consumer_id": consumer}


def test_fair_pick_takes_consumers_in_turn_and_caps_each() -> None:
    candidates = [row(i, "a") for i in range(6)] + [row(10, "b"), row(11, "b"), row(12, "c")]
    assert fair_pick(candidates, [], 5, None) == ["d0", "d10", "d12", "d1", "d11"]
    assert fair_pick(candidates, [], 9, 2) == ["d0", "d10", "d12", "d1", "d11"]
    busy = [{"consumer_id": "a", "in_flight": 3, "mine": 1}]
    assert fair_pick(candidates, busy, 4, 2) == ["d10", "d12", "d11", "d0"]
    assert fair_pick(candidates, busy, 9, 1) == ["d10", "d12"]
    assert fair_pick([], busy, 4, 2) == []
