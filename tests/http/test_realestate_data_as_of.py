"""``_meta.data_as_of`` is when the data behind an answer last changed (issue 28, item
6b), through HTTP on the real MOLIT and R-ONE files, SQLite and PostgreSQL.

Loads run at chosen times (``ingest(now=...)``): reloading a file that holds nothing new
moves nothing, loading one district never moves another's, and new, cancelled or
updated deals move their district's.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from svc_server import ingest
from svc_server.store import Store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    FIXTURES,
    NRG_GANGNAM,
    NRG_JONGNO_PAGE,
    Api,
    make_app,
)
from tests.http.test_realestate_names import july

HOUR = 3600.0
GANGNAM = {"sigungu_code": "11680"}
JONGNO = {"sigungu_code": "11110"}


def at(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_at(store: Store, path: Path | str, now: float, data: bytes | None = None) -> Any:
    raw = Path(path).read_bytes() if data is None else data
    return ingest.ingest(store, "rtms-commercial", raw, path=str(path), now=now)


def as_of(api: Api, endpoint: str, params: dict[str, str]) -> str | None:
    value = api.ok(endpoint, params)["_meta"]["data_as_of"]
    assert value is None or isinstance(value, str)
    return value


def district_answers(api: Api, place: dict[str, str]) -> set[str | None]:
    """``data_as_of`` of every answer about one district (they must agree)."""
    return {
        as_of(api, "pulse", place),
        as_of(api, "pulse/series", {**place, "from_period": "2025-05", "to_period": "2025-06"}),
        as_of(api, "coverage", place),
        as_of(api, "transactions", place),
    }


def everywhere(api: Api) -> set[str | None]:
    """``data_as_of`` of the answers about no one district."""
    return {as_of(api, "coverage", {}), as_of(api, "dimensions", {})}


def test_data_as_of_moves_only_when_a_districts_data_changes(store: Store) -> None:
    api = Api(make_app(store))
    assert everywhere(api) == {None}
    t0 = RE_NOW
    first = load_at(store, NRG_GANGNAM, t0)
    assert first.loaded > 0
    assert district_answers(api, GANGNAM) == everywhere(api) == {at(t0)}

    version = store.realestate.data_version()
    again = load_at(store, NRG_GANGNAM, t0 + HOUR)  # the same file: all duplicates
    assert (again.loaded, again.retracted, again.duplicate) == (0, 0, first.loaded)
    assert store.realestate.data_version() != version  # a load happened...
    assert district_answers(api, GANGNAM) == everywhere(api) == {at(t0)}  # ...nothing changed

    t2 = t0 + 2 * HOUR
    load_at(store, NRG_JONGNO_PAGE, t2)
    assert district_answers(api, JONGNO) == everywhere(api) == {at(t2)}
    assert district_answers(api, GANGNAM) == {at(t0)}  # loading Jongno moves only Jongno

    t3 = t0 + 3 * HOUR
    load_at(store, "july.xml", t3, july(NRG_GANGNAM))  # new deals of Gangnam
    assert district_answers(api, GANGNAM) == everywhere(api) == {at(t3)}
    assert district_answers(api, JONGNO) == {at(t2)}

    t4 = t0 + 4 * HOUR
    text = NRG_GANGNAM.read_text(encoding="utf-8")
    cancelled = text.replace("<cdealType> </cdealType>", "<cdealType>O</cdealType>", 1)
    done = load_at(store, "cancelled.xml", t4, cancelled.encode())
    assert done.retracted == 1
    assert district_answers(api, GANGNAM) == {at(t4)}  # a deal cancelled since
    load_at(store, "cancelled.xml", t4 + HOUR, cancelled.encode())  # told again: no change
    assert district_answers(api, GANGNAM) == {at(t4)}
    assert district_answers(api, JONGNO) == {at(t2)}


def test_records_that_get_their_published_details_move_it(store: Store) -> None:
    """Records stored before migration 0011 lack their published details until their file
    is loaded again: that reload changes them, so it moves data_as_of; the next does not."""
    api = Api(make_app(store))
    t0 = RE_NOW
    load_at(store, NRG_JONGNO_PAGE, t0)
    with store.data.transaction() as tx:  # as a store migrated from before 0011 holds them
        tx.execute("UPDATE transactions SET building_use = NULL, floor = NULL, load_id = NULL")
    t1 = t0 + HOUR
    assert load_at(store, NRG_JONGNO_PAGE, t1).loaded == 0
    assert district_answers(api, JONGNO) == {at(t1)}
    records = api.ok("transactions", {**JONGNO, "period": "2025-05"})["data"]
    assert records and all(r["building_use"] and r["load_id"] for r in records)
    load_at(store, NRG_JONGNO_PAGE, t0 + 2 * HOUR)
    assert district_answers(api, JONGNO) == {at(t1)}


def test_csv_answers_carry_the_same_time(store: Store) -> None:
    api = Api(make_app(store))
    load_at(store, NRG_GANGNAM, RE_NOW)
    load_at(store, NRG_GANGNAM, RE_NOW + HOUR)
    for endpoint in ("pulse", "transactions"):
        response = api.get(endpoint, {**GANGNAM, "format": "csv"})
        assert response.status_code == 200
        assert response.headers["X-Svc-Data-As-Of"] == at(RE_NOW)


RONE = FIXTURES / "rone"


def test_index_answers_follow_their_index_values(store: Store) -> None:
    api = Api(make_app(store))
    t0 = RE_NOW
    data = (RONE / "indices.csv").read_bytes()
    ingest.ingest(store, "rone-index", data, path="indices.csv", now=t0)
    assert as_of(api, "indices", GANGNAM) == at(t0)
    ingest.ingest(store, "rone-index", data, path="indices.csv", now=t0 + HOUR)
    assert as_of(api, "indices", GANGNAM) == at(t0)  # the same values again
    load_at(store, NRG_GANGNAM, t0 + 2 * HOUR)  # deals are not index values
    assert as_of(api, "indices", GANGNAM) == at(t0)
    assert as_of(api, "pulse", GANGNAM) == at(t0 + 2 * HOUR)
