"""Requests gunicorn refuses before the app sees them, answered as SPEC error JSON.

gunicorn parses the request line and headers itself and answers a malformed or
oversized one with an HTML page. ``JsonErrorWorker`` (the worker ``svc serve`` runs) is
gunicorn's threaded worker with that answer replaced by the same ``{error: {code,
message, request_id}}`` body every other svc error has, so a client's error handling
never meets HTML: 414 for a request line over the limit, 431 for headers over theirs,
400 for anything malformed, 500 for a failure of the server itself.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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
from svc_server.http.query import PERCENT_ENCODE
from svc_server.servers.refusals import (
    REASONS,
    body_broken,
    body_too_large,
    error_parts,
    refusal_parts,
)

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


def wire_error(exc: BaseException) -> SvcError:
    """The svc error for an exception gunicorn raised while reading a request."""
    if isinstance(exc, wire_errors.LimitRequestLine):
        return UriTooLong(f"The request line is too long ({exc}).")
    if isinstance(exc, wire_errors.LimitRequestHeaders):
        return HeadersTooLarge(f"Request headers too large ({exc}).")
    if isinstance(exc, wire_errors.InvalidResponseHeader | wire_errors.ConfigurationProblem):
        return ServerError("Internal error.")
    if isinstance(exc, wire_errors.InvalidRequestLine) and not str(exc.req).isascii():
        # gunicorn refuses raw non-ASCII in the request target (RFC 9112 3.2) and holds
        # the line as latin-1 text: shown as the UTF-8 it was typed in, not mojibake.
        line = str(exc.req).encode("latin-1", "replace").decode("utf-8", "replace")
        return InvalidParams(
            f"The request target holds characters that are not percent-encoded: {line[:200]}",
            hint=PERCENT_ENCODE,
        )
    if isinstance(exc, wire_errors.ParseException | wire_errors.NoMoreData):
        return InvalidParams(f"Malformed HTTP request: {str(exc)[:200]}")
    return ServerError("Internal error.")


def error_bytes(err: SvcError, request_id: str) -> bytes:
    """A whole HTTP/1.1 response (connection closed after it) carrying ``err``."""
    status, headers, body = error_parts(err, request_id)
    reason = REASONS.get(status, "Internal Server Error")
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{n}: {v}" for n, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


class JsonErrorWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn ships no type hints
    """gunicorn's gthread worker, answering its own refusals as svc error JSON."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        err = wire_error(exc)
        if err.status >= 500:
            self.log.exception("Error handling request")
        else:
            peer = addr[0] if addr else ""
            self.log.warning("Invalid request from ip=%s: %s", peer, err.message)
        try:
            write_nonblock(client, error_bytes(err, requestid.generate(os.urandom(16))))
        except Exception:
            self.log.debug("Failed to send error message.")


class BodyGuard:
    """WSGI middleware for gunicorn: the request body is read whole before the app runs.

    A malformed or truncated body (a bad chunk size, a connection closed early) is a 400
    and a body over ``max_body_bytes`` a 413, both with ``Connection: close``, instead of
    a 500 from inside the app or a keep-alive promise gunicorn then breaks.
    """

    def __init__(self, app: WSGIApplication, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        raw_length = environ.get("CONTENT_LENGTH") or ""
        if not chunked and not raw_length:
            return self.app(environ, start_response)
        declared = int(raw_length) if raw_length.isdigit() else None
        err: SvcError | None = None
        if declared is not None and declared > self.max_body_bytes:
            err = body_too_large(self.max_body_bytes)
        else:
            try:
                body = environ["wsgi.input"].read(self.max_body_bytes + 1)
            except (wire_errors.ParseException, wire_errors.NoMoreData, OSError):
                body, err = b"", body_broken()
            if err is None and len(body) > self.max_body_bytes:
                err = body_too_large(self.max_body_bytes)
            elif err is None and declared is not None and len(body) != declared:
                err = body_broken()
        if err is not None:
            supplied = environ.get("HTTP_X_REQUEST_ID")
            status, headers, payload = refusal_parts(err, supplied)
            # gunicorn drops an app's Connection header; its response object (the owner
            # of start_response) is told to close instead.
            force_close = getattr(getattr(start_response, "__self__", None), "force_close", None)
            if force_close is not None:
                force_close()
            start_response(f"{status} {REASONS.get(status, 'Error')}", headers)
            return [payload]
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)
