"""Korean typed into a URL, unencoded, is never a 500 on either bundled server.

curl and a browser's address bar send ``?q=강남`` as raw UTF-8 bytes. granian hands the
query to the app as text: it is read as the same text its percent-encoded form is (200).
gunicorn refuses raw non-ASCII in the request target before the app runs (RFC 9112 3.2):
a 400 with the percent-encoding hint, the target shown as typed (not latin-1 mojibake).
Neither logs a traceback. Bytes that are not UTF-8 stay a 400 with the same hint.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.http import multihost_support as mh

REGIONS = "/api/v1/real-estate/regions"
PULSE = "/api/v1/real-estate/pulse"
HINT = "Percent-encode parameters as UTF-8."


@pytest.fixture(scope="module", params=["granian", "gunicorn"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, LiveServer, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('utf8') / 'svc.db'}"
    store = open_store(url)
    try:
        store.migrate()
        key = mh.consumer(store, "utf8@example.com", monthly_quota=10_000, rate_limit=10_000)[1]
    finally:
        store.close()
    server = LiveServer(url, env={"SVC_SERVER": request.param, "SVC_LOG_LEVEL": "INFO"})
    try:
        yield request.param, server, key
    finally:
        server.proc.terminate()
        log, _ = server.proc.communicate(timeout=30)
        server.stop()
        text = log.decode("utf-8", "replace")
        assert "Traceback" not in text, text
        assert " 500 " not in text and '"status": 500' not in text, text


def raw_get(server: LiveServer, target: bytes, key: str) -> tuple[int, dict[str, object]]:
    """``GET target`` with the bytes exactly as given (what curl sends for ``?q=강남``)."""
    request = (
        b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"X-API-Key: " + key.encode() + b"\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert b"chunked" not in head.lower(), head
    return int(head.split()[1]), json.loads(body)


def test_unencoded_korean_in_the_query(served: tuple[str, LiveServer, str]) -> None:
    name, server, key = served
    encoded = raw_get(server, REGIONS.encode() + b"?q=%EA%B0%95%EB%82%A8", key)
    for target in (
        REGIONS + "?q=강남",
        PULSE + "?sigungu_code=11680&geo_precision=dong&dong=역삼동",
    ):
        status, body = raw_get(server, target.encode(), key)
        if name == "granian":
            assert status != 400 and status < 500, body
            if target.startswith(REGIONS):
                assert (status, body["data"]) == (200, encoded[1]["data"])
        else:
            assert status == 400, body
            error = body["error"]
            assert isinstance(error, dict)
            assert error["code"] == "INVALID_PARAMS"
            assert error["hint"] == HINT
            assert target in error["message"]  # as typed, not mojibake
    assert encoded[0] == 200 and encoded[1]["data"][0]["sigungu"] == "강남구"  # type: ignore[index]


def test_bytes_that_are_not_utf8_are_a_400_with_the_hint(
    served: tuple[str, LiveServer, str],
) -> None:
    _, server, key = served
    status, body = raw_get(server, REGIONS.encode() + b"?q=%EA%B0", key)
    assert status == 400, body
    error = body["error"]
    assert isinstance(error, dict) and error["hint"] == HINT
    # raw bytes that are not UTF-8: granian refuses them itself (a plain 400), gunicorn
    # with the hint; never a 500
    status = raw_status(server, REGIONS.encode() + b"?q=\xea\xb0", key)
    assert status == 400


def raw_status(server: LiveServer, target: bytes, key: str) -> int:
    request = b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        return int(sock.recv(65536).split()[1])
