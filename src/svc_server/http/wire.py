"""Requests gunicorn refuses before the app sees them, answered as SPEC error JSON.

gunicorn parses the request line and headers itself and answers a malformed or
oversized one with an HTML page. ``JsonErrorWorker`` (the worker ``svc serve`` runs) is
gunicorn's threaded worker with that answer replaced by the same ``{error: {code,
message, request_id}}`` body every other svc error has, so a client's error handling
never meets HTML: 414 for a request line over the limit, 431 for headers over theirs,
400 for anything malformed, 500 for a failure of the server itself.
"""

from __future__ import annotations

import os
from typing import Any

from gunicorn.http import errors as wire_errors
from gunicorn.util import write_nonblock
from gunicorn.workers.gthread import ThreadWorker

from svc_core import requestid
from svc_core.errors import (
    HeadersTooLarge,
    InvalidParams,
    ServerError,
    SvcError,
    UriTooLong,
)
from svc_server.http.responses import dumps


def wire_error(exc: BaseException) -> SvcError:
    """The svc error for an exception gunicorn raised while reading a request."""
    if isinstance(exc, wire_errors.LimitRequestLine):
        return UriTooLong(f"The request line is too long ({exc}).")
    if isinstance(exc, wire_errors.LimitRequestHeaders):
        return HeadersTooLarge(f"Request headers too large ({exc}).")
    if isinstance(exc, wire_errors.InvalidResponseHeader | wire_errors.ConfigurationProblem):
        return ServerError("Internal error.")
    if isinstance(exc, wire_errors.ParseException | wire_errors.NoMoreData):
        return InvalidParams(f"Malformed HTTP request: {str(exc)[:200]}")
    return ServerError("Internal error.")


def error_bytes(err: SvcError, request_id: str) -> bytes:
    """A whole HTTP/1.1 response (connection closed after it) carrying ``err``."""
    body = dumps(err.body(request_id))
    reason = {400: "Bad Request", 414: "URI Too Long", 431: "Request Header Fields Too Large"}
    head = (
        f"HTTP/1.1 {err.status} {reason.get(err.status, 'Internal Server Error')}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-ID: {request_id}\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


class JsonErrorWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn ships no type hints
    """gunicorn's gthread worker, answering its own refusals as svc error JSON."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        err = wire_error(exc)
        if err.status >= 500:
            self.log.exception("Error handling request")
        else:
            peer = addr[0] if addr else ""
            self.log.warning("Invalid request from ip=%s: %s", peer, exc)
        try:
            write_nonblock(client, error_bytes(err, requestid.generate(os.urandom(16))))
        except Exception:
            self.log.debug("Failed to send error message.")
