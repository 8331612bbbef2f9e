"""Where a pulse call's time goes, in-process (no HTTP server): stage timings and a profile.

Serves ``GET /api/v1/real-estate/pulse`` through the WSGI app ``n`` times on a store you
give (for instance the 2M-transaction database ``http_bench.py`` builds), with a fresh
enterprise consumer, and prints microseconds of thread CPU per call for each stage:
key check, admission (rate limit + quota), the pulse service, the JSON response, and the
whole app; then the same call through the warm lane (``http.warm``) that ``svc serve``
answers it with on a kept-alive connection. ``--profile`` adds cProfile's top functions by own time; ``--gzip`` sends
``Accept-Encoding: gzip`` (the answer's kept gzip form, spliced per call).

    python bench/profile_pulse.py /path/to/bench.db 3000 [--profile] [--gzip]
    PYTHONPATH=/tmp/old/src python bench/profile_pulse.py ...   # an older revision's src
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import functools
import os
import pstats
import time
from typing import Any

from werkzeug.test import EnvironBuilder

from svc_server.app import SvcApp, admission, create_app
from svc_server.config import Config
from svc_server.handlers import realestate as handler
from svc_server.runtime.deps import new_id
from svc_server.services import callers, consumers
from svc_server.services import realestate as service
from svc_server.store import Store, open_store
from svc_server.store.accounts import AccountsRepo

PULSE = "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office&transaction_type=sale"
SPENT: collections.defaultdict[str, float] = collections.defaultdict(float)


def ignore_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
    """A WSGI ``start_response`` that keeps nothing: the bench reads only the body."""
    return None


def timed(owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its thread CPU time to ``SPENT[label]``."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] += time.thread_time() - start

    setattr(owner, name, wrapper)


def unmetered_app(store: Store) -> tuple[SvcApp, str]:
    """The app on ``store`` and the key of a new enterprise consumer whose rate limit and
    quota no benchmark reaches (sessions are not used: a random secret)."""
    made = consumers.create_consumer(
        store,
        plan="enterprise",
        now=time.time(),
        entropy=os.urandom(16),
        ids=new_id,
        rate_limit=10**8,
        monthly_quota=10**9,
        allow_duplicate_owner=True,
    )
    app = create_app(Config(secret_key=os.urandom(24).hex()), store=store)
    return app, str(made.api_key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", help="a SQLite database file with data")
    parser.add_argument("n", type=int, nargs="?", default=3000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--gzip", action="store_true", help="send Accept-Encoding: gzip")
    args = parser.parse_args()
    store = open_store(f"sqlite:///{args.db}")
    store.migrate()
    app, api_key = unmetered_app(store)
    environ = EnvironBuilder(
        PULSE,
        headers=[("X-API-Key", api_key), *([("Accept-Encoding", "gzip")] if args.gzip else [])],
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    ).get_environ()

    def call() -> None:
        b"".join(app(dict(environ), ignore_start))

    for _ in range(200):  # fill the answer cache and the page cache
        call()
    started = time.perf_counter()
    for _ in range(args.n):
        call()
    plain = (time.perf_counter() - started) / args.n * 1e6
    print(f"{plain:8.1f} µs  whole app, wall clock, no stage timers")
    lane = getattr(app, "warm", None)  # the warm lane (issue 32), when this src has it
    if lane is not None:
        best = float("inf")
        for _ in range(5):  # the best of five batches: a batch that refills a lease is slower
            took, answered = 0.0, 0
            for _ in range(max(1, args.n // 5)):
                warm_started = time.perf_counter()
                answer = lane(dict(environ))
                if answer is None:  # a lease being refilled: the dispatcher's way
                    call()
                    continue
                took += time.perf_counter() - warm_started
                answered += 1
            if answered:
                best = min(best, took / answered * 1e6)
        print(f"{best:8.1f} µs  warm lane (http.warm), wall clock, best batch")
    try:
        from svc_server.services.leases import LeaseBook as book
    except ImportError:  # an older src on PYTHONPATH (a baseline): no leases to time
        book = None  # type: ignore[assignment,misc]
    for owner, name, label in (
        (SvcApp, "wsgi_app", "whole app"),
        (admission, "admit", "auth (key + admission)"),
        (callers, "authenticate_key", "  key check"),
        (book, "admit", "  admission (leases)"),
        (AccountsRepo, "rate_admit", "    admission write"),
        (admission, "settle", "settle (quota, headers)"),
        (handler, "_run", "handler"),
        (service, "pulse", "  pulse service"),
        (handler, "_render", "  encoding (cache misses)"),
    ):
        if owner is not None and hasattr(owner, name):
            timed(owner, name, label)
    SPENT.clear()
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    for _ in range(args.n):
        call()
    if profiler:
        profiler.disable()
    for label, seconds in SPENT.items():
        print(f"{seconds / args.n * 1e6:8.1f} µs  {label}")
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
