"""Recompute a figure when its data changes: a receiver of svc's ``data.updated``.

    SVC_WEBHOOK_SECRET=whsec_... SVC_API_KEY=svc_... \\
        python examples/data_updated_receiver.py --district 11680 --property-type office
    # listens on http://127.0.0.1:8001/ ; register it with events ["data.updated"] and
    # filters {"sigungu_codes": ["11680"], "property_types": ["office"]}, so svc sends
    # only what this receiver follows (it checks again: filters can change).

Verifying, deduplicating and acknowledging are ``examples/webhook_receiver.py``'s
``Receiver``; this adds the handler. For each change of a district and type it follows,
it fetches the change's ``pulse_url`` (the pulse answer whose rows the change moved)
with the API key and keeps the rows with the ``_meta.data_version`` they were computed
from: the figure, pinned. An answer older than the one it holds (a slow fetch, or an
event redelivered late) is ignored, so figures only move forward.

The fetch runs on a worker thread, not in the request: svc gives a receiver 5 seconds
to answer, and a delivery that times out is not retried. A receiver that was down
catches up with ``GET /api/v1/real-estate/changes?since=<the latest_cursor it kept>``,
which serves the same records as the events. A fetch that fails is logged on stderr
(the change, the link and why), never dropped silently.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from werkzeug.serving import run_simple

try:
    from examples.webhook_receiver import Receiver
except ModuleNotFoundError:  # run as a script: its own folder is on sys.path
    from webhook_receiver import Receiver  # type: ignore[no-redef]

Fetch = Callable[[str, str], dict[str, Any]]
"""``fetch(url, api_key)``: a JSON answer of the svc API."""


def http_fetch(url: str, api_key: str) -> dict[str, Any]:
    """GET a link of a change (an ``https`` URL of the svc API; ``http`` for a
    development server) with the API key."""
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"not a link of the svc API: {url[:80]!r}")
    request = urllib.request.Request(url, headers={"X-API-Key": api_key})  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (checked)
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def describe(exc: BaseException) -> str:
    """What went wrong with a fetch, in one line: the API's error code and message for
    an HTTP error, the reason for a connection that failed."""
    if isinstance(exc, urllib.error.HTTPError):
        try:
            error = json.loads(exc.read())["error"]
            return f"HTTP {exc.code} {error['code']}: {error['message']}"
        except (ValueError, KeyError, TypeError, OSError):
            return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return (
            f"{exc.reason} (is the link's address the server's? svc takes it from "
            "SVC_PUBLIC_URL of svc serve)"
        )
    return f"{type(exc).__name__}: {exc}"


class Recomputer:
    """Keeps the pulse rows of the followed districts and types, recomputed when a
    ``data.updated`` says they moved. ``figures`` maps a ``pulse_url`` to
    ``{"data_version", "change_id", "rows"}``."""

    def __init__(
        self,
        api_key: str,
        *,
        districts: Iterable[str] = (),
        property_types: Iterable[str] = (),
        fetch: Fetch = http_fetch,
    ) -> None:
        self.api_key = api_key
        self.districts = set(districts)
        self.property_types = set(property_types)
        self.fetch = fetch
        self.figures: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def follows(self, change: dict[str, Any]) -> bool:
        """Whether a change concerns a followed district and type (none given: all)."""
        if self.districts and change["sigungu_code"] not in self.districts:
            return False
        return not self.property_types or bool(self.property_types & set(change["property_types"]))

    def __call__(self, event: dict[str, Any]) -> None:
        """Handle one verified, new event (other event types are left alone)."""
        if event.get("type") != "data.updated":
            return
        change = event["data"]["change"]
        if not self.follows(change):
            return
        url = str(change["pulse_url"])
        try:
            answer = self.fetch(url, self.api_key)
        except Exception as exc:  # on a worker thread: nobody else would ever see it
            print(
                f"data.updated change {change['id']}: fetching {url} failed: {describe(exc)}",
                file=sys.stderr,
                flush=True,
            )
            return
        version = answer["_meta"]["data_version"]
        with self._lock:
            held = self.figures.get(url)
            if held is not None and held["data_version"] >= version:
                return  # what we hold is as new already
            self.figures[url] = {
                "data_version": version,
                "change_id": change["id"],
                "rows": answer["data"],
            }
        print(f"recomputed {url} at data_version {version} (change {change['id']})", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the receiver; flags win over ``SVC_WEBHOOK_SECRET``, ``SVC_API_KEY``."""
    env = os.environ
    parser = argparse.ArgumentParser(description="Recompute figures on svc data.updated.")
    parser.add_argument("--secret", default=env.get("SVC_WEBHOOK_SECRET"))
    parser.add_argument("--api-key", default=env.get("SVC_API_KEY"))
    parser.add_argument("--district", action="append", default=[], help="repeatable")
    parser.add_argument("--property-type", action="append", default=[], help="repeatable")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    if not args.secret or not args.api_key:
        sys.exit("give --secret (SVC_WEBHOOK_SECRET) and --api-key (SVC_API_KEY)")
    recompute = Recomputer(args.api_key, districts=args.district, property_types=args.property_type)
    pool = ThreadPoolExecutor(max_workers=2)
    run_simple(
        args.host, args.port, Receiver(args.secret, handle=lambda e: pool.submit(recompute, e))
    )


if __name__ == "__main__":
    main()
