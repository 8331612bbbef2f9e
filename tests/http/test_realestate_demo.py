"""The demo data set through the API: every endpoint and parameter answers with data, every
envelope says the data is synthetic, and every example of docs/real-estate-api.md works
(in-process, and with the real ``curl`` against ``svc serve``).

The demo database is loaded once per session (``demo_db_url``) and only read here.
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from svc_core.cohorts.stats import quartiles
from svc_core.demo.realestate import SEOUL_DONGS, demo_districts
from svc_core.envelope import DEMO_LIMITATION
from svc_core.models import METRIC_TYPES, PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.indices import OPT_IN_METRICS
from svc_server.app import SvcApp
from svc_server.runtime.deps import new_id
from svc_server.store import Store, open_store
from tests import rent_law
from tests.conftest import LiveServer
from tests.http.realestate_support import ROOT, Api, assert_layer_envelope, make_app

DOCS = ROOT / "docs" / "real-estate-api.md"
EXPECT = re.compile(r"#\s*→\s*(\d{3})\s*$")


@pytest.fixture(scope="module")
def demo_store(demo_db_url: str) -> Iterator[Store]:
    s = open_store(demo_db_url)
    yield s
    s.close()


@pytest.fixture(scope="module")
def demo_app(demo_store: Store) -> SvcApp:
    return make_app(demo_store)


@pytest.fixture
def api(demo_app: SvcApp) -> Api:
    return Api(demo_app)


def synthetic(meta: dict[str, Any]) -> None:
    assert_layer_envelope(meta)
    assert meta["known_limitations"][0] == DEMO_LIMITATION


# every endpoint and parameter ---------------------------------------------------------------


PUBLISHED = [
    (p, t)
    for p, t in itertools.product(PROPERTY_TYPES, TRANSACTION_TYPES)
    if t == "sale" or p not in ("industrial", "land")
]
"""The type pairs of the demo data: no source has factory, warehouse or land leases."""


def test_pulse_has_every_type_combination_and_period_kind(api: Api) -> None:
    seen = set()
    for period in ("last_3m", "last_6m", "last_12m", "2026-09", "2026-Q3", "2022-Q1"):
        body = api.ok("pulse", {"sigungu_code": "11680", "period": period})
        synthetic(body["_meta"])
        seen |= {(r["property_type"], r["transaction_type"]) for r in body["data"]}
        assert {r["confidence"] for r in body["data"]} <= {"low", "medium", "high"}
    assert seen == set(PUBLISHED)
    levels = {
        r["confidence"]
        for code in ("11680", "26230", "11305")
        for r in api.ok("pulse", {"sigungu_code": code, "period": "2026-09"})["data"]
    }
    assert levels == {"low", "medium", "high"}


def test_every_demo_row_is_complete(api: Api) -> None:
    """The demo set records every month of its districts and datasets as loaded (a
    commercial lease, from no RTMS dataset, included); outside its five years nothing is
    loaded."""
    types = set()
    for code in ("11680", "26350"):
        for period, months in (("last_12m", 12), ("2026-Q3", 3), ("2021-10", 1)):
            body = api.ok("pulse", {"sigungu_code": code, "period": period})
            assert body["_meta"]["incomplete_periods"] == []
            rows = {(r["complete"], r["months_loaded"], r["months_expected"]) for r in body["data"]}
            assert rows == {(True, months, months)}
            types |= {(r["property_type"], r["transaction_type"]) for r in body["data"]}
    assert ("office", "monthly_lease") in types
    before = api.get("pulse", {"sigungu_code": "11680", "period": "2021-09"})
    assert before.status_code == 404 and before.get_json()["error"]["reason"] == "not_loaded"


def test_every_demo_district_has_a_pulse(api: Api) -> None:
    for code in demo_districts():
        body = api.ok("pulse", {"sigungu_code": code, "transaction_type": "sale"})
        assert {r["sigungu_code"] for r in body["data"]} == {code}


def test_dong_precision_for_every_seoul_dong_of_a_district(api: Api) -> None:
    for dong in SEOUL_DONGS["11680"]:
        body = api.ok(
            "pulse",
            {"sigungu_code": "11680", "geo_precision": "dong", "dong": dong, "period": "last_12m"},
        )
        assert {(r["gu"], r["dong"]) for r in body["data"]} == {("강남구", dong)}
        synthetic(body["_meta"])


def test_series_months_quarters_and_ranges(api: Api) -> None:
    for params in (
        {"periods": "2026-07,2026-08,2026-09"},
        {"periods": "2025-Q1,2026-Q1"},
        {"from_period": "2025-10", "to_period": "2026-09"},
        {"from_period": "2024-Q4", "to_period": "2026-Q3"},
        {"periods": "2026-09", "geo_precision": "dong", "dong": "역삼동"},
    ):
        body = api.ok("pulse/series", {"sigungu_code": "11680", **params})
        meta = body["_meta"]
        synthetic(meta)
        assert meta["missing_periods"] == []
        assert meta["periods_returned"] == meta["periods_requested"]
        levels = [r["confidence"] for r in body["data"]]
        assert meta["confidence"] == min(levels, key=("low", "medium", "high").index)


def test_coverage_every_granularity_precision_and_filter(api: Api) -> None:
    for granularity, geo in itertools.product(("quarter", "month"), ("sigungu", "dong")):
        body = api.ok("coverage", {"granularity": granularity, "geo_precision": geo})
        synthetic(body["_meta"])
        assert len(body["data"]) == 200
        assert body["data"][0]["period_count"] == (20 if granularity == "quarter" else 60)
    for ptype, ttype in PUBLISHED:
        rows = api.ok(
            "coverage",
            {"sigungu_code": "11680", "property_type": ptype, "transaction_type": ttype},
        )["data"]
        assert len(rows) == 1, (ptype, ttype)
    assert api.ok("coverage", {"geo_precision": "dong", "dong": "여의도동"})["data"]


def test_indices_every_metric_type_and_period_kind(api: Api) -> None:
    rows = api.ok("indices", {"sigungu_code": "11680", "period": "last_8q"})["data"]
    # every metric of SPEC's; rent_level (an addition) only when asked for
    spec_metrics = set(METRIC_TYPES) - OPT_IN_METRICS
    assert {r["metric_type"] for r in rows} == spec_metrics
    assert {r["property_type"] for r in rows} == {"office", "retail", "commercial_complex"}
    assert len(rows) == 8 * len(spec_metrics) * 3
    levels = api.ok(
        "indices", {"sigungu_code": "11680", "period": "last_8q", "metric_type": "rent_level"}
    )["data"]
    assert len(levels) == 8 * 3 and {r["metric_type"] for r in levels} == {"rent_level"}
    for period, periods in (("last_4q", 4), ("2026-Q3", 1), ("2025", 4)):
        body = api.ok("indices", {"sigungu_code": "26350", "period": period})
        assert len({r["period"] for r in body["data"]}) == periods
        synthetic(body["_meta"])


def test_dimensions_both_precisions(api: Api) -> None:
    plain = api.ok("dimensions", {})
    assert {d["code"] for d in plain["data"]["sigungus"]} == set(demo_districts())
    assert plain["data"]["gu_dongs"] == []
    assert {t["value"] for t in plain["data"]["property_types"]} == set(PROPERTY_TYPES)
    assert {t["value"] for t in plain["data"]["transaction_types"]} == set(TRANSACTION_TYPES)
    synthetic(plain["_meta"])
    dong = api.ok("dimensions", {"geo_precision": "dong"})["data"]["gu_dongs"]
    values = {(d["code"], d["value"]) for d in dong}
    assert {("41135", "분당구 > 중앙동"), ("11680", "강남구 > 역삼동")} <= values


def test_404_envelopes_are_synthetic_too(api: Api) -> None:
    response = api.get("pulse", {"sigungu_code": "11111"})
    assert response.status_code == 404
    synthetic(response.get_json()["_meta"])


def test_disclosure_and_pricing_pages(demo_app: SvcApp) -> None:
    from werkzeug.test import Client

    client = Client(demo_app)
    page = client.get("/disclosure")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    for needle in ("rtms_official", "rone_official", "not_mandated", "type 7", "지분", "high"):
        assert needle in text
    # what the answers added since: building types, prices per pyeong, complete and
    # provisional, and the deals behind a figure
    for needle in (
        "<code>whole_building</code>", "<code>unit</code>", "building_type_mix",
        "mixed_building_types", "area_unit=pyeong", "3.305785", "median_land_price_per_m2",
        "complete: false", "provisional: true while", "31 days", "incomplete_periods",
        "months_loaded", "not_loaded",
        "/api/v1/real-estate/transactions", "transactions_url", "include_excluded=true",
    ):  # fmt: skip
        assert needle in text, needle
    pricing = client.get("/pricing").get_data(as_text=True)
    assert "100,000" in pricing and "starter" in pricing and "internal" not in pricing


# the documented examples --------------------------------------------------------------------


def doc_examples() -> list[tuple[str, int]]:
    """Every ``curl`` line of the docs' shell blocks, with the status it documents."""
    out: list[tuple[str, int]] = []
    in_shell = False
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_shell = line.strip() == "```sh"
            continue
        if in_shell and line.startswith("curl "):
            match = EXPECT.search(line)
            out.append((line, int(match.group(1)) if match else 200))
    return out


