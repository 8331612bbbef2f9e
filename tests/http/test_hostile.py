"""Hostile input through HTTP: every bad request is a 4xx JSON error and changes nothing.

The catalogue (platform notes §9) runs against the WSGI app on SQLite and PostgreSQL:
oversized URIs and bodies, invalid UTF-8 and percent escapes, NUL bytes, long and
non-ASCII header values, JSON that is not one object, wrong types, deep nesting,
duplicate keys, out-of-range numbers, SQL-looking strings, path traversal and non-UUID
ids. For each request: the status is the expected 4xx, the body is SPEC's error with the
response's request id, and every stored row (rate-limit log and session/key usage
timestamps aside) is the same before and after. Wire-level cases (raw bytes a client
library would refuse to send, configured size limits, chunked bodies) go to a real
``svc serve`` process; what gunicorn itself refuses (non-ASCII request targets, request
lines or header fields over 8190 bytes, NUL in a header) gets its own plain 4xx and
changes nothing. CSV cells that would run as spreadsheet formulas come back
neutralized.
"""

from __future__ import annotations

import csv
import io
import json
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import pytest
from werkzeug.test import Client, TestResponse

from svc_server import ingest
from svc_server.app import SvcApp
from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.services import sessions
from svc_server.store import Store
from tests.conftest import TEST_SECRET, Accounts, FakeClock, LiveServer

ORIGIN = "https://app.example.com"
UUID = "6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f"
PULSE = "/api/v1/real-estate/pulse"
KEYS = "/api/auth/me/keys"
VOLATILE = {"sessions": ("expires_at",), "api_keys": ("last_used_at",)}
"""Columns that legitimately move on any authenticated request (sliding session, key use)."""
SKIPPED_TABLES = ("rate_events", "rate_counts", "schema_migrations", "request_log")
"""The per-minute limiter and the request log log every attempt by design (the request
log's own tests check what it keeps); the migration table is static."""


def snapshot(store: Store) -> dict[str, list[str]]:
    """Every row of every table, volatile columns dropped: equal before and after.

    A usage counter at 0 counts as no counter: the access pipeline reserves a quota unit
    before the handler runs and returns it when the answer is not a 2xx.
    """
    out: dict[str, list[str]] = {}
    with store.db.transaction(write=False) as tx:
        for table in store.db.table_names():
            if table in SKIPPED_TABLES:
                continue
            rows = []
            for row in tx.fetchall(f"SELECT * FROM {table}"):
                fields = dict(row)
                if table in ("usage_counters", "usage_days") and fields["count"] == 0:
                    continue  # a refused call's quota unit was reserved and given back
                for column in VOLATILE.get(table, ()):
                    fields.pop(column, None)
                rows.append(json.dumps(fields, sort_keys=True, default=str))
            out[table] = sorted(rows)
    return out


@attrs.frozen(kw_only=True)
class Creds:
    api_key: str
    key_id: str


Send = Callable[[Client, Creds], TestResponse]


@attrs.frozen(kw_only=True)
class Case:
    """One hostile request and the statuses (and first error code) it must get."""

    label: str
    send: Send
    status: int
    code: str


