"""What an operator reads from the real ``svc`` command: consumer listings with a header,
the owner's email and honest key counts, ``svc consumer show``, one consumer per owner
email unless asked, and the webhook endpoints and deliveries."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable
from typing import Any

from werkzeug.test import Client

from svc_server.app import create_app
from svc_server.config import Config
from svc_server.runtime.deps import new_id
from svc_server.services import keys, team, webhooks
from svc_server.store import Store
from tests.conftest import TEST_SECRET, Receiver
from tests.server.accounts_support import DATA_PATH
from tests.svc_cli import run_svc


def svc(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``svc ARGS --database-url DB`` (in process: what the command does, not its process)."""
    return run_svc(*args, "--database-url", db_url)


def ok(db_url: str, *args: str) -> str:
    done = svc(db_url, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def user_of(store: Store, email: str) -> str:
    with store.db.transaction(write=False) as tx:
        user = store.accounts.get_user_by_email(tx, email)
    assert user is not None
    return str(user.id)


def consumer_with_keys_in_every_state(db_url: str, store: Store) -> tuple[str, str, str]:
    """An operator-made pro consumer owned by boss@example.com whose keys are active (2),
    grace (1), expired (1) and revoked (1): (consumer id, a working key, owner's user id)."""
    made = json.loads(
        ok(db_url, "consumer", "create", "--plan", "pro", "--email", "boss@example.com",
           "--company", "Acme Realty", "--json")
    )  # fmt: skip
    user_id = user_of(store, "boss@example.com")
    now = time.time()
    body = {"label": "extra", "mode": "live", "scope": "read_only"}

    def new_key() -> str:
        return keys.create_key(store, user_id, body, now=now, entropy=os.urandom(16), ids=new_id).id

    graced, expired = new_key(), new_key()
    for key_id, grace in ((graced, 86400), (expired, 0)):
        keys.rotate_key(
            store, user_id, key_id, {"grace_period_seconds": grace},
            now=now, entropy=os.urandom(16), ids=new_id,
        )  # fmt: skip
    first = next(
        k.id for k in keys.list_keys(store, user_id, now) if k.prefix == made["api_key"][:16]
    )
    keys.revoke_key(store, first, now, user_id=user_id)
    working = keys.create_key(store, user_id, body, now=now, entropy=os.urandom(16), ids=new_id)
    return made["consumer_id"], working.key, user_id


def test_consumer_list_has_a_header_the_owner_email_and_counts_the_keys_that_work_now(
    sqlite_url: str, sqlite_store: Store
) -> None:
    consumer_id, _, _ = consumer_with_keys_in_every_state(sqlite_url, sqlite_store)
    ok(sqlite_url, "consumer", "create", "--plan", "starter")  # no owner
    listed = json_lines(ok(sqlite_url, "consumer", "list", "--json"))
    assert len(listed) == 2  # created in the same second, so listed in id order
    [row] = [r for r in listed if r["id"] == consumer_id]
    [ownerless] = [r for r in listed if r["id"] != consumer_id]
    assert row["owner_email"] == "boss@example.com"
    # four keys work now: two new by rotation, one made after, and the rotated key still
    # in its grace period; the expired and the revoked ones do not
    assert row["active_keys"] == 4
    assert ownerless["owner_email"] is None and ownerless["active_keys"] == 1

    header, *lines = ok(sqlite_url, "consumer", "list").splitlines()
    # both were created in the same second, so the table is in id order: pick them by id
    [first] = [line for line in lines if line.startswith(consumer_id)]
    [second] = [line for line in lines if not line.startswith(consumer_id)]
    assert header.split() == ["ID", "PLAN", "STATUS", "OWNER", "EMAIL", "WORKING", "KEYS",
                              "COMPANY", "CREATED"]  # fmt: skip
    assert first.split()[:5] == [consumer_id, "pro", "active", "boss@example.com", "4"]
    assert "Acme Realty" in first
    # the columns line up under the header
    assert first.index("boss@example.com") == header.index("OWNER EMAIL")
    assert second.split()[3:5] == ["-", "1"]


def test_consumer_list_help_says_grace_keys_are_counted(sqlite_url: str) -> None:
    helped = " ".join(ok(sqlite_url, "consumer", "list", "--help").split())
    assert "keys that work now: active keys and rotated keys still in their grace period" in (
        helped
    )


def test_consumer_show_tells_plan_owner_keys_members_and_usage(
    sqlite_url: str, sqlite_store: Store
) -> None:
    consumer_id, key, user_id = consumer_with_keys_in_every_state(sqlite_url, sqlite_store)
    team.invite(sqlite_store, user_id, {"email": "mate@example.com"}, now=time.time(), ids=new_id)
    client = Client(create_app(Config(secret_key=TEST_SECRET), store=sqlite_store))  # real clock
    for _ in range(2):
        assert client.get(DATA_PATH, headers={"X-API-Key": key}).status_code == 200

    shown = json.loads(ok(sqlite_url, "consumer", "show", consumer_id, "--json"))
    assert (shown["id"], shown["plan"], shown["status"]) == (consumer_id, "pro", "active")
    assert shown["owner_email"] == "boss@example.com"
    assert shown["company_name"] == "Acme Realty"
    statuses = sorted(k["status"] for k in shown["keys"])
    assert statuses == ["active", "active", "active", "expired", "grace", "revoked"]
    assert all("key" not in k and "key_hash" not in k for k in shown["keys"])
    members = {(m["email"], m["role"], m["status"]) for m in shown["members"]}
    assert members == {
        ("boss@example.com", "owner", "active"),
        ("mate@example.com", "member", "pending"),
    }
    month = time.strftime("%Y-%m", time.gmtime())
    assert shown["usage"] == {"month": month, "live": 2, "test": 0, "monthly_quota": 100000}
    assert shown["rate_limit_per_minute"] == 120

    text = ok(sqlite_url, "consumer", "show", consumer_id)
    assert key not in text
    assert f"usage {month}  2 of 100000 live calls, 0 test calls" in text
    assert "keys (6)" in text and "members (2)" in text
    assert "boss@example.com" in text and "mate@example.com" in text
    for status in ("grace", "expired", "revoked"):
        assert f" {status} " in text

    unknown = svc(sqlite_url, "consumer", "show", str(uuid.uuid4()))
    assert unknown.returncode == 2 and "No consumer" in unknown.stderr
    bad = svc(sqlite_url, "consumer", "show", "not-an-id")
    assert bad.returncode == 2 and "must be a UUID" in bad.stderr


def test_a_second_consumer_for_one_owner_email_needs_asking_for(
    sqlite_url: str, sqlite_store: Store
) -> None:
    first = json.loads(
        ok(
            sqlite_url,
            "consumer",
            "create",
            "--plan",
            "pro",
            "--email",
            "demo@example.com",
            "--json",
        )
    )
    again = svc(sqlite_url, "consumer", "create", "--plan", "pro", "--email", "Demo@Example.com")
    assert again.returncode == 2
    assert again.stderr.startswith(
        f"svc: error: demo@example.com already owns consumer {first['consumer_id']} (plan pro)"
    )
    assert "--allow-duplicate-owner" in again.stderr and len(again.stderr.splitlines()) == 1
    assert again.stdout == ""
    assert len(json_lines(ok(sqlite_url, "consumer", "list", "--json"))) == 1
    # the refused create made nothing: the first key still works, the user is unchanged
    with sqlite_store.db.transaction(write=False) as tx:
        assert len(tx.fetchall("SELECT id FROM api_keys")) == 1
        assert len(tx.fetchall("SELECT id FROM users")) == 1

    ok(sqlite_url, "consumer", "create", "--plan", "team", "--email", "demo@example.com",
       "--allow-duplicate-owner")  # fmt: skip
    owners = [r["owner_email"] for r in json_lines(ok(sqlite_url, "consumer", "list", "--json"))]
    assert owners == ["demo@example.com", "demo@example.com"]
    # other owners and ownerless consumers are not affected
    ok(sqlite_url, "consumer", "create", "--plan", "pro", "--email", "other@example.com")
    ok(sqlite_url, "consumer", "create", "--plan", "pro")
    ok(sqlite_url, "consumer", "create", "--plan", "pro")


def test_webhook_endpoints_and_deliveries_for_operators(
    sqlite_url: str, sqlite_store: Store, receiver: Callable[..., Receiver]
) -> None:
    hook = receiver()
    made: dict[str, Any] = {}
    # created_at is kept to the second: the second endpoint is made a second later so the
    # listing's order (created_at, then id) is the creation order
    start = time.time()
    for step, email in enumerate(("a@example.com", "b@example.com")):
        consumer_id = json.loads(
            ok(sqlite_url, "consumer", "create", "--plan", "pro", "--email", email, "--json")
        )["consumer_id"]
        endpoint = webhooks.create_endpoint(
            sqlite_store, user_of(sqlite_store, email), {"url": hook.url}, start + step,
            os.urandom(32), allow_private=True, ids=new_id,
        )  # fmt: skip
        made[consumer_id] = endpoint
    a, b = made

    listed = ok(sqlite_url, "webhook", "endpoints")
    header, *rows = listed.splitlines()
    assert header.split()[:4] == ["ID", "CONSUMER", "STATUS", "FAILURES"]
    assert [r.split()[:3] for r in rows] == [
        [made[a].id, a, "active"],
        [made[b].id, b, "active"],
    ]
    for endpoint in made.values():
        assert endpoint.secret_plaintext not in listed
    [only_b] = json_lines(ok(sqlite_url, "webhook", "endpoints", "--consumer", b, "--json"))
    assert (only_b["id"], only_b["consumer_id"], only_b["url"]) == (made[b].id, b, hook.url)
    assert "secret" not in json.dumps(only_b)

    # a relayed event queues one delivery; the operator sees it before any worker runs
    ok(sqlite_url, "subscription", "relay", "--consumer", a, "--type", "updated",
       "--subscription-id", "sub_1", "--status", "active")  # fmt: skip
    [queued] = json_lines(ok(sqlite_url, "webhook", "deliveries", "--status", "pending", "--json"))
    assert (queued["consumer_id"], queued["endpoint_id"]) == (a, made[a].id)
    assert queued["event_type"] == "subscription.updated" and queued["sent_at"] is None
    assert json_lines(ok(sqlite_url, "webhook", "deliveries", "--consumer", b, "--json")) == []

    out = ok(sqlite_url, "worker", "--once", "--webhook-allow-private", "true")
    assert out == "svc: worker sent 1 delivery\n"
    header, row = ok(sqlite_url, "webhook", "deliveries", "--status", "delivered").splitlines()
    assert header.split() == ["ID", "CREATED", "EVENT", "STATUS", "HTTP", "MS", "ENDPOINT", "ERROR"]
    assert row.split()[2:5] == ["subscription.updated", "delivered", "200"]
    [empty] = ok(sqlite_url, "webhook", "deliveries", "--status", "failed").splitlines()
    assert empty.split() == header.split()  # no rows, still the columns

    refused = svc(sqlite_url, "webhook", "deliveries", "--status", "lost")
    assert refused.returncode == 2 and "invalid choice" in refused.stderr
    refused = svc(sqlite_url, "webhook", "deliveries", "--consumer", "nope")
    assert refused.returncode == 2 and "must be a UUID" in refused.stderr
    refused = svc(sqlite_url, "webhook", "deliveries", "--limit", "0")
    assert refused.returncode == 2
