"""Completeness, freshness and the link to the deals, through HTTP on the real MOLIT
responses, SQLite and PostgreSQL (issue 14).

``NRG_11110_202505.xml`` is page 1 of 4 (10 of ``totalCount`` 32 items): every figure
built from Jongno in May 2025 says ``complete: false`` until the other pages are loaded.
Whether a file is partial is read from the raw XML by ``realestate_support.is_partial``
(a regular expression), not by svc.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from svc_server import ingest
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW, FakeClock
from tests.http.realestate_support import (
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    Api,
    is_partial,
    load,
    make_app,
    type_mix,
)
from tests.http.test_realestate_building_type import CASES, raw_of

BASE = "https://api.example.com/api/v1/real-estate/transactions"
AS_OF = datetime.fromtimestamp(RE_NOW, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def page_of(path: Path, page_no: int, count: int) -> bytes:
    """Page ``page_no`` of the same query: ``count`` items like page 1's, made distinct
    by their lot number."""
    text = path.read_text(encoding="utf-8")
    items = re.findall(r"<item>.*?</item>", text, flags=re.S)[:count]
    head, tail = text[: text.index("<item>")], text[text.rindex("</item>") + len("</item>") :]
    made = [
        re.sub(r"<jibun>[^<]*</jibun>", f"<jibun>{page_no}-{n}</jibun>", item)
        for n, item in enumerate(items)
    ]
    head = head.replace("<pageNo>1</pageNo>", f"<pageNo>{page_no}</pageNo>")
    tail = tail.replace("<pageNo>1</pageNo>", f"<pageNo>{page_no}</pageNo>")
    return (head + "".join(made) + tail).encode()


def test_a_district_month_loaded_from_a_partial_page_is_served_incomplete(api: Api) -> None:
    assert is_partial(NRG_JONGNO_PAGE) and not is_partial(NRG_GANGNAM)
    for code, month in CASES:
        whole = not is_partial(NRG_JONGNO_PAGE if code == "11110" else NRG_GANGNAM)
        for endpoint, params in (
            ("pulse", {"period": month}),
            ("pulse/series", {"periods": month}),
            ("coverage", {"granularity": "month"}),
        ):
            body = api.ok(endpoint, {"sigungu_code": code, **params})
            assert body["data"]
            assert {row["complete"] for row in body["data"]} == {whole}, (endpoint, code)
            assert body["_meta"]["incomplete_periods"] == ([] if whole else [month])
            assert body["_meta"]["data_as_of"] == AS_OF
    quarters = api.ok("coverage", {"limit": "500"})  # the precomputed rows
    jongno = [r for r in quarters["data"] if r["sigungu_code"] == "11110"]
    assert jongno and not any(r["complete"] for r in jongno)
    # Gangnam's June is whole, but April and May were never loaded: its quarter is not
    gangnam = [r for r in quarters["data"] if r["sigungu_code"] == "11680"]
    assert gangnam and not any(r["complete"] for r in gangnam)
    assert quarters["_meta"]["incomplete_periods"] == ["2025-Q2"]


def test_a_rolling_window_over_the_partial_month_is_incomplete(api: Api) -> None:
    """Jongno's window (2025-01 to 2025-06) holds no month loaded completely: May is page 1
    of 4, the others were never loaded."""
    body = api.ok("pulse", {"sigungu_code": "11110"})
    assert body["_meta"]["query"]["period"] == "last_6m"
    assert {(r["complete"], r["months_loaded"], r["months_expected"]) for r in body["data"]} == {
        (False, 0, 6)
    }
    assert body["_meta"]["incomplete_periods"] == [f"2025-{m:02d}" for m in range(1, 7)]


def test_loading_the_other_pages_makes_it_complete(db_url: str) -> None:
    store = open_store(db_url)
    store.migrate()
    try:
        api = Api(make_app(store))
        params = {"sigungu_code": "11110", "period": "2025-05"}
        load(store, "rtms-commercial", NRG_JONGNO_PAGE)
        for page_no, count in ((2, 10), (4, 2), (2, 10)):  # page 2 twice: counted once
            data = store_load(store, page_of(NRG_JONGNO_PAGE, page_no, count), page_no)
            assert data.page_no == page_no
            body = api.ok("pulse", params)
            assert {r["complete"] for r in body["data"]} == {False}
        store_load(store, page_of(NRG_JONGNO_PAGE, 3, 10), 3)  # 10 + 10 + 10 + 2 = 32
        body = api.ok("pulse", params)
        assert {r["complete"] for r in body["data"]} == {True}
        assert body["_meta"]["incomplete_periods"] == []
        coverage = api.ok("coverage", {"sigungu_code": "11110", "granularity": "month"})
        assert {r["complete"] for r in coverage["data"]} == {True}
        # its quarter is not: April and June were never loaded
        quarter = api.ok("coverage", {"sigungu_code": "11110"})
        assert {r["complete"] for r in quarter["data"]} == {False}
    finally:
        store.close()


def store_load(store: Store, data: bytes, page_no: int) -> Any:
    return ingest.ingest(store, "rtms-commercial", data, path=f"page{page_no}.xml", now=RE_NOW)


@pytest.mark.parametrize(
    ("clock", "provisional"),
    [
        ("2025-07-15T00:00:00", True),
        ("2025-07-31T23:59:59", True),  # June 30 + 31 days
        ("2025-08-01T00:00:00", False),
        (None, False),  # RE_NOW, in 2026
    ],
)
def test_june_is_provisional_until_31_days_after_its_end(
    molit_store: Store, clock: str | None, provisional: bool
) -> None:
    now = RE_NOW if clock is None else datetime.fromisoformat(clock).replace(tzinfo=UTC).timestamp()
    api = Api(make_app(molit_store, clock=FakeClock(now)))
    for endpoint, params in (
        ("pulse", {"sigungu_code": "11680", "period": "2025-06"}),
        ("pulse/series", {"sigungu_code": "11680", "periods": "2025-05,2025-06"}),
        ("coverage", {"sigungu_code": "11680", "granularity": "month"}),
    ):
        rows = api.ok(endpoint, params)["data"]
        assert {r["provisional"] for r in rows} == {provisional}, endpoint
    may = api.ok("pulse", {"sigungu_code": "11110", "period": "2025-05"})["data"]
    assert {r["provisional"] for r in may} == {clock is not None and clock < "2025-07-02"}


def row_months(period: str, window: tuple[str, str] | None = None) -> tuple[str, str]:
    """The first and last month of a row's period, worked out by hand: a rolling window's
    are ``window`` (``_meta.query``'s ``window_from``/``window_to``)."""
    if period.startswith("last_"):
        assert window is not None
        return window
    if "-Q" in period:
        year, quarter = period.split("-Q")
        first = 3 * int(quarter) - 2
        return f"{year}-{first:02d}", f"{year}-{first + 2:02d}"
    return period, period


def expected_link(row: dict[str, Any], window: tuple[str, str] | None = None, **extra: str) -> str:
    """The agreed form, percent-encoded by hand: the row's months, never its label."""
    first, last = row_months(row["period"], window)
    parts = [
        f"sigungu_code={row['sigungu_code']}",
        f"from={first}",
        f"to={last}",
        f"property_type={row['property_type']}",
        f"transaction_type={row['transaction_type']}",
    ]
    parts += [f"{k}={quote(v, safe='')}" for k, v in extra.items()]
    return f"{BASE}?{'&'.join(parts)}"


def test_every_pulse_row_links_its_deals(api: Api) -> None:
    body = api.ok("pulse", {"sigungu_code": "11680"})
    rows, query = body["data"], body["_meta"]["query"]
    assert rows and all(r["period"] == "last_6m" for r in rows)
    window = (query["window_from"], query["window_to"])
    assert window == ("2025-01", "2025-06")  # the latest month with data is 2025-06
    for row in rows:
        assert row["transactions_url"] == expected_link(row, window)
        assert "last_6m" not in row["transactions_url"]
    units = api.ok("pulse", {"sigungu_code": "11680", "period": "2025-06", "building_type": "unit"})
    for row in units["data"]:
        assert row["transactions_url"] == expected_link(row, building_type="unit")
    dongs = api.ok("pulse", {"sigungu_code": "11680", "period": "2025-Q2", "geo_precision": "dong"})
    assert dongs["data"]
    for row in dongs["data"]:
        link = expected_link(row, geo_precision="dong", dong=row["dong"])
        assert row["transactions_url"] == link and "%EB%8F%99" in link  # 동, encoded
        assert "from=2025-04&to=2025-06" in link
    series = api.ok("pulse/series", {"sigungu_code": "11110", "periods": "2025-05"})["data"]
    assert [r["transactions_url"] for r in series] == [expected_link(r) for r in series]


def test_csv_carries_the_columns_and_the_data_as_of_header(api: Api) -> None:
    for endpoint, params in (
        ("pulse", {"sigungu_code": "11110", "period": "2025-05"}),
        ("coverage", {"sigungu_code": "11110", "granularity": "month"}),
    ):
        response = api.get(endpoint, {**params, "format": "csv"})
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.headers["X-Svc-Data-As-Of"] == AS_OF
        assert response.headers["X-Svc-Incomplete-Periods"] == '["2025-05"]'
        rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
        assert rows and {r["complete"] for r in rows} == {"false"}
        assert {r["provisional"] for r in rows} == {"false"}
        json_rows = api.ok(endpoint, params)["data"]
        if endpoint == "pulse":
            assert [r["transactions_url"] for r in rows] == [
                r["transactions_url"] for r in json_rows
            ]


def cohort_deals(code: str, month: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The month's contracts per (property type, transaction type), from the raw items."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for deal in raw_of(code, month):
        groups.setdefault(deal["key"], []).append(deal)
    return groups


@pytest.mark.parametrize(("code", "month"), CASES)
@pytest.mark.parametrize("by_district", [True, False])
def test_coverage_building_type_rows_partition_the_combined_row(
    api: Api, code: str, month: str, by_district: bool
) -> None:
    """Each type's rows equal a recomputation from the raw items, and their samples add
    up to the combined row's (a type with fewer than 2 contracts in the month has none:
    the units of one bulk sale are one contract)."""
    params = {"granularity": "month", "limit": "500"}
    if by_district:
        params["sigungu_code"] = code  # built from the rollup; else the precomputed rows

    def served(**extra: str) -> dict[tuple[str, str], dict[str, Any]]:
        body = api.ok("coverage", {**params, **extra})
        assert body["_meta"]["query"]["building_type"] == extra.get("building_type")
        return {
            (r["property_type"], r["transaction_type"]): r
            for r in body["data"]
            if r["sigungu_code"] == code
        }

    combined = served()
    parts = {t: served(building_type=t) for t in ("unit", "whole_building")}
    expected = {key: deals for key, deals in cohort_deals(code, month).items() if len(deals) >= 2}
    assert combined.keys() == expected.keys()
    for key, deals in expected.items():
        row = combined[key]
        mix = type_mix(item for d in deals for item in d["items"])
        assert (row["building_type"], row["building_type_mix"]) == (None, mix)
        assert row["total_samples"] == sum(mix.values()) == sum(len(d["items"]) for d in deals)
        assert row["contract_count"] == len(deals)
        assert row["bulk_contracts"] == sum(len(d["items"]) > 1 for d in deals)
        assert row["periods_with_data"] == [month]
        for btype, rows in parts.items():
            typed = [d for d in deals if d["type"] == btype]
            if len(typed) < 2:
                assert key not in rows
                continue
            assert rows[key]["building_type"] == btype
            assert rows[key]["building_type_mix"] == {btype: mix[btype]}
            assert rows[key]["total_samples"] == mix[btype]
            assert rows[key]["contract_count"] == len(typed)
        assert sum(mix.get(t, 0) for t in parts) == row["total_samples"]
