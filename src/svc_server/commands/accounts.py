"""``svc consumer ...`` and ``svc key ...``: operator administration of accounts."""

from __future__ import annotations

import argparse
import json
import os
import time
from contextlib import closing
from typing import Any

from svc_core.accounts import keys as core_keys
from svc_core.accounts import plans
from svc_core.convert import to_json
from svc_core.errors import NotFound
from svc_core.params import ascii_int
from svc_server.commands.base import (
    actions,
    checked,
    counted,
    print_columns,
    print_items,
    print_table,
    store_from_args,
)
from svc_server.runtime.deps import new_id
from svc_server.services import consumers, keys
from svc_server.services.membership import parse_id

_positive = checked(ascii_int, "a whole number", lambda value: value >= 0, "0 or more")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    consumer = actions(sub, common, "consumer")

    p = consumer.add("create", cmd_create, "create a consumer and print its id and a live API key")
    p.add_argument(
        "--plan", required=True, choices=list(plans.DEFAULT_PLANS), help="the consumer's plan"
    )
    p.add_argument("--email", help="the owner's email (now, or at first sign-in)")
    p.add_argument("--company", help="company name shown on invitations")
    p.add_argument("--monthly-quota", type=_positive, help="override the plan's monthly quota")
    p.add_argument("--rate-limit", type=_positive, help="override the plan's per-minute limit")
    p.add_argument(
        "--allow-duplicate-owner",
        action="store_true",
        help="create it even when --email already owns a consumer (refused otherwise)",
    )
    p.add_argument("--json", action="store_true", help='print {"consumer_id", "api_key"}')

    p = consumer.add("list", cmd_list, "list consumers: plan, status, owner email, working keys")
    p.add_argument("--json", action="store_true", help="print JSON lines")

    p = consumer.add(
        "show", cmd_show, "show a consumer: plan, owner, keys, members and this month's usage"
    )
    p.add_argument("consumer_id", help="the consumer's id")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = consumer.add("set-plan", cmd_set_plan, "change a consumer's plan")
    p.add_argument("consumer_id", help="the consumer's id")
    p.add_argument("plan", choices=list(plans.DEFAULT_PLANS), help="the new plan")

    key = actions(sub, common, "key")
    p = key.add("create", cmd_key_create, "make a new key for a consumer and print it (once)")
    p.add_argument("consumer_id", help="the consumer's id")
    p.add_argument("--label", default="operator", help="the key's label (default operator)")
    p.add_argument("--mode", choices=core_keys.MODES, default="live", help="live (default) or test")
    p.add_argument(
        "--scope",
        choices=core_keys.SCOPES,
        default="read_only",
        help="read_only (default: data calls only) or admin",
    )
    p.add_argument(
        "--allow-ip",
        action="append",
        default=[],
        metavar="CIDR",
        help="accept calls only from this address or network (repeat for more)",
    )
    p.add_argument("--json", action="store_true", help="print the key as one JSON object")
    p = key.add("list", cmd_key_list, "list a consumer's keys (never secrets)")
    p.add_argument("consumer_id", help="the consumer's id")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p = key.add("revoke", cmd_key_revoke, "revoke a key (key.revoked with actor admin)")
    p.add_argument("key_id", metavar="KEY", help="the key's id, or its prefix as listed")


