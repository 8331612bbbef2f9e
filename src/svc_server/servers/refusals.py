"""The HTTP server's own refusals: SPEC's error body, the connection closed after it.

Both bundled servers answer with these (granian's front in ``http.front``, gunicorn's
worker in ``http.wire``), so a client's error handling never meets HTML or an empty body.
"""

from __future__ import annotations

import os

from svc_core import requestid
from svc_core.errors import InvalidParams, PayloadTooLarge, SvcError
from svc_server.http.responses import dumps


class RequestTimeout(SvcError):
    """A request whose body did not arrive in time (the server's read deadline)."""

    status = 408
    code = "REQUEST_TIMEOUT"
    default_message = "The request did not arrive in time."


REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    413: "Content Too Large",
    414: "URI Too Long",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
}


def error_parts(err: SvcError, request_id: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body of a refusal; the connection is closed after it."""
    body = dumps(err.body(request_id))
    headers = [
        ("Connection", "close"),
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        ("X-Request-ID", request_id),
        *err.headers.items(),  # Retry-After of a 429
    ]
    return err.status, headers, body


def refusal_parts(err: SvcError, supplied: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
    """``error_parts`` under the request id the client ``supplied`` when it is valid,
    else a new one."""
    return error_parts(err, requestid.resolve(supplied, os.urandom(16)))


def body_too_large(max_body_bytes: int) -> PayloadTooLarge:
    """The 413 for a body over ``max_body_bytes``, declared or read."""
    return PayloadTooLarge(f"The body is larger than {max_body_bytes} bytes.")


def body_broken() -> InvalidParams:
    """The 400 for a body that ended early or in a malformed chunk."""
    return InvalidParams("The request body is malformed or incomplete.")
