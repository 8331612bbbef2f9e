"""Shared fixtures: stores on both backends, apps, clients and a live server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from werkzeug.test import Client

from svc_server.app import SvcApp, create_app
from svc_server.config import Config
from svc_server.store import Store, open_store

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile(
    "fast", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

POSTGRES_URL = os.environ.get("SVC_TEST_POSTGRES_URL")
ROOT = Path(__file__).resolve().parent.parent


def _pg_schema_url(base: str, schema: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    if not POSTGRES_URL:
        pytest.skip("PostgreSQL tests need SVC_TEST_POSTGRES_URL (CI sets it)")
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield _pg_schema_url(POSTGRES_URL, schema)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'svc.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database, once per backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'svc.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A migrated store on each backend."""
    s = open_store(db_url, pool_size=4)
    s.migrate()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def sqlite_store(sqlite_url: str) -> Iterator[Store]:
    s = open_store(sqlite_url)
    s.migrate()
    try:
        yield s
    finally:
        s.close()


class FakeClock:
    """A settable clock for tests that cross windows and months."""

    def __init__(self, start: float = 1_790_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


TEST_SECRET = "test-secret-key-0123456789abcdef"


@pytest.fixture
def make_app(clock: FakeClock) -> Callable[..., SvcApp]:
    def make(store: Store, **overrides: object) -> SvcApp:
        fields: dict[str, object] = {
            "secret_key": TEST_SECRET,
            "cookie_secure": False,
            "site_origins": ("https://app.example.com",),
        }
        fields.update(overrides)
        config = Config(**fields)  # type: ignore[arg-type]
        return create_app(config, store=store, clock=clock)

    return make


@pytest.fixture
def app(store: Store, make_app: Callable[..., SvcApp]) -> SvcApp:
    return make_app(store)


@pytest.fixture
def client(app: SvcApp) -> Client:
    return Client(app)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """A real ``svc serve`` (gunicorn) process on a free port."""

    def __init__(self, db_url: str, env: dict[str, str] | None = None, workers: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ)
        self.env.update(
            {
                "SVC_DATABASE_URL": db_url,
                "SVC_SECRET_KEY": TEST_SECRET,
                "SVC_PORT": str(self.port),
                "SVC_WORKERS": str(workers),
                "SVC_COOKIE_SECURE": "false",
                "SVC_LOG_LEVEL": "WARNING",
            }
        )
        self.env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "svc_server", "serve"],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode() if self.proc.stdout else ""
                raise RuntimeError(f"svc serve exited early:\n{out}")
            try:
                urllib.request.urlopen(self.url + "/api/status", timeout=1)
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("svc serve did not answer within 30 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


@pytest.fixture
def live_server_factory() -> Iterator[Callable[..., LiveServer]]:
    servers: list[LiveServer] = []

    def start(db_url: str, **kwargs: object) -> LiveServer:
        server = LiveServer(db_url, **kwargs)  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


# accounts ----------------------------------------------------------------------------------


class Accounts:
    """Make consumers, keys and signed-in browser clients for tests."""

    def __init__(self, store: Store, app: SvcApp, clock: FakeClock) -> None:
        self.store = store
        self.app = app
        self.clock = clock

    def consumer(self, plan: str = "pro", **kwargs: object) -> tuple[str, str]:
        """A consumer with one live key: (consumer_id, api_key)."""
        from svc_server.services import accounts

        out = accounts.create_consumer(
            self.store, plan=plan, now=self.clock(), entropy=os.urandom(16), **kwargs  # type: ignore[arg-type]
        )
        return str(out["consumer_id"]), str(out["api_key"])

    def browser(self, email: str = "owner@example.com", sub: str | None = None) -> Client:
        """A werkzeug client holding a valid svc_session cookie for ``email``."""
        from svc_server.identity import Identity
        from svc_server.services import sessions

        identity = Identity(sub=sub or "sub-" + email, email=email)
        data = sessions.sign_in(self.store, self.app.config, identity, self.clock(), os.urandom(16))
        client = Client(self.app)
        client.set_cookie("svc_session", data["_cookie"], domain="localhost")
        client.user_data = data  # type: ignore[attr-defined]
        return client


@pytest.fixture
def accounts(store: Store, app: SvcApp, clock: FakeClock) -> Accounts:
    return Accounts(store, app, clock)


ORIGIN = {"Origin": "https://app.example.com"}
