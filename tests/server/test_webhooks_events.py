"""Event sources end to end: quota thresholds (one process and several), key rotation and
revocation, subscription relays (library and CLI) and the trial-ending job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from svc_core.errors import InvalidParams, NotFound
from svc_core.webhooks import signing
from svc_server.app import SvcApp
from svc_server.cli import main
from svc_server.delivery.worker import Worker
from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.services import events as event_service
from svc_server.services import keys as key_service
from svc_server.services import webhooks
from svc_server.store import Store
from svc_server.store.account_rows import Consumer
from tests.conftest import ORIGIN, ROOT, Accounts, FakeClock, Receiver

DATA = "/api/v1/real-estate/dimensions"
DAY = 24 * 3600


def iso(ts: float) -> str:
    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def month_start(ts: float) -> datetime:
    at = datetime.fromtimestamp(ts, UTC)
    return at.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def user_of(store: Store, email: str) -> str:
    with store.db.transaction(write=False) as tx:
        user = store.accounts.get_user_by_email(tx, email)
    assert user is not None
    return str(user.id)


def consumer_with_endpoints(
    store: Store, clock: FakeClock, urls: list[str], **consumer: Any
) -> tuple[str, str, str, list[dict[str, Any]]]:
    """A pro consumer with endpoints: (consumer_id, api_key, user_id, endpoints)."""
    email = f"{uuid.uuid4().hex[:8]}@example.com"
    out = consumer_service.create_consumer(
        store, plan="pro", now=clock(), entropy=os.urandom(16), email=email, ids=new_id, **consumer
    )
    user_id = user_of(store, email)
    made = [
        webhooks.create_endpoint(
            store, user_id, {"url": url}, clock(), os.urandom(32), allow_private=True, ids=new_id
        )
        for url in urls
    ]
    return str(out.consumer_id), str(out.api_key), user_id, made


def deliveries_by_type(store: Store, endpoint_id: str) -> dict[str, int]:
    with store.db.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT event_type, COUNT(*) AS n FROM deliveries WHERE endpoint_id = ? "
            "GROUP BY event_type",
            (endpoint_id,),
        )
    return {r["event_type"]: int(r["n"]) for r in rows}


def deliver(store: Store, clock: FakeClock) -> int:
    return Worker(store, allow_private=True, clock=clock).run_once()


# quota ------------------------------------------------------------------------------------------


def test_quota_events_fire_once_per_threshold_and_month(
    store: Store, hook_app: SvcApp, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, key, _, [ep] = consumer_with_endpoints(store, clock, [hook.url], monthly_quota=10)
    client = Client(hook_app)
    codes = [client.get(DATA, headers={"X-API-Key": key}).status_code for _ in range(12)]
    assert codes == [200] * 10 + [402] * 2
    assert deliver(store, clock) == 2

    month = month_start(clock())
    period = month.strftime("%Y-%m")
    warning, exceeded = hook.events()
    assert warning == {
        "id": f"evt_quota_warning_80pct_{consumer_id}_{period}",
        "type": "quota.warning_80pct",
        "created": int(clock()),
        "data": {
            "usage": {
                "current": 8,
                "limit": 10,
                "percent": 80.0,
                "period_starts_at": iso(month.timestamp()),
            }
        },
    }
    assert exceeded["id"] == f"evt_quota_exceeded_{consumer_id}_{period}"
    assert exceeded["type"] == "quota.exceeded"
    assert exceeded["data"]["usage"]["current"] == 10
    assert exceeded["data"]["usage"]["percent"] == 100.0
    for request in hook.requests:
        signing.verify(
            request.body, request.headers["X-Svc-Signature"], ep.secret_plaintext, now=clock()
        )

    # a new UTC month resets the markers
    next_month = month.replace(year=month.year + month.month // 12, month=month.month % 12 + 1)
    clock.now = next_month.timestamp() + 60
    codes = [client.get(DATA, headers={"X-API-Key": key}).status_code for _ in range(10)]
    assert codes == [200] * 10
    assert deliver(store, clock) == 2
    later = month_start(clock()).strftime("%Y-%m")
    assert later != period
    assert [e["id"] for e in hook.events()[2:]] == [
        f"evt_quota_warning_80pct_{consumer_id}_{later}",
        f"evt_quota_exceeded_{consumer_id}_{later}",
    ]


def test_one_call_can_cross_both_thresholds(
    store: Store, hook_app: SvcApp, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    _, key, _, [ep] = consumer_with_endpoints(store, clock, [hook.url], monthly_quota=2)
    client = Client(hook_app)
    assert client.get(DATA, headers={"X-API-Key": key}).status_code == 200
    assert deliveries_by_type(store, ep.id) == {}
    assert client.get(DATA, headers={"X-API-Key": key}).status_code == 200  # 80% and 100%
    assert deliveries_by_type(store, ep.id) == {"quota.warning_80pct": 1, "quota.exceeded": 1}
    deliver(store, clock)
    assert [(e["type"], e["data"]["usage"]["current"]) for e in hook.events()] == [
        ("quota.warning_80pct", 2),
        ("quota.exceeded", 2),
    ]


CHILD = r"""
import json, pathlib, sys, time
from werkzeug.test import Client
from svc_server.app import create_app
from svc_server.config import Config

