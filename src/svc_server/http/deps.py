"""What handlers depend on, handed to them explicitly instead of the whole app."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable

import attrs

from svc_server.config import Config
from svc_server.http.answers import AnswerCache
from svc_server.http.lease_writer import LeaseWriter
from svc_server.http.log_writer import LogWriter
from svc_server.identity import JwtVerifier
from svc_server.services.leases import LeaseBook
from svc_server.services.request_log import RequestLogBook
from svc_server.store import Store


def new_id() -> str:
    """A fresh random UUID as text: the default id source."""
    return str(uuid.uuid4())


@attrs.frozen(kw_only=True)
class Deps:
    """The store, configuration, clock, id and entropy sources, identity verifier, the
    API document, the answer cache, the leases and the request log: everything a
    handler may use besides its request."""

    store: Store
    config: Config
    clock: Callable[[], float]
    entropy: Callable[[int], bytes]
    ids: Callable[[], str] = new_id
    verifier: Callable[[], JwtVerifier]
    document: Callable[[], tuple[bytes, str]]
    """The rendered OpenAPI document and its ETag."""
    answers: AnswerCache = attrs.field(factory=AnswerCache)
    """Encoded data answers of this app, per data version (``http.answers``)."""
    leases: LeaseBook
    """This app's rate-limit and quota leases (``services.leases``)."""
    lease_writer: LeaseWriter
    """The thread writing ``leases`` back (``http.lease_writer``)."""
    request_log: RequestLogBook
    """This app's request-log lines not yet written (``services.request_log``)."""
    log_writer: LogWriter
    """The thread writing ``request_log`` (``http.log_writer``)."""


def lazy_verifier(config: Config) -> Callable[[], JwtVerifier]:
    """The identity-token verifier, built from ``config`` on first use (a bad identity
    configuration then fails sign-ins, not the whole server)."""
    return functools.cache(lambda: JwtVerifier.from_config(config))
