"""What an operator expects of the real ``svc`` command: ``svc --version`` and ``svc key
create | list | revoke`` for an existing consumer, without the dashboard."""

from __future__ import annotations

import json
import os
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

from werkzeug.test import Client

from svc_server.app import SvcApp
from svc_server.runtime.deps import new_id
from svc_server.services import keys
from svc_server.store import Store
from svc_server.store.account_rows import ApiKey
from svc_server.store.keycache import KEY_STAMP_TTL
from tests.server.accounts_support import DATA_PATH
from tests.server.test_operator_cli import ok, svc, user_of

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_package_version(sqlite_url: str) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    done = svc(sqlite_url, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"svc {version}\n"


def one_line_error(done: object, text: str) -> None:
    assert getattr(done, "returncode") == 2, getattr(done, "stderr")  # noqa: B009
    stderr = str(getattr(done, "stderr"))  # noqa: B009
    assert stderr.startswith("svc: error: ") and len(stderr.splitlines()) == 1, stderr
    assert text in stderr, stderr


def test_an_operator_creates_lists_and_revokes_keys_of_a_consumer(
    db_url: str, store: Store, make_app: Callable[..., SvcApp]
) -> None:
    consumer_id = json.loads(
        ok(db_url, "consumer", "create", "--plan", "pro", "--email", "ops@example.com", "--json")
    )["consumer_id"]
    made = json.loads(
        ok(db_url, "key", "create", consumer_id, "--label", "ci robot", "--mode", "live",
           "--allow-ip", "127.0.0.1", "--allow-ip", "10.0.0.0/8", "--json")
    )  # fmt: skip
    assert made["key"].startswith("svc_pk_live_") and made["prefix"] == made["key"][:16]
    assert (made["label"], made["scope"], made["status"]) == ("ci robot", "read_only", "active")
    assert made["ip_allowlist"] == ["127.0.0.1/32", "10.0.0.0/8"]
    client = Client(make_app(store))

    def call(key: str, addr: str = "10.1.2.3") -> int:
        return client.get(
            DATA_PATH, headers={"X-API-Key": key}, environ_base={"REMOTE_ADDR": addr}
        ).status_code

    assert call(made["key"]) == 200 and call(made["key"], "198.51.100.1") == 403

    text = ok(db_url, "key", "create", consumer_id)  # defaults: live, read_only
    [plain] = [line.split()[-1] for line in text.splitlines() if "shown once" in line]
    assert plain.startswith("svc_pk_live_")
    assert call(plain, "198.51.100.1") == 200  # no allowlist

    # a rotated key shows its grace expiry; nothing secret is listed
    user_id = user_of(store, "ops@example.com")
    rotated = keys.rotate_key(
        store, user_id, made["id"], {"grace_period_seconds": 3600},
        now=time.time(), entropy=os.urandom(16), ids=new_id,
    )  # fmt: skip
    listed = ok(db_url, "key", "list", consumer_id)
    header, *lines = listed.splitlines()
    assert header.split() == ["ID", "PREFIX", "LABEL", "MODE", "SCOPE", "STATUS", "CREATED",
                              "LAST", "USED", "GRACE", "UNTIL"]  # fmt: skip
    assert len(lines) == 4  # the first key, the two made here and the rotation's new one
    [graced] = [line for line in lines if line.startswith(made["id"])]
    assert " grace " in graced and made["prefix"] in graced and "ci robot" in graced
    assert graced.rstrip().endswith(rotated.previous.grace_until.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert graced.index(" grace ") == header.index("STATUS") - 1
    for secret in (made["key"], plain, rotated.key.key):
        assert secret not in listed
    as_json = [json.loads(line) for line in ok(db_url, "key", "list", consumer_id, "--json")
               .splitlines()]  # fmt: skip
    by_id = {k["id"]: k for k in as_json}
    assert by_id[made["id"]]["grace_until"] is not None
    assert {"created_at", "last_used_at", "prefix", "label", "status"} <= set(by_id[made["id"]])

    # revoke by the prefix as listed: the key stops working
    plain_prefix = plain[:16]
    done = ok(db_url, "key", "revoke", plain_prefix)
    [plain_id] = [k["id"] for k in as_json if k["prefix"] == plain_prefix]
    assert done == f"key {plain_id} revoked\n"
    time.sleep(KEY_STAMP_TTL)
    assert call(plain) == 401
    # ... and by id
    ok(db_url, "key", "revoke", rotated.key.id)
    statuses = {k["id"]: k["status"] for k in
                map(json.loads, ok(db_url, "key", "list", consumer_id, "--json").splitlines())}  # fmt: skip
    assert statuses[plain_id] == statuses[rotated.key.id] == "revoked"


def test_key_command_mistakes_are_one_line_and_exit_2(sqlite_url: str, sqlite_store: Store) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    one_line_error(svc(sqlite_url, "key", "create", unknown), f"No consumer {unknown}")
    one_line_error(svc(sqlite_url, "key", "create", "nope"), "must be a UUID")
    one_line_error(svc(sqlite_url, "key", "list", unknown), f"No consumer {unknown}")
    one_line_error(svc(sqlite_url, "key", "revoke", "svc_pk_live_0000"), "svc_pk_live_0000")
    consumer_id = json.loads(ok(sqlite_url, "consumer", "create", "--plan", "starter", "--json"))[
        "consumer_id"
    ]
    # starter allows one active key, which the consumer already has
    one_line_error(svc(sqlite_url, "key", "create", consumer_id), "allows 1 active API key")
    one_line_error(
        svc(sqlite_url, "key", "create", consumer_id, "--allow-ip", "not-an-ip"), "not-an-ip"
    )
    with sqlite_store.db.transaction(write=False) as tx:
        assert len(tx.fetchall("SELECT id FROM api_keys")) == 1  # nothing was made

    # two keys sharing a prefix (possible: it holds 4 random hex digits): revoke asks for
    # the id, revoking neither
    [row] = json.loads(f"[{ok(sqlite_url, 'key', 'list', consumer_id, '--json').strip()}]")
    with sqlite_store.db.transaction() as tx:
        sqlite_store.accounts.insert_key(
            tx,
            ApiKey(id=new_id(), consumer_id=consumer_id, label="twin",
                   prefix=row["prefix"], key_hash="0" * 64, mode="live",
                   scope="read_only", ip_allowlist=(), status="active", grace_until=None,
                   replaced_by=None, created_at=int(time.time()), last_used_at=None,
                   revoked_at=None),
        )  # fmt: skip
    one_line_error(svc(sqlite_url, "key", "revoke", row["prefix"]), "give the key's id")
    listed = ok(sqlite_url, "key", "list", consumer_id, "--json").splitlines()
    assert [json.loads(line)["status"] for line in listed] == ["active", "active"]
