"""Routes: each path's methods, handler, auth policy, parameters and API-reference text.

A ``Route`` carries everything said about one operation, so nothing is keyed by strings
in a second table: the dispatcher reads ``auth``, ``params``, ``counted`` and ``csv``;
the OpenAPI builder reads the same fields plus ``doc``. ``auth`` is an ``Auth`` policy.
The table itself lives in ``svc_server.app.routes``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Response

from svc_core.params import FORMAT, Param

Handler = Callable[..., Response]
Warm = Callable[..., Any]
"""How a route's calls are answered from this process's memory alone (``app.warm``):
given a request's context, its ``answers.CachedAnswer``."""
Json = dict[str, Any]


class Auth(enum.StrEnum):
    """Who may call a route: its value is what the OpenAPI document's ``x-svc-auth`` says."""

    PUBLIC = "public"
    """Anyone, signed in or not."""
    DATA = "data"
    """An API key or a session cookie; rate-limited, quota-counted when ``counted``."""
    ACCOUNT = "account"
    """A session cookie only (the account surface)."""
    PAGE = "page"
    """A web page: anyone, with the signed-in caller resolved when there is one."""


@attrs.frozen(kw_only=True)
class Operation:
    """What the API reference says about an operation beyond what the route implies.

    ``responses`` are the operation's own (the builder adds the shared 4xx/5xx that
    follow from the auth policy and body); ``body`` is the request body object;
    ``path_params`` describe the path's variables, ``path_schemas`` give those that are
    not UUIDs their schema.
    """

    operation_id: str
    tag: str
    summary: str
    description: str
    responses: Mapping[str, Json]
    body: Json | None = None
    path_params: Mapping[str, str] = attrs.field(factory=dict)
    path_schemas: Mapping[str, Json] = attrs.field(factory=dict)
    extensions: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Route:
    """One path and method set, and how the dispatcher treats it."""

    path: str
    methods: tuple[str, ...]
    handler: Handler
    doc: Operation | None = None
    auth: Auth = Auth.PUBLIC
    params: tuple[Param, ...] = ()
    counted: bool = False
    csv: bool = False
    csv_only: bool = False
    """The ``.csv`` form of a CSV-capable route (``with_csv_forms``): always CSV."""
    ndjson: bool = False
    """A CSV-capable route that also streams NDJSON (``format=ndjson``)."""
    warm: Warm | None = None
    """How the server answers a call of this route from memory, on its event loop, when
    all the call needs is there (``app.warm``); None: every call goes to ``handler``."""

    @property
    def endpoint(self) -> str:
        return f"{self.methods[0]} {self.path}"

    @property
    def operation_id(self) -> str:
        """The operation this route answers (a ``.csv`` form answers its route's, and
        shares its cached answers); its endpoint when it has no ``doc``."""
        return self.doc.operation_id if self.doc is not None else self.endpoint

    @property
    def accepted(self) -> frozenset[str]:
        """The query parameter names this route accepts (``format`` where CSV is
        negotiated)."""
        names = {p.name for p in self.params}
        return frozenset(names | {FORMAT.name}) if self.csv else frozenset(names)


CSV_SUFFIX = ".csv"


def with_csv_forms(routes: Sequence[Route]) -> tuple[Route, ...]:
    """``routes``, each CSV-capable one followed by its ``.csv`` form: the same handler,
    auth, parameters and quota at ``path + ".csv"``, always answering CSV (no ``format``,
    no negotiation). A generated client reads one media type per operation, so the form
    is its way to ask for CSV (``GET /api/v1/real-estate/pulse.csv``)."""
    out: list[Route] = []
    for route in routes:
        out.append(route)
        if route.csv:
            out.append(
                attrs.evolve(
                    route, path=route.path + CSV_SUFFIX, csv=False, csv_only=True, ndjson=False
                )
            )
    return tuple(out)


def build_map(routes: Sequence[Route]) -> Map:
    """A werkzeug Map whose endpoints are the routes' ``endpoint`` names."""
    return Map(
        [Rule(r.path, methods=list(r.methods), endpoint=r.endpoint) for r in routes],
        strict_slashes=False,
        merge_slashes=False,
    )
