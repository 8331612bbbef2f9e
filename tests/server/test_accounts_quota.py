"""Authentication failures and the monthly quota of the data API, through HTTP.

The quota counts only 2xx answers of data endpoints, in UTC months; a unit is reserved
before the handler and given back when the answer is not a success, so concurrent
callers, in one process or many, never get more than the quota between them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from werkzeug.test import Client

from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock
from tests.server.accounts_support import DATA_PATH, events_of, execute, run_processes

META = {"service": "svc", "api_version": "v1"}


def usage_of(store: Store, consumer_id: str, month: str = "2026-09", mode: str = "live") -> int:
    """Successful calls counted for a quota month (the test clock starts in 2026-09)."""
    return store.accounts.usage(consumer_id, month, mode)


# 401 ----------------------------------------------------------------------------------------


UNAUTHENTICATED = [
    {},
    {"X-API-Key": ""},
    {"X-API-Key": "svc_pk_live_" + "g" * 32},
    {"X-API-Key": "svc_pk_live_" + "A" * 32},
    {"X-API-Key": "svc_pk_live_" + "0" * 31},
    {"X-API-Key": " svc_pk_live_" + "0" * 32},
    {"X-API-Key": "svc_pk_live_" + "0" * 32},
    {"X-API-Key": "svc_pk_live_" + "0" * 32 + "\u00e9"},
    {"Cookie": "svc_session=forged.value"},
]


def test_401_body_is_exactly_spec_shape(client: Client) -> None:
    for headers in UNAUTHENTICATED:
        r = client.get(DATA_PATH, headers=headers)
        assert r.status_code == 401, headers
        body = r.get_json()
        assert set(body) == {"error", "_meta"}
        assert body["_meta"] == META
        assert body["error"]["code"] == "UNAUTHORIZED"
        assert body["error"]["request_id"] == r.headers["X-Request-ID"]
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
        assert set(body["error"]) <= {"code", "message", "hint", "request_id"}


def test_key_sent_twice_is_401(accounts: Accounts, client: Client) -> None:
    _, key = accounts.consumer("pro")
    r = client.get(DATA_PATH, headers=[("X-API-Key", key), ("X-API-Key", key)])
    assert r.status_code == 401


def test_key_in_query_string_is_not_a_credential(accounts: Accounts, client: Client) -> None:
    _, key = accounts.consumer("pro")
    r = client.get(f"{DATA_PATH}?api_key={key}")
    assert r.status_code == 401


def test_key_of_a_suspended_consumer_is_401(
    accounts: Accounts, client: Client, store: Store
) -> None:
    consumer_id, key = accounts.consumer("pro")
    execute(store, "UPDATE consumers SET status = 'suspended' WHERE id = ?", (consumer_id,))
    assert client.get(DATA_PATH, headers={"X-API-Key": key}).status_code == 401


# the quota --------------------------------------------------------------------------------------


def test_quota_admits_exactly_the_quota_then_402(
    accounts: Accounts, client: Client, store: Store
) -> None:
    consumer_id, key = accounts.consumer("pro", monthly_quota=5)
    for n in range(1, 6):
        r = client.get(DATA_PATH, headers={"X-API-Key": key})
        assert r.status_code == 200
        assert r.headers["X-Quota-Limit"] == "5"
        assert r.headers["X-Quota-Used"] == str(n)
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.status_code == 402
    body = r.get_json()
    assert body["error"]["code"] == "QUOTA_EXCEEDED"
    assert body["_meta"]["service"] == "svc"
    assert r.headers["X-Quota-Used"] == "5"
    assert r.headers["X-Quota-Resets-At"] == "2026-10-01T00:00:00Z"
    assert "X-RateLimit-Limit" in r.headers
    assert usage_of(store, consumer_id) == 5


def test_failed_calls_do_not_count(accounts: Accounts, client: Client, store: Store) -> None:
    consumer_id, key = accounts.consumer("starter", monthly_quota=2)
    headers = {"X-API-Key": key}
    failing = [
        f"{DATA_PATH}?bogus=1",  # 400 unknown parameter
        f"{DATA_PATH}?geo_precision=dong",  # 403 tier gate on starter
        f"{DATA_PATH}?geo_precision=street",  # 400 bad value
        "/api/v1/real-estate/pulse",  # 400 missing sigungu_code
    ]
    for _ in range(3):
        for path in failing:
            r = client.get(path, headers=headers)
            assert 400 <= r.status_code < 500, (path, r.status_code)
            assert "X-Quota-Used" in r.headers
            assert r.headers["X-Quota-Used"] == "0"
    assert usage_of(store, consumer_id) == 0
    with store.db.transaction(write=False) as tx:  # refunded to nothing: no row left behind
        for table in ("usage_counters", "usage_days"):
            assert not tx.fetchall(
                f"SELECT count FROM {table} WHERE consumer_id = ?", (consumer_id,)
            )
    assert client.get(DATA_PATH, headers=headers).status_code == 200
    assert client.get(DATA_PATH, headers=headers).status_code == 200
    assert client.get(DATA_PATH, headers=headers).status_code == 402
    assert usage_of(store, consumer_id) == 2


def test_test_keys_never_consume_the_quota(
    accounts: Accounts, client: Client, store: Store, clock: FakeClock
) -> None:
    consumer_id, live = accounts.consumer("pro", monthly_quota=2, email="ana@example.com")
    browser = accounts.browser("ana@example.com")
    test_key = browser.post(
        "/api/auth/me/keys",
        json={"label": "sandbox", "mode": "test", "scope": "read_only"},
        headers=ORIGIN,
    ).get_json()["data"]["key"]
    for _ in range(5):
        r = client.get(DATA_PATH, headers={"X-API-Key": test_key})
        assert r.status_code == 200
        assert "X-Quota-Used" not in r.headers
    assert usage_of(store, consumer_id) == 0
    assert usage_of(store, consumer_id, mode="test") == 5  # counted as test calls
    assert client.get(DATA_PATH, headers={"X-API-Key": live}).status_code == 200
    assert client.get(DATA_PATH, headers={"X-API-Key": live}).status_code == 200
    assert client.get(DATA_PATH, headers={"X-API-Key": live}).status_code == 402
    assert client.get(DATA_PATH, headers={"X-API-Key": test_key}).status_code == 200


def test_account_endpoints_and_cookie_calls_do_not_count(accounts: Accounts, store: Store) -> None:
    consumer_id, _ = accounts.consumer("pro", monthly_quota=3, email="ana@example.com")
    browser = accounts.browser("ana@example.com")
    for _ in range(5):
        assert browser.get("/api/auth/me/usage").status_code == 200
        assert browser.get("/api/auth/me/keys").status_code == 200
        assert browser.get(DATA_PATH).status_code == 200  # cookie: no monthly quota
    assert usage_of(store, consumer_id) == 0
    used = browser.get("/api/auth/me/usage").get_json()["data"]["current_period"]
    assert used["requests_used"] == 0


def test_month_rollover_resets_the_quota(
    accounts: Accounts, client: Client, clock: FakeClock
) -> None:
    clock.now = datetime(2026, 9, 30, 23, 59, 50, tzinfo=UTC).timestamp()
    _, key = accounts.consumer("pro", monthly_quota=1)
    headers = {"X-API-Key": key}
    assert client.get(DATA_PATH, headers=headers).status_code == 200
    r = client.get(DATA_PATH, headers=headers)
    assert r.status_code == 402
    assert r.headers["X-Quota-Resets-At"] == "2026-10-01T00:00:00Z"
    clock.now = datetime(2026, 10, 1, 0, 0, 0, tzinfo=UTC).timestamp()
    r = client.get(DATA_PATH, headers=headers)
    assert r.status_code == 200
    assert r.headers["X-Quota-Used"] == "1"
    assert r.headers["X-Quota-Resets-At"] == "2026-11-01T00:00:00Z"


def test_december_resets_on_the_first_of_january(
    accounts: Accounts, client: Client, clock: FakeClock
) -> None:
    clock.now = datetime(2026, 12, 31, 12, 0, tzinfo=UTC).timestamp()
    _, key = accounts.consumer("pro", monthly_quota=1)
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.headers["X-Quota-Resets-At"] == "2027-01-01T00:00:00Z"


def test_quota_events_fire_once_each_per_month(
    accounts: Accounts, client: Client, store: Store, clock: FakeClock
) -> None:
    consumer_id, key = accounts.consumer("pro", monthly_quota=5)
    headers = {"X-API-Key": key}
    for _ in range(3):
        client.get(DATA_PATH, headers=headers)
    assert events_of(store, consumer_id) == []
    client.get(DATA_PATH, headers=headers)  # 4 of 5 = 80 %
    [warning] = events_of(store, consumer_id)
    assert warning["type"] == "quota.warning_80pct"
    assert warning["id"] == f"evt_quota_warning_80pct_{consumer_id}_2026-09"
    assert warning["payload"]["data"]["usage"]["current"] == 4
    assert warning["payload"]["data"]["usage"]["limit"] == 5
    for _ in range(4):
        client.get(DATA_PATH, headers=headers)
    types = sorted(e["type"] for e in events_of(store, consumer_id))
    assert types == ["quota.exceeded", "quota.warning_80pct"]
    clock.now = datetime(2026, 10, 2, tzinfo=UTC).timestamp()
    for _ in range(5):
        assert client.get(DATA_PATH, headers=headers).status_code == 200
    types = [e["type"] for e in events_of(store, consumer_id)]
    assert types.count("quota.warning_80pct") == 2 and types.count("quota.exceeded") == 2


def test_one_call_can_cross_both_thresholds(
    accounts: Accounts, client: Client, store: Store
) -> None:
    consumer_id, key = accounts.consumer("pro", monthly_quota=1)
    assert client.get(DATA_PATH, headers={"X-API-Key": key}).status_code == 200
    types = sorted(e["type"] for e in events_of(store, consumer_id))
    assert types == ["quota.exceeded", "quota.warning_80pct"]


def test_a_zero_quota_refuses_every_call(accounts: Accounts, client: Client, store: Store) -> None:
    consumer_id, key = accounts.consumer("pro", monthly_quota=0)
    r = client.get(DATA_PATH, headers={"X-API-Key": key})
    assert r.status_code == 402
    assert usage_of(store, consumer_id) == 0


# many processes, one store ----------------------------------------------------------------------


def test_quota_is_exact_across_processes(
    db_url: str, store: Store, accounts: Accounts, clock: FakeClock
) -> None:
    """4 processes x 50 requests at a quota of 100: exactly 100 succeed, the rest 402."""
    row = consumer_service.create_consumer(
        store,
        plan="pro",
        now=clock(),
        entropy=bytes(range(16)),
        email="load@example.com",
        monthly_quota=100,
        rate_limit=100_000,
        ids=new_id,
    )
    consumer_id, key = str(row.consumer_id), str(row.api_key)
    statuses = run_processes(db_url, key, processes=4, per_process=50, now=clock())
    assert len(statuses) == 200
    assert statuses.count(200) == 100
    assert statuses.count(402) == 100
    browser = accounts.browser("load@example.com")
    data = browser.get("/api/auth/me/usage").get_json()["data"]
    current = data["current_period"]
    assert current["requests_used"] == 100
    assert data["daily"][-1] == {"date": "2026-09-21", "calls": 100, "test_calls": 0}
    assert sum(d["calls"] for d in data["daily"]) == 100
    assert current["requests_remaining"] == 0
    assert current["percent_used"] == 100.0
    types = [e["type"] for e in events_of(store, consumer_id)]
    assert sorted(types) == ["quota.exceeded", "quota.warning_80pct"]
