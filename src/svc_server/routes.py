"""The routing table: every path, its methods, handler, auth policy and parameters.

One werkzeug ``Map`` built from ``ROUTES``; the app looks the matched endpoint up here.
``auth`` is ``public``, ``data`` (API key or cookie; rate-limited; quota-counted when
``counted``) or ``account`` (cookie only).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Response

from svc_server.handlers import system

Handler = Callable[..., Response]


@attrs.frozen(kw_only=True)
class Route:
    path: str
    methods: tuple[str, ...]
    handler: Handler
    auth: str = "public"
    params: frozenset[str] = frozenset()
    counted: bool = False
    csv: bool = False

    @property
    def endpoint(self) -> str:
        return f"{self.methods[0]} {self.path}"


ROUTES: tuple[Route, ...] = (
    Route(path="/api/status", methods=("GET",), handler=system.get_status),
)


def build_map(routes: tuple[Route, ...] = ROUTES) -> Map:
    """A werkzeug Map whose endpoints are the Route objects' ``endpoint`` names."""
    return Map(
        [Rule(r.path, methods=list(r.methods), endpoint=r.endpoint) for r in routes],
        strict_slashes=False,
        merge_slashes=False,
    )


BY_ENDPOINT: dict[str, Route] = {r.endpoint: r for r in ROUTES}
