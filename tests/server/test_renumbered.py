"""A deal counts once across a district's renumbering (issue 43, item 2), through the
real ``svc sync rtms`` and ``svc ingest`` in both orders, on SQLite and PostgreSQL.

Incheon's 28110 (중구) was retired on 2026-07-01 for 28125 (제물포구) and 28155 (영종구).
``molit_renumbered/NRG_28110_202605.xml`` is May 2026 as read under 28110 before the
change; the stand-in serves the same deals under the new codes, split by dong, as MOLIT
does after it (official-apis.md §2.6). Expected counts come from the file's items read
by regular expression, never from svc's readers.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx

from svc_core.sources.rtms import read_page
from svc_server.store import open_store
from tests.http.realestate_support import Api, included, make_app, xml_items
from tests.http.test_realestate_pulse import property_type
from tests.server.rtms_standin import KEY, RENUMBERED, RENUMBERED_SAMPLES, SERVICES, StandIn
from tests.server.test_sync import rows, svc, sync

OLD_FILE = RENUMBERED_SAMPLES / "NRG_28110_202605.xml"
ITEMS = xml_items(OLD_FILE)
KEPT = included(ITEMS)
MAY = ("--from", "2026-05", "--to", "2026-05", "--kinds", "commercial")
NEW_CODES = {code: dongs for code, (_, dongs) in RENUMBERED["28110"].items()}


def kept_in(code: str) -> list[dict[str, str]]:
    return [i for i in KEPT if i["umdNm"].strip() in NEW_CODES[code]]


def ingest_old(url: str, standin: StandIn) -> str:
    done = svc(url, standin, "ingest", str(OLD_FILE))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def sync_new(url: str, standin: StandIn) -> None:
    done = sync(url, standin, "--sigungu", "28125,28155", *MAY, "--refresh-months", "0")
    assert done.returncode == 0, done.stdout + done.stderr


def every(api: Api, code: str) -> list[dict[str, Any]]:
    body = api.ok(
        "transactions",
        {"sigungu_code": code, "period": "2026-05", "include_excluded": "true", "limit": "1000"},
    )
    records: list[dict[str, Any]] = body["data"]
    return records


def assert_each_deal_once(url: str) -> None:
    stored = rows(url, "SELECT sigungu_code FROM transactions")
    assert Counter(r["sigungu_code"] for r in stored) == {
        code: len(kept_in(code)) for code in NEW_CODES
    }
    store = open_store(url)
    try:
        api = Api(make_app(store))
        # transactions: each deal once, under the code in force, whichever code is asked
        for asked in ("28110", "28125", "28155"):
            records = every(api, asked)
            wanted = (
                ITEMS
                if asked == "28110"
                else [i for i in ITEMS if i["umdNm"].strip() in NEW_CODES[asked]]
            )
            assert len(records) == len(wanted), asked
            assert len({r["natural_key"] for r in records}) == len(records)
            assert {r["sigungu_code"] for r in records} <= set(NEW_CODES)
        [cancelled] = [r for r in every(api, "28110") if r["excluded"]]
        assert cancelled["cancellation_date"] == "2026-06-02"
        # pulse: a row's sample count is its type's deals, once
        for asked in ("28110", "28125"):
            pulse = api.ok("pulse", {"sigungu_code": asked, "period": "2026-05"})["data"]
            items = KEPT if asked == "28110" else kept_in(asked)
            by_type = Counter(property_type(i) for i in items)
            assert pulse, asked
            for row in pulse:
                assert row["sample_count"] == by_type[row["property_type"]], (asked, row)
        # the change feed: what it adds and retracts under either code nets each deal once
        feed = api.ok("changes", {"sigungu_code": "28110", "limit": "1000"})["data"]
        assert sum(c["added"] - c["retracted"] for c in feed) == len(KEPT)
        assert {c["sigungu_code"] for c in feed} <= {"28110", *NEW_CODES}
        # coverage: the month's samples, once
        coverage = api.ok("coverage", {"sigungu_code": "28110", "granularity": "month"})["data"]
        may = [r for r in coverage if "2026-05" in r["periods_with_data"]]
        assert may and sum(r["total_samples"] for r in may) == len(KEPT)
    finally:
        store.close()


def test_an_old_code_month_ingested_then_synced_under_the_new_codes_counts_once(
    db_url: str, standin: StandIn
) -> None:
    ingest_old(db_url, standin)
    assert len(rows(db_url, "SELECT natural_key FROM transactions")) == len(KEPT)
    sync_new(db_url, standin)
    assert_each_deal_once(db_url)
    assert (
        rows(db_url, "SELECT natural_key FROM excluded_transactions WHERE sigungu_code = '28110'")
        == []
    )


def test_an_old_code_file_ingested_after_the_new_codes_were_synced_adds_nothing(
    db_url: str, standin: StandIn
) -> None:
    sync_new(db_url, standin)
    out = ingest_old(db_url, standin)
    assert f"read {len(ITEMS)}, loaded 0, duplicate {len(KEPT)}, excluded 1" in out, out
    assert_each_deal_once(db_url)


def test_the_stand_in_serves_a_renumbered_district_as_molit_does(standin: StandIn) -> None:
    def items(code: str, month: str) -> list[dict[str, str] | None]:
        query = {"serviceKey": KEY, "LAWD_CD": code, "DEAL_YMD": month, "numOfRows": "100"}
        answer = httpx.get(f"{standin.url}/{SERVICES['NRG']}", params=query, timeout=5)
        page = read_page(answer.content)
        assert page.total_count == len(page.items)
        return list(page.items)

    # the retired code answers 000 with no items, for months before and after the change
    assert items("28110", "202605") == [] and items("28110", "202608") == []
    served = [i for code in NEW_CODES for i in items(code, "202605")]
    assert len(served) == len(ITEMS)  # every deal again, under the new codes
    for code, dongs in NEW_CODES.items():
        for item in items(code, "202605"):
            assert item is not None
            assert item["sggcd"] == code and item["umdnm"].strip() in dongs
