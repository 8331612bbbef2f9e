"""The bundled server's front: granian reads each request whole, then a thread runs the app.

Long because it is the one adapter between granian and the WSGI app: the checks of a
request head, the body read on the event loop, the hand-over to a thread and back
(each account's share, ``http.tenants``; large answers from files, ``http.spill``) and
the environ.

granian (a Rust HTTP server) parses connections on its own event loop; ``BufferedFront``
is the RSGI application it calls. It checks the request head, reads the body on the
event loop under a deadline and a size limit, and only then hands a complete WSGI
environ to one of ``threads`` Python threads. A client that sends part of a request and
then nothing therefore holds a coroutine and a socket, never a thread: the threads serve
only requests that have fully arrived (docs/security.md).

A client that closes or half-closes its connection (``shutdown(SHUT_WR)``, ``nc -N``)
after its request gets no answer: granian (hyper, without its half-close option) drops
the connection at the end of the client's input. The front sees that
(``client_disconnect``) and tells the app through ``environ[CLIENT_GONE]``: a call not
yet started is not run at all, and one whose client's leaving is known when it is settled
is not counted. granian's word comes 0.2 to 5 ms after the request (more on a busy machine), so a fast
call is often counted before it: the first call on a connection (``Clients``) is uncounted when
the word comes within ``WORD_WAIT`` of the request (``environ[TAKE_BACK]``); granian never
sends the word for an answer it delivered. Nothing waits for the word before answering
(under gunicorn, which answers a half-closed request, the question does not arise).

A later request on a connection is first offered to ``lane`` (``http.warm``), on the
event loop: a call whose answer, key and leased limits are all in memory is answered
there, without the hop to a thread (most of a cached call's cost); the lane declines
the rest, having taken nothing, and they go to a thread as above. A connection's first
request never takes the lane, so the half-close rule above holds for it unchanged.

``svc serve`` runs granian for HTTP/1.x only: the body framing below
(``Content-Length`` or chunked, else no body) is HTTP/1's.

Its own refusals carry SPEC's error body and an ``X-Request-ID``, with ``Connection:
close`` so a client is never promised a connection that is then dropped:

- 414 ``URI_TOO_LONG`` for a request line over ``MAX_LINE`` bytes;
- 431 ``HEADERS_TOO_LARGE`` for a header line over ``MAX_LINE`` bytes;
- 413 ``PAYLOAD_TOO_LARGE`` for a body over ``SVC_MAX_BODY_BYTES`` (before reading it
  when ``Content-Length`` says so, else as soon as the chunks pass the limit);
- 400 ``INVALID_PARAMS`` for a malformed or truncated body (chunked or not), for two
  ``Host`` headers and for an HTTP/1.1 request without one (RFC 9112 3.2);
- 408 ``REQUEST_TIMEOUT`` for a body not complete within ``SVC_READ_TIMEOUT``;
- 429 ``RATE_LIMITED`` with ``Retry-After`` for a call whose account found no turn
  (``http.tenants``): never run, so never charged;
- 500 ``INTERNAL`` when the app itself raises.

A header whose name holds ``_`` is dropped, as gunicorn does: in the environ
``X_Forwarded_For`` and ``X-Forwarded-For`` would both be ``HTTP_X_FORWARDED_FOR``,
so a client could add to a header a trusted proxy sets (the client address, the key).

What granian answers itself (an empty body, ``Connection: close``; it offers no way to
replace these): 400 for a request line or header it cannot parse, 431 for more than 100
headers or a request head over ``HEAD_BUFFER`` bytes, 414 for a request target over
64 KiB.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from svc_core.errors import (
    CallsInProgress,
    HeadersTooLarge,
    InvalidParams,
    ServerError,
    SvcError,
    UriTooLong,
)
from svc_server.http.context import ACCOUNT, CLIENT_GONE, TAKE_BACK
from svc_server.servers.refusals import (
    RequestTimeout,
    body_broken,
    body_too_large,
    refusal_parts,
)
from svc_server.servers.spill import SPILL_BYTES, Spill
from svc_server.servers.tenants import Tenants

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

log = logging.getLogger("svc.error")

MAX_LINE = 8190  # gunicorn's ceiling, kept: a request line and each header line
# granian's read buffer for a request head: 100 headers (granian's own maximum) of
# MAX_LINE bytes fit, so a head within the limits always reaches the checks below.
HEAD_BUFFER = 8192 + 100 * 8192

Headers = list[tuple[str, str]]
Answer = tuple[int, Headers, bytes | str]
"""Status, headers and the body: bytes, or the path of a file holding it (``http.spill``)."""

GONE: Answer = (499, [], b"")  # never sent: the job of a client already gone
WORD_WAIT = 0.05
"""Seconds after a request within which granian reports a half-close that made it drop
the answer (measured on 2 busy cores: within 5 ms; at 10 ms 2 to 6 of 60 were missed
with the cores three times oversubscribed, and 2 of 12 in a CI run of the suite)."""


class _Refused(Exception):
    """A request the front answers itself with ``err``."""

    def __init__(self, err: SvcError) -> None:
        super().__init__(err.message)
        self.err = err


class BufferedFront:
    """RSGI application serving a WSGI app on a pool of ``threads`` threads."""

    def __init__(
        self,
        app: WSGIApplication,
        *,
        threads: int,
        max_body_bytes: int,
        read_timeout: float,
        tenant_calls: int = 2,
        tenant_wait: float = 10.0,
        lane: Callable[[dict[str, Any]], Answer | None] | None = None,
        resolve: Callable[[dict[str, Any]], str | None] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        """``lane`` answers on the event loop a request that needs no I/O, or returns
        None (``http.warm``); ``resolve`` names, on a request thread, the account a
        request's credential acts for (None: none), asked before the first call of a
        credential (``http.tenants``); ``on_close`` runs once the request threads have
        ended (the worker stops); ``tenant_calls``: calls of one account in progress at
        once (``http.tenants``), at most ``threads - 1`` so another account always finds
        a thread; ``tenant_wait``: seconds the excess waits for a turn before 429."""
        self.app = app
        self.lane = lane
        self.resolve = resolve
        self.tenants = Tenants(min(tenant_calls, max(1, threads - 1)), tenant_wait)
        self.spill = Spill()
        self.clients = Clients(read_timeout)
        self.on_close = on_close
        self.threads = threads
        self.max_body_bytes = max_body_bytes
        self.read_timeout = read_timeout
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.workers: list[threading.Thread] = []

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the request threads (granian calls this once per worker process)."""
        if self.workers:
            return
        for n in range(self.threads):
            worker = threading.Thread(target=self._serve, name=f"svc-request-{n}", daemon=True)
            worker.start()
            self.workers.append(worker)

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Let the request threads finish what they hold, then end them."""
        for _ in self.workers:
            self.jobs.put(None)
        for worker in self.workers:
            worker.join(timeout=30)
        self.workers = []
        self.spill.close()
        if self.on_close is not None:
            self.on_close()

    def _serve(self) -> None:
        while (job := self.jobs.get()) is not None:
            loop, future, environ, gone, ask = job
            # a client gone before its turn (closed, or half-closed: granian drops those)
            # costs no work and no charge
            answer: Answer | str
            if gone.is_set():
                answer = GONE
            elif ask and (account := self._account(environ)) is not None:
                answer = account  # the front moves the call to its account's turns first
            else:
                answer = self.call(environ, gone)
            try:
                loop.call_soon_threadsafe(_settle, future, answer)
            except RuntimeError:  # the worker's loop closed while the app ran: shutting down
                return

    async def __rsgi__(self, scope: Any, protocol: Any) -> None:
        if scope.proto != "http":  # websockets are not served
            protocol.close()
            return
        headers: Headers = scope.headers.items()
        try:
            self.check_head(scope, headers)
            body = await self.read_body(protocol, headers)
        except _Refused as refused:
            protocol.response_bytes(*self.refusal(refused.err, headers))
            return
        arrived = time.monotonic()  # not the loop's: get_running_loop() is a getpid() call
        first = self.clients.first(scope.client, arrived)
        environ = build_environ(scope, headers, body)
        # a connection's first call goes the watched way (half-close, see above)
        if self.lane is not None and not first and not body:
            warm = self._warm(environ)
            if warm is not None:
                protocol.response_bytes(*warm)
                return
        loop = asyncio.get_running_loop()
        if not self.workers:
            self.__rsgi_init__(loop)
        tenants = self.tenants
        credential = tenants.credential(environ)
        tenant = None if credential is None else tenants.tenant(credential)
        if tenant is not None and not await tenants.enter(tenant):
            protocol.response_bytes(*self.refusal(_busy_tenant(tenants), headers))
            return
        gone = threading.Event()
        watcher = loop.create_task(_watch(protocol, gone))
        await asyncio.sleep(0)  # the watcher asks granian before the app can run
        environ[CLIENT_GONE] = gone.is_set
        # a credential whose account is not known yet: its thread asks (``resolve``)
        ask = self.resolve is not None and tenant is not None and tenant == credential
        future: asyncio.Future[Answer | str] = loop.create_future()
        self.jobs.put((loop, future, environ, gone, ask))
        answer: Answer = GONE
        try:
            outcome = await future
            if isinstance(outcome, str):  # its account: wait for a turn of the account's
                assert credential is not None and tenant is not None
                tenants.learn(credential, outcome)
                tenants.leave(tenant)
                tenant = None
                if not await tenants.enter(account := tenants.tenant(credential)):
                    outcome = self.refusal(_busy_tenant(tenants), headers)
                else:
                    tenant = account
                    future = loop.create_future()
                    self.jobs.put((loop, future, environ, gone, False))
                    outcome = await future
            assert not isinstance(outcome, str)
            answer = outcome
        except asyncio.CancelledError:  # granian dropped the connection: gone too
            gone.set()
            raise
        finally:
            if credential is not None:
                self.tenants.learn(credential, environ.get(ACCOUNT))
            self._send(protocol, answer, gone.is_set(), tenant)
            take_back = environ.get(TAKE_BACK)
            if take_back is not None and gone.is_set():  # counted, then not handed over
                loop.run_in_executor(None, _logged, take_back)
            if take_back is None or gone.is_set() or not first:
                watcher.cancel()
            else:  # listen on after this returns: granian takes the next request meanwhile
                wait = arrived + WORD_WAIT - time.monotonic()
                timer = loop.call_later(max(wait, 0), watcher.cancel)
                watcher.add_done_callback(functools.partial(_uncount_if_dropped, timer, take_back))

    def _account(self, environ: dict[str, Any]) -> str | None:
        """``resolve``'s account of a request; None when it fails (the call is then
        bounded under its credential, and the app answers it as it would)."""
        assert self.resolve is not None
        try:
            return self.resolve(environ)
        except Exception:
            log.exception("finding the account of a call failed")
            return None

    def _warm(self, environ: dict[str, Any]) -> Answer | None:
        """The lane's answer, or None; a lane that fails answers 500, as the app would."""
        assert self.lane is not None
        try:
            return self.lane(environ)
        except Exception:
            log.exception("the warm lane failed")
            supplied = environ.get("HTTP_X_REQUEST_ID")
            return refusal_parts(ServerError(), supplied)

    def _send(self, protocol: Any, answer: Answer, gone: bool, tenant: str | None) -> None:
        """Hand ``answer`` to granian unless its client has gone; the tenant's call ends
        then, or for a file once granian has closed it (``http.spill``)."""
        status, headers, body = answer

        def done() -> None:
            if tenant is not None:
                self.tenants.leave(tenant)

        if isinstance(body, str):
            if gone:
                self.spill.discard(body)
            else:
                protocol.response_file(status, headers, body)
                self.spill.handed(body, done)
                return
        elif not gone:
            protocol.response_bytes(status, headers, body)
        done()

    def check_head(self, scope: Any, headers: Headers) -> None:
        """Refuse a request line or header line over gunicorn's limit (414, 431), and a
        request without exactly one ``Host`` where HTTP/1.1 asks for one (400)."""
        target = len(scope.path.encode("utf-8")) + len(scope.query_string) + 1
        if len(scope.method) + target + len(" HTTP/1.1") + 1 > MAX_LINE:
            raise _Refused(UriTooLong(f"The request line is longer than {MAX_LINE} bytes."))
        hosts = 0
        for name, value in headers:  # granian hands the names in lower case
            if len(name) + len(value) + 2 > MAX_LINE:
                raise _Refused(
                    HeadersTooLarge(f"Request header {name[:64]!r} is over {MAX_LINE} bytes.")
                )
            if name == "host":
                hosts += 1
        if hosts > 1 or (hosts == 0 and scope.http_version == "1.1"):
            raise _Refused(
                InvalidParams(
                    "Send exactly one Host header." if hosts else "HTTP/1.1 needs a Host header."
                )
            )

    async def read_body(self, protocol: Any, headers: Headers) -> bytes:
        """The whole body, read on the event loop; refusals for size, form and time."""
        declared, chunked = _framing(headers)
        if declared is None and not chunked:  # HTTP/1.x: no body (most GETs)
            return b""
        if declared is not None and declared > self.max_body_bytes:
            raise _Refused(body_too_large(self.max_body_bytes))
        try:
            return await asyncio.wait_for(self._collect(protocol, declared), self.read_timeout)
        except TimeoutError:
            raise _Refused(
                RequestTimeout(f"The request body did not arrive within {self.read_timeout:g} s.")
            ) from None

    async def _collect(self, protocol: Any, declared: int | None) -> bytes:
        # granian's body iterator yields an empty chunk at the end of the body and a
        # second one when the body ended in an error (a malformed chunk, a closed
        # connection): one empty chunk is a complete body, two are a broken one.
        parts: list[bytes] = []
        size = 0
        ends = 0
        async for chunk in protocol:
            if not chunk:
                ends += 1
                continue
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _Refused(body_too_large(self.max_body_bytes))
            parts.append(chunk)
        if ends != 1 or (declared is not None and size != declared):
            raise _Refused(body_broken())
        return b"".join(parts)

    def _collect_answer(
        self, result: Iterable[bytes], gone: threading.Event | None
    ) -> bytes | str | None:
        """The body of ``result``: bytes, a file's path past ``SPILL_BYTES``, or None
        when its client went while it was produced (the rest is never produced)."""
        parts: list[bytes] = []
        size = 0
        spilled = None
        try:
            for chunk in result:
                if gone is not None and gone.is_set():
                    return None
                if spilled is not None:
                    spilled[1].write(chunk)
                    continue
                parts.append(chunk)
                size += len(chunk)
                if size > SPILL_BYTES and (spilled := self.spill.open()) is not None:
                    spilled[1].writelines(parts)
                    parts = []
        except BaseException:
            if spilled is not None:
                spilled[1].close()
                self.spill.discard(spilled[0])
            raise
        if spilled is None:
            return b"".join(parts)
        spilled[1].close()
        if gone is not None and gone.is_set():
            self.spill.discard(spilled[0])
            return None
        return spilled[0]

    def refusal(self, err: SvcError, headers: Headers) -> Answer:
        """The front's own answer: SPEC's error body, connection closed after it."""
        supplied = next((v for n, v in headers if n == "x-request-id"), None)
        return refusal_parts(err, supplied)

    def call(self, environ: dict[str, Any], gone: threading.Event | None = None) -> Answer:
        """Run the WSGI app on this (pool) thread: its answer as bytes, or past
        ``SPILL_BYTES`` as a file (its path); GONE once ``gone`` is set while it runs."""
        started: list[Any] = []

        def start_response(
            status: str, response_headers: Headers, exc_info: Any = None
        ) -> Callable[[bytes], object]:
            started[:] = [status, response_headers]
            return _no_write

        try:
            result: Iterable[bytes] = self.app(environ, start_response)
            try:
                body = self._collect_answer(result, gone)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            if body is None:
                return GONE
            headers = list(started[1])
            if isinstance(body, str):  # granian states the file's length itself
                headers = [(n, v) for n, v in headers if n.lower() != "content-length"]
            return int(started[0][:3]), headers, body
        except Exception:
            log.exception("the app failed outside its own error handling")
            supplied = environ.get("HTTP_X_REQUEST_ID")
            return refusal_parts(ServerError(), supplied)


