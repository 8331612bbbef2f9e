"""The per-request context handed to handlers: plain values, no globals."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
from werkzeug.wrappers import Request, Response

from svc_core.caller import Caller

if TYPE_CHECKING:
    from svc_server.app import SvcApp


@attrs.define(kw_only=True)
class Ctx:
    """What one request knows as it moves through the pipeline."""

    app: SvcApp
    request: Request
    request_id: str
    now: float
    params: dict[str, str] = attrs.field(factory=dict)
    caller: Caller | None = None
    user_id: str | None = None
    session_id: str | None = None
    consumer_id: str | None = None
    response_headers: dict[str, str] = attrs.field(factory=dict)
    after: list[Callable[[Response], None]] = attrs.field(factory=list)
    log: dict[str, Any] = attrs.field(factory=dict)