def cmd_create(args: argparse.Namespace) -> int:
    """Create a consumer with one live API key (printed once)."""
    with closing(store_from_args(args)) as store:
        out = consumers.create_consumer(
            store,
            plan=args.plan,
            now=time.time(),
            entropy=os.urandom(16),
            ids=new_id,
            email=args.email,
            company=args.company,
            monthly_quota=args.monthly_quota,
            rate_limit=args.rate_limit,
            allow_duplicate_owner=args.allow_duplicate_owner,
        )
    if args.json:
        print(json.dumps({"consumer_id": out.consumer_id, "api_key": out.api_key}))
    else:
        print(f"consumer {out.consumer_id} (plan {out.plan})")
        print(f"API key (shown once): {out.api_key}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """List every consumer, oldest first. WORKING KEYS (active_keys in --json) counts
    the keys that work now: active keys and rotated keys still in their grace period;
    expired and revoked keys are not counted."""
    with closing(store_from_args(args, reads_only=True)) as store:
        lines = consumers.list_consumers(store, time.time())
    print_items(
        [to_json(line) for line in lines],
        args.json,
        {
            "ID": "id",
            "PLAN": "plan",
            "STATUS": "status",
            "OWNER EMAIL": "owner_email",
            "WORKING KEYS": "active_keys",
            "COMPANY": "company_name",
            "CREATED": "created_at",
        },
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with closing(store_from_args(args, reads_only=True)) as store:
        detail = consumers.consumer_detail(store, args.consumer_id, time.time())
    item = to_json(detail)
    if args.json:
        print(json.dumps(item, ensure_ascii=False))
        return 0
    usage = item["usage"]
    trial = f" (trial ends {item['trial_ends_at']})" if item["trial_ends_at"] else ""
    print_table(
        ("consumer", item["id"]),
        [
            ("plan", f"{item['plan']}{trial}"),
            ("status", item["status"]),
            ("subscription", item["subscription_status"]),
            ("owner email", item["owner_email"]),
            ("company", item["company_name"]),
            ("created", item["created_at"]),
            ("rate limit", f"{item['rate_limit_per_minute']} calls a minute"),
            (
                f"usage {usage['month']}",
                f"{usage['live']} of {usage['monthly_quota']} live calls, "
                f"{counted(usage['test'], 'test call', 'test calls')}",
            ),
        ],
    )
    print(f"\nkeys ({len(item['keys'])})")
    print_columns(
        item["keys"],
        {
            "ID": "id",
            "PREFIX": "prefix",
            "MODE": "mode",
            "STATUS": "status",
            "LABEL": "label",
            "GRACE UNTIL": "grace_until",
            "LAST USED": "last_used_at",
        },
    )
    print(f"\nmembers ({len(item['members'])})")
    print_columns(
        item["members"],
        {
            "EMAIL": "email",
            "ROLE": "role",
            "STATUS": "status",
            "INVITED": "invited_at",
            "JOINED": "joined_at",
        },
    )
    return 0


def cmd_set_plan(args: argparse.Namespace) -> int:
    consumer_id = parse_id(args.consumer_id, "consumer id")
    with closing(store_from_args(args)) as store, store.db.transaction() as tx:
        if not store.accounts.update_consumer(tx, consumer_id, {"plan": args.plan}):
            raise NotFound(f"no consumer {consumer_id}")
    print(f"consumer {consumer_id} is now on plan {args.plan}")
    return 0


def cmd_key_create(args: argparse.Namespace) -> int:
    """Make a new API key for an existing consumer, within its plan's key limit, and
    print its plaintext once: it is stored only as a digest."""
    body = {
        "label": args.label,
        "mode": args.mode,
        "scope": args.scope,
        "ip_allowlist": args.allow_ip,
    }
    with closing(store_from_args(args)) as store:
        made = keys.create_key_for_consumer(
            store, args.consumer_id, body, now=time.time(), entropy=os.urandom(16), ids=new_id
        )
    if args.json:
        print(json.dumps(to_json(made), ensure_ascii=False))
    else:
        print(f"key {made.id} ({made.prefix}, {made.mode}, {made.scope}) for {args.consumer_id}")
        print(f"API key (shown once): {made.key}")
    return 0


def cmd_key_list(args: argparse.Namespace) -> int:
    """A consumer's keys, oldest first: id, prefix, label, mode, scope, status now
    (active, grace, expired, revoked), created, last used and the end of a rotated key's
    grace period (UTC)."""
    consumer_id = parse_id(args.consumer_id, "consumer id")
    with closing(store_from_args(args, reads_only=True)) as store:
        now = time.time()
        if store.accounts.get_consumer(consumer_id) is None:
            raise NotFound(f"No consumer {consumer_id}.", hint="See svc consumer list.")
        with store.db.transaction(write=False) as tx:
            rows = store.accounts.keys_of_consumer(tx, consumer_id)
    print_items(
        [to_json(keys.in_force(row, now)) for row in rows],
        args.json,
        {
            "ID": "id",
            "PREFIX": "prefix",
            "LABEL": "label",
            "MODE": "mode",
            "SCOPE": "scope",
            "STATUS": "status",
            "CREATED": "created_at",
            "LAST USED": "last_used_at",
            "GRACE UNTIL": "grace_until",
        },
    )
    return 0


def cmd_key_revoke(args: argparse.Namespace) -> int:
    with closing(store_from_args(args)) as store:
        key_id = keys.key_id_of(store, args.key_id)
        keys.revoke_key(store, key_id, time.time(), actor="admin")
    print(f"key {key_id} revoked")
    return 0