def get(path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Send:
    def send(client: Client, creds: Creds) -> TestResponse:
        return client.get(path, headers={"X-API-Key": creds.api_key, **(headers or {})}, **kw)

    return send


def post(path: str, body: bytes, content_type: str = "application/json", **headers: str) -> Send:
    def send(client: Client, creds: Creds) -> TestResponse:
        return client.post(
            path.replace("{key}", creds.key_id),
            data=body,
            headers={"Origin": ORIGIN, "Content-Type": content_type, **headers},
        )

    return send


def call(method: str, path: str, **kw: Any) -> Send:
    def send(client: Client, creds: Creds) -> TestResponse:
        headers = {"Origin": ORIGIN, **kw.pop("headers", {})}
        return client.open(
            path.replace("{key}", creds.key_id), method=method, headers=headers, **kw
        )

    return send


def key_body(**fields: Any) -> bytes:
    return json.dumps({"label": "ci", "mode": "live", "scope": "admin", **fields}).encode()


DEEP = b"[" * 20_000 + b"]" * 20_000
CATALOGUE: tuple[Case, ...] = (
    # sizes
    Case(
        label="query over the URI limit",
        send=get(f"{PULSE}?sigungu_code=11680&dong=" + "a" * 9000),
        status=414,
        code="URI_TOO_LONG",
    ),
    Case(
        label="path over the URI limit",
        send=get("/api/" + "a" * 9000),
        status=414,
        code="URI_TOO_LONG",
    ),
    Case(
        label="body over the size limit",
        send=post(KEYS, b'{"label": "' + b"a" * 1_100_000 + b'"}'),
        status=413,
        code="PAYLOAD_TOO_LARGE",
    ),
    # encodings and escapes
    Case(
        label="query not UTF-8 after decoding",
        send=get(f"{PULSE}?sigungu_code=%ff%fe"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="broken percent escape in a value",
        send=get(f"{PULSE}?sigungu_code=%zz"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="broken percent escape in a name",
        send=get(f"{PULSE}?%zz=1"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="lone percent sign",
        send=get(f"{PULSE}?sigungu_code=%"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="double-encoded value",
        send=get(f"{PULSE}?sigungu_code=%2531%2531680"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(label="path not UTF-8", send=get("/api/v1/real-estate/%ff"), status=404, code="NOT_FOUND"),
    Case(
        label="body not UTF-8",
        send=post(KEYS, b'{"label": "\xff\xfe"}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="body with a byte-order mark",
        send=post(KEYS, b"\xef\xbb\xbf" + key_body()),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="body with a lone surrogate",
        send=post(KEYS, b'{"label": "\\ud800", "mode": "live", "scope": "admin"}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    # NUL bytes
    Case(
        label="NUL in a query value",
        send=get(f"{PULSE}?sigungu_code=11680%00"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="NUL in a query name",
        send=get(f"{PULSE}?sigungu%00_code=11680"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="NUL in the path",
        send=get("/api/v1/real-estate/pul%00se"),
        status=404,
        code="NOT_FOUND",
    ),
    Case(
        label="NUL in a path id",
        send=call("PATCH", f"{KEYS}/%00", json={"label": "x"}),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="NUL in a body string",
        send=post(KEYS, key_body(label="a\u0000b")),
        status=400,
        code="INVALID_PARAMS",
    ),
    # headers
    Case(
        label="100 kB API key",
        send=get("/api/v1/real-estate/dimensions", {"X-API-Key": "k" * 100_000}),
        status=401,
        code="UNAUTHORIZED",
    ),
    Case(
        label="non-ASCII API key",
        send=get("/api/v1/real-estate/dimensions", {"X-API-Key": "svc_pk_live_" + "가" * 32}),
        status=401,
        code="UNAUTHORIZED",
    ),
    Case(
        label="latin-1 API key",
        send=get("/api/v1/real-estate/dimensions", {"X-API-Key": "svc_pk_live_" + "é" * 32}),
        status=401,
        code="UNAUTHORIZED",
    ),
    Case(
        label="uppercase-hex API key",
        send=get("/api/v1/real-estate/dimensions", {"X-API-Key": "svc_pk_live_" + "A" * 32}),
        status=401,
        code="UNAUTHORIZED",
    ),
    Case(
        label="API key sent twice",
        send=lambda c, k: c.get(
            "/api/v1/real-estate/dimensions",
            headers=[("X-API-Key", k.api_key), ("X-API-Key", k.api_key)],
        ),
        status=401,
        code="UNAUTHORIZED",
    ),
    Case(
        label="100 kB session cookie",
        send=lambda c, k: Client(c.application).get(
            "/api/auth/me/usage", headers={"Cookie": "svc_session=" + "a" * 100_000}
        ),
        status=401,
        code="NOT_SIGNED_IN",
    ),
    Case(
        label="non-ASCII session cookie",
        send=lambda c, k: Client(c.application).get(
            "/api/auth/me/usage", headers={"Cookie": "svc_session=세션"}
        ),
        status=401,
        code="NOT_SIGNED_IN",
    ),
    Case(
        label="non-ASCII Origin on a write",
        send=post(KEYS, key_body(), Origin="https://가.example"),
        status=403,
        code="CSRF_REJECTED",
    ),
    Case(
        label="Host that cannot be IDNA-encoded",
        send=get(f"{PULSE}?sigungu_code=11680", {"Host": "x" * 300}),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="non-ASCII Content-Type",
        send=post(KEYS, key_body(), content_type="application/제이슨"),
        status=415,
        code="UNSUPPORTED_MEDIA_TYPE",
    ),
    Case(
        label="text/plain body",
        send=post(KEYS, key_body(), content_type="text/plain"),
        status=415,
        code="UNSUPPORTED_MEDIA_TYPE",
    ),
    # JSON shape
    *(
        Case(
            label=f"JSON body that is {kind}",
            send=post(KEYS, raw),
            status=400,
            code="INVALID_PARAMS",
        )
        for kind, raw in (
            ("an array", b"[]"),
            ("a string", b'"label"'),
            ("null", b"null"),
            ("a number", b"42"),
            ("empty", b""),
            ("truncated", b'{"label": '),
            ("followed by junk", b"{} {}"),
            ("nested 20000 deep", DEEP),
            ("an object nested 5000 deep", b'{"a":' * 5000 + b"1" + b"}" * 5000),
        )
    ),
    Case(
        label="duplicate keys smuggling a scope",
        send=post(KEYS, b'{"label": "ci", "mode": "live", "scope": "read_only", "scope": "admin"}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="NaN in the body",
        send=post(KEYS, b'{"label": NaN, "mode": "live", "scope": "admin"}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="Infinity in the body",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": Infinity}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    # types and ranges
    Case(
        label="number for a string",
        send=post(KEYS, key_body(label=7)),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="boolean for a string",
        send=post(KEYS, key_body(label=True)),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="object for an array",
        send=post(KEYS, key_body(ip_allowlist={"a": 1})),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="true for an integer",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": true}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="float for an integer",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": 1.5}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="integer over the maximum",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": 604801}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="negative integer",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": -1}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="2**63 integer",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": 9223372036854775808}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="5000-digit integer",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": 1' + b"0" * 5000 + b"}"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="1e400 float",
        send=post(f"{KEYS}/{{key}}/rotate", b'{"grace_period_seconds": 1e400}'),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="label of 65 characters",
        send=post(KEYS, key_body(label="x" * 65)),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="right-to-left override in a label",
        send=post(KEYS, key_body(label="ci\u202egpj.exe")),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="CIDR /33",
        send=post(KEYS, key_body(ip_allowlist=["10.0.0.0/33"])),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="33 allowlist entries",
        send=post(KEYS, key_body(ip_allowlist=[f"10.0.0.{i}/32" for i in range(33)])),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="read-only field in a patch",
        send=call("PATCH", f"{KEYS}/{{key}}", json={"key_hash": "00"}),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="scope change in a patch",
        send=call("PATCH", f"{KEYS}/{{key}}", json={"scope": "admin"}),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="unknown body field",
        send=post(KEYS, key_body(admin=True)),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="limit 0",
        send=get("/api/v1/real-estate/coverage?limit=0"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="limit -1",
        send=get("/api/v1/real-estate/coverage?limit=-1"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="limit 1e3",
        send=get("/api/v1/real-estate/coverage?limit=1e3"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="limit 10**20",
        send=get("/api/v1/real-estate/coverage?limit=99999999999999999999"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="limit NaN",
        send=get("/api/v1/real-estate/coverage?limit=NaN"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="limit repeated",
        send=get("/api/v1/real-estate/coverage?limit=1&limit=500"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="offset over 2**31",
        send=lambda c, k: c.get(f"/api/auth/me/webhooks/{UUID}/deliveries?offset=9999999999"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="year 9999",
        send=get(f"{PULSE}?sigungu_code=11680&period=9999-12"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="series over 12 periods",
        send=get(f"{PULSE}/series?sigungu_code=11680&from_period=1990-01&to_period=2100-12"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="unknown format",
        send=get(f"{PULSE}?sigungu_code=11680&format=xml"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="unknown query parameter",
        send=get(f"{PULSE}?sigungu_code=11680&debug=1"),
        status=400,
        code="INVALID_PARAMS",
    ),
    # injection
    Case(
        label="SQL in a district code",
        send=get(f"{PULSE}?sigungu_code=' OR 1=1--"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="SQL in an enum",
        send=get(f"{PULSE}?sigungu_code=11680&property_type=office'; DROP TABLE api_keys;--"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="SQL in a body enum",
        send=post(KEYS, key_body(mode="live' OR '1'='1")),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="SQL in a region",
        send=get("/api/v1/markets/pulse?region=' OR 1=1--&category=office&period=2026-09"),
        status=404,
        code="NOT_FOUND",
    ),
    Case(
        label="LIKE wildcard as a region",
        send=get("/api/v1/markets/pulse?region=%25&category=office&period=2026-09"),
        status=404,
        code="NOT_FOUND",
    ),
    Case(
        label="template and JNDI strings",
        send=get(f"{PULSE}?sigungu_code={{{{7*7}}}}&dong=${{jndi:ldap://x}}"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="CRLF in a query value",
        send=get(f"{PULSE}?sigungu_code=11680%0d%0aSet-Cookie:x"),
        status=400,
        code="INVALID_PARAMS",
    ),
    # ids
    Case(
        label="traversal in a key id",
        send=call("PATCH", f"{KEYS}/..%2F..%2Fetc%2Fpasswd", json={"label": "x"}),
        status=404,
        code="NOT_FOUND",
    ),
    Case(
        label="dot-dot as a webhook id",
        send=lambda c, k: c.get("/api/auth/me/webhooks/%2e%2e/deliveries"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="SQL as an invite id",
        send=call("POST", "/api/auth/me/invites/x'OR'1'='1/accept"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="non-UUID key id",
        send=call("DELETE", f"{KEYS}/not-a-uuid"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="5000-character id",
        send=call("DELETE", f"/api/auth/me/team/{'a' * 5000}"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="invalid UTF-8 id",
        send=call("DELETE", "/api/auth/me/webhooks/%ff"),
        status=400,
        code="INVALID_PARAMS",
    ),
    Case(
        label="unknown UUID",
        send=call("POST", f"{KEYS}/{UUID}/revoke"),
        status=404,
        code="NOT_FOUND",
    ),
    # methods
    Case(label="unknown method", send=call("BREW", KEYS), status=405, code="METHOD_NOT_ALLOWED"),
    Case(label="TRACE", send=call("TRACE", "/api/status"), status=405, code="METHOD_NOT_ALLOWED"),
)


def test_catalogue_labels_are_unique() -> None:
    labels = [case.label for case in CATALOGUE]
    assert len(labels) == len(set(labels))


def test_every_hostile_request_is_a_4xx_json_error_that_changes_nothing(
    store: Store, app: SvcApp, clock: FakeClock, subtests: pytest.Subtests
) -> None:
    accounts = Accounts(store, app, clock)
    _, api_key = accounts.consumer("pro", email="owner@example.com", rate_limit=100_000)
    client = accounts.browser("owner@example.com")
    key_id = client.get(KEYS).get_json()["data"][0]["id"]
    creds = Creds(api_key=api_key, key_id=key_id)
    for case in CATALOGUE:
        with subtests.test(msg=case.label):
            before = snapshot(store)
            response = case.send(client, creds)
            assert response.status_code == case.status, response.get_data(as_text=True)[:300]
            assert response.mimetype == "application/json"
            error = response.get_json()["error"]
            assert error["code"] == case.code
            assert error["message"]
            assert error["request_id"] == response.headers["X-Request-ID"]
            # a lease taken for the call is the process's reservation, not a change:
            # given back, it must leave nothing behind (a success would be counted)
            assert app.deps.leases is not None
            app.deps.leases.write_back(release=True)
            assert snapshot(store) == before


HOSTILE_REQUEST_IDS = (
    "가나다라마바사아자",
    "x" * 1_000_000,
    "abc\x00defghijk",
    "../../etc/passwd",
    "<script>x</script>",
    "a" * 129,
)


def test_hostile_request_ids_are_replaced_not_echoed(
    client: Client, subtests: pytest.Subtests
) -> None:
    for supplied in HOSTILE_REQUEST_IDS:
        with subtests.test(msg=supplied[:20]):
            response = client.get("/api/status?bad=1", headers={"X-Request-ID": supplied})
            assert response.status_code == 400
            assert response.headers["X-Request-ID"].startswith("req_")
            assert supplied not in response.get_data(as_text=True)
            assert supplied not in str(response.headers)
            assert response.get_json()["error"]["request_id"] == response.headers["X-Request-ID"]


def test_a_referer_that_is_not_a_url_is_a_csrf_refusal(
    store: Store, app: SvcApp, clock: FakeClock
) -> None:
    accounts = Accounts(store, app, clock)
    accounts.consumer("pro", email="owner@example.com")
    client = accounts.browser("owner@example.com")
    before = snapshot(store)
    response = client.post(KEYS, data=key_body(), headers={"Referer": "http://[::1/x"})
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "CSRF_REJECTED"
    assert snapshot(store) == before


# CSV formula injection --------------------------------------------------------------------

FORMULAS = ("=HYPERLINK(1)", "+SUM(1)", "-2+3", "@cmd")
SAMPLES_HEADER = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\n"
)


def test_csv_cells_that_look_like_formulas_are_neutralized(
    store: Store, app: SvcApp, clock: FakeClock
) -> None:
    lines = [
        f'public_assessment,11680,"{dong}",office,sale,2026-0{month}-15,{price},,100\n'
        for dong in FORMULAS
        for month, price in ((1, 1_000_000_000), (2, 1_100_000_000))
    ]
    report = ingest.ingest(
        store, "samples", (SAMPLES_HEADER + "".join(lines)).encode(), path="x.csv", now=clock()
    )
    assert report.loaded == len(lines)
    _, api_key = Accounts(store, app, clock).consumer("pro")
    client = Client(app)
    query = f"{PULSE}?sigungu_code=11680&period=2026-Q1&geo_precision=dong"
    as_json = client.get(query, headers={"X-API-Key": api_key})
    assert as_json.status_code == 200, as_json.get_data(as_text=True)
    assert sorted(r["dong"] for r in as_json.get_json()["data"]) == sorted(FORMULAS)

    as_csv = client.get(query + "&format=csv", headers={"X-API-Key": api_key})
    assert as_csv.status_code == 200
    text = as_csv.get_data().decode("utf-8")
    assert text.startswith("\ufeff") and text.count("\ufeff") == 1
    rows = list(csv.DictReader(io.StringIO(text[1:])))
    assert sorted(r["dong"] for r in rows) == sorted("'" + f for f in FORMULAS)
    for row in rows:
        assert not row["dong"].startswith(("=", "+", "-", "@"))
        assert int(row["sample_count"]) == 2  # numbers stay numbers


# wire level: a real server ---------------------------------------------------------------


def raw_request(server: LiveServer, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (no client library cleans them up); parse the reply."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    return int(status_line.split()[1]), headers, body


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2 :]
    return out


def http(method: str, target: bytes, headers: Mapping[str, bytes] = {}, body: bytes = b"") -> bytes:
    lines = [
        method.encode() + b" " + target + b" HTTP/1.1",
        b"Host: 127.0.0.1",
        b"Connection: close",
    ]
    lines += [name.encode() + b": " + value for name, value in headers.items()]
    if body and "Transfer-Encoding" not in headers:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


@pytest.fixture
def live(
    db_url: str, live_server_factory: Callable[..., LiveServer], store: Store
) -> tuple[LiveServer, str, str]:
    """A server with small configured limits, its store, a key and an owner's cookie."""
    created = consumer_service.create_consumer(
        store,
        plan="pro",
        now=1_790_000_000,
        entropy=b"k" * 16,
        email="live@example.com",
        ids=new_id,
    )
    server = live_server_factory(
        db_url,
        env={
            "SVC_SITE_ORIGINS": ORIGIN,
            "SVC_MAX_URL_BYTES": "2048",
            "SVC_MAX_BODY_BYTES": "4096",
        },
    )
    signed = sessions.sign_in(
        store,
        Config(secret_key=TEST_SECRET),
        Identity(sub="idp|live", email="live@example.com"),
        time.time(),
        b"s" * 16,
        ids=new_id,
    )
    return server, str(created.api_key), str(signed["_cookie"])


def keys_post(cookie: str, body: bytes, **extra: bytes) -> bytes:
    headers = {
        "Cookie": b"svc_session=" + cookie.encode(),
        "Origin": ORIGIN.encode(),
        "Content-Type": b"application/json",
        **extra,
    }
    return http("POST", KEYS.encode(), headers, body)


def chunked(body: bytes) -> bytes:
    return f"{len(body):x}".encode() + b"\r\n" + body + b"\r\n0\r\n\r\n"


Build = Callable[[str, str], bytes]
WIRE: tuple[tuple[str, Build, int, str], ...] = (
    (
        "query over the configured 2048 bytes",
        lambda key, cookie: http(
            "GET",
            PULSE.encode() + b"?sigungu_code=11680&dong=" + b"a" * 2100,
            {"X-API-Key": key.encode()},
        ),
        414,
        "URI_TOO_LONG",
    ),
    (
        "body over the configured 4096 bytes",
        lambda key, cookie: keys_post(cookie, key_body(label="x" * 5000)),
        413,
        "PAYLOAD_TOO_LARGE",
    ),
    (
        # A valid object padded past the limit: cut at the limit it would parse and
        # create a key, so it must be refused whole.
        "chunked body over the configured 4096 bytes",
        lambda key, cookie: keys_post(
            cookie, chunked(key_body() + b" " * 5000), **{"Transfer-Encoding": b"chunked"}
        ),
        413,
        "PAYLOAD_TOO_LARGE",
    ),
    (
        "raw UTF-8 bytes in the API key header",
        lambda key, cookie: http(
            "GET", b"/api/v1/real-estate/dimensions", {"X-API-Key": "svc_pk_live_키".encode()}
        ),
        401,
        "UNAUTHORIZED",
    ),
    (
        "raw 0xff bytes in the cookie",
        lambda key, cookie: http(
            "GET", b"/api/auth/me/usage", {"Cookie": b"svc_session=\xff\xfe\xfd"}
        ),
        401,
        "NOT_SIGNED_IN",
    ),
    (
        "raw UTF-8 bytes in the request id",
        lambda key, cookie: http(
            "GET", b"/api/status?x=1", {"X-Request-ID": "요청-12345678".encode()}
        ),
        400,
        "INVALID_PARAMS",
    ),
    (
        "6 kB API key header",
        lambda key, cookie: http(
            "GET", b"/api/v1/real-estate/dimensions", {"X-API-Key": b"k" * 6000}
        ),
        401,
        "UNAUTHORIZED",
    ),
    (
        "percent-encoded NUL in the path",
        lambda key, cookie: http(
            "GET", b"/api/v1/real-estate/pul%00se", {"X-API-Key": key.encode()}
        ),
        404,
        "NOT_FOUND",
    ),
    (
        "percent-encoded invalid UTF-8 in the query",
        lambda key, cookie: http(
            "GET", PULSE.encode() + b"?sigungu_code=%c3%28", {"X-API-Key": key.encode()}
        ),
        400,
        "INVALID_PARAMS",
    ),
    (
        "JSON body that is an array",
        lambda key, cookie: keys_post(cookie, b"[1, 2]"),
        400,
        "INVALID_PARAMS",
    ),
)
SERVER_REFUSED: tuple[tuple[str, Build], ...] = (
    # gunicorn refuses these before the application sees them (RFC 9112 request-target
    # syntax, its request-line and header-field limits): a 4xx, but its own plain body.
    (
        "raw non-ASCII bytes in the query",
        lambda k, c: http("GET", PULSE.encode() + b"?sigungu_code=\xff\xfe"),
    ),
    ("raw UTF-8 bytes in the path", lambda k, c: http("GET", "/api/v1/부동산".encode())),
    ("request line over 8190 bytes", lambda k, c: http("GET", b"/api/status?x=" + b"a" * 9000)),
    (
        "header over 8190 bytes",
        lambda k, c: http("GET", b"/api/status", {"X-API-Key": b"k" * 9000}),
    ),
    (
        "NUL byte in a header",
        lambda k, c: http("GET", b"/api/status", {"X-Request-ID": b"abc\x00defghij"}),
    ),
)


def test_wire_level_hostile_requests(
    live: tuple[LiveServer, str, str], store: Store, subtests: pytest.Subtests
) -> None:
    server, key, cookie = live
    for label, build, status, code in WIRE:
        with subtests.test(msg=label):
            before = snapshot(store)
            got, headers, body = raw_request(server, build(key, cookie))
            assert got == status, body[:300]
            assert headers["content-type"].startswith("application/json")
            error = json.loads(body)["error"]
            assert error["code"] == code
            assert error["request_id"] == headers["x-request-id"]
            assert snapshot(store) == before
    for label, build in SERVER_REFUSED:
        with subtests.test(msg=label):
            before = snapshot(store)
            got, _, body = raw_request(server, build(key, cookie))
            assert 400 <= got < 500, body[:300]
            assert snapshot(store) == before
