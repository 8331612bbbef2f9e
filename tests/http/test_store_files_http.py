"""A SQLite file from before the data file, served by a real ``svc serve``: its two
workers both migrate at start, the data moves once, and the key made before the move
gets the answers the file gave before it."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from svc_server.app import create_app
from svc_server.config import Config
from svc_server.store import migrate, open_store
from tests.conftest import TEST_SECRET, LiveServer
from tests.server.test_demo_load import small_demo  # noqa: F401  (a fixture)
from tests.server.test_store_files import single_file_store

PATHS = ("/api/v1/real-estate/dimensions", "/api/v1/markets/dimensions")


def _single_file_key(url: str) -> tuple[str, dict[str, Any]]:
    """A one-file store as svc kept it before the split: a key made in it and the
    ``data`` of each of ``PATHS`` as the app serves them from that file."""
    whole, key = single_file_store(url)
    try:
        client = Client(create_app(Config(secret_key=TEST_SECRET), store=whole, migrate=False))
        answers = {}
        for path in PATHS:
            response = client.get(path, headers={"X-API-Key": key})
            assert response.status_code == 200, response.get_data(as_text=True)[:300]
            answers[path] = response.get_json()["data"]
        return key, answers
    finally:
        whole.close()


@pytest.mark.usefixtures("small_demo")
def test_svc_serve_moves_an_old_file_and_answers_as_before(
    sqlite_url: str, live_server_factory: Callable[..., LiveServer]
) -> None:
    key, before = _single_file_key(sqlite_url)
    assert before["/api/v1/real-estate/dimensions"]  # the answers hold data
    server = live_server_factory(sqlite_url, workers=2)
    for path in PATHS:
        request = urllib.request.Request(server.url + path, headers={"X-API-Key": key})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
            assert json.load(response)["data"] == before[path]
    store = open_store(sqlite_url)
    try:
        assert set(store.db.table_names()).isdisjoint(migrate.DATA_TABLES)
        assert store.realestate.counts()["transactions"] > 0
    finally:
        store.close()