def as_request(
    line: str, keys: dict[str, str]
) -> tuple[str, dict[str, str], list[tuple[str, str]]]:
    """(path, headers, extra query) of a documented curl command."""
    for name, value in keys.items():
        line = line.replace(f"${name}", value)
    tokens = shlex.split(line, comments=True)
    headers: dict[str, str] = {}
    extra: list[tuple[str, str]] = []
    url = ""
    rest = iter(tokens[1:])
    for token in rest:
        if token == "-H":
            name, _, value = next(rest).partition(":")
            headers[name.strip()] = value.strip()
        elif token == "--data-urlencode":
            key, _, value = next(rest).partition("=")
            extra.append((key, value))
        elif token in ("-o", "-D"):
            next(rest)
        elif token.startswith("http"):
            url = token
    parts = urlsplit(url)
    return parts.path, headers, [*parse_qsl(parts.query), *extra]


def test_the_docs_have_examples_of_every_endpoint() -> None:
    lines = " ".join(line for line, _ in doc_examples())
    endpoints = (
        "pulse?",
        'pulse"',
        "pulse/series",
        "compare",
        "transactions",
        "coverage",
        "indices",
    )
    for endpoint in (*endpoints, "dimensions", "regions"):
        assert f"/api/v1/real-estate/{endpoint}" in lines, endpoint
    assert {status for _, status in doc_examples()} == {200, 400, 403, 404}


