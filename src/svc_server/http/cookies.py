"""The session cookie and the origin check: what the admission step and the sign-in
handlers both need, with nothing of the store or the services.

``svc_session`` is HttpOnly, Secure (unless configured off for local HTTP) and
SameSite=Lax; cookie-authenticated writes must come from a configured site origin.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from werkzeug.wrappers import Request, Response

from svc_core.errors import CsrfRejected
from svc_server.config import Config

COOKIE_NAME = "svc_session"


def sets_cookie(response: Response) -> bool:
    """Whether the handler set or cleared the session cookie itself (sign-in, sign-out)."""
    prefix = COOKIE_NAME + "="
    return any(v.startswith(prefix) for v in response.headers.getlist("Set-Cookie"))


def site_origin(origin: str, site_origins: tuple[str, ...]) -> bool:
    """Whether an ``Origin`` (or a ``Referer``'s origin) is one of the configured site
    origins (``SVC_SITE_ORIGINS``, kept lower-case without a trailing slash)."""
    return origin.lower().rstrip("/") in site_origins


def check_origin(request: Request, config: Config, *, signing_in: bool = False) -> None:
    """Cookie-authenticated writes, and sign-ins sent from a browser page, must come from
    a configured site origin; the refusal says which of the two was refused."""
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        referer = request.headers.get("Referer")
        if referer:
            try:
                parts = urlsplit(referer)
                origin = f"{parts.scheme}://{parts.netloc}"
            except ValueError:  # not a URL (e.g. an unclosed IPv6 bracket): no origin
                origin = None
    if origin and site_origin(origin, config.site_origins):
        return
    source = f"a page of {origin[:200]}" if origin else "a request without an Origin header"
    if signing_in:
        raise CsrfRejected(
            f"Sign-in is accepted only from this site's own pages, not from {source}.",
            hint="Sign in from this site's /signin page; an operator adds other sites "
            "to SVC_SITE_ORIGINS.",
        )
    raise CsrfRejected(
        f"Cookie-authenticated writes must come from this site's pages, not from {source}.",
        hint="Call from the dashboard's origin, or configure SVC_SITE_ORIGINS.",
    )


def set_cookie(config: Config, response: Response, value: str, max_age: int) -> None:
    """(Re)send the session cookie: HttpOnly, Secure, SameSite=Lax, for ``max_age``
    seconds (15 minutes, less when the session's absolute lifetime ends sooner)."""
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=max_age,
        path="/",
        domain=config.cookie_domain,
        secure=config.cookie_secure,
        httponly=True,
        samesite="Lax",
    )


def clear_cookie(config: Config, response: Response) -> None:
    """Tell the browser to forget the session cookie."""
    response.delete_cookie(
        COOKIE_NAME,
        path="/",
        domain=config.cookie_domain,
        secure=config.cookie_secure,
        httponly=True,
        samesite="Lax",
    )
