"""Fixtures the real-estate HTTP tests share: a store holding the MOLIT samples, loaded
once per test module, and a pro caller of an app on it. A module that needs another
caller (a leased one, an enterprise plan) defines its own ``api``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svc_server.store import Store
from tests.http.realestate_support import Api, make_app, open_molit_store


@pytest.fixture(scope="module")
def molit_store(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as s:
        yield s


@pytest.fixture
def api(molit_store: Store) -> Api:
    return Api(make_app(molit_store))
