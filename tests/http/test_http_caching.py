"""gzip, ETag and If-None-Match on the data answers (issue 25, item 8), in-process on
SQLite and PostgreSQL; ``test_http_caching_live`` repeats the essentials through a real
``svc serve``.

Every real-estate and markets data answer carries a weak ``ETag`` that depends on its
data and representation only (never on the request id or the clock), answers a
matching ``If-None-Match`` with a 304 that costs no quota, and is gzip-coded when the
caller's ``Accept-Encoding`` allows it: the coded body decodes to exactly the body an
identical call without gzip gets (the streamed CSV too).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from werkzeug.test import TestResponse

from svc_server.http.answers import Rendered
from svc_server.store import Store
from tests.http.realestate_support import FIXTURES, Api, load, make_app, open_molit_store
from tests.server.markets_support import load_fixture

SAME_ID = {"X-Request-ID": "same-request-0001"}
GZIP = {"Accept-Encoding": "gzip, deflate, br"}
PULSE = {"sigungu_code": "11680", "period": "2025-06"}
LISTING = {"sigungu_code": "11680", "period": "2025-06", "include_excluded": "true"}
# (endpoint under /api/v1/real-estate or a full path, query): every data answer with a body
ANSWERS: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("pulse", PULSE),
    ("pulse", {**PULSE, "format": "csv"}),
    ("pulse.csv", PULSE),
    ("pulse/series", {"sigungu_code": "11680", "periods": "2025-05,2025-06"}),
    ("coverage", {}),
    ("coverage", {"format": "csv"}),
    ("indices", {"sigungu_code": "11680"}),
    ("dimensions", {}),
    ("transactions", {**LISTING, "limit": "50"}),
    ("transactions", {**LISTING, "format": "csv"}),
    (
        "/api/v1/markets/pulse",
        {"region": "강남", "category": "office", "period": "2026-05", "product_type": "rental"},
    ),
    ("/api/v1/markets/dimensions", {}),
)
IDS = [f"{e}?{'&'.join(f'{k}={v}' for k, v in q.items())}" for e, q in ANSWERS]


@pytest.fixture(scope="module")
def loaded(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as store:
        load(store, "rone-index", FIXTURES / "rone" / "indices.csv")
        load_fixture(store, "listings")
        load_fixture(store, "activity")
        yield store


@pytest.fixture
def api(loaded: Store) -> Api:
    return Api(make_app(loaded))  # a fixed clock: generated_at is the same on every call


def call(api: Api, endpoint: str, query: Mapping[str, str], **headers: str) -> TestResponse:
    if endpoint.startswith("/"):
        return api.client.get(
            endpoint, query_string=dict(query), headers={"X-API-Key": api.key, **headers}
        )
    return api.get(endpoint, query, **headers)


def same_remaining(body: bytes, like: bytes) -> bytes:
    """``body`` with ``_meta.rate_limit.remaining`` as in ``like`` (each call spends one)."""
    found = re.search(rb'"remaining":(\d+)', like)
    if found is None:
        return body
    return re.sub(rb'"remaining":\d+', b'"remaining":' + found.group(1), body)


def decoded(response: TestResponse) -> bytes:
    assert response.headers["Content-Encoding"] == "gzip"
    return gzip.decompress(response.get_data())


@pytest.mark.parametrize(("endpoint", "query"), ANSWERS, ids=IDS)
def test_gzip_decodes_to_exactly_the_identity_body(
    api: Api, endpoint: str, query: Mapping[str, str]
) -> None:
    plain = call(api, endpoint, query, **SAME_ID)
    assert plain.status_code == 200, plain.get_data(as_text=True)
    assert "Content-Encoding" not in plain.headers  # no Accept-Encoding: no coding
    assert "Accept-Encoding" in plain.headers["Vary"]
    coded = call(api, endpoint, query, **SAME_ID, **GZIP)
    assert coded.status_code == 200
    assert "Accept-Encoding" in coded.headers["Vary"]
    if len(plain.get_data()) < 1024:  # too small to be worth coding
        assert "Content-Encoding" not in coded.headers
        assert coded.get_data() == same_remaining(plain.get_data(), coded.get_data())
        return
    body = decoded(coded)
    assert body == same_remaining(plain.get_data(), body)
    assert len(coded.get_data()) < len(body)
    if endpoint == "transactions" and query.get("format") == "csv":  # streamed
        assert "Content-Length" not in coded.headers
    else:
        assert coded.headers["Content-Length"] == str(len(coded.get_data()))
    assert coded.headers["ETag"] != plain.headers["ETag"]  # another representation
    for name in ("Content-Type", "Content-Disposition", "X-Svc-Count", "Link", "Cache-Control"):
        assert coded.headers.get(name) == plain.headers.get(name), name


def test_the_small_answer_is_exercised(api: Api) -> None:
    """At least one of ``ANSWERS`` is under 1 KiB (the markets dimensions of the fixture)
    and at least one streamed, so both branches above run."""
    sizes = [len(call(api, e, q).get_data()) for e, q in ANSWERS]
    assert min(sizes) < 1024 < max(sizes)
    streamed = call(api, "transactions", {**LISTING, "format": "csv"}, **GZIP)
    assert streamed.headers["Content-Encoding"] == "gzip"
    assert "Content-Length" not in streamed.headers


@pytest.mark.parametrize(("endpoint", "query"), ANSWERS, ids=IDS)
@pytest.mark.parametrize("coding", [{}, GZIP], ids=["identity", "gzip"])
def test_if_none_match_with_the_etag_is_a_304_that_costs_no_quota(
    api: Api, endpoint: str, query: Mapping[str, str], coding: dict[str, str]
) -> None:
    first = call(api, endpoint, query, **coding)
    assert first.status_code == 200
    tag = first.headers["ETag"]
    assert tag.startswith('W/"') and tag.endswith('"')
    again = call(api, endpoint, query, **coding, **{"X-Request-ID": "another-request-02"})
    assert again.headers["ETag"] == tag  # the request id and rate limit are not in it
    used = api.usage()
    remaining = int(again.headers["X-RateLimit-Remaining"])
    for condition in (tag, tag.removeprefix("W/"), f'"nope", {tag}', "*"):
        same = call(api, endpoint, query, **coding, **{"If-None-Match": condition})
        assert same.status_code == 304, condition
        assert same.get_data() == b""
        assert same.headers["ETag"] == tag
        assert same.headers["Vary"] == first.headers["Vary"]
        assert "Content-Encoding" not in same.headers
        assert same.headers["X-Quota-Used"] == again.headers["X-Quota-Used"]  # not billed
        remaining -= 1  # but it went through the rate limiter
        assert same.headers["X-RateLimit-Remaining"] == str(remaining)
    assert api.usage() == used
    other = call(api, endpoint, query, **coding, **{"If-None-Match": 'W/"0123", "abcd"'})
    assert other.status_code == 200 and other.headers["ETag"] == tag
    assert api.usage() == used + 1


def test_the_etag_follows_the_representation(api: Api) -> None:
    """JSON and CSV, identity and gzip, and callers of another plan (``_meta.tier``) get
    different tags; the tag of one coding does not validate the other."""
    json_tag = api.get("pulse", PULSE).headers["ETag"]
    csv_tag = api.get("pulse", PULSE, Accept="text/csv").headers["ETag"]
    gzip_tag = api.get("pulse", PULSE, **GZIP).headers["ETag"]
    starter = Api(api.app, plan="starter").get("pulse", PULSE).headers["ETag"]
    assert len({json_tag, csv_tag, gzip_tag, starter}) == 4
    assert api.get("pulse", PULSE, **GZIP, **{"If-None-Match": json_tag}).status_code == 200
    assert api.get("pulse", PULSE, **{"If-None-Match": gzip_tag}).status_code == 200
    assert api.get("pulse", PULSE, **{"If-None-Match": json_tag}).status_code == 304


def test_accept_encoding_q_values_are_respected(api: Api) -> None:
    for refused in ("gzip;q=0", "identity", "br, deflate", "*;q=0, identity;q=1", ""):
        response = api.get("pulse", PULSE, **{"Accept-Encoding": refused})
        assert response.status_code == 200 and "Content-Encoding" not in response.headers
    for wanted in ("GZIP", "x-gzip", "*", "gzip;q=0.5, identity;q=0.5", "identity;q=0.1, gzip"):
        response = api.get("pulse", PULSE, **{"Accept-Encoding": wanted})
        assert response.headers.get("Content-Encoding") == "gzip", wanted


def test_a_head_request_is_not_coded(api: Api) -> None:
    got = api.get("pulse", PULSE)
    query = "&".join(f"{k}={v}" for k, v in PULSE.items())
    head = api.client.head(
        f"/api/v1/real-estate/pulse?{query}", headers={"X-API-Key": api.key, **GZIP}
    )
    assert head.status_code == 200 and head.get_data() == b""
    assert "Content-Encoding" not in head.headers
    assert head.headers["Content-Length"] == got.headers["Content-Length"]
    assert head.headers["ETag"] == got.headers["ETag"]


def test_a_304_is_not_sent_for_a_refused_call(api: Api) -> None:
    """A tag never turns an error into a 304: a bad query is a 400 and a plan below the
    tier a 403, whatever If-None-Match says."""
    tag = api.get("pulse", PULSE).headers["ETag"]
    bad = api.get("pulse", {**PULSE, "sigungu_code": "x"}, **{"If-None-Match": "*"})
    assert bad.status_code == 400
    dong = {**PULSE, "geo_precision": "dong"}
    starter = Api(api.app, plan="starter")
    assert starter.get("pulse", dong, **{"If-None-Match": tag}).status_code == 403
    assert starter.get("pulse", dong, **{"If-None-Match": "*"}).status_code == 403


def test_identity_refused_codes_even_a_small_answer(loaded: Store) -> None:
    """``identity;q=0`` leaves gzip as the only acceptable coding, so even a body under
    1 KiB is coded; without it a small body goes out as it is."""
    small = Rendered(
        parts=(b'{"data":[]}',), slots=(), headers=(("Content-Type", "application/json"),)
    )
    plain = small.respond({"HTTP_ACCEPT_ENCODING": "gzip"}, {})
    assert "Content-Encoding" not in plain.headers and plain.get_data() == b'{"data":[]}'
    coded = small.respond({"HTTP_ACCEPT_ENCODING": "gzip, identity;q=0"}, {})
    assert coded.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(coded.get_data()) == b'{"data":[]}'
    assert coded.headers["Content-Length"] == str(len(coded.get_data()))


def test_a_cached_answer_keeps_its_gzip_form(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip caller of a cached answer is served from the compressed parts kept with
    it: nothing is compressed again."""
    first = api.get("pulse", PULSE, **GZIP)
    assert first.headers["Content-Encoding"] == "gzip"
    from svc_server.http import answers

    def no_compression(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("compressed again")

    monkeypatch.setattr(answers, "deflate_parts", no_compression)
    second = api.get("pulse", PULSE, **GZIP, **SAME_ID)
    assert second.status_code == 200
    body = decoded(second)
    assert body == same_remaining(api.get("pulse", PULSE, **SAME_ID).get_data(), body)


# the OpenAPI document ----------------------------------------------------------------------------


def test_the_document_describes_etag_gzip_and_304_on_every_data_operation() -> None:
    from tests.http.test_openapi import DOCUMENT

    data_ops = [
        (path, op)
        for path, item in DOCUMENT["paths"].items()
        for op in item.values()
        if op["x-svc-auth"] == "data"
    ]
    assert len(data_ops) >= 13  # six real-estate, two markets, five .csv forms
    for path, op in data_ops:
        headers = {p["name"] for p in op["parameters"] if p["in"] == "header"}
        assert {"If-None-Match", "Accept-Encoding"} <= headers, path
        assert op["responses"]["304"] == {"$ref": "#/components/responses/NotModified"}, path
        assert {"ETag", "Vary", "Content-Encoding"} <= set(op["responses"]["200"]["headers"]), path
    not_modified = DOCUMENT["components"]["responses"]["NotModified"]
    assert "content" not in not_modified and "ETag" in not_modified["headers"]


def test_served_tags_and_304s_are_as_documented(api: Api) -> None:
    from tests.http.test_openapi import DOCUMENT, conforms

    pattern = re.compile(DOCUMENT["components"]["headers"]["ETag"]["schema"]["pattern"])
    for endpoint, query in ANSWERS:
        path = endpoint if endpoint.startswith("/") else f"/api/v1/real-estate/{endpoint}"
        for coding in ({}, GZIP):
            tag = call(api, endpoint, query, **coding).headers["ETag"]
            assert pattern.fullmatch(tag), tag
            same = call(api, endpoint, query, **coding, **{"If-None-Match": tag})
            assert same.status_code == 304
            conforms("GET", path, same)


@pytest.mark.parametrize(
    "headers",
    [
        {"If-None-Match": 'W/"'},
        {"If-None-Match": 'W/"abc" garbage, *'},
        {"If-None-Match": ", ".join(['""'] * 2000)},
        {"If-None-Match": "\u00ff\u00fe"},
        {"Accept-Encoding": ";;;,,q=,gzip;q=9,gzip;level=1"},
        {"Accept-Encoding": "gzip;q=0.0001, *;q=-1"},
        {"Accept-Encoding": "," * 4000},
    ],
)
def test_malformed_caching_headers_are_ignored_never_an_error(
    api: Api, headers: dict[str, str]
) -> None:
    """A header that is not a list of tags matches nothing; an Accept-Encoding entry
    with a malformed q is dropped: the answer is the plain 200."""
    response = api.get("pulse", PULSE, **headers)
    assert response.status_code == 200
    assert "Content-Encoding" not in response.headers
    assert response.get_json()["data"]
