"""The stand-in of data.go.kr's RTMS services that the sync tests call (``rtms_standin``),
fresh for each test. The R-ONE tests define their own ``standin``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.rtms_standin import StandIn, serve


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with serve() as state:
        yield state
