"""Issue 42, items 1 (listings), 4, 5 and 6: what was never loaded, rejected or excluded
is stated by the answer it concerns, through a real ``svc serve``, ``svc sync status``
and the MCP tools over both transports (``/mcp`` and a ``svc mcp`` subprocess).

The store holds the four real MOLIT samples and ``fixtures/rtms/nrg_11140_202506_rejected.xml``: a
Jung-gu (중구) answer of June 2025 in the samples' shape with the row the newcomer hit
(a ``dealAmount`` of ``27,0000000``, one of three mixed-use deals), one cancelled office
deal and one partial share.

A rejection lasts as long as its source says it (item 4's last gap): those tests load
the Jung-gu answer, then a corrected copy of it, into a store of their own on each
backend, and ask the API in process (werkzeug).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession

from svc_core.periods import parse_month
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.rtms import parse_pages, read_page
from svc_server.ingest import Load, SyncMonth, commit
from svc_server.store import Store
from tests.conftest import RE_NOW, LiveServer
from tests.http.realestate_support import FIXTURES, Api, load, make_app, open_molit_store
from tests.http.test_mcp import World, _key, call, run, session_for

JUNGGU_FILE = FIXTURES / "rtms" / "nrg_11140_202506_rejected.xml"
JUNGGU = {"sigungu_code": "11140", "period": "2025-06"}
GANGNAM_RANGE = {"sigungu_code": "11680", "from": "2025-01", "to": "2025-08"}
NEVER = ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-07", "2025-08"]
"""The months of GANGNAM_RANGE never loaded (the samples are June 2025)."""


def _load_junggu(store: Store) -> None:
    load(store, "rtms-commercial", JUNGGU_FILE)


@pytest.fixture(scope="module")
def world(module_db_url: str) -> Iterator[World]:
    with open_molit_store(module_db_url) as store:
        _load_junggu(store)
        keys = {"pro": _key(store, "pro")}
    server = LiveServer(module_db_url)
    try:
        with httpx.Client(timeout=30) as http:
            yield World(module_db_url, server, keys, cookie="", http=http)
    finally:
        server.stop()


def get(world: World, endpoint: str, **params: str) -> httpx.Response:
    return world.api(endpoint, params, world.keys["pro"])


# item 1: a listing names the months never loaded --------------------------------------------


def test_a_listing_names_its_never_loaded_months_in_json_and_csv(world: World) -> None:
    body = get(world, "transactions", **GANGNAM_RANGE).json()
    assert body["_meta"]["unloaded_periods"] == NEVER
    assert body["data"]  # June's deals
    csv = get(world, "transactions", format="csv", **GANGNAM_RANGE)
    assert csv.status_code == 200
    assert json.loads(csv.headers["X-Svc-Unloaded-Periods"]) == NEVER
    empty = get(world, "transactions", sigungu_code="11680", period="2024-01")
    assert empty.status_code == 200
    assert empty.json()["data"] == []
    assert empty.json()["_meta"]["unloaded_periods"] == ["2024-01"]
    loaded = get(world, "transactions", sigungu_code="11680", period="2025-06").json()
    assert loaded["_meta"]["unloaded_periods"] == []


# item 4: a rejected row leaves a trace ------------------------------------------------------


def test_a_rejected_row_is_counted_in_meta_and_listed_with_its_reason(world: World) -> None:
    pulse = get(world, "pulse", property_type="mixed_use", **JUNGGU).json()
    (row,) = pulse["data"]
    assert row["sample_count"] == 2  # the source has 3: one is malformed
    assert pulse["_meta"]["rejected_rows"] == [
        {
            "sigungu_code": "11140",
            "month": "2025-06",
            "count": 1,
            "reasons": {"invalid_amount": 1},
        }
    ]
    listed = get(world, "transactions", include_excluded="true", **JUNGGU).json()
    (rejected,) = listed["_meta"]["rejected_records"]
    assert rejected["rejected_reason"] == "invalid_amount"
    assert "27,0000000" in rejected["detail"]
    assert (rejected["property_type"], rejected["month"]) == ("mixed_use", "2025-06")
    assert rejected["source_file"].endswith("nrg_11140_202506_rejected.xml")
    plain = get(world, "transactions", **JUNGGU).json()["_meta"]
    assert "rejected_records" not in plain
    assert plain["rejected_rows"][0]["count"] == 1
    # another district's answer carries none of them
    gangnam = get(world, "pulse", sigungu_code="11680", period="2025-06").json()
    assert gangnam["_meta"]["rejected_rows"] == []


def test_svc_sync_status_counts_rejected_rows_per_district_month(world: World) -> None:
    def status(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "svc_server", "sync", "status", *args],
            env=world.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout

    text = status()
    assert "rejected rtms-commercial 11140 중구 2025-06: 1 malformed record in no figure" in text
    doc = json.loads(status("--json"))
    assert doc["rejected"] == [
        {"kind": "rtms-commercial", "sigungu_code": "11140", "month": "2025-06", "count": 1}
    ]
    assert "rejected" not in status("--sigungu", "11680")


# item 4: a rejection lasts as long as its source says it ------------------------------------


def _corrected(tmp_path: Path, **changes: str) -> Path:
    """A copy of the Jung-gu answer with its malformed amount fixed (and ``changes``:
    text replaced)."""
    text = JUNGGU_FILE.read_text(encoding="utf-8").replace("27,0000000", "270,000")
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "nrg_11140_202506_corrected.xml"
    path.write_text(text, encoding="utf-8")
    return path


def _junggu_mixed_use(api: Api) -> tuple[int, list[Any], list[Any]]:
    """(mixed-use deals counted, ``rejected_rows``, the listing's ``rejected_records``)
    of Jung-gu's June 2025."""
    pulse = api.ok("pulse", {"property_type": "mixed_use", **JUNGGU})
    (row,) = pulse["data"]
    listed = api.ok("transactions", {"include_excluded": "true", **JUNGGU})
    return row["sample_count"], pulse["_meta"]["rejected_rows"], listed["_meta"]["rejected_records"]


REJECTED_ONCE = [
    {"sigungu_code": "11140", "month": "2025-06", "count": 1, "reasons": {"invalid_amount": 1}}
]


def test_a_corrected_file_forgets_the_rejection_it_no_longer_holds(
    store: Store, tmp_path: Path
) -> None:
    api = Api(make_app(store))
    _load_junggu(store)
    counted, rejected_rows, records = _junggu_mixed_use(api)
    assert (counted, rejected_rows, len(records)) == (2, REJECTED_ONCE, 1)
    load(store, "rtms-commercial", _corrected(tmp_path))  # every page: totalCount 7, 7 items
    assert _junggu_mixed_use(api) == (3, [], [])
    _load_junggu(store)  # the malformed answer again: rejected again, the fixed deal stays
    counted, rejected_rows, records = _junggu_mixed_use(api)
    assert (counted, rejected_rows, len(records)) == (3, REJECTED_ONCE, 1)


def test_a_complete_sync_month_forgets_the_rejection_it_no_longer_holds(
    store: Store, tmp_path: Path
) -> None:
    """What ``svc sync rtms`` commits for a month it read whole (``services.sync``)."""
    api = Api(make_app(store))
    _load_junggu(store)
    page = read_page(_corrected(tmp_path).read_bytes())
    result = parse_pages([page], RtmsDataset.COMMERCIAL, path="sync")
    month = SyncMonth(
        kind=RtmsDataset.COMMERCIAL,
        sigungu_code="11140",
        month=parse_month("2025-06"),
        status="complete",
        total_count=7,
        pages=1,
    )
    load_ = Load(
        kind="rtms-commercial",
        report=result.report,
        digest="sync|commercial|11140|2025-06",
        transactions=result,
        sync_month=month,
    )
    commit(store, load_, now=RE_NOW)
    assert _junggu_mixed_use(api) == (3, [], [])


def test_a_partial_read_keeps_the_rejections_of_its_month(store: Store, tmp_path: Path) -> None:
    """One page of several, a web CSV export and svc's samples cannot tell what the rest
    of the month holds: the rejection stays counted after each (each loads the fixed
    deal too)."""
    api = Api(make_app(store))
    _load_junggu(store)
    page = _corrected(tmp_path, **{"<totalCount>7</totalCount>": "<totalCount>17</totalCount>"})
    export = tmp_path / "commercial_11140_202506.csv"
    export.write_text(
        '"NO","시군구","유형","건축물주용도","전용/연면적(㎡)","거래금액(만원)","계약년월","계약일"\n'
        '"1","서울특별시 중구 을지로동","일반","숙박","210.5","270,000","202506","11"\n',
        encoding="utf-8",
    )
    samples = tmp_path / "samples.csv"
    samples.write_text(
        "source,sigungu_code,dong,property_type,transaction_type,contract_date,price_krw,"
        "monthly_rent_krw,area_m2\n"
        "broker_survey_2025,11140,을지로동,mixed_use,sale,2025-06-11,2700000000,,210.5\n",
        encoding="utf-8",
    )
    partial = (("rtms-commercial", page), ("rtms-commercial", export), ("samples", samples))
    for n, (kind, path) in enumerate(partial, start=1):
        report = load(store, kind, path)
        assert report.loaded >= 1, path
        counted, rejected_rows, records = _junggu_mixed_use(api)
        assert counted == 2 + n, path
        assert (rejected_rows, len(records)) == (REJECTED_ONCE, 1), path


# item 5: the exclusions of this district ----------------------------------------------------


def test_the_coverage_note_states_the_exclusions_of_the_cohorts_answered(world: World) -> None:
    junggu = get(world, "pulse", **JUNGGU).json()["_meta"]
    assert junggu["exclusions"] == {"cancelled": 1, "partial_share": 1}
    note = junggu["coverage_note"]
    assert "this answer's districts, months and types: 1 cancelled deals, 1 partial-share" in note
    mixed = get(world, "pulse", property_type="mixed_use", **JUNGGU).json()["_meta"]
    assert mixed["exclusions"] == {}
    assert "None was excluded at ingest from this answer's" in mixed["coverage_note"]
    gangnam = get(world, "pulse", sigungu_code="11680", period="2025-06").json()["_meta"]
    assert gangnam["exclusions"] == {"cancelled": 7, "partial_share": 7}
    series = get(
        world, "pulse/series", sigungu_code="11140", from_period="2025-05", to_period="2025-06"
    ).json()["_meta"]
    assert series["exclusions"] == {"cancelled": 1, "partial_share": 1}
    listing = get(world, "transactions", **JUNGGU).json()["_meta"]
    assert listing["exclusions"] == {"cancelled": 1, "partial_share": 1}


# item 6: the API's wording ------------------------------------------------------------------


def test_an_unknown_district_code_is_named_as_such_by_the_api(world: World) -> None:
    for endpoint in ("pulse", "transactions"):
        response = get(world, endpoint, sigungu_code="99999", period="2025-06")
        assert response.status_code == 404, endpoint
        error = response.json()["error"]
        assert error["reason"] == "unknown_district"
        assert error["message"].startswith("No district has the code 99999")
    known = get(world, "pulse", sigungu_code="11110", period="2020-01").json()["error"]
    assert known["reason"] == "not_loaded"  # a real district never loaded stays not_loaded


def test_indices_without_rone_data_say_how_to_load_it(world: World) -> None:
    response = get(world, "indices", sigungu_code="11680")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["reason"] == "not_loaded"
    assert "svc sync rone" in error["message"] and "SVC_RONE_KEY" in error["message"]


# the MCP tools, both transports -------------------------------------------------------------


TRANSPORTS = ("http", "stdio")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_mcp_texts_name_what_was_not_loaded_or_rejected(world: World, transport: str) -> None:
    async def calls(session: ClientSession) -> list[Any]:
        return [
            await call(
                session,
                "market_series",
                sigungu_code="11680",
                from_period="2025-01",
                to_period="2025-08",
            ),
            await call(session, "list_deals", sigungu_code="11680", period="2024-01"),
            await call(session, "list_deals", include_excluded=True, **JUNGGU),
            await call(session, "market_pulse", property_type="mixed_use", **JUNGGU),
        ]

    series, never, listed, mixed = run(session_for(world, transport, world.keys["pro"]), calls)
    text = series.content[0].text
    assert f"NOT LOADED: {', '.join(NEVER)}" in text
    assert series.structured_content["meta"]["unloaded_periods"] == NEVER
    assert never.structured_content["empty"]["reason"] == "not_loaded"
    assert never.content[0].text.startswith("No data (reason: not_loaded)")
    assert "2024-01" in never.content[0].text
    assert "REJECTED 2025-06 [11140] mixed_use" in listed.content[0].text
    assert "27,0000000" in listed.content[0].text
    assert "REJECTED at load" in mixed.content[0].text and "1 in 2025-06" in mixed.content[0].text
    for answer in (series, never, listed, mixed):
        assert "None" not in answer.content[0].text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_mcp_answers_have_no_template_holes_and_point_at_tools(
    world: World, transport: str
) -> None:
    async def calls(session: ClientSession) -> list[Any]:
        return [
            await call(session, "market_pulse", sigungu_code="강남구", period="2025-06"),
            await call(session, "market_pulse", sigungu_code="99999", period="2025-06"),
            await call(session, "indices", sigungu_code="11680"),
            await call(
                session,
                "market_pulse",
                sigungu_code="11680",
                period="2025-06",
                geo_precision="dong",
                property_type="office",
            ),
            await call(
                session,
                "list_deals",
                sigungu_code="11680",
                period="2025-06",
                group="contract",
                property_type="office",
            ),
        ]

    named, unknown, indices, dongs, contracts = run(
        session_for(world, transport, world.keys["pro"]), calls
    )
    assert named.is_error is True
    assert "call find_district" in named.content[0].text.lower()
    assert "GET /" not in named.content[0].text and "HTTP" not in named.content[0].text
    assert unknown.structured_content["empty"]["reason"] == "not_found"
    assert "No district has the code 99999" in unknown.content[0].text
    assert indices.structured_content["empty"]["reason"] == "not_loaded"
    assert "svc sync rone" in indices.content[0].text
    assert "강남구 역삼동" in dongs.content[0].text
    assert "강남구 강남구" not in dongs.content[0].text
    assert contracts.is_error is False, contracts.content[0].text
    assert "bulk contract of 1 units" not in contracts.content[0].text
    assert "bulk contract of 12 units" in contracts.content[0].text
    for answer in (named, unknown, indices, dongs, contracts):
        assert "None" not in answer.content[0].text