url, key, calls, folder, index = sys.argv[1:6]
folder = pathlib.Path(folder)
app = create_app(Config(database_url=url, secret_key="s" * 32), migrate=False)
client = Client(app)
client.get("/api/status")  # warm up: connections, imports
(folder / f"ready-{index}").touch()
while not (folder / "go").exists():
    time.sleep(0.002)
codes = [
    client.get("/api/v1/real-estate/dimensions", headers={"X-API-Key": key}).status_code
    for _ in range(int(calls))
]
app.store.close()
print(json.dumps(codes))
"""


@pytest.mark.slow
def test_processes_crossing_the_thresholds_together_fire_each_once(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver], tmp_path: Path
) -> None:
    hooks = [receiver(), receiver()]
    consumer_id, key, _, endpoints = consumer_with_endpoints(
        store, clock, [h.url for h in hooks], monthly_quota=10
    )
    processes, calls = 3, 6
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, store.db.url, key, str(calls), str(tmp_path), str(i)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < processes and time.monotonic() < deadline:
        assert all(c.poll() is None for c in children), [c.communicate() for c in children]
        time.sleep(0.01)
    (tmp_path / "go").touch()
    codes: list[int] = []
    for child in children:
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
        codes += json.loads(out)
    assert sorted(codes) == [200] * 10 + [402] * 8

    for ep in endpoints:
        assert deliveries_by_type(store, ep.id) == {
            "quota.warning_80pct": 1,
            "quota.exceeded": 1,
        }
    with store.db.transaction(write=False) as tx:
        events = tx.fetchall("SELECT id, type FROM events WHERE consumer_id = ?", (consumer_id,))
    assert sorted(e["type"] for e in events) == ["quota.exceeded", "quota.warning_80pct"]
    deliver(store, clock)
    for hook in hooks:
        assert sorted(e["type"] for e in hook.events()) == [
            "quota.exceeded",
            "quota.warning_80pct",
        ]
        for event in hook.events():
            usage = event["data"]["usage"]
            assert usage["limit"] == 10
            assert (8 if event["type"] == "quota.warning_80pct" else 10) <= usage["current"] <= 10


# keys ----------------------------------------------------------------------------------------


def test_key_rotation_and_revocation_publish_their_events(
    hook_accounts: Accounts, store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    hook_accounts.consumer("pro", email="keys@example.com")
    browser = hook_accounts.browser("keys@example.com")
    created = browser.post(
        "/api/auth/me/webhooks",
        json={"url": hook.url, "events": ["key.rotated", "key.revoked"]},
        headers=ORIGIN,
    ).get_json()["data"]
    [old] = browser.get("/api/auth/me/keys").get_json()["data"]
    rotated = browser.post(
        f"/api/auth/me/keys/{old['id']}/rotate", json={"grace_period_seconds": 3600}, headers=ORIGIN
    ).get_json()["data"]
    rotated_at = int(clock())
    clock.advance(30)
    assert (
        browser.post(f"/api/auth/me/keys/{rotated['id']}/revoke", headers=ORIGIN).status_code == 200
    )
    revoked_at = int(clock())
    clock.advance(5)
    key_service.revoke_key(store, old["id"], clock(), actor="admin")  # svc key revoke
    assert deliver(store, clock) == 3

    first, second, third = hook.events()
    assert first == {
        "id": f"evt_key_rotated_{old['id']}_{rotated_at}",
        "type": "key.rotated",
        "created": rotated_at,
        "data": {
            "key": {"id": old["id"], "prefix": old["prefix"]},
            "actor": "self",
            "event_at": iso(rotated_at),
            "new_key_id": rotated["id"],
            "new_key_prefix": rotated["prefix"],
            "grace_until": iso(rotated_at + 3600),
        },
    }
    assert second == {
        "id": f"evt_key_revoked_{rotated['id']}_{revoked_at}",
        "type": "key.revoked",
        "created": revoked_at,
        "data": {
            "key": {"id": rotated["id"], "prefix": rotated["prefix"]},
            "actor": "self",
            "event_at": iso(revoked_at),
            "revoked_at": iso(revoked_at),
        },
    }
    assert third["data"]["actor"] == "admin"
    assert third["data"]["key"]["id"] == old["id"]
    for request in hook.requests:
        signing.verify(
            request.body,
            request.headers["X-Svc-Signature"],
            created["secret_plaintext"],
            now=clock(),
        )


# subscriptions ------------------------------------------------------------------------------


def consumer_row(store: Store, consumer_id: str) -> Consumer:
    row = store.accounts.get_consumer(consumer_id)
    assert row is not None
    return row


def test_relay_updates_the_consumer_and_publishes_once_per_processor_event(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, _, _, _ = consumer_with_endpoints(store, clock, [hook.url])
    subscription = {
        "id": "sub_1PqR2sT3uV4w",
        "status": "trialing",
        "current_period_end": "2026-10-15T00:00:00Z",
        "trial_end": 1_791_763_200,
        "customer": "cus_ignored",
    }
    for _ in range(2):  # the processor delivered its event twice
        out = event_service.relay_subscription(
            store, consumer_id, "updated", subscription, clock(), event_id="evt_1PqR9xY8zA7b"
        )
    assert out == {
        "event_id": "evt_1PqR9xY8zA7b",
        "event_type": "subscription.updated",
        "queued": 0,
    }
    row = consumer_row(store, consumer_id)
    assert (row.subscription_status, row.trial_ends_at) == ("trialing", 1_791_763_200)
    assert deliver(store, clock) == 1
    [event] = hook.events()
    assert event == {
        "id": "evt_1PqR9xY8zA7b",
        "type": "subscription.updated",
        "created": int(clock()),
        "data": {
            "subscription": {
                "id": "sub_1PqR2sT3uV4w",
                "status": "trialing",
                "current_period_end": "2026-10-15T00:00:00Z",
                "trial_end": iso(1_791_763_200),
            }
        },
    }

    out = event_service.relay_subscription(
        store,
        consumer_id,
        "cancelled",
        {"id": "sub_1PqR2sT3uV4w", "status": "canceled", "current_period_end": None},
        clock(),
    )
    assert out["queued"] == 1
    assert consumer_row(store, consumer_id).subscription_status == "canceled"
    deliver(store, clock)
    cancelled = hook.events()[1]
    assert cancelled["id"] == f"evt_subscription_cancelled_sub_1PqR2sT3uV4w_{int(clock())}"
    assert cancelled["data"]["subscription"]["canceled_at"] == iso(clock())
    assert cancelled["data"]["subscription"]["cancel_at_period_end"] is False


@pytest.mark.parametrize(
    ("kind", "subscription"),
    [
        ("renewed", {"id": "sub_1", "status": "active"}),
        ("updated", {"id": "sub_1", "status": "incomplete"}),
        ("updated", {"status": "active"}),
        ("updated", {"id": "sub 1", "status": "active"}),
        ("updated", {"id": "sub_1", "status": "active", "current_period_end": "tomorrow"}),
        ("updated", {"id": "sub_1", "status": "active", "trial_end": "2026-10-01T00:00:00"}),
        ("updated", {"id": "sub_1", "status": "active", "trial_end": True}),
        ("cancelled", {"id": "sub_1", "status": "canceled", "cancel_at_period_end": "yes"}),
    ],
)
def test_relay_refuses_bad_input_and_changes_nothing(
    sqlite_store: Store, clock: FakeClock, kind: str, subscription: dict[str, Any]
) -> None:
    consumer_id, _, _, _ = consumer_with_endpoints(sqlite_store, clock, [])
    with pytest.raises(InvalidParams):
        event_service.relay_subscription(sqlite_store, consumer_id, kind, subscription, clock())
    assert consumer_row(sqlite_store, consumer_id).subscription_status is None
    with sqlite_store.db.transaction(write=False) as tx:
        assert tx.fetchall("SELECT id FROM events") == []


def test_relay_to_an_unknown_consumer_is_not_found(sqlite_store: Store, clock: FakeClock) -> None:
    with pytest.raises(NotFound):
        event_service.relay_subscription(
            sqlite_store, str(uuid.uuid4()), "updated", {"id": "s", "status": "active"}, clock()
        )


def test_relay_command(
    store: Store, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    consumer_id, _, _, [ep] = consumer_with_endpoints(store, clock, ["http://127.0.0.1:9/hook"])
    url = ["--database-url", store.db.url]
    relay = ["subscription", "relay", "--consumer", consumer_id, *url]
    updated = ["--type", "updated", "--subscription-id", "sub_9", "--status", "past_due"]
    code = main([*relay, *updated, "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["event_type"], out["queued"]) == ("subscription.updated", 1)
    assert consumer_row(store, consumer_id).subscription_status == "past_due"

    source = tmp_path / "sub.json"
    source.write_text(
        json.dumps({"id": "sub_9", "status": "active", "cancel_at_period_end": True}),
        encoding="utf-8",
    )
    cancelled = ["--type", "cancelled", "--json-file", str(source), "--event-id", "evt_cancel_1"]
    code = main([*relay, *cancelled])
    assert code == 0
    assert "subscription.cancelled evt_cancel_1: 1 delivery queued\n" in capsys.readouterr().out
    assert deliveries_by_type(store, ep.id) == {
        "subscription.updated": 1,
        "subscription.cancelled": 1,
    }
    bad = [*relay, "--type", "updated"]
    assert main([*bad, "--subscription-id", "s", "--status", "nope"]) == 2
    assert main(["subscription", "relay", "--consumer", "x", "--type", "updated", *url]) == 2
    assert "error" in capsys.readouterr().err


def test_worker_command_once(
    store: Store,
    clock: FakeClock,
    receiver: Callable[..., Receiver],
    capsys: pytest.CaptureFixture[str],
) -> None:
    hook = receiver()
    consumer_id, _, _, _ = consumer_with_endpoints(store, clock, [hook.url])
    event_service.relay_subscription(
        store, consumer_id, "updated", {"id": "sub_2", "status": "active"}, clock()
    )
    args = ["worker", "--once", "--database-url", store.db.url, "--webhook-allow-private", "true"]
    assert main(args) == 0
    assert "svc: worker sent 1 delivery\n" in capsys.readouterr().out
    assert [e["type"] for e in hook.events()] == ["subscription.updated"]


def test_worker_command_hands_the_worker_the_trial_job(
    store: Store, receiver: Callable[..., Receiver], capsys: pytest.CaptureFixture[str]
) -> None:
    """``delivery/`` imports no service: ``svc worker`` passes the trial notices in, so a
    trial ending within 3 days is announced by the command's worker."""
    hook = receiver()
    clock = FakeClock(time.time())
    consumer_id, _, _, _ = consumer_with_endpoints(store, clock, [hook.url])
    with store.db.transaction() as tx:
        store.accounts.update_consumer(tx, consumer_id, {"trial_ends_at": int(clock()) + DAY})
    assert Worker(store, allow_private=True, clock=clock).maintain().trial_notices == 0
    args = ["worker", "--once", "--database-url", store.db.url, "--webhook-allow-private", "true"]
    assert main(args) == 0
    assert "svc: worker sent 1 delivery\n" in capsys.readouterr().out
    assert [e["type"] for e in hook.events()] == ["subscription.trial_will_end"]


