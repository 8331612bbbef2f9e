"""Numbers and codes are ASCII digits only (issue 15, point 12): fullwidth (``１１６８０``)
and Arabic-Indic (``١١٦٨٠``) digits are refused with 400 by a real ``svc serve`` and
with exit status 2 by the real ``svc`` command, never read as the number they look like.
"""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from svc_server.store import open_store
from tests.conftest import LiveServer
from tests.http import multihost_support as mh
from tests.svc_cli import run_svc

FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FOREIGN = [FULLWIDTH, ARABIC_INDIC]
KEY_ID = "11111111-2222-3333-4444-555555555555"


def send(server: LiveServer, method: str, path: str, headers: dict[str, str]) -> tuple[int, str]:
    """(status, error code or the raw body when it is not a JSON error)."""
    address = urlsplit(server.url)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    try:
        return response.status, str(json.loads(raw)["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return response.status, repr(raw[:200])


@pytest.mark.parametrize("digits", FOREIGN, ids=["fullwidth", "arabic-indic"])
def test_the_server_refuses_non_ascii_digits_in_ids_and_codes(
    digits: dict[int, str], tmp_path: Path, live_server_factory: Callable[..., LiveServer]
) -> None:
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    store = open_store(url)
    store.migrate()
    try:
        _, api_key = mh.consumer(store, "digits@example.com", monthly_quota=100, rate_limit=100)
        cookie = mh.session_cookie(store, "digits@example.com")
    finally:
        store.close()
    server = live_server_factory(url, env={"SVC_SITE_ORIGINS": mh.ORIGIN})
    # A path id: a UUID written with other digits is 400, not a lookup (404).
    account = {"Cookie": cookie, "Origin": mh.ORIGIN}
    foreign_id = quote(KEY_ID.translate(digits))
    revoke = f"/api/auth/me/keys/{foreign_id}/revoke"
    assert send(server, "POST", revoke, account) == (400, "INVALID_PARAMS")
    revoke = f"/api/auth/me/keys/{KEY_ID}/revoke"
    assert send(server, "POST", revoke, account) == (404, "NOT_FOUND")  # ASCII: looked up
    # A query code: 400 before any lookup or count.
    code = quote("11680".translate(digits))
    pulse = f"/api/v1/real-estate/pulse?sigungu_code={code}"
    assert send(server, "GET", pulse, {"X-API-Key": api_key}) == (400, "INVALID_PARAMS")


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return run_svc(*args)


@pytest.mark.parametrize("digits", FOREIGN, ids=["fullwidth", "arabic-indic"])
def test_the_command_refuses_non_ascii_digits_in_flags(
    digits: dict[int, str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    done = svc("init", "--database-url", url, "--db-pool-size", "5".translate(digits))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--db-pool-size must be an integer" in done.stderr
    assert "Traceback" not in done.stderr
    done = svc("demo-data", "--database-url", url, "--seed", "7".translate(digits))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert svc("init", "--database-url", url, "--db-pool-size", "5").returncode == 0
