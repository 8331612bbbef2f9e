"""The OpenAPI document: valid 3.1, served, and unable to drift from the router.

The document is built from the routing table, so these tests pin the other direction:
every route has written documentation (and no documentation describes a route that is
gone), every query parameter a route accepts is described, every example matches its
schema, and the committed reference pages in docs/api are exactly what the generator
writes today.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openapi_spec_validator import validate
from werkzeug.test import Client, TestResponse

from svc_core.json_schema import nullable
from svc_core.params import Param
from svc_core.webhooks.events import EVENT_TYPES
from svc_server.app import SvcApp, routes
from svc_server.http.routing import Auth, Route
from svc_server.openapi import build_document, drift, openapi_path, operation_key
from svc_server.openapi.operations import TAGS
from svc_server.openapi.reference import cell, notes, page_name, render_pages, slug
from svc_server.store import Store
from tests.conftest import ROOT, Accounts, FakeClock, IdentityProvider

DOCUMENT = build_document(routes.ROUTES)
IGNORED_METHODS = {"HEAD", "OPTIONS"}
UUID = "6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f"


def operations(document: dict[str, Any] = DOCUMENT) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
    ]


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(copy.deepcopy(DOCUMENT))
    assert DOCUMENT["openapi"].startswith("3.1.")
    assert DOCUMENT["info"]["version"] == "1.0"


def test_every_route_is_documented() -> None:
    found = drift(routes.ROUTES)
    assert not found.undocumented_operations, "give these routes an Operation (doc=...)"
    assert not found.undescribed_params, "describe these query parameters"
    assert not found


def test_the_description_names_every_route_that_offers_csv() -> None:
    """The API description's CSV paragraph lists exactly the routes that answer CSV."""
    paragraph = DOCUMENT["info"]["description"].split("**CSV.** ", 1)[1].split(" answer ", 1)[0]
    named = set(re.split(r",\s*|\s+and\s+", " ".join(paragraph.split())))
    offered = {
        r.path.removeprefix(routes.RE + "/") for r in routes.ROUTES if r.csv and not r.csv_only
    }
    assert named == offered


def test_drift_is_detected() -> None:
    new = Route(
        path="/api/v1/new/<thing_id>",
        methods=("GET",),
        handler=routes.ROUTES[0].handler,
        auth=Auth.DATA,
        params=(Param(name="q", description=""),),
    )
    found = drift((*routes.ROUTES, new))
    assert found.undocumented_operations == ("GET /api/v1/new/{thing_id}",)
    assert found.undescribed_params == ("GET /api/v1/new/{thing_id} ?q",)
    document = build_document((*routes.ROUTES, new))
    validate(document)  # an undocumented route still yields a valid document
    op = document["paths"]["/api/v1/new/{thing_id}"]["get"]
    assert op["x-undocumented"] is True

    pulse = next(r for r in routes.ROUTES if r.path.endswith("/real-estate/pulse"))
    widened = attrs.evolve(pulse, params=(*pulse.params, Param(name="debug", description="")))
    others = tuple(r for r in routes.ROUTES if r is not pulse)
    assert drift((*others, widened)).undescribed_params == (f"GET {pulse.path} ?debug",)
    assert not drift((*others, pulse))


def test_parameters_are_documented_from_the_declarations_that_validate_them() -> None:
    """One declaration: the schema of a query parameter is derived from the Param that
    the server reads it with, so a bound or choice cannot differ between the two."""
    for route in routes.ROUTES:
        for method in route.methods:
            op = DOCUMENT["paths"][openapi_path(route.path)][method.lower()]
            by_name = {p["name"]: p for p in op["parameters"] if p["in"] == "query"}
            for param in route.params:
                schema = by_name[param.name]["schema"]
                assert by_name[param.name]["required"] is param.required
                if param.kind == "enum":
                    assert schema["enum"] == list(param.choices)
                if param.kind == "integer":
                    assert (schema["minimum"], schema["maximum"]) == (param.low, param.high)
                if param.default is not None:
                    assert schema["default"] == param.default


