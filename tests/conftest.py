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
from svc_server.runtime.deps import new_id
from svc_server.store import Store, open_store, sqlite_data_url

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile(
    "fast", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

POSTGRES_URL = os.environ.get("SVC_TEST_POSTGRES_URL")
ROOT = Path(__file__).resolve().parent.parent


def _pg_database_url(name: str) -> str:
    """``POSTGRES_URL`` with its database replaced by ``name``."""
    assert POSTGRES_URL
    head, _, tail = POSTGRES_URL.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{tail}" if tail else "")


def _pg_admin(*statements: str) -> None:
    import psycopg

    assert POSTGRES_URL
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


def _no_flush_wait(name: str) -> str:
    """The statement that lets the commits of test database ``name`` return before their
    WAL reaches the disk (``synchronous_commit = off`` for its new connections). What
    other connections see, and when, is unchanged: a commit is visible at once as
    before; only a crash of the PostgreSQL server could lose the last commits, which no
    test does. Tests that commit once per call spent half their time in those flushes."""
    return f"ALTER DATABASE {name} SET synchronous_commit = off"


class Templates:
    """Migrated stores made once per test process and copied for each test.

    Running the 22 migrations costs 0.1 s on SQLite and 0.5 to 0.9 s on PostgreSQL; a
    copy costs a file copy (SQLite) or ``CREATE DATABASE ... TEMPLATE`` (about 0.05 s).
    Each pytest process (each xdist worker) has its own templates, named after its pid,
    so two processes never copy from one template at once; templates whose process is
    gone (a killed run) are dropped by the next run.
    """

    PREFIX = "svctpl_"

    def __init__(self, root: Path) -> None:
        self.root = root
        self._sqlite: Path | None = None
        self._pg: str | None = None

    def sqlite(self) -> Path:
        """A directory holding a migrated ``svc.db`` and its data file."""
        if self._sqlite is None:
            folder = self.root / f"template-{os.getpid()}"
            folder.mkdir(parents=True, exist_ok=True)
            s = open_store(f"sqlite:///{folder / 'svc.db'}")
            s.migrate()
            s.close()
            self._sqlite = folder
        return self._sqlite

    def postgres(self) -> str:
        """The name of a migrated PostgreSQL database no connection holds."""
        if self._pg is None:
            drop_orphan_templates()
            name = f"{self.PREFIX}{os.getpid()}_{uuid.uuid4().hex[:6]}"
            _pg_admin(f"CREATE DATABASE {name}", _no_flush_wait(name))
            s = open_store(_pg_database_url(name), pool_size=1)
            s.migrate()
            s.close()
            self._pg = name
        return self._pg

    def fill(self, url: str) -> None:
        """Make the (new or empty) database behind ``url`` a copy of the migrated one."""
        if url.startswith("sqlite:///"):
            import shutil

            target = Path(url.removeprefix("sqlite:///"))
            if target.exists():
                return
            target.parent.mkdir(parents=True, exist_ok=True)
            folder = self.sqlite()
            shutil.copyfile(folder / "svc.db", target)
            data = sqlite_data_url(url)
            assert data is not None
            shutil.copyfile(folder / "svc-data.db", data.removeprefix("sqlite:///"))
            return
        name = url.partition("?")[0].rsplit("/", 1)[1]
        # The empty database moves aside (no checkpoint, unlike a drop) and is dropped
        # with the next batch.
        aside = f"{name}_x"
        _pg_admin(f"ALTER DATABASE {name} RENAME TO {aside}")
        _DROPS.add(aside)
        _pg_admin(f"CREATE DATABASE {name} TEMPLATE {self.postgres()}", _no_flush_wait(name))

    def close(self) -> None:
        if self._pg is not None:
            _pg_admin(f"DROP DATABASE IF EXISTS {self._pg} WITH (FORCE)")
            self._pg = None


def drop_orphan_templates() -> None:
    """Drop the template and test databases of pytest processes that are gone."""
    import psycopg

    assert POSTGRES_URL
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'svctpl\\_%' "
                "OR datname LIKE 'svct\\_%'"
            )
        ]
    for name in names:
        pid = name.split("_")[1]
        if pid.isdigit() and not _alive(int(pid)):
            _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    made = Templates(tmp_path_factory.mktemp("templates"))
    try:
        yield made
    finally:
        made.close()


