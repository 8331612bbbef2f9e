"""``svc init`` and ``svc serve``."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
from typing import Any

from svc_server.app import SvcApp, create_app
from svc_server.commands.base import config_from_args, store_from_args
from svc_server.config import Config
from svc_server.delivery.worker import start_inline


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "init",
        parents=[common],
        help="create or upgrade the database schema (idempotent)",
        description="Create or upgrade the database schema. Running it again changes nothing.",
    )
    p.set_defaults(func=cmd_init)

    p = sub.add_parser(
        "serve",
        parents=[common],
        help="run the HTTP server (gunicorn)",
        description="Run the API with gunicorn: --workers processes x --threads threads.",
    )
    p.set_defaults(func=cmd_serve)


def cmd_init(args: argparse.Namespace) -> int:
    store = store_from_args(args, migrate=False)
    try:
        applied = store.migrate()
        version = store.schema_version()
    finally:
        store.close()
    if applied:
        print(
            f"applied {len(applied)} migration(s): {', '.join(applied)}; schema version {version}"
        )
    else:
        print(f"schema is up to date (version {version})")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    config = config_from_args(args)
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
    store.close()
    run_gunicorn(config)
    return 0


def run_gunicorn(config: Config) -> None:
    """Serve ``create_app(config)`` with gunicorn's threaded workers."""
    from gunicorn.app.base import BaseApplication  # the server extra; only serve needs it

    class _App(BaseApplication):  # type: ignore[misc]  # gunicorn ships no type hints
        def load_config(self) -> None:
            self.cfg.set("bind", f"{config.host}:{config.port}")
            self.cfg.set("workers", config.workers)
            self.cfg.set("threads", config.threads)
            # gunicorn's threaded worker, answering its own refusals as svc error JSON
            self.cfg.set("worker_class", "svc_server.http.wire.JsonErrorWorker")
            # gunicorn's ceiling for a request line (its default is 4094), so the app's
            # own SVC_MAX_URL_BYTES check is what a long query meets
            self.cfg.set("limit_request_line", 8190)
            self.cfg.set("timeout", 60)
            self.cfg.set("accesslog", None)
            self.cfg.set("loglevel", config.log_level.lower())

        def load(self) -> Any:
            setup_logging(config.log_level)
            return served_app(config)

    print(f"svc: serving on http://{config.host}:{config.port} ({config.database_url})", flush=True)
    _App().run()


def served_app(config: Config) -> SvcApp:
    """The app one server process serves, with the inline webhook worker started in that
    process when ``SVC_INLINE_WORKER`` is on (building an app never starts threads)."""
    app = create_app(config, migrate=False)
    if config.inline_worker:
        start_inline(app.store, config, clock=app.clock)
    return app


def setup_logging(level: str) -> None:
    """One JSON line per request on stderr; the message is already JSON."""
    logging.basicConfig(level=getattr(logging, level), format="%(message)s", stream=sys.stderr)
