"""What handlers depend on, handed to them explicitly instead of the whole app."""

from __future__ import annotations

import functools
import os
import threading
import uuid
from collections.abc import Callable

import attrs

from svc_core import requestid
from svc_server.config import Config
from svc_server.http.answer_cache import AnswerCache
from svc_server.identity import JwtVerifier
from svc_server.runtime.lease_writer import LeaseWriter
from svc_server.runtime.log_writer import LogWriter
from svc_server.services.leases import LeaseBook
from svc_server.services.request_log import RequestLogBook
from svc_server.services.versioned import VersionedCache
from svc_server.store import Store

ENTROPY_READ = 4096
"""Bytes of entropy a ``request_ids`` source reads at once (256 request ids)."""


def request_ids(entropy: Callable[[int], bytes]) -> Callable[[str | None], str]:
    """``requestid.resolve`` with its entropy read ``ENTROPY_READ`` bytes at a time:
    ``os.urandom`` releases the GIL, and under load every release is a switch to another
    thread, once per call. A forked child never reuses its parent's unread bytes."""
    return _RequestIds(entropy).resolve


_FORKS = [0]
os.register_at_fork(after_in_child=lambda: _FORKS.__setitem__(0, _FORKS[0] + 1))


class _RequestIds:
    def __init__(self, entropy: Callable[[int], bytes]) -> None:
        self.entropy = entropy
        self.lock = threading.Lock()
        self.buffer = b""
        self.at = 0
        self.forks = -1

    def resolve(self, supplied: str | None) -> str:
        if supplied is not None and requestid.is_acceptable(supplied):
            return supplied
        with self.lock:
            if self.at + 16 > len(self.buffer) or self.forks != _FORKS[0]:
                self.buffer, self.at, self.forks = self.entropy(ENTROPY_READ), 0, _FORKS[0]
            at = self.at
            self.at = at + 16
            buffer = self.buffer
        return requestid.generate(buffer[at : at + 16])


def new_id() -> str:
    """A fresh random UUID as text: the default id source."""
    return str(uuid.uuid4())


@attrs.frozen(kw_only=True)
class Deps:
    """The store, configuration, clock, id and entropy sources, identity verifier, the
    API document, the answer caches, the leases and the request log: everything a
    handler may use besides its request."""

    store: Store
    config: Config
    clock: Callable[[], float]
    entropy: Callable[[int], bytes]
    ids: Callable[[], str] = new_id
    request_id: Callable[[str | None], str]
    """The id of a request from the ``X-Request-ID`` it sent (``request_ids``)."""
    verifier: Callable[[], JwtVerifier]
    document: Callable[[], tuple[bytes, str]]
    """The rendered OpenAPI document and its ETag."""
    answers: AnswerCache = attrs.field(factory=AnswerCache)
    """Encoded data answers of this app, per data version (``http.answers``)."""
    versions: VersionedCache = attrs.field(factory=VersionedCache)
    """The store's data version and the answers the services keep per version
    (``services.versioned``)."""
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
