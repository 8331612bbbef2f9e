"""``GET /api/v1/real-estate/changes`` and ``_meta.data_version`` (issue 31, items 1, 2
and 4), through HTTP on the real MOLIT files, SQLite and PostgreSQL.

The files are loaded as ``svc ingest`` loads them, some moved to other months (their
deals as contracts of another month), so a store holds many change records; what a page
must hold is computed here from the files (which district-months each load fills), not
read back from svc.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from svc_server import ingest
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    OFFI_RENT,
    OFFI_TRADE,
    Api,
    assert_error,
    included,
    make_app,
    xml_items,
)
from tests.http.test_realestate_land import INDU, LAND, kept_items
from tests.http.test_realestate_transactions import LeasedApi

HOUR = 3600.0
GANGNAM = {"sigungu_code": "11680"}
JONGNO = {"sigungu_code": "11110"}
BASE = "https://api.example.com"
KINDS = {
    NRG_GANGNAM: "rtms-commercial",
    NRG_JONGNO_PAGE: "rtms-commercial",
    OFFI_TRADE: "rtms-officetel-trade",
    OFFI_RENT: "rtms-officetel-rent",
}


def moved(path: Path, year: int, month: int) -> bytes:
    """The file's deals as contracts of ``year``-``month``."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"<dealYear>\s*\d+\s*</dealYear>", f"<dealYear>{year}</dealYear>", text)
    return re.sub(
        r"<dealMonth>\s*\d+\s*</dealMonth>", f"<dealMonth>{month}</dealMonth>", text
    ).encode()


def load(store: Store, path: Path, now: float, data: bytes | None = None) -> Any:
    raw = path.read_bytes() if data is None else data
    return ingest.ingest(store, KINDS[path], raw, path=path.name, now=now)


def every_change(api: Api, **params: str) -> list[dict[str, Any]]:
    """The whole feed (or what ``params`` keep) in one page."""
    body = api.ok("changes", {**params, "limit": "1000"})
    assert body["_meta"]["next_cursor"] is None
    return list(body["data"])


def page_through(api: Api, limit: int, **params: str) -> tuple[list[int], int, str]:
    """Every id of the feed from ``params['since']`` on, a page of ``limit`` at a time,
    following ``next_cursor``; (ids, pages read, the last page's latest_cursor)."""
    ids: list[int] = []
    pages = 0
    query = {**params, "limit": str(limit)}
    while True:
        response = api.get("changes", query)
        assert response.status_code == 200, response.get_data(as_text=True)
        body = response.get_json()
        pages += 1
        assert len(body["data"]) <= limit
        ids.extend(r["id"] for r in body["data"])
        cursor = body["_meta"]["next_cursor"]
        assert ("Link" in response.headers) == (cursor is not None)
        if cursor is None:
            return ids, pages, str(body["_meta"]["latest_cursor"])
        assert response.headers["Link"].startswith(f"<{BASE}/api/v1/real-estate/changes?")
        assert len(body["data"]) == limit
        query = {**query, "since": cursor}


def many_loads(store: Store) -> None:
    """Gangnam's commercial deals in twelve months of 2024 (one change each), Jongno's
    in six, and Gangnam's officetel sales and leases in June 2025: 20 changes."""
    now = RE_NOW
    for month in range(1, 13):
        load(store, NRG_GANGNAM, now, moved(NRG_GANGNAM, 2024, month))
        now += 60
    for month in range(1, 7):
        load(store, NRG_JONGNO_PAGE, now, moved(NRG_JONGNO_PAGE, 2024, month))
        now += 60
    load(store, OFFI_TRADE, now)
    load(store, OFFI_RENT, now + 60)


@pytest.fixture(scope="module")
def loaded(module_db_url: str) -> Iterator[Store]:
    """A store holding ``many_loads``, loaded once per module and backend, for the tests
    that only read its feed (each with a consumer of its own)."""
    store = open_store(module_db_url, pool_size=4)
    try:
        many_loads(store)
        yield store
    finally:
        store.close()


@pytest.fixture
def leased(loaded: Store) -> Iterator[Api]:
    """A caller on ``loaded`` whose limits lease: its many pages write no admission each."""
    api = LeasedApi(make_app(loaded))
    yield api
    api.app.close()


