"""The warm lane (``http.warm``, issue 32 item 1): a cached data call answered on the
event loop sends what the dispatcher sends, counts exactly as it counts, and declines,
taking nothing, every call it cannot answer from memory alone.

On the real MOLIT samples, SQLite and PostgreSQL, with an account whose limits lease
(the calls that matter for speed) and the app's own fake clock, so two paths answering
the same request in the same second must agree byte for byte except for the call's own
rate-limit and quota figures.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import EnvironBuilder

from svc_server.app import SvcApp
from svc_server.runtime.deps import new_id
from svc_server.services import keys, versioned
from svc_server.store import Store, open_store
from svc_server.store.keycache import KEY_STAMP_TTL
from svc_server.store.postgres import PostgresDatabase
from tests.conftest import RE_NOW, FakeClock, LiveServer
from tests.http import multihost_support as mh
from tests.http.realestate_support import RE, make_app, open_molit_store
from tests.svc_cli import run_svc

PULSE = f"{RE}/pulse?sigungu_code=11680&period=2025-06&property_type=office&transaction_type=sale"
PER_CALL_HEADERS = ("X-RateLimit-Remaining", "X-Quota-Used", "X-Request-ID")
POOL_SIZE = 4

Reply = tuple[int, list[tuple[str, str]], bytes]


@pytest.fixture(scope="module")
def molit_url(module_db_url: str) -> str:
    """A database holding the MOLIT samples, loaded once per module and backend."""
    with open_molit_store(module_db_url):
        pass
    return module_db_url


@pytest.fixture
def molit(molit_url: str) -> Iterator[Store]:
    """A store of its own on the samples' database for each test (as a process of its
    own would open it): its key cache and data version start unread, so what one test
    read a moment ago never decides what another's lane may answer. Each
    test makes its own account and reads back only that account's rows."""
    store = open_store(molit_url, pool_size=POOL_SIZE)
    yield store
    store.close()


@pytest.fixture
def served(molit: Store) -> Iterator[tuple[SvcApp, FakeClock]]:
    clock = FakeClock(RE_NOW)
    app = make_app(molit, clock)
    yield app, clock
    app.close()  # its leases written back while the store is open


def account(
    app: SvcApp, *, email: str | None = None, monthly_quota: int = 10**8, rate_limit: int = 10**6
) -> tuple[str, str]:
    """(consumer id, key) of an account whose limits lease by default (the operator's
    path, ``multihost_support.consumer``)."""
    return mh.consumer(
        app.store,
        email or f"{new_id()}@example.com",
        monthly_quota=monthly_quota,
        rate_limit=rate_limit,
    )


def warmed(app: SvcApp) -> tuple[str, str, dict[str, Any]]:
    """(consumer id, key, pulse environ) of a new account whose first pulse call went the
    dispatcher's way: its key, lease and answer are warm."""
    consumer_id, key = account(app)
    env = environ(PULSE, key)
    assert dispatched(app, env)[0] == 200
    return consumer_id, key, env


def environ(path: str, key: str | None, method: str = "GET", **headers: str) -> dict[str, Any]:
    """What ``http.front`` hands the lane: a PEP 3333 environ."""
    sent = {"Host": "127.0.0.1", **headers}
    if key is not None:
        sent["X-API-Key"] = key
    return dict(EnvironBuilder(path, method=method, headers=sent).get_environ())


def dispatched(app: SvcApp, env: dict[str, Any]) -> Reply:
    """The dispatcher's answer to ``env`` (the thread path)."""
    started: list[Any] = []
    body = b"".join(app(dict(env), lambda s, h, e=None: started.extend([s, h])))
    return int(started[0][:3]), list(started[1]), body


def warm(app: SvcApp, env: dict[str, Any]) -> Reply | None:
    return app.warm(dict(env))


def header(reply: Reply, name: str) -> str:
    values = [v for n, v in reply[1] if n.lower() == name.lower()]
    assert len(values) == 1, (name, reply[1])
    return values[0]


def shared(reply: Reply) -> tuple[int, list[tuple[str, str]], Any]:
    """A reply without what belongs to the call (its rate-limit and quota figures)."""
    status, headers, body = reply
    kept = [(n, v) for n, v in headers if n not in PER_CALL_HEADERS]
    if header(reply, "Content-Encoding") == "gzip" if _has(reply, "Content-Encoding") else False:
        body = gzip.decompress(body)
    if header(reply, "Content-Type").startswith("application/json"):
        parsed = json.loads(body)
        parsed["_meta"]["rate_limit"].pop("remaining")
        parsed["_meta"].pop("request_id")
        return status, kept, parsed
    return status, kept, body