class Clients:
    """The client addresses (``ip:port``) this worker served within the keep-alive time:
    a request from an address not among them is the first on its connection. Only such
    a request lingers for granian's word of a half-close: the clients that half-close
    (``nc -N``, health checkers) send one request a connection, and a kept-alive
    connection's calls then cost no pending watcher (measured: 16 % of pulse's req/s)."""

    def __init__(self, keep_alive: float) -> None:
        self.keep_alive = keep_alive
        self.seen: dict[str, float] = {}
        self.pruned = 0.0

    def first(self, client: str, now: float) -> bool:
        """Whether ``client``'s request at ``now`` is the first on its connection."""
        last = self.seen.get(client)
        self.seen[client] = now
        if now - self.pruned > self.keep_alive:  # forget connections granian has closed
            self.seen = {c: t for c, t in self.seen.items() if now - t <= self.keep_alive}
            self.pruned = now
        return last is None or now - last > self.keep_alive


def _busy_tenant(tenants: Tenants) -> SvcError:
    return CallsInProgress(
        f"This account already has {tenants.limit} calls in progress on this server "
        f"(another waited {tenants.wait:g} s for one to end); this call was not run "
        "and is not counted."
    )


def _uncount_if_dropped(
    timer: asyncio.TimerHandle, take_back: Callable[[], None], watcher: asyncio.Task[None]
) -> None:
    """Uncount a counted call whose answer granian did not send: granian reported its
    client's half-close within ``WORD_WAIT`` (else ``timer`` cancelled ``watcher``).
    granian reports nothing for an answer it sent (a client that reads and closes
    included), so a report means the answer was dropped."""
    timer.cancel()
    if not watcher.cancelled():
        asyncio.get_running_loop().run_in_executor(None, _logged, take_back)


