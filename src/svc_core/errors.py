"""One error hierarchy for the whole service.

Every failure the core or the server can report is an ``SvcError`` carrying the HTTP
``status`` and the SPEC error ``code`` on its class, a human ``message``, an optional
``hint``, extra body fields and response headers. The HTTP layer maps any ``SvcError`` to
SPEC's error body in one place (``svc_server.http.responses``).

::

    SvcError
    ├── InvalidParams (400 INVALID_PARAMS, ValueError)
    │   ├── InvalidPeriod
    │   └── InvalidBody
    ├── SourceError (400 INVALID_SOURCE, ValueError): a source file cannot be read
    │   └── GatewayError: a data API refused the call (result or reason code)
    ├── SignatureVerificationError (400 INVALID_SIGNATURE, ValueError): receiver side
    ├── Unauthorized (401 UNAUTHORIZED)
    │   ├── NotSignedIn (401 NOT_SIGNED_IN)
    │   └── JwtInvalid (401 JWT_INVALID)
    ├── PaymentRequired (402)
    │   ├── QuotaExceeded, KeyLimitReached, SeatLimitReached, EndpointLimitReached
    ├── Forbidden (403 FORBIDDEN)
    │   ├── TierRestricted, IpNotAllowed, CsrfRejected
    ├── NotFound (404 NOT_FOUND)
    │   └── NoConsumer
    ├── MethodNotAllowed (405), NotAcceptable (406)
    ├── Conflict (409)
    │   ├── EndpointNotActive, AlreadyInvited
    ├── PayloadTooLarge (413), UriTooLong (414), UnsupportedMediaType (415),
    │   HeadersTooLarge (431)
    ├── RateLimited (429 RATE_LIMITED)
    │   └── CallsInProgress (429 RATE_LIMITED, Retry-After): an account's calls in
    │       progress on one server process at their bound (``SVC_TENANT_CALLS``)
    ├── ServerError (500 INTERNAL)
    │   ├── QueryFailed, UsageFailed
    │   └── ConfigError (CONFIG_INVALID)
    ├── ServiceUnavailable (503)
    │   ├── StoreBusy (503 STORE_BUSY, Retry-After): a database wait reached its bound
    │   └── QuotaInFlight (503 QUOTA_IN_FLIGHT, Retry-After): the quota's last units are
    │       held by calls still in flight
    └── UpstreamKeyRefused (502 UPSTREAM_KEY_REFUSED): a data API refused our key

``RetrySoon`` is mixed into the three that answer ``Retry-After`` (CallsInProgress,
StoreBusy, QuotaInFlight).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class SvcError(Exception):
    """Base of every svc error: ``status`` and ``code`` live on the class."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL"
    default_message: ClassVar[str] = "Internal error."

    def __init__(
        self,
        message: str | None = None,
        *,
        hint: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
        code: str | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.hint = hint
        self.extra: dict[str, Any] = dict(extra or {})
        self.headers: dict[str, str] = dict(headers or {})
        self.meta: dict[str, Any] | None = dict(meta) if meta is not None else None
        if code is not None:
            self.code = code  # type: ignore[misc]  # instance override of a class default
        super().__init__(self.message)

    def body(self, request_id: str, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """SPEC's error body: ``{error: {code, message, hint?, request_id, ...}, _meta?}``;
        ``meta`` is the ``_meta`` to use when the error carries none of its own."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.hint is not None:
            error["hint"] = self.hint
        error.update(self.extra)
        error["request_id"] = request_id
        out: dict[str, Any] = {"error": error}
        if self.meta is not None:
            out["_meta"] = self.meta
        elif meta is not None:
            out["_meta"] = dict(meta)
        return out


class RetrySoon(SvcError):
    """A refusal a retry may soon get past: answered with ``Retry-After`` of
    ``retry_after`` seconds and, unless one is given, a hint that says so (and
    ``retry_advice``). Mixed into the 429 and 503 errors that are such refusals."""

    retry_after: ClassVar[int] = 1
    retry_advice: ClassVar[str] = ""

    def __init__(self, message: str | None = None, *, hint: str | None = None) -> None:
        super().__init__(
            message,
            hint=hint or f"Retry after {self.retry_after} second(s){self.retry_advice}.",
            headers={"Retry-After": str(self.retry_after)},
        )


class InvalidParams(SvcError, ValueError):
    status = 400
    code = "INVALID_PARAMS"
    default_message = "Invalid or missing parameters."


class InvalidPeriod(InvalidParams):
    default_message = "Invalid period."


class InvalidBody(InvalidParams):
    default_message = "Invalid request body."


class SourceError(SvcError, ValueError):
    """A source file cannot be read: names the file and line where known."""

    status = 400
    code = "INVALID_SOURCE"
    default_message = "The source file cannot be read."

    def __init__(
        self, message: str | None = None, *, path: str | None = None, line: int | None = None
    ) -> None:
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + (message or self.default_message))


class GatewayError(SourceError):
    """A data API refused the call with a result code instead of data: the data.go.kr
    gateway's ``OpenAPI_ServiceResponse/cmmMsgHeader`` or a non-success ``resultCode`` in
    a normal ``response/header``. ``reason_code`` (``returnReasonCode`` or ``resultCode``,
    e.g. ``30`` unregistered key, ``22`` daily limit), ``auth_message``
    (``returnAuthMsg`` or ``resultMsg``) and ``error_message`` (the gateway's ``errMsg``,
    which may carry the only English marker: ``…PER_SECOND…``) say why."""

    def __init__(
        self,
        message: str | None = None,
        *,
        path: str | None = None,
        reason_code: str = "",
        auth_message: str = "",
        error_message: str = "",
    ) -> None:
        self.reason_code = reason_code
        self.auth_message = auth_message
        self.error_message = error_message
        super().__init__(message, path=path)


class SignatureVerificationError(SvcError, ValueError):
    """A webhook signature does not verify; ``reason`` says why in one word."""

    status = 400
    code = "INVALID_SIGNATURE"
    default_message = "Signature verification failed."

    def __init__(self, message: str | None = None, *, reason: str = "invalid") -> None:
        self.reason = reason
        super().__init__(message)


class Unauthorized(SvcError):
    status = 401
    code = "UNAUTHORIZED"
    default_message = "Missing or invalid credentials."


class NotSignedIn(Unauthorized):
    code = "NOT_SIGNED_IN"
    default_message = "Sign in first: this endpoint needs the svc_session cookie."


class JwtInvalid(Unauthorized):
    code = "JWT_INVALID"
    default_message = "The identity token is invalid."


class PaymentRequired(SvcError):
    status = 402
    code = "PAYMENT_REQUIRED"
    default_message = "Your plan does not allow this."


class QuotaExceeded(PaymentRequired):
    code = "QUOTA_EXCEEDED"
    default_message = "Monthly request quota exceeded."


class KeyLimitReached(PaymentRequired):
    code = "KEY_LIMIT_REACHED"
    default_message = "Your plan's API key limit is reached."


class SeatLimitReached(PaymentRequired):
    code = "SEAT_LIMIT_REACHED"
    default_message = "Your plan's seat limit is reached."


class EndpointLimitReached(PaymentRequired):
    code = "ENDPOINT_LIMIT_REACHED"
    default_message = "The webhook endpoint limit is reached."


class Forbidden(SvcError):
    status = 403
    code = "FORBIDDEN"
    default_message = "You are not allowed to do this."


class TierRestricted(Forbidden):
    code = "TIER_RESTRICTED"
    default_message = "This feature needs a higher plan."


class IpNotAllowed(Forbidden):
    code = "IP_NOT_ALLOWED"
    default_message = "This API key may not be used from your address."


class CsrfRejected(Forbidden):
    code = "CSRF_REJECTED"
    default_message = "Cross-site request rejected: Origin does not match the site."


class NotFound(SvcError):
    status = 404
    code = "NOT_FOUND"
    default_message = "Not found."


class NoConsumer(NotFound):
    code = "NO_CONSUMER"
    default_message = "Your account has no active consumer."


class MethodNotAllowed(SvcError):
    status = 405
    code = "METHOD_NOT_ALLOWED"
    default_message = "Method not allowed."


class NotAcceptable(SvcError):
    status = 406
    code = "NOT_ACCEPTABLE"
    default_message = "No acceptable representation: use application/json or text/csv."


class Conflict(SvcError):
    status = 409
    code = "CONFLICT"
    default_message = "Conflict with the current state."


class EndpointNotActive(Conflict):
    code = "ENDPOINT_NOT_ACTIVE"
    default_message = "The webhook endpoint is not active."


class AlreadyInvited(Conflict):
    code = "ALREADY_INVITED"
    default_message = "This email is already invited."


class PayloadTooLarge(SvcError):
    status = 413
    code = "PAYLOAD_TOO_LARGE"
    default_message = "Request body too large."


class UriTooLong(SvcError):
    status = 414
    code = "URI_TOO_LONG"
    default_message = "Request URI too long."


class HeadersTooLarge(SvcError):
    status = 431
    code = "HEADERS_TOO_LARGE"
    default_message = "Request header fields too large."


class UnsupportedMediaType(SvcError):
    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"
    default_message = "Send the body as application/json."


class RateLimited(SvcError):
    status = 429
    code = "RATE_LIMITED"
    default_message = "Per-minute rate limit exceeded."


class CallsInProgress(RetrySoon, RateLimited):
    """An account already has as many calls in progress on one server process as it may
    hold at once (``SVC_TENANT_CALLS``), and no turn came in time: the call was not run,
    so it is neither charged nor counted by the per-minute limit."""

    default_message = "Too many calls of this account are in progress."
    retry_advice = ", or read answers sooner"


class ServerError(SvcError):
    status = 500
    code = "INTERNAL"


class QueryFailed(ServerError):
    code = "QUERY_FAILED"
    default_message = "The query failed."


class UsageFailed(ServerError):
    code = "USAGE_FAILED"
    default_message = "Usage could not be retrieved."


class ConfigError(ServerError):
    code = "CONFIG_INVALID"
    default_message = "Invalid configuration."


class ServiceUnavailable(SvcError):
    status = 503
    code = "UNAVAILABLE"
    default_message = "Service unavailable."


class StoreBusy(RetrySoon, ServiceUnavailable):
    """A wait for the database (the writers' queue, a lock, a pool connection) reached
    its bound (``SVC_DB_BUSY_TIMEOUT_MS``): answered at once, never a hang."""

    code = "STORE_BUSY"
    default_message = "The database is busy; try again shortly."


class QuotaInFlight(RetrySoon, ServiceUnavailable):
    """The month's last quota units are held by calls still in flight: whether one comes
    back depends on how those calls end, so the caller may retry shortly (never a 402
    while settled calls leave room)."""

    code = "QUOTA_IN_FLIGHT"
    default_message = "The last units of the monthly quota are held by calls in flight."


class UpstreamKeyRefused(SvcError):
    """An official data API (data.go.kr) refused svc's service key: unregistered,
    expired, not approved for the service or the address. No retry can help."""

    status = 502
    code = "UPSTREAM_KEY_REFUSED"
    default_message = "The data API refused the service key."


class ExchangeTimedOut(SvcError):
    """An MCP exchange at ``/mcp`` ran past its bound and was stopped."""

    status = 504
    code = "MCP_TIMEOUT"
    default_message = "The MCP request took too long and was stopped."


class McpUnavailable(SvcError):
    """``/mcp`` on a server installed without the ``svc[mcp]`` extra."""

    status = 501
    code = "MCP_UNAVAILABLE"
    default_message = "This server was installed without MCP support."
