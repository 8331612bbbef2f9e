"""The dispatcher's remembered work: routes matched and query strings decoded once per
distinct request, refusals raised every time."""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from svc_core.errors import InvalidParams, NotFound
from svc_server.app import dispatch, routes
from svc_server.http import query
from svc_server.http.routing import build_map


def request(path: str, host: str = "api.example.com", method: str = "GET") -> Request:
    return Request(EnvironBuilder(path, method=method, headers={"Host": host}).get_environ())


def test_a_route_is_matched_once_per_path_host_and_method(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {r.endpoint: r for r in routes.ROUTES}
    matcher = dispatch.Matcher(build_map(routes.ROUTES), table)
    calls: list[str] = []
    original = dispatch.match

    def counted(*args: object) -> object:
        calls.append("match")
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(dispatch, "match", counted)
    first, _ = matcher(request("/api/v1/real-estate/pulse"))
    again, values = matcher(request("/api/v1/real-estate/pulse"))
    assert first is again and first.path == "/api/v1/real-estate/pulse"
    assert len(calls) == 1
    values["mutated"] = 1  # each caller gets its own values
    assert "mutated" not in matcher(request("/api/v1/real-estate/pulse"))[1]
    matcher(request("/api/v1/real-estate/pulse", host="other.example.com"))
    assert len(calls) == 2
    for _ in range(2):  # a refusal is raised every time
        with pytest.raises(NotFound):
            matcher(request("/api/v1/no-such-thing"))
    assert len(calls) == 4


def test_a_query_string_is_decoded_once_and_a_bad_one_refused_every_time() -> None:
    query.parse_query.cache_clear()
    assert query.parse_query(b"a=1&b=%ED%95%9C") == (("a", "1"), ("b", "한"))
    query.parse_query(b"a=1&b=%ED%95%9C")
    assert query.parse_query.cache_info().hits == 1
    for _ in range(2):
        with pytest.raises(InvalidParams):
            query.parse_query(b"a=%FF")