def new_pg_database() -> str:
    """The URL of a new empty PostgreSQL database named after this process."""
    name = f"svct_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    _pg_admin(f"CREATE DATABASE {name}", _no_flush_wait(name))
    return _pg_database_url(name)


class _Drops:
    """Test databases dropped in batches on a thread of their own.

    ``DROP DATABASE`` makes PostgreSQL write a checkpoint, which flushes every dirty
    page of the server: one per test cost seconds on a busy machine. Dropped in a row,
    only the first of a batch has pages to flush, and the tests do not wait for it.
    """

    BATCH = 16

    def __init__(self) -> None:
        import threading

        self.pending: list[str] = []
        self.threads: list[threading.Thread] = []

    def add(self, name: str) -> None:
        self.pending.append(name)
        if len(self.pending) >= self.BATCH:
            self.flush(wait=False)

    def flush(self, *, wait: bool) -> None:
        import threading

        batch, self.pending = self.pending, []

        def drop() -> None:
            for name in batch:
                _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

        thread = threading.Thread(target=drop, name="drop-test-databases", daemon=True)
        thread.start()
        self.threads.append(thread)
        if wait:
            for t in self.threads:
                t.join()
            self.threads = []


_DROPS = _Drops()


def drop_pg_database(url: str) -> None:
    """Drop the test database behind ``url`` (soon, with others: see ``_Drops``)."""
    _DROPS.add(url.partition("?")[0].rsplit("/", 1)[1])


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards."""
    if not POSTGRES_URL:
        pytest.skip("PostgreSQL tests need SVC_TEST_POSTGRES_URL (CI sets it)")
    url = new_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


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
def store(db_url: str, templates: Templates) -> Iterator[Store]:
    """A migrated store on each backend (a copy of the migrated template)."""
    templates.fill(db_url)
    s = open_store(db_url, pool_size=4)
    s.migrate()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def sqlite_store(sqlite_url: str, templates: Templates) -> Iterator[Store]:
    templates.fill(sqlite_url)
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


def answers_within(url: str, proc: subprocess.Popen[bytes], what: str, seconds: float = 30) -> bool:
    """Whether ``url`` answers (any HTTP status) within ``seconds`` while ``proc`` runs;
    ``RuntimeError`` with the process's output when it exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode() if proc.stdout else ""
            raise RuntimeError(f"{what} exited early:\n{out}")
        try:
            urllib.request.urlopen(url, timeout=1)
            return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(0.1)
    return False


