"""``svc init`` and ``svc serve``."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
import time
from contextlib import closing
from typing import Any

from svc_core.errors import ConfigError
from svc_core.redact import redact_url
from svc_server.app import SvcApp, create_app
from svc_server.commands.base import (
    command_parser,
    config_from_args,
    settings_parser,
    store_from_args,
)
from svc_server.config import SETTINGS, Config, env_name, load_config
from svc_server.delivery.worker import start_inline
from svc_server.servers.front import HEAD_BUFFER, BufferedFront
from svc_server.servers.ports import port_in_use
from svc_server.services import data_events
from svc_server.services.events import notify_trials_ending
from svc_server.store import open_store, sqlite_data_url


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    command_parser(sub, common, "init", cmd_init)
    command_parser(sub, settings_parser(SERVE_OPTIONS), "serve", cmd_serve)


SERVE_OPTIONS = {
    "host": "address to listen on (SVC_HOST; default 127.0.0.1, 0.0.0.0 for every interface)",
    "port": "TCP port (SVC_PORT; default 8000); one another program uses is refused",
    "workers": "server processes (SVC_WORKERS; default 2)",
    "threads": "threads per process that run requests (SVC_THREADS; default 4)",
    "server": "granian (default) or gunicorn (SVC_SERVER)",
    "database_url": "sqlite:///PATH or postgresql://... (SVC_DATABASE_URL)",
    "public_url": "base URL of the links the API writes (SVC_PUBLIC_URL)",
    "read_timeout": "seconds a client has to send a request head, then its body (SVC_READ_TIMEOUT)",
    "log_level": "DEBUG, INFO, WARNING or ERROR (SVC_LOG_LEVEL)",
    "inline_worker": "true: deliver webhooks from each server process (SVC_INLINE_WORKER)",
}
"""The settings ``svc serve --help`` shows (one line each); every other one is accepted
too, as for every command."""


def cmd_init(args: argparse.Namespace) -> int:
    """Create or upgrade the database schema. Running it again changes nothing."""
    with closing(store_from_args(args, migrate=False)) as store:
        moving = store.data_to_move()
        applied = store.migrate()
        version = store.schema_version()
    if moving:
        data_url = sqlite_data_url(config_from_args(args).database_url)
        print(f"moved the public data into {data_url} (see docs/deployment.md)")
    if applied:
        print(
            f"applied {len(applied)} migration(s): {', '.join(applied)}; schema version {version}"
        )
    else:
        print(f"schema is up to date (version {version})")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the API: --workers processes x --threads threads. granian (the default) reads
    each request whole before a thread runs it; --server gunicorn runs gunicorn's
    threaded workers instead. A port another program listens on is refused before
    anything starts. Every option is also an SVC_* variable; the rest of the
    configuration: svc --help and docs/configuration.md."""
    config = config_from_args(args)
    claim_port(config.host, config.port)
    if config.secret_key is None:
        # Every worker must share one key or cookies signed by one fail on another.
        os.environ["SVC_SECRET_KEY"] = secrets.token_urlsafe(32)
        print(
            "svc: warning: SVC_SECRET_KEY is not set; using a random key for this run "
            "(sessions end when the server stops)",
            file=sys.stderr,
        )
        config = config_from_args(args)
    store = store_from_args(args)  # migrate once in the parent, before workers fork
    try:  # where every load command and worker links its data.updated events
        held = data_events.record_address(
            store, public_url=config.public_url, listen_host=config.host, now=time.time()
        )
    finally:
        store.close()
    if held is not None:
        print(f"svc: warning: {held}", file=sys.stderr)
    if config.server == "gunicorn":
        run_gunicorn(config)
    else:
        # granian's workers are new processes that build the app from the environment:
        # hand them the flags given here as the SVC_* variables they stand for.
        for setting in SETTINGS:
            if hasattr(args, setting):
                os.environ[env_name(setting)] = str(getattr(args, setting))
        run_granian(config)
    return 0


def claim_port(host: str, port: int) -> None:
    """Refuse a port another program listens on (``ports.port_in_use``), before anything
    is printed or started: one ``ConfigError`` line."""
    try:
        taken = port_in_use(host, port)
    except OSError as err:
        raise ConfigError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    if taken:
        raise ConfigError(
            f"port {port} on {host} is in use by another program; stop it, or pick "
            f"another port with --port N (or SVC_PORT=N)"
        )


