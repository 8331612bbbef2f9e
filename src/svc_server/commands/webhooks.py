"""``svc worker``, ``svc webhook ...`` and ``svc subscription relay``: webhook delivery,
the operators' listings of endpoints and deliveries, and event relays."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import closing
from typing import Any

from svc_core.convert import to_json
from svc_core.errors import InvalidParams
from svc_core.instants import iso_or_none
from svc_core.paging import PAGE_DEFAULT, PAGE_MAX
from svc_server.commands.base import (
    actions,
    checked,
    command_parser,
    config_from_args,
    counted,
    print_items,
    store_from_args,
)
from svc_server.commands.core import setup_logging
from svc_server.delivery.worker import DEFAULT_INTERVAL, Worker
from svc_server.services import data_events, delivery_log
from svc_server.services import events as event_service
from svc_server.services import webhooks as webhook_service
from svc_server.services.membership import parse_id

_interval = checked(
    float,
    "a number of seconds",
    lambda value: 0.05 <= value <= 3600,
    "between 0.05 and 3600 seconds",
)


def _one_to(high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 to ``high``, in ASCII digits."""

    def whole_number(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {high}")
        return int(text)

    return whole_number


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(sub, common, "worker", cmd_worker)
    p.add_argument(
        "--once", action="store_true", help="send everything queued now, then exit (for cron)"
    )
    p.add_argument(
        "--interval",
        type=_interval,
        default=DEFAULT_INTERVAL,
        metavar="S",
        help=f"seconds between polls when idle (default {DEFAULT_INTERVAL:g})",
    )
    p.add_argument(
        "--concurrency",
        type=_one_to(64),
        default=8,
        metavar="N",
        help="sends in flight at once (default 8)",
    )

    webhook = actions(sub, common, "webhook")
    p = webhook.add(
        "endpoints", cmd_endpoints, "list webhook endpoints (never secrets), oldest first"
    )
    p.add_argument("--consumer", metavar="ID", help="only this consumer's endpoints")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p = webhook.add(
        "deliveries", cmd_deliveries, "list webhook deliveries in any state, newest first"
    )
    p.add_argument("--consumer", metavar="ID", help="only deliveries to this consumer's endpoints")
    p.add_argument("--endpoint", metavar="ID", help="only deliveries to this endpoint")
    p.add_argument(
        "--status", choices=delivery_log.DELIVERY_STATUSES, help="only deliveries in this state"
    )
    p.add_argument(
        "--limit",
        type=_one_to(PAGE_MAX),
        default=PAGE_DEFAULT,
        metavar="N",
        help=f"at most N rows, 1 to {PAGE_MAX} (default {PAGE_DEFAULT})",
    )
    p.add_argument("--json", action="store_true", help="print JSON lines")

    subscription = actions(sub, common, "subscription")
    p = subscription.add(
        "relay", cmd_relay, "apply a subscription change and publish its webhook event"
    )
    p.add_argument("--consumer", required=True, metavar="ID", help="the consumer's id")
    p.add_argument(
        "--type",
        required=True,
        choices=event_service.RELAY_KINDS,
        dest="kind",
        help="the subscription event to relay",
    )
    p.add_argument("--json-file", metavar="PATH", help="the subscription as a JSON object")
    p.add_argument("--subscription-id", metavar="ID", help="the processor's subscription id")
    p.add_argument("--status", help="trialing, active, past_due, canceled or unpaid")
    p.add_argument("--current-period-end", metavar="TIME", help="end of the paid period")
    p.add_argument("--trial-end", metavar="TIME", help="end of the trial")
    p.add_argument("--canceled-at", metavar="TIME", help="cancelled only (default now)")
    p.add_argument(
        "--cancel-at-period-end", action="store_true", default=None, help="cancelled only"
    )
    p.add_argument(
        "--event-id", metavar="ID", help="the processor's event id: relaying it again is a no-op"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def cmd_worker(args: argparse.Namespace) -> int:
    """Send queued webhook deliveries (5 s timeout, no retries) and publish
    subscription.trial_will_end notices. Run as many as you like; they share work
    through the database. SIGTERM finishes the sends in flight, then exits."""
    config = config_from_args(args)
    setup_logging(config.log_level)
    store = store_from_args(args)
    worker = Worker(
        store,
        allow_private=config.webhook_allow_private,
        concurrency=args.concurrency,
        trial_notices=event_service.notify_trials_ending,
        data_events=data_events.publish_changes,
    )
    try:
        if args.once:
            sent = worker.run_once()
            print(f"svc: worker sent {counted(sent, 'delivery', 'deliveries')}")
            return 0
        stop = threading.Event()
        previous = {
            sig: signal.signal(sig, lambda *_: stop.set())
            for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            print(f"svc: worker {worker.worker_id} polling every {args.interval:g}s", flush=True)
            worker.run(stop, args.interval)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        print("svc: worker stopped", flush=True)
        return 0
    finally:
        store.close()


def cmd_endpoints(args: argparse.Namespace) -> int:
    """List every webhook endpoint, revoked and disabled ones included, with its
    consumer, status and consecutive failures. Never a signing secret."""
    with closing(store_from_args(args, reads_only=True)) as store:
        rows = webhook_service.all_endpoints(store, args.consumer)
    print_items(
        [{**to_json(row), "consumer_id": row.consumer_id} for row in rows],
        args.json,
        {
            "ID": "id",
            "CONSUMER": "consumer_id",
            "STATUS": "status",
            "FAILURES": "consecutive_failures",
            "EVENTS": lambda i: ",".join(i["events"]) or "all",
            "URL": "url",
            "CREATED": "created_at",
        },
    )
    return 0


def cmd_deliveries(args: argparse.Namespace) -> int:
    """List deliveries newest first, queued and in-flight ones too (the dashboard's log
    shows only finished ones). Never a payload or a secret."""
    with closing(store_from_args(args, reads_only=True)) as store:
        rows = delivery_log.recent_deliveries(
            store,
            consumer_id=args.consumer,
            endpoint_id=args.endpoint,
            status=args.status,
            limit=args.limit,
        )
    print_items(
        [{**to_json(row), "sent_at": iso_or_none(row.sent_at)} for row in rows],
        args.json,
        {
            "ID": "id",
            "CREATED": "created_at",
            "EVENT": "event_type",
            "STATUS": "status",
            "HTTP": "http_status",
            "MS": "duration_ms",
            "ENDPOINT": "endpoint_id",
            "ERROR": lambda i: (i["error_message"] or "")[:60] or None,
        },
    )
    return 0


def _subscription(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if args.json_file:
        try:
            if args.json_file == "-":
                text = sys.stdin.read()
            else:
                with open(args.json_file, encoding="utf-8") as handle:
                    text = handle.read()
            loaded = json.loads(text)
        except (OSError, ValueError) as exc:
            raise InvalidParams(f"cannot read the subscription JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise InvalidParams("the subscription JSON must be an object")
        data.update(loaded)
    flags = {
        "id": args.subscription_id,
        "status": args.status,
        "current_period_end": args.current_period_end,
        "trial_end": args.trial_end,
        "canceled_at": args.canceled_at,
        "cancel_at_period_end": args.cancel_at_period_end,
    }
    data.update({k: v for k, v in flags.items() if v is not None})
    return data


def cmd_relay(args: argparse.Namespace) -> int:
    """Set a consumer's subscription status and publish subscription.updated or
    subscription.cancelled. Give the subscription as flags or as a JSON object
    (--json-file, '-' for stdin, keys id, status, current_period_end, trial_end,
    canceled_at, cancel_at_period_end); flags override the file. Times are Unix seconds
    or ISO-8601 with a zone."""
    consumer_id = parse_id(args.consumer, "consumer id")
    subscription = _subscription(args)
    with closing(store_from_args(args)) as store:
        out = event_service.relay_subscription(
            store, consumer_id, args.kind, subscription, time.time(), event_id=args.event_id
        )
    if args.json:
        print(json.dumps(out))
    else:
        queued = counted(out["queued"], "delivery", "deliveries")
        print(f"{out['event_type']} {out['event_id']}: {queued} queued")
    return 0
