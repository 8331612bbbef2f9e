"""What every answered call leaves behind: a line in its key's request log (written in
batches by the log writer, never by the call) and, at INFO, one JSON line in the access
log. The dispatcher's path (``app``) and the warm lane (``http.warm``) both log here."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from svc_server.http.context import Ctx
from svc_server.runtime.deps import Deps

access_log = logging.getLogger("svc.access")


def log_call(deps: Deps, ctx: Ctx, status: int, started: float) -> None:
    """Log the call ``ctx`` answered with ``status``; ``started`` is its
    ``time.perf_counter()`` on arrival."""
    environ = ctx.request.environ
    if ctx.key_id is not None and ctx.consumer_id is not None:
        deps.request_log.record(
            (
                ctx.consumer_id,
                ctx.key_id,
                int(ctx.now * 1000),
                environ.get("REQUEST_METHOD", ""),
                environ.get("PATH_INFO", ""),
                environ.get("QUERY_STRING", ""),
                status,
                ctx.request_id,
                (time.perf_counter() - started) * 1000,
                ctx.counted,
                ctx.error_code,
            )
        )
        deps.log_writer.ensure()
    if not access_log.isEnabledFor(logging.INFO):
        return
    record: dict[str, Any] = {
        "request_id": ctx.request_id,
        "method": ctx.request.method,
        "path": ctx.request.path[:512],
        "status": status,
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        "consumer_id": ctx.consumer_id,
    }
    access_log.info(json.dumps(record, ensure_ascii=False))