def test_paging_returns_every_change_once_in_order_whatever_the_page(leased: Api) -> None:
    api = leased
    changes = every_change(api)
    ids = [c["id"] for c in changes]
    assert len(ids) == 12 + 6 + 2 and ids == sorted(set(ids))
    gangnam_months = [c["month"] for c in changes if c["sigungu_code"] == "11680"]
    assert gangnam_months == [f"2024-{m:02d}" for m in range(1, 13)] + ["2025-06", "2025-06"]
    for limit in (1, 2, 3, 7, 19, 20, 21):
        got, pages, _ = page_through(api, limit)
        assert got == ids, limit
        assert pages == -(-len(ids) // limit), limit  # the last page knows it is the last
    for start in (1, 5, 19, 20):  # from any record's cursor: exactly the records after it
        first = api.ok("changes", {"limit": str(start)})["_meta"]
        since = first["next_cursor"] or first["latest_cursor"]
        got, _, _ = page_through(api, 4, since=since)
        assert got == ids[start:]


FILTERS: list[dict[str, str]] = [
    GANGNAM,
    JONGNO,
    {"sigungu_code": "26110"},  # a district with no change
    {"property_type": "officetel"},
    {"property_type": "office"},
    {"transaction_type": "sale"},
    {"transaction_type": "monthly_lease"},
    {"sigungu_code": "11680", "property_type": "officetel", "transaction_type": "sale"},
]


@pytest.mark.parametrize("limit", [1, 3, 8])
def test_filters_page_through_exactly_the_changes_they_keep(leased: Api, limit: int) -> None:
    api = leased
    changes = every_change(api)
    for params in FILTERS:
        wanted = [
            c["id"]
            for c in changes
            if c["sigungu_code"] == params.get("sigungu_code", c["sigungu_code"])
            and params.get("property_type", c["property_types"][0]) in c["property_types"]
            and params.get("transaction_type", c["transaction_types"][0]) in c["transaction_types"]
        ]
        got, _, _ = page_through(api, limit, **params)
        assert got == wanted, params
    officetel = every_change(api, property_type="officetel")
    assert {c["source"] for c in officetel} == {"officetel-trade", "officetel-rent"}
    leases = every_change(api, transaction_type="monthly_lease")
    assert [c["source"] for c in leases] == ["officetel-rent"]


def test_loads_between_pages_are_neither_skipped_nor_repeated(store: Store) -> None:
    api = Api(make_app(store))
    assert every_change(api) == []  # an empty store's feed
    now = RE_NOW
    for month in range(1, 6):
        load(store, NRG_GANGNAM, now, moved(NRG_GANGNAM, 2024, month))
    seen: list[int] = []
    body = api.ok("changes", {"limit": "2"})
    seen += [r["id"] for r in body["data"]]
    for month in range(6, 9):  # later loads while a client pages
        load(store, NRG_GANGNAM, now + month, moved(NRG_GANGNAM, 2024, month))
    cursor = body["_meta"]["next_cursor"]
    while cursor is not None:
        body = api.ok("changes", {"limit": "2", "since": cursor})
        seen += [r["id"] for r in body["data"]]
        cursor = body["_meta"]["next_cursor"]
    assert seen == [c["id"] for c in every_change(api)] and len(seen) == 8
    # polling from the last answer's latest_cursor returns exactly what came since
    latest = body["_meta"]["latest_cursor"]
    assert api.ok("changes", {"since": latest})["data"] == []
    load(store, NRG_JONGNO_PAGE, now + 100)
    fresh = api.ok("changes", {"since": latest})
    assert [c["sigungu_code"] for c in fresh["data"]] == ["11110"]
    assert api.ok("changes", {"since": fresh["_meta"]["latest_cursor"]})["data"] == []


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_since_a_time_returns_the_changes_written_from_then(store: Store) -> None:
    api = Api(make_app(store))
    for hour in range(4):
        load(store, NRG_GANGNAM, RE_NOW + hour * HOUR, moved(NRG_GANGNAM, 2024, hour + 1))
    for hour in range(5):
        got = every_change(api, since=iso(RE_NOW + hour * HOUR))
        assert [c["month"] for c in got] == [f"2024-{m:02d}" for m in range(hour + 1, 5)]
        assert all(c["changed_at"] >= iso(RE_NOW + hour * HOUR) for c in got)
    seoul = datetime.fromtimestamp(RE_NOW + 2 * HOUR, UTC).astimezone().isoformat()
    assert len(every_change(api, since=seoul)) == 2  # any zone


def test_a_record_says_what_changed_and_links_its_pulse_rows(store: Store) -> None:
    api = Api(make_app(store))
    first = load(store, NRG_GANGNAM, RE_NOW)
    kept = included(xml_items(NRG_GANGNAM))
    assert first.loaded == len(kept)
    [change] = every_change(api)
    assert change["source"] == "commercial" and change["load"]["kind"] == "rtms-commercial"
    assert (change["sigungu_code"], change["sigungu"], change["month"]) == (
        "11680",
        "강남구",
        "2025-06",
    )
    assert (change["added"], change["retracted"], change["changed"]) == (len(kept), 0, 0)
    assert change["complete"] is True  # the file states its total count: one page of 83
    assert change["transaction_types"] == ["sale"]
    assert set(change["property_types"]) <= {"office", "retail", "commercial_complex", "mixed_use"}
    assert (
        change["digest_before"]
        == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    pulse = api.ok("pulse", dict(_query(change["pulse_url"])))
    assert sum(r["sample_count"] for r in pulse["data"]) == len(kept)
    deals = api.ok("transactions", {**dict(_query(change["transactions_url"])), "limit": "1000"})
    assert len(deals["data"]) == len(xml_items(NRG_GANGNAM))  # kept and excluded

    assert load(store, NRG_GANGNAM, RE_NOW + HOUR).loaded == 0  # the same file: no change
    assert len(every_change(api)) == 1

    text = NRG_GANGNAM.read_text(encoding="utf-8")
    cancelled = text.replace("<cdealType> </cdealType>", "<cdealType>O</cdealType>", 1)
    assert load(store, NRG_GANGNAM, RE_NOW + 2 * HOUR, cancelled.encode()).retracted == 1
    _, retraction = every_change(api)
    assert (retraction["added"], retraction["retracted"], retraction["changed"]) == (0, 1, 0)
    assert retraction["digest_before"] == change["digest_after"]
    assert len(retraction["property_types"]) == 1  # the cancelled deal's type alone
    assert f"property_type={retraction['property_types'][0]}" in retraction["pulse_url"]


def test_land_and_factory_loads_write_their_own_change_records(store: Store) -> None:
    """Issue 45: a land month and a factory/warehouse month are changes of their own
    kind and property type, whose links answer for them."""
    api = Api(make_app(store))
    land, indu = LAND["2024-08"], INDU
    for n, (path, kind) in enumerate(((land, "rtms-land"), (indu, "rtms-industrial"))):
        ingest.ingest(store, kind, path.read_bytes(), path=path.name, now=RE_NOW + n)
    changes = every_change(api)
    assert [(c["source"], c["load"]["kind"], c["property_types"]) for c in changes] == [
        ("land", "rtms-land", ["land"]),
        ("industrial", "rtms-industrial", ["industrial"]),
    ]
    for change, path in zip(changes, (land, indu), strict=True):
        assert (change["sigungu_code"], change["month"]) == ("41830", "2024-08")
        assert change["transaction_types"] == ["sale"]
        assert change["added"] == len(kept_items(path))
        pulse = api.ok("pulse", dict(_query(change["pulse_url"])))
        assert [r["property_type"] for r in pulse["data"]] == change["property_types"]
        assert sum(r["sample_count"] for r in pulse["data"]) == change["added"]
    [only] = every_change(api, property_type="land")
    assert only == changes[0]


def _query(url: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == BASE
    return parse_qsl(parts.query)


def test_each_page_costs_one_call(loaded: Store) -> None:
    api = Api(make_app(loaded))
    before = api.usage()
    _, pages, _ = page_through(api, 3)
    assert pages == 7
    assert api.usage() - before == pages


@pytest.mark.parametrize(
    "params",
    [
        {"since": "not-a-cursor!"},
        {"since": "WyJ0cmFuc2FjdGlvbnMiLDFd"},  # base64 of another listing's cursor shape
        {"since": "2026-11-01T00:00:00"},  # a time without a zone
        {"since": "2026-13-01T00:00:00Z"},
        {"property_type": "castle"},
        {"transaction_type": "barter"},
        {"sigungu_code": "1168"},
        {"limit": "0"},
        {"limit": "1001"},
        {"cursor": "x"},  # /transactions' parameter: unknown here
    ],
)
def test_bad_parameters_are_400(loaded: Store, params: dict[str, str]) -> None:
    api = Api(make_app(loaded))
    assert_error(api.get("changes", params), 400, "INVALID_PARAMS")


# data_version --------------------------------------------------------------------------


def version_of(api: Api, endpoint: str, params: dict[str, str]) -> int | None:
    response = api.get(endpoint, params)
    assert response.status_code == 200, response.get_data(as_text=True)
    value = response.get_json()["_meta"]["data_version"]
    tag = response.headers["ETag"]
    if value is None:
        assert tag.startswith('W/"') and not tag.startswith('W/"v')
    else:
        assert tag.startswith(f'W/"v{value}-'), tag  # the tag is derived from it
    return None if value is None else int(value)


def district_versions(api: Api, place: dict[str, str]) -> set[int | None]:
    """``data_version`` of every answer about one district (they must agree)."""
    return {
        version_of(api, "pulse", place),
        version_of(
            api, "pulse/series", {**place, "from_period": "2025-05", "to_period": "2025-06"}
        ),
        version_of(api, "coverage", place),
        version_of(api, "transactions", place),
        version_of(api, "changes", place),
    }


def everywhere(api: Api) -> set[int | None]:
    return {version_of(api, "coverage", {}), version_of(api, "dimensions", {})}


def latest_change(api: Api, place: dict[str, str] | None = None) -> int:
    return max(c["id"] for c in every_change(api, **(place or {})))


def test_data_version_moves_exactly_when_the_data_behind_an_answer_changes(
    store: Store,
) -> None:
    api = Api(make_app(store))
    assert everywhere(api) == {None}
    load(store, NRG_GANGNAM, RE_NOW)
    gangnam = latest_change(api, GANGNAM)
    assert district_versions(api, GANGNAM) == everywhere(api) == {gangnam}
    tag = api.get("pulse", GANGNAM).headers["ETag"]
    assert api.get("pulse", GANGNAM, **{"If-None-Match": tag}).status_code == 304

    load(store, NRG_GANGNAM, RE_NOW + HOUR)  # the same file: nothing changed
    assert district_versions(api, GANGNAM) == everywhere(api) == {gangnam}
    assert api.get("pulse", GANGNAM, **{"If-None-Match": tag}).status_code == 304

    load(store, NRG_JONGNO_PAGE, RE_NOW + 2 * HOUR)  # another district
    jongno = latest_change(api, JONGNO)
    assert jongno > gangnam
    assert district_versions(api, GANGNAM) == {gangnam}  # not moved by Jongno's load
    assert district_versions(api, JONGNO) == everywhere(api) == {jongno}

    text = NRG_GANGNAM.read_text(encoding="utf-8")
    cancelled = text.replace("<cdealType> </cdealType>", "<cdealType>O</cdealType>", 1)
    load(store, NRG_GANGNAM, RE_NOW + 3 * HOUR, cancelled.encode())  # a deal cancelled
    assert latest_change(api, GANGNAM) > jongno
    assert district_versions(api, GANGNAM) == everywhere(api) == {latest_change(api)}
    assert district_versions(api, JONGNO) == {jongno}
    changed = api.get("pulse", GANGNAM, **{"If-None-Match": tag})
    assert changed.status_code == 200
    assert changed.headers["ETag"].startswith(f'W/"v{latest_change(api)}-')


def test_csv_answers_carry_it_in_a_header(store: Store) -> None:
    api = Api(make_app(store))
    load(store, NRG_GANGNAM, RE_NOW)
    version = latest_change(api)
    for endpoint in ("pulse", "transactions"):
        response = api.get(endpoint, {**GANGNAM, "format": "csv"})
        assert response.status_code == 200
        assert response.headers["X-Svc-Data-Version"] == str(version)
        assert response.headers["ETag"].startswith(f'W/"v{version}-')


def test_index_answers_follow_their_index_values(store: Store) -> None:
    from tests.http.realestate_support import FIXTURES

    api = Api(make_app(store))
    data = (FIXTURES / "rone" / "indices.csv").read_bytes()
    ingest.ingest(store, "rone-index", data, path="indices.csv", now=RE_NOW)
    first = version_of(api, "indices", GANGNAM)
    assert first is not None
    ingest.ingest(store, "rone-index", data, path="indices.csv", now=RE_NOW + HOUR)
    assert version_of(api, "indices", GANGNAM) == first  # the same values again
    load(store, NRG_GANGNAM, RE_NOW + 2 * HOUR)  # deals are not index values
    assert version_of(api, "indices", GANGNAM) == first
    assert version_of(api, "pulse", GANGNAM) == latest_change(api) > first


def test_the_coverage_note_counts_each_files_latest_read_once(store: Store) -> None:
    """``_meta.coverage_note`` counts the exclusions of each file once, however often it is
    loaded again (migration 0022 keeps the totals as loads write them)."""
    api = Api(make_app(store))
    cancelled = sum(1 for i in xml_items(OFFI_TRADE) if i.get("cdealType", "").strip() == "O")
    assert cancelled > 0
    now = RE_NOW
    for _ in range(3):
        load(store, NRG_GANGNAM, now)
        now += 60
    note = api.ok("pulse", GANGNAM)["_meta"]["coverage_note"]
    assert "3 cancelled deals" in note and "7 partial-share deals" in note
    for _ in range(2):
        load(store, OFFI_TRADE, now)
        now += 60
    note = api.ok("pulse", GANGNAM)["_meta"]["coverage_note"]
    assert f"{3 + cancelled} cancelled deals" in note