class LiveServer:
    """A real ``svc serve`` process on a free port (granian, or ``SVC_SERVER``)."""

    def __init__(
        self,
        db_url: str,
        env: dict[str, str] | None = None,
        workers: int = 1,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
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
        if not answers_within(self.url + "/api/status", self.proc, "svc serve"):
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
        from svc_server.services import consumers

        out = consumers.create_consumer(
            self.store,
            plan=plan,
            now=self.clock(),
            entropy=os.urandom(16),
            ids=new_id,
            **kwargs,  # type: ignore[arg-type]
        )
        return str(out.consumer_id), str(out.api_key)

    def browser(self, email: str = "owner@example.com", sub: str | None = None) -> Client:
        """A werkzeug client holding a valid svc_session cookie for ``email``."""
        from svc_server.identity import Identity
        from svc_server.services import sessions

        identity = Identity(sub=sub or "sub-" + email, email=email)
        data = sessions.sign_in(
            self.store, self.app.config, identity, self.clock(), os.urandom(16), ids=new_id
        )
        client = Client(self.app)
        client.set_cookie("svc_session", data["_cookie"], domain="localhost")
        client.user_data = data  # type: ignore[attr-defined]
        return client


@pytest.fixture
def accounts(store: Store, app: SvcApp, clock: FakeClock) -> Accounts:
    return Accounts(store, app, clock)


ORIGIN = {"Origin": "https://app.example.com"}


# identity provider (sign-in tests) ----------------------------------------------------------


_IDP_KEYS: list[object] = []


def _idp_keys() -> list[object]:
    """An RSA key, an EC P-256 key and a second RSA key (an attacker's), made once."""
    if not _IDP_KEYS:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        _IDP_KEYS.extend(
            [
                rsa.generate_private_key(public_exponent=65537, key_size=2048),
                ec.generate_private_key(ec.SECP256R1()),
                rsa.generate_private_key(public_exponent=65537, key_size=2048),
            ]
        )
    return _IDP_KEYS


class IdentityProvider:
    """A test identity provider: RSA and EC keys in a JWKS file, and an HS256 secret."""

    issuer = "https://id.example.com/"
    audience = "svc-api"
    hs256_secret = "idp-hs256-shared-secret-0123456789abcdef"

    def __init__(self, directory: Path, clock: FakeClock) -> None:
        import json

        from jwt.algorithms import ECAlgorithm, RSAAlgorithm

        self.clock = clock
        self.rsa_key, self.ec_key, self.other_rsa_key = _idp_keys()
        rsa_jwk = RSAAlgorithm.to_jwk(self.rsa_key.public_key(), as_dict=True)
        ec_jwk = ECAlgorithm.to_jwk(self.ec_key.public_key(), as_dict=True)
        self.jwks = {
            "keys": [
                {**rsa_jwk, "kid": "rsa-1", "use": "sig", "alg": "RS256"},
                {**ec_jwk, "kid": "ec-1", "use": "sig", "alg": "ES256"},
            ]
        }
        self.jwks_file = directory / "jwks.json"
        self.jwks_file.write_text(json.dumps(self.jwks), encoding="utf-8")

    def settings(self) -> dict[str, object]:
        """Config fields that make an app trust this provider."""
        return {
            "jwt_jwks_file": str(self.jwks_file),
            "jwt_hs256_secret": self.hs256_secret,
            "jwt_issuer": self.issuer,
            "jwt_audience": self.audience,
        }

    def claims(self, email: str = "owner@example.com", **changes: object) -> dict[str, object]:
        now = int(self.clock())
        base: dict[str, object] = {
            "sub": "idp|" + email,
            "email": email,
            "iss": self.issuer,
            "aud": self.audience,
            "iat": now - 5,
            "exp": now + 300,
        }
        base.update(changes)
        return {k: v for k, v in base.items() if v is not None}

    def token(self, alg: str = "RS256", email: str = "owner@example.com", **changes: object) -> str:
        """A token signed the way the provider signs: RS256, ES256 (JWKS) or HS256."""
        import jwt

        payload = self.claims(email, **changes)
        if alg == "RS256":
            return jwt.encode(payload, self.rsa_key, algorithm="RS256", headers={"kid": "rsa-1"})
        if alg == "ES256":
            return jwt.encode(payload, self.ec_key, algorithm="ES256", headers={"kid": "ec-1"})
        return jwt.encode(payload, self.hs256_secret, algorithm="HS256")


@pytest.fixture
def idp(tmp_path: Path, clock: FakeClock) -> IdentityProvider:
    return IdentityProvider(tmp_path, clock)


@pytest.fixture
def jwt_app(store: Store, make_app: Callable[..., SvcApp], idp: IdentityProvider) -> SvcApp:
    """An app that trusts ``idp`` for sign-in (same store and clock as ``app``)."""
    return make_app(store, **idp.settings())


# webhooks ----------------------------------------------------------------------------------


class ReceivedRequest:
    def __init__(self, path: str, headers: dict[str, str], body: bytes) -> None:
        self.path = path
        self.headers = headers
        self.body = body


class Receiver:
    """A real local webhook receiver on 127.0.0.1: records every POST, then answers
    ``status`` with ``reply`` after ``delay`` seconds (attributes may change mid-test)."""

    def __init__(self, status: int = 200, reply: bytes = b"ok", delay: float = 0.0) -> None:
        import http.server
        import threading

        self.status = status
        self.reply = reply
        self.delay = delay
        self.headers: dict[str, str] = {}
        self.requests: list[ReceivedRequest] = []
        self.release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.requests.append(ReceivedRequest(self.path, dict(self.headers), body))
                if receiver.delay:
                    receiver.release.wait(receiver.delay)
                try:
                    self.send_response(receiver.status)
                    for name, value in receiver.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(receiver.reply)))
                    self.end_headers()
                    self.wfile.write(receiver.reply)
                except OSError:
                    pass

            def log_message(self, format: str, *args: object) -> None:
                return None

        class Quiet(http.server.ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: object, client_address: object) -> None:
                return None

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def events(self) -> list[dict[str, object]]:
        """The JSON bodies received so far."""
        import json

        return [json.loads(r.body) for r in self.requests]

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver() -> Iterator[Callable[..., Receiver]]:
    """Start local webhook receivers; all are stopped after the test."""
    made: list[Receiver] = []

    def make(**kwargs: object) -> Receiver:
        r = Receiver(**kwargs)  # type: ignore[arg-type]
        made.append(r)
        return r

    yield make
    for r in made:
        r.stop()