def _logged(take_back: Callable[[], None]) -> None:
    try:
        take_back()
    except Exception:
        log.exception("uncounting a call whose answer was not sent failed")


async def _watch(protocol: Any, gone: threading.Event) -> None:
    """Set ``gone`` when the client closes or half-closes its connection."""
    await protocol.client_disconnect()
    gone.set()


def _no_write(data: bytes) -> object:
    raise RuntimeError("the write() callable of start_response is not supported")


_Job = tuple[
    asyncio.AbstractEventLoop,
    "asyncio.Future[Answer | str]",
    dict[str, Any],
    threading.Event,
    bool,  # ask ``resolve`` for the account first: a call of a credential not known yet
]


def _settle(future: asyncio.Future[Answer | str], answer: Answer | str) -> None:
    if not future.done():  # cancelled when granian dropped the request
        future.set_result(answer)


def _framing(headers: Headers) -> tuple[int | None, bool]:
    """(Content-Length, whether the body is chunked) from the request headers."""
    declared: int | None = None
    chunked = False
    for name, value in headers:
        if name == "content-length":
            try:
                declared = int(value)
            except ValueError:  # granian refuses these before the app; keep it a 400
                raise _Refused(InvalidParams("Content-Length is not a number.")) from None
        elif name == "transfer-encoding":
            chunked = True
    return declared, chunked


