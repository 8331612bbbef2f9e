"""svc's app with parts of the request path stubbed, to show where pulse's time goes.

Not a configuration anyone runs: ``bench/http_bench.py --decompose`` serves it beside the
real app so the table shows what each stubbed part costs. ``SVC_BENCH_STUB`` names what
to stub (comma-separated):

- ``admit``: the write transaction that admits the call under the rate limit and holds
  its quota unit (answers "admitted, unit held"; the settle still writes);
- ``key``: the API-key lookup (each key is read from the database once, then remembered,
  and never counts as due for its once-a-minute ``last_used_at`` write).

Everything else (routing, parameter checks, the cached pulse answer, the envelope, JSON,
werkzeug, granian and svc's front) runs as in ``svc serve``.
"""

from __future__ import annotations

import os
import time
from typing import Any

from svc_server.app import create_app
from svc_server.commands.core import setup_logging
from svc_server.config import load_config
from svc_server.store import accounts
from svc_server.store.holds import HoldState

STUBS = set(filter(None, os.environ.get("SVC_BENCH_STUB", "").split(",")))

if "admit" in STUBS:

    def _admit(
        self: Any, bucket: str, now_ms: int, window_ms: int, limit: int, usage: Any = None
    ) -> Any:
        hold = None
        if usage is not None:  # as if the quota unit were held (settle finds no hold row)
            hold = HoldState(settled=0, held=1, limit=usage.limit, taken=True)
        return accounts.Admission(in_window=0, admitted=True, hold=hold)

    accounts.AccountsRepo.admit = _admit  # type: ignore[method-assign]

if "key" in STUBS:
    _lookup = accounts.AccountsRepo.key_by_hash
    _known: dict[str, Any] = {}

    def _key_by_hash(self: Any, key_hash: str) -> Any:
        if key_hash not in _known:
            _known[key_hash] = _lookup(self, key_hash)
        row = _known[key_hash]
        if row is not None:  # as if just used: no last_used_at write either
            row["last_used_at"] = int(time.time())
        return row

    accounts.AccountsRepo.key_by_hash = _key_by_hash  # type: ignore[method-assign]

config = load_config(os.environ)  # the same SVC_* settings as svc serve
setup_logging(config.log_level)
app = create_app(config, migrate=False)
