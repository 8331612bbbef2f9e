"""gzip, ETag and If-None-Match through a real ``svc serve`` (issue 25, item 8), on
SQLite and PostgreSQL: what ``test_http_caching`` checks in-process, over the wire,
plus a load by another process (``svc ingest``) changing the tags.

A 304 costs no quota: its ``X-Quota-Used`` is the one of the 200 before it, and the
stored count once the server has stopped is the number of 200s exactly.
"""

from __future__ import annotations

import gzip
import http.client
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.services.versioned import VERSION_TTL
from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.http.realestate_support import load_molit
from tests.http.test_answer_cache import rtms_json, svc

PULSE = "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office&transaction_type=sale&period=2025-06"
LISTING = (
    "/api/v1/real-estate/transactions.csv?sigungu_code=11680&period=2025-06&include_excluded=true"
)


@attrs.frozen
class Got:
    status: int
    headers: dict[str, str]
    body: bytes


def get(server: LiveServer, key: str, path: str, **headers: str) -> Got:
    """One GET with exactly ``headers`` (http.client adds no Accept-Encoding of its own)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        for name, value in {"X-API-Key": key, **headers}.items():
            conn.putheader(name, value)
        conn.endheaders()
        answer = conn.getresponse()
        return Got(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
    finally:
        conn.close()


def same_call_fields(body: bytes, like: bytes) -> bytes:
    """``body`` with the per-call ``_meta`` fields that cannot be fixed from outside
    (``rate_limit.remaining``: each call spends one; ``generated_at``: the server's
    clock, which may pass a second between two calls) as in ``like``."""
    for pattern in (rb'"remaining":\d+', rb'"generated_at":"[^"]*"'):
        found = re.search(pattern, like)
        if found is not None:
            body = re.sub(pattern, found.group(0).replace(b"\\", b"\\\\"), body)
    return body


@pytest.mark.parametrize("front", ["granian", "gunicorn"])
def test_gzip_etag_and_304_through_svc_serve(
    front: str, db_url: str, tmp_path: Path, live_server_factory: Callable[..., LiveServer]
) -> None:
    """Under both fronts: granian sends the answer whole, gunicorn streams the CSV's
    gzip chunks as they are made."""
    store = open_store(db_url)
    store.migrate()
    load_molit(store)
    made = consumers.create_consumer(
        store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
    )
    key, consumer_id = str(made.api_key), str(made.consumer_id)
    month = time.strftime("%Y-%m", time.gmtime())
    store.close()
    server = live_server_factory(db_url, env={"SVC_SERVER": front})
    billed = 0

    def ok(path: str, **headers: str) -> Got:
        nonlocal billed
        got = get(server, key, path, **headers)
        assert got.status == 200, got.body[:500]
        billed += 1
        return got

    # gzip only when asked for; it decodes to exactly the identity body
    plain = ok(PULSE, **{"X-Request-ID": "live-request-0001"})
    assert "content-encoding" not in plain.headers
    assert "Accept-Encoding" in plain.headers["vary"]
    coded = ok(PULSE, **{"X-Request-ID": "live-request-0001", "Accept-Encoding": "gzip"})
    assert coded.headers["content-encoding"] == "gzip"
    body = gzip.decompress(coded.body)
    assert body == same_call_fields(plain.body, body)
    assert int(coded.headers["content-length"]) == len(coded.body) < len(body)

    csv_plain = ok(LISTING)
    csv_coded = ok(LISTING, **{"Accept-Encoding": "gzip"})
    assert csv_coded.headers["content-encoding"] == "gzip"
    assert gzip.decompress(csv_coded.body) == csv_plain.body  # the streamed CSV, exactly
    assert csv_plain.body.count(b"\r\n") > 400

    # the tags, and a 304 that costs nothing stored
    for path, encoding, first in ((PULSE, "identity", plain), (LISTING, "gzip", csv_coded)):
        tag = first.headers["etag"]
        assert tag.startswith('W/"')
        again = ok(path, **{"Accept-Encoding": encoding})
        assert again.headers["etag"] == tag  # identical answers, identical tags
        for _ in range(3):
            same = get(server, key, path, **{"Accept-Encoding": encoding, "If-None-Match": tag})
            assert same.status == 304 and same.body == b""
            assert same.headers["etag"] == tag
            assert same.headers["x-quota-used"] == again.headers["x-quota-used"]
    assert plain.headers["etag"] != coded.headers["etag"]
    assert csv_plain.headers["etag"] != csv_coded.headers["etag"]

    # another process loads new deals of the cohort: the tags change, old ones get 200
    june = tmp_path / "june.json"
    june.write_bytes(rtms_json(range(1, 6)))
    svc(server, "ingest", "rtms-commercial", str(june))
    time.sleep(VERSION_TTL + 0.2)  # the bound within which every worker sees a load
    for path, encoding, first in ((PULSE, "identity", plain), (LISTING, "gzip", csv_coded)):
        old = first.headers["etag"]
        fresh = ok(path, **{"Accept-Encoding": encoding, "If-None-Match": old})
        assert fresh.headers["etag"] != old
        assert fresh.body
        same = get(
            server,
            key,
            path,
            **{"Accept-Encoding": encoding, "If-None-Match": fresh.headers["etag"]},
        )
        assert same.status == 304
    server.stop()  # writes what the leases hold back to the store

    store = open_store(db_url)
    try:
        assert store.accounts.usage(consumer_id, month, "live") == billed
    finally:
        store.close()
