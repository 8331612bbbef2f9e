"""The HTTP server's own refusals: SPEC's error body, the connection closed after it.

Both bundled servers answer with these (granian's front in ``http.front``, gunicorn's
worker in ``http.wire``), so a client's error handling never meets HTML or an empty body.
"""

from __future__ import annotations

from svc_core.errors import SvcError
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
