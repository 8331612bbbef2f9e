"""Each tenant's share of a worker: calls of one account in progress at once, bounded.

The front (``http.front``) runs requests on a few threads. Without a bound, one account
sending its largest answers on many connections and reading nothing takes every thread
and fills memory while other tenants wait (issue 29). So a call of an account enters
the worker only while fewer than ``limit`` of that account's calls are in progress
there; "in progress" lasts from the thread taking the call until its answer has left
(a large answer, written to a file, until granian has sent or dropped it). Later calls
wait on the event loop, holding no thread, in arrival order; one still waiting after
``wait`` seconds is refused with 429 and ``Retry-After`` by the front, before the app
sees it: it is not charged and not counted by the per-minute limit.

The tenant is the account the call acts for. The front knows a request's credential,
hashed: the ``X-API-Key`` value, on ``/mcp`` also the key of ``Authorization: Bearer``
(as ``/mcp`` takes it: a non-empty ``X-API-Key`` wins), else the session cookie. The
first call of a credential whose account is not remembered enters under the credential
and asks the app on a thread which account it names (``BufferedFront``'s ``resolve``),
before the app runs it; it then leaves the credential's turn and waits for one of the
account's, so every key, Bearer key and session of an account share one bound from their
first call on. A credential naming no account (an unknown or revoked key, an expired
session) is bounded on its own. Each answer tells the account again (``environ[ACCOUNT]``:
a session may switch accounts). Requests without a credential (the status probe, public
pages) are not bounded here. Everything runs on the event loop: no locks.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import deque
from typing import Any

from werkzeug.sansio.http import parse_cookie  # what werkzeug's Request.cookies reads with

from svc_server.http.cookies import COOKIE_NAME

MCP_PATH = "/mcp"
"""The path where a key may also come as ``Authorization: Bearer`` (``mcp.endpoint``)."""
KNOWN_CREDENTIALS = 10_000
"""Credentials whose account is remembered; past this the memory starts over."""


class Tenants:
    """Calls in progress per tenant, and the calls waiting for a turn."""

    def __init__(self, limit: int, wait: float) -> None:
        self.limit = limit
        self.wait = wait
        self.running: dict[str, int] = {}
        self.waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self.accounts: dict[str, str] = {}

    @staticmethod
    def credential(environ: dict[str, Any]) -> str | None:
        """A digest of the credential the app will take from a request's ``environ``
        (read from the same entries, with werkzeug's cookie parser, so no spelling of
        the headers shows the app a credential the front does not see): a non-empty
        ``X-API-Key``, on ``MCP_PATH`` else an ``Authorization: Bearer`` key
        (``mcp.endpoint.presented_key``), else the session cookie; None without one."""
        key = environ.get("HTTP_X_API_KEY")
        if key is not None and (key := key.strip()):
            return _digest("key:", key)
        if environ["PATH_INFO"] == MCP_PATH:
            auth = environ.get("HTTP_AUTHORIZATION", "")
            if auth[:7].lower() == "bearer " and (key := auth[7:].strip()):
                return _digest("key:", key)
        cookie = environ.get("HTTP_COOKIE")
        if cookie is None:
            return None
        try:
            session = parse_cookie(cookie).get(COOKIE_NAME)
        except UnicodeError:  # the app reads no session from it either
            return None
        return _digest("session:", session) if session else None

    def tenant(self, credential: str) -> str:
        """The account of ``credential`` once known, else the credential itself."""
        return self.accounts.get(credential, credential)

    def learn(self, credential: str, account: str | None) -> None:
        """Remember which account ``credential`` acts for (the app said so)."""
        if account is None or self.accounts.get(credential) == account:
            return
        if len(self.accounts) >= KNOWN_CREDENTIALS:
            self.accounts.clear()
        self.accounts[credential] = "account:" + account

    async def enter(self, tenant: str) -> bool:
        """Take a turn of ``tenant``: at once when it has fewer than ``limit`` calls in
        progress, else when one ends, within ``wait`` seconds. False: no turn came."""
        if self.running.get(tenant, 0) < self.limit:
            self.running[tenant] = self.running.get(tenant, 0) + 1
            return True
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self.waiting.setdefault(tenant, deque())
        queue.append(turn)
        try:
            await asyncio.wait_for(asyncio.shield(turn), self.wait)
            return True
        except (TimeoutError, asyncio.CancelledError):
            if turn.done() and not turn.cancelled():  # handed over as we stopped waiting
                self.leave(tenant)
            else:
                turn.cancel()
            _drop(self.waiting, tenant, turn)
            if asyncio.current_task() is not None and _cancelling():
                raise
            return False

    def leave(self, tenant: str) -> None:
        """End one call of ``tenant``: its turn goes to the first call waiting."""
        queue = self.waiting.get(tenant)
        while queue:
            turn = queue.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.waiting.pop(tenant, None)
        left = self.running.get(tenant, 0) - 1
        if left > 0:
            self.running[tenant] = left
        else:
            self.running.pop(tenant, None)


def _digest(kind: str, credential: str) -> str:
    return kind + hashlib.sha256(credential.encode("utf-8", "replace")).hexdigest()


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _drop(
    waiting: dict[str, deque[asyncio.Future[None]]], tenant: str, turn: asyncio.Future[None]
) -> None:
    queue = waiting.get(tenant)
    if queue is None:
        return
    with contextlib.suppress(ValueError):  # already taken by ``leave``
        queue.remove(turn)
    if not queue:
        waiting.pop(tenant, None)
