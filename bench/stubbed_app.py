"""svc's app with parts of the request path stubbed, to show where pulse's time goes.

Not a configuration anyone runs: ``bench/http_bench.py --decompose`` serves it beside the
real app so the table shows what each stubbed part costs. ``SVC_BENCH_STUB`` names what
to stub (comma-separated):

- ``admit``: admission and settlement: no rate limit, no quota, nothing counted (since
  issue 17's leases a call admitted from a lease writes nothing either, so this shows
  what the in-memory lease bookkeeping costs);
- ``key``: the API-key lookup (each key is read from the database once, then remembered,
  and never counts as due for its once-a-minute ``last_used_at`` write).

Everything else (routing, parameter checks, the cached pulse answer, the envelope, JSON,
werkzeug, granian and svc's front) runs as in ``svc serve``.
"""

from __future__ import annotations

import os
import time
from typing import Any

import attrs

from svc_server.app import create_app
from svc_server.commands.core import setup_logging
from svc_server.config import load_config
from svc_server.services import access
from svc_server.store import accounts

STUBS = set(filter(None, os.environ.get("SVC_BENCH_STUB", "").split(",")))

if "admit" in STUBS:
    _real_admit = access.admit

    def _admit(store: Any, caller: Any, now: float, **kwargs: Any) -> Any:
        if caller.auth_method != "api_key":
            return _real_admit(store, caller, now, **kwargs)
        remaining = caller.rate_limit_per_minute - 1
        return access.Admitted(
            caller=attrs.evolve(caller, rate_remaining=remaining), reservation=None
        )

    access.admit = _admit

if "key" in STUBS:
    _lookup = accounts.AccountsRepo.key_by_hash
    _known: dict[str, Any] = {}

    def _key_by_hash(self: Any, key_hash: str) -> Any:
        if key_hash not in _known:
            _known[key_hash] = _lookup(self, key_hash)
        row = _known[key_hash]
        if row is not None:  # as if just used: no last_used_at write either
            row = attrs.evolve(row, last_used_at=int(time.time()))
        return row

    accounts.AccountsRepo.key_by_hash = _key_by_hash  # type: ignore[method-assign]

config = load_config(os.environ)  # the same SVC_* settings as svc serve
setup_logging(config.log_level)
app = create_app(config, migrate=False)