def _has(reply: Reply, name: str) -> bool:
    return any(n.lower() == name.lower() for n, _ in reply[1])


VARIANTS = {
    "pulse": (PULSE, {}),
    "pulse, CSV by Accept": (PULSE, {"Accept": "text/csv"}),
    "pulse, CSV by format": (PULSE + "&format=csv", {}),
    "pulse.csv": (PULSE.replace("/pulse?", "/pulse.csv?"), {}),
    "pulse, gzip": (PULSE, {"Accept-Encoding": "gzip"}),
    "pulse, own request id": (PULSE, {"X-Request-ID": "client-chosen-id-1"}),
    "series": (f"{RE}/pulse/series?sigungu_code=11680&property_type=office&periods=2025-06", {}),
    "coverage": (f"{RE}/coverage?sigungu_code=11680", {}),
    "dimensions": (f"{RE}/dimensions", {}),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_warm_call_sends_what_the_dispatcher_sends_and_counts_once(
    served: tuple[SvcApp, FakeClock], variant: str
) -> None:
    app, _ = served
    _, key = account(app)
    path, headers = VARIANTS[variant]
    env = environ(path, key, **headers)
    first = dispatched(app, env)
    assert first[0] == 200, first[2][:300]
    lane = warm(app, env)
    assert lane is not None, "a cached answer with leased limits is warm"
    then = dispatched(app, env)
    assert shared(lane) == shared(first) == shared(then)
    used = [int(header(r, "X-Quota-Used")) for r in (first, lane, then)]
    remaining = [int(header(r, "X-RateLimit-Remaining")) for r in (first, lane, then)]
    assert used == [used[0], used[0] + 1, used[0] + 2]
    assert remaining == [remaining[0], remaining[0] - 1, remaining[0] - 2]
    if "X-Request-ID" in headers:
        assert header(lane, "X-Request-ID") == headers["X-Request-ID"]
    else:
        assert header(lane, "X-Request-ID") != header(then, "X-Request-ID")
    if header(lane, "Content-Type").startswith("application/json"):
        body = lane[2] if not _has(lane, "Content-Encoding") else gzip.decompress(lane[2])
        meta = json.loads(body)["_meta"]
        assert meta["request_id"] == header(lane, "X-Request-ID")
        assert meta["rate_limit"]["remaining"] == remaining[1]


def test_warm_calls_are_counted_in_the_month_and_the_request_log(
    served: tuple[SvcApp, FakeClock],
) -> None:
    app, _ = served
    consumer_id, _, env = warmed(app)
    for _ in range(25):
        assert warm(app, env) is not None
    app.close()  # leases and the request log written back, as a stopping worker does
    assert app.store.accounts.usage(consumer_id, "2026-09", "live") == 26
    with app.store.db.transaction(write=False) as tx:
        row = tx.fetchone(
            "SELECT COUNT(*) AS n FROM request_log WHERE consumer_id = ?", (consumer_id,)
        )
    assert row is not None and int(row["n"]) == 26


def quota_after(app: SvcApp, key: str) -> tuple[int, int]:
    """(X-Quota-Used, X-RateLimit-Remaining) of one more call through the dispatcher."""
    reply = dispatched(app, environ(PULSE, key))
    assert reply[0] == 200
    return int(header(reply, "X-Quota-Used")), int(header(reply, "X-RateLimit-Remaining"))


DECLINED = {
    "a conditional request": (PULSE, {"If-None-Match": 'W/"x"'}, "GET", 200),
    "a POST": (PULSE, {}, "POST", 405),
    "two keys": (PULSE, {"X-API-Key": "k1, k2"}, "GET", 401),
    "an unknown parameter": (PULSE + "&colour=red", {}, "GET", 400),
    "a format that is none": (PULSE + "&format=xml", {}, "GET", 400),
    "a format that is no text": (PULSE + "&format=%F1%BF%95", {}, "GET", 400),
    "a query never answered": (PULSE.replace("=office&", "=officetel&"), {}, "GET", 200),
    "a route without a warm answer": (f"{RE}/transactions?sigungu_code=11680", {}, "GET", 200),
    "a path that is no route": (f"{RE}/pulse/nowhere", {}, "GET", 404),
}


@pytest.mark.parametrize("case", list(DECLINED))
def test_the_lane_declines_what_it_cannot_answer_and_takes_nothing(
    served: tuple[SvcApp, FakeClock], case: str
) -> None:
    app, _ = served
    _, key = account(app)
    path, headers, method, status = DECLINED[case]
    before = quota_after(app, key)  # warms the key, the lease and the pulse answer
    env = environ(path, None if "X-API-Key" in headers else key, method, **headers)
    assert warm(app, env) is None
    after = quota_after(app, key)
    assert after == (before[0] + 1, before[1] - 1), "the declined call took nothing"
    assert dispatched(app, env)[0] == status  # the dispatcher answers it as before


def assert_refused(app: SvcApp, env: dict[str, Any]) -> None:
    """The lane declines the call and the dispatcher refuses the key (401)."""
    assert warm(app, env) is None
    assert dispatched(app, env)[0] == 401


def test_a_revoked_key_is_refused_at_once_not_answered_warm(
    served: tuple[SvcApp, FakeClock],
) -> None:
    app, _ = served
    consumer_id, _, env = warmed(app)
    assert warm(app, env) is not None
    with app.store.db.transaction(write=False) as tx:
        (row,) = app.store.accounts.keys_of_consumer(tx, consumer_id)
    keys.revoke_key(app.store, row.id, RE_NOW, actor="admin")
    assert_refused(app, env)


def test_a_key_past_its_grace_is_refused_not_answered_warm(
    served: tuple[SvcApp, FakeClock],
) -> None:
    app, clock = served
    email = f"owner-{new_id()}@example.com"
    consumer_id, key = account(app, email=email)
    env = environ(PULSE, key)
    with app.store.db.transaction(write=False) as tx:
        (row,) = app.store.accounts.keys_of_consumer(tx, consumer_id)
        owner = app.store.accounts.get_user_by_email(tx, email)
    assert owner is not None
    keys.rotate_key(
        app.store,
        owner.id,
        row.id,
        {"grace_period_seconds": 3600},
        now=clock.now,
        entropy=os.urandom(16),
        ids=new_id,
    )
    assert dispatched(app, env)[0] == 200  # the old key works during its grace
    assert warm(app, env) is not None
    clock.advance(3601)
    assert_refused(app, env)


def test_a_plan_too_small_to_lease_goes_the_dispatchers_way(
    served: tuple[SvcApp, FakeClock],
) -> None:
    app, _ = served
    _, small = account(app, monthly_quota=1000, rate_limit=1000)
    env = environ(PULSE, small)
    for _ in range(3):  # every call holds its own unit: no lease, so never warm
        assert dispatched(app, env)[0] == 200
        assert warm(app, env) is None


def test_a_test_keys_calls_go_the_dispatchers_way_and_count_as_test_calls(
    served: tuple[SvcApp, FakeClock],
) -> None:
    """A test key has no monthly quota: its counted calls write their own count when they
    settle, so none can be admitted from leases (its plan holds no lease ask)."""
    app, clock = served
    consumer_id, live = account(app)
    test_key = keys.create_key_for_consumer(
        app.store,
        consumer_id,
        {"label": "sandbox", "mode": "test", "scope": "read_only"},
        now=clock.now,
        entropy=os.urandom(16),
        ids=new_id,
    ).key
    env = environ(PULSE, test_key)
    for _ in range(3):
        assert dispatched(app, env)[0] == 200
        assert warm(app, env) is None
    assert dispatched(app, environ(PULSE, live))[0] == 200
    assert warm(app, environ(PULSE, live)) is not None


def test_the_lane_waits_for_nothing_it_does_not_know(
    served: tuple[SvcApp, FakeClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, _ = served
    _, _, env = warmed(app)
    ttl = versioned.VERSION_TTL
    monkeypatch.setattr(versioned, "VERSION_TTL", 0.0)  # past it a load elsewhere may show
    assert warm(app, env) is None  # the version must be read
    monkeypatch.setattr(versioned, "VERSION_TTL", ttl)
    assert dispatched(app, env)[0] == 200
    assert warm(app, env) is not None
    app.store.realestate.loads.add()  # as a load of this process commits: read it again
    assert warm(app, env) is None
    assert dispatched(app, env)[0] == 200
    assert warm(app, env) is not None
    app.store.accounts.keys.forget()  # the access stamp must be read again
    assert warm(app, env) is None
    assert dispatched(app, env)[0] == 200
    assert warm(app, env) is not None


def test_through_svc_serve_every_kept_alive_call_counts_once_and_a_revocation_holds(
    tmp_path: Path,
) -> None:
    """A real ``svc serve`` (granian): the calls after a connection's first take the
    lane; each is counted exactly once, and a key revoked by another process (the CLI,
    run in the test's process) is refused within the access stamp's second."""
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    with open_molit_store(url) as store:
        _, key = mh.consumer(store, "lane@example.com", monthly_quota=10**8, rate_limit=10**6)
    server = LiveServer(url)
    try:
        conn = HTTPConnection("127.0.0.1", server.port, timeout=10)
        used, ids = [], set()
        for _ in range(40):
            conn.request("GET", PULSE, headers={"X-API-Key": key})
            answer = conn.getresponse()
            answer.read()
            assert answer.status == 200
            used.append(int(answer.headers["X-Quota-Used"]))
            ids.add(answer.headers["X-Request-ID"])
        assert used == list(range(used[0], used[0] + 40))
        assert len(ids) == 40
        etag = answer.headers["ETag"]
        # on the same connection, calls the lane declines: answered as the dispatcher
        # answers them, and not counted
        for path, sent, status in (
            (PULSE + "&format=xml", {}, 400),
            (PULSE, {"If-None-Match": etag}, 304),
            (PULSE + "&colour=red", {}, 400),
        ):
            conn.request("GET", path, headers={"X-API-Key": key, **sent})
            declined = conn.getresponse()
            declined.read()
            assert declined.status == status
        conn.request("GET", PULSE, headers={"X-API-Key": key})
        answer = conn.getresponse()
        answer.read()
        assert int(answer.headers["X-Quota-Used"]) == used[-1] + 1
        env = {"SVC_DATABASE_URL": url, "SVC_SECRET_KEY": "test-secret-key-0123456789ab"}
        revoked = run_svc("key", "revoke", key[:16], env=env)  # this process, not the server's
        assert revoked.returncode == 0, revoked.stderr
        revoked_at = time.monotonic()
        statuses = []
        # calls for 0.3 s past the stamp's second (and its slack): every one refused
        late_from = KEY_STAMP_TTL + 0.2
        while time.monotonic() - revoked_at < late_from + 0.3:
            conn.request("GET", PULSE, headers={"X-API-Key": key})
            answer = conn.getresponse()
            answer.read()
            statuses.append((time.monotonic() - revoked_at, answer.status))
        late = [status for at, status in statuses if at > late_from]
        assert late and set(late) == {401}, statuses[-5:]
        conn.close()
    finally:
        server.stop()


@pytest.fixture
def keyed(served: tuple[SvcApp, FakeClock]) -> tuple[SvcApp, str]:
    """An app whose pulse answer, key and leases are warm, and the key.

    On PostgreSQL its pool is opened to its full size first: a pool that grows adds its
    connections on a thread of its own, which draws from ``random`` (a jitter), and
    hypothesis refuses a change of ``random`` while it draws an example."""
    app, _ = served
    if isinstance(app.store.db, PostgresDatabase):
        with contextlib.ExitStack() as held:
            for _ in range(POOL_SIZE):
                held.enter_context(app.store.db.transaction(write=False))
    return app, warmed(app)[1]


HOSTILE_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=HOSTILE_TEXT,
    accept=st.one_of(st.none(), HOSTILE_TEXT),
    encoding=st.one_of(st.none(), HOSTILE_TEXT),
    forwarded=st.one_of(st.none(), HOSTILE_TEXT),
    request_id=st.one_of(st.none(), HOSTILE_TEXT),
)
def test_the_lane_never_fails_whatever_the_request_holds(
    keyed: tuple[SvcApp, str],
    query: str,
    accept: str | None,
    encoding: str | None,
    forwarded: str | None,
    request_id: str | None,
) -> None:
    """Whatever a client puts in the query and the headers the lane reads, it answers
    (200) or declines: it never raises, which the front would answer with a 500."""
    app, key = keyed
    env = environ(PULSE, key)
    env["QUERY_STRING"] = env["QUERY_STRING"] + "&" + query
    for name, value in (
        ("HTTP_ACCEPT", accept),
        ("HTTP_ACCEPT_ENCODING", encoding),
        ("HTTP_X_FORWARDED_FOR", forwarded),
        ("HTTP_X_REQUEST_ID", request_id),
    ):
        if value is not None:
            env[name] = value
    reply = warm(app, env)
    assert reply is None or reply[0] == 200
