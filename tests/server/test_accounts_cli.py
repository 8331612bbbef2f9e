"""``svc consumer ...`` and ``svc key ...`` as an operator runs them: real processes."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable

from werkzeug.test import Client

from svc_server.app import SvcApp
from svc_server.store import Store
from svc_server.store.keycache import KEY_STAMP_TTL
from tests.server.accounts_support import DATA_PATH, events_of
from tests.svc_cli import run_svc


def svc(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_svc(*args, "--database-url", db_url)


def test_operator_lifecycle_of_a_consumer_and_its_key(
    sqlite_url: str, sqlite_store: Store, make_app: Callable[..., SvcApp]
) -> None:
    created = svc(
        sqlite_url,
        "consumer",
        "create",
        "--plan",
        "pro",
        "--email",
        "Boss@Example.com",
        "--company",
        "Acme Realty",
        "--monthly-quota",
        "50",
        "--json",
    )
    assert created.returncode == 0, created.stderr
    out = json.loads(created.stdout)
    assert set(out) == {"consumer_id", "api_key"}
    assert re.fullmatch(r"svc_pk_live_[0-9a-f]{32}", out["api_key"])
    consumer_id, key = out["consumer_id"], out["api_key"]
    client = Client(make_app(sqlite_store))
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.status_code == 200
    assert r.headers["X-Quota-Limit"] == "50"

    listed = svc(sqlite_url, "consumer", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["id"] == consumer_id
    assert (row["plan"], row["company_name"], row["active_keys"]) == ("pro", "Acme Realty", 1)

    changed = svc(sqlite_url, "consumer", "set-plan", consumer_id, "team")
    assert changed.returncode == 0, changed.stderr
    time.sleep(KEY_STAMP_TTL)  # a change made by another process is seen within this bound
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.get_json()["_meta"]["tier"] == "team"

    keys = svc(sqlite_url, "key", "list", consumer_id, "--json")
    assert keys.returncode == 0, keys.stderr
    [key_row] = [json.loads(line) for line in keys.stdout.splitlines()]
    assert key_row["prefix"] == key[:16] and key_row["status"] == "active"
    assert key not in keys.stdout and "key_hash" not in keys.stdout

    revoked = svc(sqlite_url, "key", "revoke", key_row["id"])
    assert revoked.returncode == 0, revoked.stderr
    time.sleep(KEY_STAMP_TTL)
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.status_code == 401
    [event] = events_of(sqlite_store, consumer_id)
    assert event["type"] == "key.revoked"
    assert event["payload"]["data"]["actor"] == "admin"
    assert event["payload"]["data"]["key"] == {"id": key_row["id"], "prefix": key[:16]}

    again = svc(sqlite_url, "key", "revoke", key_row["id"])
    assert again.returncode == 2 and again.stderr.startswith("svc: error: ")


def test_operator_mistakes_are_one_line_and_exit_2(sqlite_url: str) -> None:
    for args in (
        ("consumer", "set-plan", "00000000-0000-4000-8000-000000000000", "pro"),
        ("key", "revoke", "nope"),
    ):
        result = svc(sqlite_url, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("svc: error: ")
        assert "Traceback" not in result.stderr
