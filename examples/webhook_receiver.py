"""A minimal receiver for svc webhooks: verify, dedupe, acknowledge.

    SVC_WEBHOOK_SECRET=whsec_... python examples/webhook_receiver.py [--port 8001]
    # (or --secret whsec_...; SVC_WEBHOOK_HOST / SVC_WEBHOOK_PORT also work)
    # listens on http://127.0.0.1:8001/ ; register that URL (with the development
    # setting that allows http and loopback targets) or put it behind an https tunnel.

It verifies ``X-Svc-Signature`` over the raw body with ``svc_core.signing.verify`` and
answers 400 when that fails, so a forged or replayed request is never processed. Events
are deduplicated by ``id`` in an in-memory set: enough for a demo, but it forgets on
restart and is not shared between processes; a real receiver records ids in its database
(a unique column) in the same transaction as the work the event triggers. A duplicate is
answered 200 so svc counts it as delivered.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from werkzeug.serving import run_simple
from werkzeug.wrappers import Request, Response

from svc_core.errors import SignatureVerificationError
from svc_core.signing import secret_key, verify

MAX_BODY = 1024 * 1024
"""svc events are a few hundred bytes; anything near this size is not from svc."""

Handler = Callable[[dict[str, Any]], None]


class Receiver:
    """The WSGI app. ``handle`` is called once per new, verified event."""

    def __init__(
        self,
        secret: str | Sequence[str],
        *,
        handle: Handler | None = None,
        clock: Callable[[], float] = time.time,
        tolerance: int = 300,
    ) -> None:
        for one in [secret] if isinstance(secret, str) else secret:
            secret_key(one)  # a malformed secret fails here, at startup, not per request
        self.secret = secret
        self.handle = handle or _print_event
        self.clock = clock
        self.tolerance = tolerance
        self.seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.respond(Request(environ))(environ, start_response)

    def respond(self, request: Request) -> Response:
        if request.method != "POST":
            return _json(405, {"error": "POST only"}, Allow="POST")
        if (request.content_length or 0) > MAX_BODY:
            return _json(413, {"error": "body too large"})
        body = request.get_data(cache=False, as_text=False)
        try:
            event = verify(
                body,
                request.headers.get("X-Svc-Signature", ""),
                self.secret,
                now=self.clock(),
                tolerance=self.tolerance,
            )
        except SignatureVerificationError as exc:
            return _json(400, {"error": exc.reason})
        event_id = str(event.get("id", ""))
        with self._lock:
            duplicate = event_id in self.seen
            self.seen.add(event_id)
        if not duplicate:
            self.handle(event)
        return _json(200, {"received": True, "duplicate": duplicate})


def _json(status: int, body: dict[str, Any], **headers: str) -> Response:
    return Response(json.dumps(body), status=status, mimetype="application/json", headers=headers)


def _print_event(event: dict[str, Any]) -> None:
    print(f"{event.get('type')} {event.get('id')}: {event.get('data')}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the receiver; flags win over ``SVC_WEBHOOK_SECRET``/``_HOST``/``_PORT``."""
    env = os.environ
    parser = argparse.ArgumentParser(description="Receive and verify svc webhooks.")
    parser.add_argument(
        "--secret",
        default=env.get("SVC_WEBHOOK_SECRET"),
        help="the endpoint's whsec_... secret (env SVC_WEBHOOK_SECRET)",
    )
    parser.add_argument(
        "--host",
        default=env.get("SVC_WEBHOOK_HOST", "127.0.0.1"),
        help="address to listen on (env SVC_WEBHOOK_HOST, default 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(env.get("SVC_WEBHOOK_PORT", "8001")),
        help="port to listen on (env SVC_WEBHOOK_PORT, default 8001)",
    )
    args = parser.parse_args(argv)
    if not args.secret:
        sys.exit("give the endpoint's whsec_... secret with --secret or SVC_WEBHOOK_SECRET")
    run_simple(args.host, args.port, Receiver(args.secret))


if __name__ == "__main__":
    main()