_STATIC: dict[str, Any] = {
    "SCRIPT_NAME": "",
    "wsgi.version": (1, 0),
    "wsgi.input_terminated": True,
    "wsgi.errors": sys.stderr,
    "wsgi.multithread": True,
    "wsgi.multiprocess": True,
    "wsgi.run_once": False,
}
"""The environ entries every request shares."""
_PROTOCOLS = {"1.1": "HTTP/1.1", "1.0": "HTTP/1.0"}


@functools.lru_cache(maxsize=256)
def _environ_name(name: str) -> str:
    """``x-api-key`` -> ``HTTP_X_API_KEY`` (remembered: clients repeat their headers)."""
    return "HTTP_" + name.upper().replace("-", "_")


@functools.lru_cache(maxsize=64)
def _server(server: str) -> tuple[str, str]:
    """``SERVER_NAME`` and ``SERVER_PORT`` of granian's ``host:port`` of the server."""
    host, _, port = server.rpartition(":")
    return host.strip("[]"), port


def build_environ(scope: Any, headers: Headers, body: bytes) -> dict[str, Any]:
    """A PEP 3333 environ for one request granian has read."""
    environ = _STATIC.copy()
    path = scope.path
    environ["REQUEST_METHOD"] = scope.method
    # granian hands the path percent-decoded; WSGI wants its bytes as latin-1
    environ["PATH_INFO"] = (
        path if path.isascii() else path.encode("utf-8", "surrogateescape").decode("latin-1")
    )
    query = scope.query_string  # likewise: raw UTF-8 typed into a URL (?q=강남) arrives as text
    environ["QUERY_STRING"] = (
        query if query.isascii() else query.encode("utf-8", "surrogateescape").decode("latin-1")
    )
    environ["SERVER_NAME"], environ["SERVER_PORT"] = _server(scope.server)
    version = scope.http_version
    environ["SERVER_PROTOCOL"] = _PROTOCOLS.get(version) or f"HTTP/{version}"
    environ["REMOTE_ADDR"] = scope.client.rpartition(":")[0].strip("[]")
    environ["wsgi.url_scheme"] = scope.scheme
    environ["wsgi.input"] = io.BytesIO(body)
    for name, value in headers:
        if "_" in name:  # see the module docstring: never an alias of a trusted header
            continue
        if name == "content-type":
            environ["CONTENT_TYPE"] = value
            continue
        if name == "content-length":
            environ["CONTENT_LENGTH"] = value
            continue
        key = _environ_name(name)
        if key in environ:
            environ[key] += "," + value
        else:
            environ[key] = value
    if body and "CONTENT_LENGTH" not in environ:  # a chunked body, now whole
        environ["CONTENT_LENGTH"] = str(len(body))
    return environ