def run_granian(config: Config) -> None:
    """Serve ``create_app(config)`` under granian through ``BufferedFront`` (RSGI)."""
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.http import HTTP1Settings
    from granian.log import LogLevels
    from granian.server import Server

    print(
        f"svc: serving on http://{config.host}:{config.port} ({redact_url(config.database_url)}; granian)",
        flush=True,
    )
    Server(
        "svc_server.commands.core:granian_app",
        address=config.host,
        port=config.port,
        interface=Interfaces.RSGI,
        http=HTTPModes.http1,  # the front frames bodies by HTTP/1.x rules
        # named, not granian's "auto" (which takes rloop or uvloop when either happens
        # to be installed): a warm call runs on the loop, and uvloop's scheduling took
        # 5 to 15 % less CPU a call than asyncio's (bench/loops.py, bench/RESULTS.md)
        loop=Loops.uvloop,
        workers=config.workers,
        backlog=BACKLOG,
        websockets=False,
        http1_settings=HTTP1Settings(
            header_read_timeout=config.read_timeout * 1000, max_buffer_size=HEAD_BUFFER
        ),
        log_level=LogLevels(config.log_level.lower()),
        factory=True,
        # as gunicorn does: a worker that dies is replaced; one that does not stop within
        # 30 s of SIGTERM is killed
        respawn_failed_workers=True,
        workers_kill_timeout=30,
    ).serve()


def granian_app() -> Any:
    """The app one granian worker serves, configured from the ``SVC_*`` environment."""
    config = load_config(os.environ)
    setup_logging(config.log_level)
    app = served_app(config)
    return BufferedFront(
        app,
        threads=config.threads,
        max_body_bytes=config.max_body_bytes,
        read_timeout=config.read_timeout,
        tenant_calls=config.tenant_calls,
        tenant_wait=config.tenant_wait_ms / 1000,
        lane=app.warm,  # cached figures answered on the event loop (``http.warm``)
        resolve=app.account_of,  # each credential's account, for its share (``http.tenants``)
        on_close=app.close,  # a stopping worker writes its leases back
    )


BACKLOG = 2048  # gunicorn's default, kept for both servers


def run_gunicorn(config: Config) -> None:
    """Serve ``create_app(config)`` with gunicorn's threaded workers."""
    # gunicorn is optional (a deployment may prefer it): imported only when chosen
    from gunicorn.app.base import BaseApplication

    from svc_server.servers.wire import BodyGuard

    served: list[SvcApp] = []  # this worker process's app, once loaded

    def worker_exit(server: Any, worker: Any) -> None:
        for app in served:  # a stopping worker writes its leases back
            app.close()

    class _App(BaseApplication):  # type: ignore[misc]  # gunicorn ships no type hints
        def load_config(self) -> None:
            self.cfg.set("worker_exit", worker_exit)
            self.cfg.set("bind", f"{config.host}:{config.port}")
            self.cfg.set("workers", config.workers)
            self.cfg.set("threads", config.threads)
            # gunicorn's threaded worker, answering its own refusals as svc error JSON
            self.cfg.set("worker_class", "svc_server.servers.wire.JsonErrorWorker")
            # gunicorn's ceiling for a request line (its default is 4094), so the app's
            # own SVC_MAX_URL_BYTES check is what a long query meets
            self.cfg.set("limit_request_line", 8190)
            self.cfg.set("timeout", 60)
            self.cfg.set("backlog", BACKLOG)
            self.cfg.set("keepalive", 2)
            self.cfg.set("accesslog", None)
            self.cfg.set("loglevel", config.log_level.lower())

        def load(self) -> Any:
            setup_logging(config.log_level)
            served.append(served_app(config))
            return BodyGuard(served[-1], config.max_body_bytes)

    print(
        f"svc: serving on http://{config.host}:{config.port} ({redact_url(config.database_url)})",
        flush=True,
    )
    _App().run()


def served_app(config: Config) -> SvcApp:
    """The app one server process serves, with the inline webhook worker started in that
    process when ``SVC_INLINE_WORKER`` is on (building an app never starts threads)."""
    store = open_store(  # files svc serve checked: one gone since is an error, not new
        config.database_url,
        pool_size=config.db_pool_size,
        busy_timeout_ms=config.db_busy_timeout_ms,
        create=False,
    )
    app = create_app(config, store=store, migrate=False)
    if config.inline_worker:
        start_inline(
            app.store,
            config,
            clock=app.clock,
            trial_notices=notify_trials_ending,
            data_events=data_events.publish_changes,
        )
    return app


def setup_logging(level: str) -> None:
    """One JSON line per request on stderr; the message is already JSON."""
    logging.basicConfig(level=getattr(logging, level), format="%(message)s", stream=sys.stderr)
