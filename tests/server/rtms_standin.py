"""A local stand-in of the MOLIT RTMS open API for the sync tests (never the internet).

It serves the real samples (``tests/fixtures/molit/``, items unmodified) for their
district and month, paged by ``numOfRows``/``pageNo`` with the true ``totalCount``, and
an empty answer for any other month. On demand (``fail``) it answers a 500, hangs past
the client's timeout, cuts a body short, or answers the gateway's unregistered-key or
daily-limit error; ``limit_after`` answers the daily-limit error once that many calls
were served. ``add_copy`` and ``cancel`` change a month between two syncs: a new deal
(a second, identical report of an existing deal: a new record) and a cancellation
(``cdealType`` ``O``, as the source marks it).
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "molit"
KEY = "Ab+c/De==F"
"""The stand-in's registered key, in its decoded form (the encoded form also works)."""
ENCODED_KEY = "Ab%2Bc%2FDe%3D%3DF"
SERVICES = {
    "NRG": "RTMSDataSvcNrgTrade/getRTMSDataSvcNrgTrade",
    "OFFICETEL": "RTMSDataSvcOffiTrade/getRTMSDataSvcOffiTrade",
    "OFFICETEL_RENT": "RTMSDataSvcOffiRent/getRTMSDataSvcOffiRent",
}
_ITEM = re.compile(rb"<item>.*?</item>", re.S)
_NAME = re.compile(r"(NRG|OFFICETEL_RENT|OFFICETEL)_([0-9]{5})_([0-9]{6})\.xml")
GATEWAY = (
    "<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg>"
    "<returnAuthMsg>{auth}</returnAuthMsg><returnReasonCode>{code}</returnReasonCode>"
    "</cmmMsgHeader></OpenAPI_ServiceResponse>"
)
UNREGISTERED = GATEWAY.format(auth="SERVICE_KEY_IS_NOT_REGISTERED_ERROR", code="30")
LIMITED = GATEWAY.format(auth="LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR", code="22")


def sample_months() -> dict[tuple[str, str, str], list[bytes]]:
    """(operation path, LAWD_CD, DEAL_YMD) → the sample's raw items, in file order."""
    out: dict[tuple[str, str, str], list[bytes]] = {}
    for path in sorted(SAMPLES.glob("*.xml")):
        match = _NAME.fullmatch(path.name)
        assert match, path.name
        kind, code, month = match.groups()
        out[(SERVICES[kind], code, month)] = _ITEM.findall(path.read_bytes())
    return out


class StandIn:
    """The server's state; tests change it between syncs."""

    def __init__(self) -> None:
        self.months = sample_months()
        self.fail: deque[str] = deque()
        self.limit_after: int | None = None
        self.calls: list[dict[str, str]] = []
        self.success_code = {SERVICES["NRG"]: "00"}  # both codes appear in real answers
        self.hang = 3.0
        self.lock = threading.Lock()
        self.url = ""

    def add_copy(self, operation: str, code: str, month: str, index: int) -> None:
        """A new deal: another report identical to item ``index``."""
        items = self.months[(operation, code, month)]
        items.append(items[index])

    def cancel(self, operation: str, code: str, month: str, index: int) -> None:
        """Item ``index`` now reported as cancelled."""
        items = self.months[(operation, code, month)]
        item = items[index]
        assert b"<cdealType> </cdealType>" in item
        items[index] = item.replace(b"<cdealType> </cdealType>", b"<cdealType>O</cdealType>")

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        """(status, body, mode) for one request."""
        with self.lock:
            self.calls.append({"path": path, **query})
            served = len(self.calls)
            mode = self.fail.popleft() if self.fail else ""
        if self.limit_after is not None and served > self.limit_after:
            return 200, LIMITED.encode(), ""
        if mode == "unregistered" or query.get("serviceKey") != KEY:
            return 200, UNREGISTERED.encode(), ""
        if mode == "limit":
            return 200, LIMITED.encode(), ""
        if mode == "500":
            return 500, b"Internal Server Error", ""
        operation = path.removeprefix("/")
        items = self.months.get((operation, query["LAWD_CD"], query["DEAL_YMD"]), [])
        rows, page = int(query["numOfRows"]), int(query["pageNo"])
        chosen = items[(page - 1) * rows : page * rows]
        code = self.success_code.get(operation, "000")
        message = "NORMAL SERVICE." if code == "00" else "OK"
        body = (
            b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><response><header>'
            + f"<resultCode>{code}</resultCode><resultMsg>{message}</resultMsg>".encode()
            + b"</header><body><items>"
            + b"".join(chosen)
            + f"</items><numOfRows>{rows}</numOfRows><pageNo>{page}</pageNo>".encode()
            + f"<totalCount>{len(items)}</totalCount></body></response>".encode()
        )
        if mode == "truncated":
            return 200, body[: len(body) // 2], ""
        return 200, body, mode


@contextmanager
def serve() -> Iterator[StandIn]:
    """Run a stand-in on 127.0.0.1 (a free port) for the duration of the block."""
    state = StandIn()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            status, body, mode = state.answer(parts.path, query)
            if mode == "timeout":
                time.sleep(state.hang)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/xml;charset=UTF-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port_url(path: str = "/1613000") -> str:
    """A base URL nothing listens on: a port bound and released at once, so a call to it
    is refused (the network of a machine that is offline, without leaving the machine)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