@pytest.fixture
def hook_app(store: Store, make_app: Callable[..., SvcApp]) -> SvcApp:
    """An app with the development setting on: http and loopback webhook targets allowed."""
    return make_app(store, webhook_allow_private=True)


@pytest.fixture
def hook_accounts(store: Store, hook_app: SvcApp, clock: FakeClock) -> Accounts:
    """``accounts`` whose browsers talk to ``hook_app``."""
    return Accounts(store, hook_app, clock)


_PROCESS_FIXTURES = frozenset({"live_server_factory", "web_server", "driver"})
_PROCESS_WORDS = ("LiveServer(", "subprocess.run(", "subprocess.Popen(", "webdriver.")


def _starts_processes(item: pytest.Item, seen: dict[str, bool]) -> bool:
    """Whether ``item``'s file starts servers, browsers or commands as processes."""
    path = str(item.path)
    if path not in seen:
        seen[path] = any(word in item.path.read_text(encoding="utf-8") for word in _PROCESS_WORDS)
    return seen[path] or not _PROCESS_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files whose tests start processes run first, so that neither worker of
    ``--dist worksteal`` is left with a long multi-process test while the other is
    idle at the end. The order within and between files is otherwise kept, so a
    module's fixtures are made once."""
    seen: dict[str, bool] = {}
    heavy = {str(item.path) for item in items if _starts_processes(item, seen)}
    items.sort(key=lambda item: str(item.path) not in heavy)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Drop the test databases still waiting for their batch."""
    _DROPS.flush(wait=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say plainly how many PostgreSQL-backed tests ran, so CI logs prove they did."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome in counts:
        for report in terminalreporter.stats.get(outcome, []):
            if "postgres" in getattr(report, "keywords", {}):
                counts[outcome] += 1
    terminalreporter.write_line(
        "PostgreSQL-backed tests: "
        + ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
        + ("" if POSTGRES_URL else " (SVC_TEST_POSTGRES_URL not set)")
    )


# real estate: data loaded once per module or session ----------------------------------------

RE_NOW = 1_790_000_000.0
"""2026-09-21 UTC: inside the demo data's last month (2026-09)."""


@pytest.fixture(scope="session")
def demo_db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite database holding ``svc demo-data --seed 1``, loaded once per test run.

    Under pytest-xdist the workers share one file (the first to take the lock loads it).
    Tests treat its real-estate and marketplace data as read-only (they may add
    consumers, keys and usage rows).
    """
    import fcntl

    from svc_server.ingest import demo

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the directory every worker of this run shares
    path = root / "demo-seed1.db"
    done = root / "demo-seed1.done"
    with open(root / "demo-seed1.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            s = open_store(f"sqlite:///{path}")
            s.migrate()
            try:
                demo.load_demo(s, seed=1, now=RE_NOW)
            finally:
                s.close()
            done.touch()
    return f"sqlite:///{path}"


def copy_sqlite_store(url: str, folder: Path) -> str:
    """A copy of the SQLite store ``url`` (its file and data file) in ``folder``, to
    change what a shared store (``demo_db_url``) holds without loading it again."""
    import shutil

    target = folder / "svc.db"
    shutil.copyfile(url.removeprefix("sqlite:///"), target)
    data, copied = sqlite_data_url(url), sqlite_data_url(f"sqlite:///{target}")
    assert data is not None and copied is not None
    shutil.copyfile(data.removeprefix("sqlite:///"), copied.removeprefix("sqlite:///"))
    return f"sqlite:///{target}"


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def module_db_url(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    templates: Templates,
) -> Iterator[str]:
    """A migrated database per test module and backend, for data a module loads once."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('module') / 'svc.db'}"
        templates.fill(url)
        yield url
        return
    if not POSTGRES_URL:
        pytest.skip("PostgreSQL tests need SVC_TEST_POSTGRES_URL (CI sets it)")
    url = new_pg_database()
    templates.fill(url)
    try:
        yield url
    finally:
        drop_pg_database(url)