@pytest.mark.parametrize(("line", "status"), doc_examples())
def test_every_documented_example_answers_as_documented(
    demo_app: SvcApp, line: str, status: int
) -> None:
    api, starter = Api(demo_app), Api(demo_app, plan="starter")
    keys = {"KEY": api.key, "STARTER_KEY": starter.key, "BASE": "http://localhost"}
    path, headers, query = as_request(line, keys)
    response = api.client.get(path, query_string=query, headers=headers)
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    if status == 200:
        if response.mimetype in ("text/csv", "application/x-ndjson"):
            assert response.headers["X-Svc-Known-Limitations"].startswith('["Synthetic')
            if response.mimetype == "application/x-ndjson":  # every line a record
                lines = response.get_data(as_text=True).splitlines()
                assert lines and all(json.loads(line)["natural_key"] for line in lines)
        else:
            body = response.get_json()
            assert body["data"]
            if not path.endswith("/regions"):  # the code table is real, not demo data
                synthetic(body["_meta"])


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs the curl program")
def test_the_examples_run_with_curl_against_svc_serve(
    demo_db_url: str, live_server_factory: Any, tmp_path: Path
) -> None:
    server: LiveServer = live_server_factory(demo_db_url)
    store = open_store(demo_db_url)
    try:
        from svc_server.services import consumers

        def key(plan: str) -> str:
            out = consumers.create_consumer(
                store, plan=plan, now=2e9, entropy=os.urandom(16), ids=new_id
            )
            return str(out.api_key)

        env = {
            "BASE": server.url,
            "KEY": key("pro"),
            "STARTER_KEY": key("starter"),
            "PATH": "/usr/bin:/bin",
        }
    finally:
        store.close()
    for line, status in doc_examples():
        done = subprocess.run(
            ["bash", "-c", line.split("#")[0] + ' -w "\\n%{http_code}"'],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert done.stdout.rstrip().rsplit("\n", 1)[-1] == str(status), (line, done.stdout[-300:])


def test_office_monthly_leases_convert_at_the_commercial_law_rate(api: Api) -> None:
    """An office's monthly leases (the demo's; RTMS publishes none) convert under
    상가건물임대차보호법, officetels' under the housing law: each row's converted-deposit
    quartiles equal a recomputation from the deals its link lists, with the tests' own
    statement of each law (``tests.rent_law``)."""
    from tests.http.test_realestate_transactions import every_page

    for ptype, commercial in (("office", True), ("officetel", False)):
        query = {"sigungu_code": "11680", "period": "2025-06", "property_type": ptype}
        [row] = api.ok("pulse", {**query, "transaction_type": "monthly_lease"})["data"]
        link = dict(parse_qsl(urlsplit(row["transactions_url"]).query))
        records, _ = every_page(api, {**link, "limit": "1000"})
        assert len(records) == row["sample_count"]
        converted = [
            rent_law.converted(
                r["deposit_krw"],
                r["monthly_rent_krw"],
                datetime.date.fromisoformat(r["contract_date"]),
                commercial=commercial,
            )
            for r in records
        ]
        assert None not in converted
        expected = quartiles([c for c in converted if c is not None])
        got = tuple(row[f"{q}_converted_deposit"] for q in ("p25", "median", "p75"))
        assert got == expected
        other = [  # the other law's rate gives other figures: the law was chosen
            rent_law.converted(
                r["deposit_krw"],
                r["monthly_rent_krw"],
                datetime.date.fromisoformat(r["contract_date"]),
                commercial=not commercial,
            )
            for r in records
        ]
        assert quartiles([c for c in other if c is not None]) != expected