def test_serve_hands_the_inline_worker_the_trial_job(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from svc_server.commands import core
    from svc_server.config import Config

    started: list[dict[str, Any]] = []
    monkeypatch.setattr(core, "start_inline", lambda *a, **kw: started.append(kw))
    core.served_app(Config(database_url=store.db.url, inline_worker=True))
    assert [kw["trial_notices"] for kw in started] == [event_service.notify_trials_ending]


# trials ----------------------------------------------------------------------------------------


def test_trial_will_end_is_published_once_per_trial_3_days_ahead(
    store: Store, clock: FakeClock, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    consumer_id, _, _, _ = consumer_with_endpoints(store, clock, [hook.url])
    trial_end = int(clock()) + 4 * DAY
    with store.db.transaction() as tx:
        store.accounts.update_consumer(tx, consumer_id, {"trial_ends_at": trial_end})
    worker = Worker(
        store, allow_private=True, clock=clock, trial_notices=event_service.notify_trials_ending
    )
    assert worker.maintain().trial_notices == 0  # 4 days ahead: too early
    clock.advance(DAY + 60)
    assert worker.maintain().trial_notices == 1
    assert worker.maintain().trial_notices == 0
    worker.run_once()
    [event] = hook.events()
    assert event == {
        "id": f"evt_subscription_trial_will_end_{consumer_id}_{trial_end}",
        "type": "subscription.trial_will_end",
        "created": int(clock()),
        "data": {
            "subscription": {
                "id": consumer_id,  # no relayed subscription: the consumer id stands in
                "status": "trialing",
                "current_period_end": iso(trial_end),
                "trial_end": iso(trial_end),
            }
        },
    }
    # the processor extends the trial: a new trial end is a new notice
    new_end = trial_end + 2 * DAY
    event_service.relay_subscription(
        store,
        consumer_id,
        "updated",
        {"id": "sub_3", "status": "trialing", "current_period_end": new_end, "trial_end": new_end},
        clock(),
    )
    clock.advance(2 * DAY)
    assert worker.maintain().trial_notices == 1
    worker.run_once()
    assert hook.events()[-1]["id"] == f"evt_subscription_trial_will_end_sub_3_{new_end}"


def test_trial_will_end_skips_paid_ended_and_concurrent_duplicates(
    store: Store, clock: FakeClock
) -> None:
    now = int(clock())
    paid, _, _, _ = consumer_with_endpoints(store, clock, [])
    ended, _, _, _ = consumer_with_endpoints(store, clock, [])
    due = [consumer_with_endpoints(store, clock, [])[0] for _ in range(3)]
    with store.db.transaction() as tx:
        store.accounts.update_consumer(
            tx, paid, {"trial_ends_at": now + DAY, "subscription_status": "active"}
        )
        store.accounts.update_consumer(tx, ended, {"trial_ends_at": now - 60})
        for consumer_id in due:
            store.accounts.update_consumer(tx, consumer_id, {"trial_ends_at": now + DAY})
    results: list[int] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(event_service.notify_trials_ending(store, clock()))
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(results) == 3
    with store.db.transaction(write=False) as tx:
        rows = tx.fetchall(
            "SELECT consumer_id FROM events WHERE type = 'subscription.trial_will_end'"
        )
    assert sorted(r["consumer_id"] for r in rows) == sorted(due)