def test_the_document_lists_exactly_the_routers_paths_and_methods(app: SvcApp) -> None:
    served = {
        f"{method} {openapi_path(rule.rule)}"
        for rule in app.url_map.iter_rules()
        for method in rule.methods or ()
        if method not in IGNORED_METHODS
    }
    documented = {f"{method} {path}" for method, path, _ in operations()}
    assert documented == served


def test_parameters_are_the_ones_each_route_accepts() -> None:
    by_key = {operation_key(m, r.path): r for r in routes.ROUTES for m in r.methods}
    for method, path, op in operations():
        route = by_key[f"{method} {path}"]
        accepted = {p.name for p in route.params} | ({"format"} if route.csv else set())
        query = {p["name"] for p in op["parameters"] if p["in"] == "query"}
        assert query == accepted, f"{method} {path}"
        path_names = {p["name"] for p in op["parameters"] if p["in"] == "path"}
        assert path_names == set(re.findall(r"<(?:[^:<>]+:)?([^<>]+)>", route.path))


def test_security_follows_each_routes_auth_policy() -> None:
    by_key = {operation_key(m, r.path): r for r in routes.ROUTES for m in r.methods}
    expected = {
        "public": [],
        "data": [{"apiKey": []}, {"sessionCookie": []}],
        "account": [{"sessionCookie": []}],
        "page": [{}, {"sessionCookie": []}],  # the cookie is optional on pages
    }
    for method, path, op in operations():
        route = by_key[f"{method} {path}"]
        assert op["security"] == expected[route.auth], f"{method} {path}"
        statuses = set(op["responses"])
        assert {"400", "414"} <= statuses
        if route.auth == "data":
            assert {"401", "402", "403", "429"} <= statuses
        if route.auth == "account":
            assert "401" in statuses
            if method in {"POST", "PATCH", "DELETE"}:
                assert "403" in statuses  # CSRF_REJECTED
        if route.csv:
            assert "text/csv" in op["responses"]["200"]["content"]
        if route.ndjson:
            assert "application/x-ndjson" in op["responses"]["200"]["content"]


def test_operations_are_described_and_tagged() -> None:
    tag_names = {t["name"] for t in TAGS}
    ids = [op["operationId"] for _, _, op in operations()]
    assert len(ids) == len(set(ids))
    for method, path, op in operations():
        assert op["summary"] and op["description"], f"{method} {path}"
        assert op["tags"][0] in tag_names
        assert "x-undocumented" not in op
        for param in op["parameters"]:
            assert param.get("description"), f"{method} {path} {param['name']}"


def test_links_name_real_operations_and_their_path_parameters() -> None:
    by_id = {op["operationId"]: op for _, _, op in operations()}
    links = [
        link
        for _, _, op in operations()
        for response in op["responses"].values()
        for link in response.get("links", {}).values()
    ]
    assert len(links) >= 7
    for link in links:
        op = by_id[link["operationId"]]
        path_params = {p["name"] for p in op["parameters"] if p["in"] == "path"}
        assert set(link["parameters"]) == path_params, link


def _resolve(document: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    ref = response.get("$ref")
    if ref is None:
        return response
    return dict(document["components"]["responses"][ref.rsplit("/", 1)[-1]])


def test_every_error_response_is_the_json_error_body() -> None:
    for method, path, op in operations():
        for status, raw in op["responses"].items():
            response = _resolve(DOCUMENT, raw)
            assert response["description"]
            assert "X-Request-ID" in response["headers"], f"{method} {path} {status}"
            if int(status[0]) < 4 or (path, status) == ("/api/status", "503"):
                continue  # the probe's 503 is its status body, not an error (SPEC)
            schema = response["content"]["application/json"]["schema"]
            names = set(schema.get("properties", {})) | {schema.get("$ref", "").rsplit("/")[-1]}
            assert names & {"error", "Error", "EnvelopeError"}, f"{method} {path} {status}"
            assert list(response["content"]) == ["application/json"]


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    # References are "#/components/...": resolve them against a root that holds them.
    root = {"components": DOCUMENT["components"], "allOf": [schema]}
    return jsonschema.Draft202012Validator(root, format_checker=jsonschema.FormatChecker())


def _examples() -> list[tuple[str, dict[str, Any], Any]]:
    found = []
    for method, path, op in operations():
        for param in op["parameters"]:
            if "example" in param:
                found.append(
                    (f"{method} {path} ?{param['name']}", param["schema"], param["example"])
                )
        media_sets = [("body", op.get("requestBody", {}).get("content", {}))]
        media_sets += [
            (status, _resolve(DOCUMENT, r).get("content", {}))
            for status, r in op["responses"].items()
        ]
        for where, content in media_sets:
            for media, spec in content.items():
                if "example" in spec:
                    found.append(
                        (f"{method} {path} {where} {media}", spec["schema"], spec["example"])
                    )
    return found


def test_every_example_matches_its_schema() -> None:
    examples = _examples()
    assert len(examples) >= 15
    for label, schema, example in examples:
        errors = list(_validator(schema).iter_errors(example))
        assert not errors, f"{label}: {errors[0].message}"


def test_every_event_type_has_a_documented_payload() -> None:
    assert set(DOCUMENT["webhooks"]) == set(EVENT_TYPES)
    for event_type, item in DOCUMENT["webhooks"].items():
        schema = item["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert schema["properties"]["type"] == {"type": "string", "const": event_type}
        assert schema["properties"]["data"] != {"type": "object"}, event_type
        headers = {p["name"] for p in item["post"]["parameters"]}
        assert {"X-Svc-Event", "X-Svc-Event-Id", "X-Svc-Signature", "User-Agent"} <= headers


def test_a_test_event_payload_matches_its_documented_schema() -> None:
    from svc_core.webhooks import events

    event = events.webhook_test(
        event_id=events.webhook_test_id(b"\x01" * 16),
        now=1_790_000_000,
        docs_url="https://svc.example.com/docs#/Webhooks",
    )
    schema = DOCUMENT["webhooks"]["webhook.test"]["post"]["requestBody"]["content"][
        "application/json"
    ]["schema"]
    _validator(schema).validate(json.loads(events.serialize(event)))


# served -------------------------------------------------------------------------------------


def test_the_server_serves_the_document_publicly_and_cacheably(store: Store, make_app: Any) -> None:
    app = make_app(store, public_url="https://api.example.com")
    client = Client(app)
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.headers["Cache-Control"] == "public, max-age=300"
    assert response.get_json() == build_document(
        routes.ROUTES, server_url="https://api.example.com"
    )
    etag = response.headers["ETag"]
    again = client.get("/api/v1/openapi.json", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.get_data() == b""
    assert client.get("/api/v1/openapi.json?v=1").status_code == 400


def test_the_served_document_states_the_configured_limits(store: Store, make_app: Any) -> None:
    app = make_app(store, max_body_bytes=4096, max_url_bytes=2048)
    info = Client(app).get("/api/v1/openapi.json").get_json()["info"]["description"]
    assert "above 4096 bytes get 413" in info
    assert "above\n2048 bytes get 414" in info


def test_every_operation_refuses_an_undocumented_query_parameter(
    store: Store, app: SvcApp, clock: FakeClock
) -> None:
    """The document cannot say "no other parameters" for a query; the server does."""
    accounts = Accounts(store, app, clock)
    _, api_key = accounts.consumer("pro", email="owner@example.com")
    browser = accounts.browser("owner@example.com")
    for method, path, _ in operations():
        url = path.replace("{key_id}", UUID).replace("{endpoint_id}", UUID)
        url = url.replace("{member_id}", UUID).replace("{invite_id}", UUID)
        response = browser.open(
            url + "?not_a_parameter=1",
            method=method,
            headers={"X-API-Key": api_key, "Origin": "https://app.example.com"},
        )
        assert response.status_code == 400, f"{method} {path}"
        error = response.get_json()["error"]
        assert error["code"] == "INVALID_PARAMS" and "not_a_parameter" in error["message"]


# real answers conform ------------------------------------------------------------------------


def conforms(method: str, path: str, response: TestResponse) -> Any:
    """Assert ``response`` is documented for the operation, by status, type and schema."""
    op = DOCUMENT["paths"][path][method.lower()]
    status = str(response.status_code)
    assert status in op["responses"], f"{method} {path}: undocumented {status}"
    spec = _resolve(DOCUMENT, op["responses"][status])
    content = spec.get("content", {})
    assert response.headers["X-Request-ID"]
    if not content:
        assert response.get_data() == b""
        return None
    assert response.mimetype in content, f"{method} {path} {status}: {response.mimetype}"
    if response.mimetype != "application/json":
        return response.get_data(as_text=True)
    body = response.get_json()
    errors = list(_validator(content["application/json"]["schema"]).iter_errors(body))
    assert not errors, f"{method} {path} {status}: {errors[0].message}"
    return body


def test_account_answers_match_the_document(
    store: Store,
    make_app: Any,
    clock: FakeClock,
    idp: IdentityProvider,
    receiver: Any,
) -> None:
    """One real pass over every account operation (ids the fuzzer cannot guess)."""
    app = make_app(store, webhook_allow_private=True, **idp.settings())
    Accounts(store, app, clock).consumer("pro", email="owner@example.com", company="Acme")
    me = "/api/auth/me"
    origin = {"Origin": "https://app.example.com"}
    owner = Client(app)

    def call(client: Client, method: str, path: str, url: str | None = None, **kw: Any) -> Any:
        response = client.open(url or path, method=method, headers=origin, **kw)
        assert response.status_code == 200, response.get_data(as_text=True)
        return conforms(method, path, response)

    call(owner, "POST", "/api/auth/session", json={"jwt": idp.token(email="owner@example.com")})
    call(owner, "GET", f"{me}/usage")
    call(owner, "GET", f"{me}/keys")
    created = call(
        owner,
        "POST",
        f"{me}/keys",
        json={"label": "ci", "mode": "test", "scope": "read_only", "ip_allowlist": ["10.0.0.0/8"]},
    )
    key_id = created["data"]["id"]
    key_path = f"{me}/keys/{{key_id}}"
    call(owner, "PATCH", key_path, f"{me}/keys/{key_id}", json={"label": "renamed"})
    rotated = call(
        owner,
        "POST",
        key_path + "/rotate",
        f"{me}/keys/{key_id}/rotate",
        json={"grace_period_seconds": 60},
    )
    call(owner, "POST", key_path + "/revoke", f"{me}/keys/{rotated['data']['id']}/revoke")
    call(owner, "DELETE", key_path, f"{me}/keys/{key_id}")

    hook = receiver()
    endpoint = call(
        owner,
        "POST",
        f"{me}/webhooks",
        json={"url": hook.url, "description": "ops", "events": ["*"]},
    )["data"]["id"]
    hook_path = f"{me}/webhooks/{{endpoint_id}}"
    call(owner, "GET", f"{me}/webhooks")
    sent = call(owner, "POST", hook_path + "/test", f"{me}/webhooks/{endpoint}/test")
    assert sent["data"]["delivery"]["status"] == "delivered"
    log = call(owner, "GET", hook_path + "/deliveries", f"{me}/webhooks/{endpoint}/deliveries")
    assert log["data"]["rows"]
    with store.db.transaction() as tx:
        tx.execute(
            "UPDATE webhook_endpoints SET status = ?, disabled_at = ? WHERE id = ?",
            ("disabled_after_failure", int(clock()), endpoint),
        )
    call(owner, "POST", hook_path + "/enable", f"{me}/webhooks/{endpoint}/enable")
    call(owner, "DELETE", hook_path, f"{me}/webhooks/{endpoint}")

    invite = call(owner, "POST", f"{me}/team", json={"email": "mia@example.com", "role": "admin"})
    call(owner, "GET", f"{me}/team")
    mia = Client(app)
    first = call(mia, "POST", "/api/auth/session", json={"jwt": idp.token(email="mia@example.com")})
    assert "api_key" in first["data"]  # a first sign-in creates a starter consumer
    invites = call(mia, "GET", f"{me}/invites")
    assert invites["invites"][0]["company_name"] == "Acme"
    invite_id = invite["data"]["id"]
    accept = f"{me}/invites/{{invite_id}}/accept"
    call(mia, "POST", accept, f"{me}/invites/{invite_id}/accept")
    call(owner, "DELETE", f"{me}/team/{{member_id}}", f"{me}/team/{invite_id}")
    call(owner, "DELETE", "/api/auth/session")


SAMPLES = (
    "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
    "monthly_rent_krw,area_m2\n"
    + "".join(
        f"{source},11680,역삼동,office,monthly_lease,2026-0{month}-1{day},{price},{rent},85.5\n"
        for source, price, rent in (
            ("public_assessment", 50_000_000, 2_000_000),
            ("rtms_official", 60_000_000, 2_400_000),
        )
        for month in (1, 2, 4)
        for day in (1, 2)
    )
)


def test_data_answers_and_csv_headers_match_the_document(
    store: Store, app: SvcApp, clock: FakeClock
) -> None:
    from svc_server import ingest

    ingest.ingest(store, "samples", SAMPLES.encode(), path="samples.csv", now=clock())
    _, api_key = Accounts(store, app, clock).consumer("pro")
    client = Client(app)
    re_ = "/api/v1/real-estate"
    for path, query in (
        (f"{re_}/pulse", "sigungu_code=11680&period=2026-Q1&geo_precision=dong"),
        (f"{re_}/pulse/series", "sigungu_code=11680&from_period=2026-01&to_period=2026-04"),
        (f"{re_}/coverage", "granularity=month"),
        (f"{re_}/dimensions", "geo_precision=dong"),
        (f"{re_}/transactions", "sigungu_code=11680&period=2026-Q1&limit=2&include_excluded=true"),
        (
            f"{re_}/compare",
            "sigungu_codes=11680,11650&period=2026-Q1&property_type=office&transaction_type=sale",
        ),
    ):
        answer = client.get(f"{path}?{query}", headers={"X-API-Key": api_key})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert conforms("GET", path, answer)["data"]
        op = DOCUMENT["paths"][path]["get"]
        if "text/csv" not in op["responses"]["200"]["content"]:
            continue
        as_csv = client.get(f"{path}?{query}&format=csv", headers={"X-API-Key": api_key})
        conforms("GET", path, as_csv)
        sent = {name for name, _ in as_csv.headers.items() if name.startswith("X-Svc-")}
        documented = set(op["responses"]["200"]["headers"])
        assert sent and sent <= documented, sent - documented
        # the routes that stream NDJSON say so: a client checking the answer's type, or a
        # generated one, must find application/x-ndjson among the documented ones
        as_ndjson = client.get(f"{path}?{query}&format=ndjson", headers={"X-API-Key": api_key})
        if path.endswith(("/transactions", "/compare")):
            assert as_ndjson.status_code == 200, as_ndjson.get_data(as_text=True)
            assert as_ndjson.mimetype == "application/x-ndjson"
            lines = conforms("GET", path, as_ndjson).splitlines()
            assert lines and all(json.loads(line) for line in lines)
        else:
            assert as_ndjson.status_code == 400  # format=ndjson is not one of its formats


def test_public_answers_match_the_document(client: Client) -> None:
    for path in ("/api/status", "/api/v1/openapi.json", "/disclosure", "/pricing"):
        response = client.get(path)
        assert response.status_code in (200, 503)
        conforms("GET", path, response)
    etag = client.get("/api/v1/openapi.json").headers["ETag"]
    conforms(
        "GET",
        "/api/v1/openapi.json",
        client.get("/api/v1/openapi.json", headers={"If-None-Match": etag}),
    )


# reference pages ------------------------------------------------------------------------------


def test_the_committed_reference_is_what_the_generator_writes() -> None:
    pages = render_pages(DOCUMENT)
    directory = ROOT / "docs" / "api"
    committed = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.md")}
    assert set(committed) == set(pages), "run: svc openapi --docs docs/api"
    for name, text in pages.items():
        assert committed[name] == text, f"docs/api/{name} is stale: run svc openapi --docs docs/api"


def test_the_reference_has_a_page_per_tag_and_every_operation(tmp_path: Path) -> None:
    pages = render_pages(DOCUMENT)
    for method, path, op in operations():
        page = pages[op["tags"][0].lower().replace(" ", "-") + ".md"]
        assert f"## {method} {path}\n" in page
        assert f"(#{slug(f'{method} {path}')})" in page
    for name in DOCUMENT["components"]["schemas"]:
        assert f"## {name}\n" in pages["schemas.md"]
    for event_type in EVENT_TYPES:
        assert f"## {event_type}\n" in pages["webhook-events.md"]


def _svc(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_server", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_svc_openapi_writes_and_checks_the_reference(tmp_path: Path) -> None:
    target = tmp_path / "api"
    assert _svc("openapi", "--docs", str(target), "--check").returncode == 1
    written = _svc("openapi", "--docs", str(target))
    assert written.returncode == 0, written.stderr
    assert {p.name for p in target.glob("*.md")} == set(render_pages(DOCUMENT))
    assert _svc("openapi", "--docs", str(target), "--check").returncode == 0
    (target / "extra.md").write_text("stale", encoding="utf-8")
    (target / "index.md").write_text("edited", encoding="utf-8")
    check = _svc("openapi", "--docs", str(target), "--check")
    assert check.returncode == 1
    assert "extra.md" in check.stdout and "index.md" in check.stdout
    assert _svc("openapi", "--docs", str(target)).returncode == 0
    assert not (target / "extra.md").exists()
    assert _svc("openapi", "--docs", str(target), "--check").returncode == 0


def test_svc_openapi_prints_the_document_for_its_configuration() -> None:
    done = _svc("openapi", "--public-url", "https://api.example.com")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == build_document(
        routes.ROUTES, server_url="https://api.example.com"
    )


# the path converter ------------------------------------------------------------------------

SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._", min_size=1, max_size=12)
NAME = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True)


@given(st.lists(st.one_of(SEGMENT, NAME.map(lambda n: ("var", n))), min_size=1, max_size=6))
def test_openapi_path_turns_rule_variables_into_braces(parts: list[Any]) -> None:
    rule = "".join(f"/<{p[1]}>" if isinstance(p, tuple) else f"/{p}" for p in parts)
    expected = "".join(f"/{{{p[1]}}}" if isinstance(p, tuple) else f"/{p}" for p in parts)
    assert openapi_path(rule) == expected
    assert openapi_path(rule.replace("/<", "/<string:")) == expected
    assert openapi_path(expected) == expected


@pytest.mark.parametrize("method", ["get", "Get", "GET"])
def test_operation_keys_use_upper_case_methods(method: str) -> None:
    assert operation_key(method, "/api/auth/me/keys/<key_id>") == "GET /api/auth/me/keys/{key_id}"


# the small pure helpers ------------------------------------------------------------------------


@given(st.text())
def test_a_table_cell_is_one_line_without_bare_pipes(text: str) -> None:
    out = cell(text)
    assert "\n" not in out and "\r" not in out
    assert re.search(r"(?<!\\)\|", out) is None
    assert out.replace("\\|", "|") == " ".join(text.split())


@given(st.text())
def test_slugs_are_anchor_safe(text: str) -> None:
    out = slug(text)
    assert out == out.lower()
    assert not set(out) & set(" .,/{}()[]`*?!#")
    assert slug(out) == out


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=40))
def test_page_names_are_plain_markdown_file_names(tag: str) -> None:
    name = page_name(tag)
    assert re.fullmatch(r"[a-z0-9-]*\.md", name)
    assert not name.startswith("-")


@given(st.lists(st.text(max_size=20), max_size=5))
def test_notes_are_sentences(parts: list[str]) -> None:
    out = notes(*parts)
    kept = [p.strip() for p in parts if p.strip()]
    if not kept:
        assert out == ""
        return
    assert out.endswith((".", "?", "!", ")"))
    assert out.startswith(kept[0][0].upper())
    assert all(part[1:] in out for part in kept)  # nothing dropped


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
SIMPLE = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": "string", "enum": ["a", "b"]},
        {"type": "object", "properties": {"a": {"type": "integer"}}},
        {"$ref": "#/components/schemas/RateLimit"},
    ]
)


@given(SIMPLE, JSON_VALUES)
def test_nullable_accepts_null_and_exactly_what_the_schema_accepted(
    schema: dict[str, Any], value: Any
) -> None:
    widened = _validator(nullable(schema))
    assert widened.is_valid(None)
    if value is not None:
        assert widened.is_valid(value) == _validator(schema).is_valid(value)
