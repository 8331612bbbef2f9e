"""Taking the data away (issue 46, item 4): ``format=ndjson`` on the transactions listing,
through a real ``svc serve`` on the real MOLIT responses, and ``svc export``'s Parquet
files read back with pyarrow and DuckDB, compared with what ``/transactions`` serves."""

from __future__ import annotations

import datetime
import gzip
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.realestate.export_schema import DATASETS
from svc_server.http.responses import ndjson_chunks
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import Store
from tests.conftest import ROOT, LiveServer
from tests.http.realestate_support import open_molit_store
from tests.svc_cli import run_svc

TRANSACTIONS = "/api/v1/real-estate/transactions"
SELECTIONS = (
    {"sigungu_code": "11680", "from": "2025-06", "to": "2025-06", "include_excluded": "true"},
    {"sigungu_code": "11110", "from": "2025-05", "to": "2025-05", "include_excluded": "true"},
)
"""Every record the MOLIT responses hold: Gangnam's June 2025, Jongno's page of May."""


class Http:
    """Calls of a live server with one key."""

    def __init__(self, server: LiveServer, key: str) -> None:
        self.server, self.key = server, key

    def get(self, path: str, query: dict[str, str], **headers: str) -> tuple[int, Any, bytes]:
        url = f"{self.server.url}{path}?{urllib.parse.urlencode(query)}"
        request = urllib.request.Request(url, headers={"X-API-Key": self.key, **headers})
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read()

    def pages(self, query: dict[str, str]) -> list[dict[str, Any]]:
        """Every record of a listing, paging through its JSON by cursor."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = {**query, "limit": "40", **({"cursor": cursor} if cursor else {})}
            status, _, body = self.get(TRANSACTIONS, page)
            assert status == 200, body
            answer = json.loads(body)
            out += answer["data"]
            cursor = answer["_meta"]["next_cursor"]
            if cursor is None:
                return out


@pytest.fixture(scope="module")
def molit(module_db_url: str) -> Iterator[Store]:
    with open_molit_store(module_db_url) as store:
        yield store


@pytest.fixture
def http(molit: Store, module_db_url: str, live_server_factory: Callable[..., LiveServer]) -> Http:
    out = consumers.create_consumer(
        molit, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
    )
    return Http(live_server_factory(module_db_url), str(out.api_key))


def lines(body: bytes) -> list[dict[str, Any]]:
    """An NDJSON body's records: every line one JSON object, each ended by a newline."""
    text = body.decode("utf-8")
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.split("\n")[:-1]]


# NDJSON -----------------------------------------------------------------------------------


def test_ndjson_streams_the_records_json_pages_through(http: Http) -> None:
    for query in SELECTIONS:
        paged = http.pages(query)
        status, headers, body = http.get(TRANSACTIONS, {**query, "format": "ndjson"})
        assert status == 200, body
        assert headers["Content-Type"] == "application/x-ndjson"
        assert headers["X-Svc-Count"] == str(len(paged)) and "Link" not in headers
        assert headers["ETag"].startswith('W/"') and headers["X-Request-ID"]
        assert lines(body) == paged
        assert {r["excluded"] for r in paged} == {True, False}
        # gzip-coded as it streams, decoding to the same lines
        status, headers, coded = http.get(
            TRANSACTIONS, {**query, "format": "ndjson"}, **{"Accept-Encoding": "gzip"}
        )
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(coded) == body


def test_ndjson_with_limit_pages_like_json(http: Http) -> None:
    query = {**SELECTIONS[0], "format": "ndjson", "limit": "40"}
    records: list[dict[str, Any]] = []
    while True:
        status, headers, body = http.get(TRANSACTIONS, query)
        assert status == 200, body
        page = lines(body)
        json_page = json.loads(http.get(TRANSACTIONS, {**query, "format": "json"})[2])
        assert page == json_page["data"] and len(page) <= 40
        assert headers["X-Svc-Count"] == str(len(page))
        records += page
        cursor = headers["X-Svc-Next-Cursor"] or None  # empty on the last page
        assert cursor == json_page["_meta"]["next_cursor"]
        if cursor is None:
            assert "Link" not in headers
            break
        link = re.fullmatch(r'<([^>]+)>; rel="next"', headers["Link"])
        assert link is not None and "format=ndjson" in link.group(1)
        query = {**query, "cursor": cursor}
    assert len(records) > 80 and records == http.pages(SELECTIONS[0])  # several pages
    # from a cursor, the stream takes the rest as JSON's pages do
    first = json.loads(http.get(TRANSACTIONS, {**SELECTIONS[0], "limit": "40"})[2])
    rest = {**SELECTIONS[0], "format": "ndjson", "cursor": first["_meta"]["next_cursor"]}
    assert first["data"] + lines(http.get(TRANSACTIONS, rest)[2]) == records


def test_ndjson_only_where_offered_and_errors_stay_json(http: Http) -> None:
    status, headers, body = http.get(
        "/api/v1/real-estate/pulse", {"sigungu_code": "11680", "format": "ndjson"}
    )
    assert status == 400 and headers["Content-Type"] == "application/json"
    assert json.loads(body)["error"]["code"] == "INVALID_PARAMS"
    status, _, body = http.get(TRANSACTIONS, {"sigungu_code": "11680", "format": "xml"})
    assert status == 400 and "ndjson" in json.loads(body)["error"]["message"]
    status, _, body = http.get(f"{TRANSACTIONS}.csv", {"sigungu_code": "11680", "format": "ndjson"})
    assert status == 400


JSONABLE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(st.lists(st.dictionaries(st.text(), JSONABLE, max_size=4), max_size=12), st.integers(1, 5))
def test_ndjson_lines_parse_back_to_the_rows(rows: list[dict[str, Any]], per_chunk: int) -> None:
    body = b"".join(ndjson_chunks(rows, per_chunk=per_chunk))
    assert body.count(b"\n") == len(rows)  # a string's own line breaks stay escaped
    assert lines(body) == [json.loads(json.dumps(r)) for r in rows]


# svc export -------------------------------------------------------------------------------


def export(module_db_url: str, directory: Path) -> None:
    done = run_svc("export", str(directory), env={"SVC_DATABASE_URL": module_db_url})
    assert done.returncode == 0, done.stderr
    assert f"{directory / 'transactions.parquet'}: " in done.stdout


def as_served(row: dict[str, Any]) -> dict[str, Any]:
    """A Parquet row as the API serves the record: dates as ISO text."""
    return {k: v.isoformat() if isinstance(v, datetime.date) else v for k, v in row.items()}


def test_export_read_back_is_what_transactions_serves(
    http: Http, molit: Store, module_db_url: str, tmp_path: Path
) -> None:
    export(module_db_url, tmp_path)
    served = [r for query in SELECTIONS for r in http.pages(query)]
    table = pq.read_table(tmp_path / "transactions.parquet")
    exported = [as_served(r) for r in table.to_pylist()]
    by_key = {r["natural_key"]: r for r in served}
    assert len(exported) == len(served) == len(by_key)
    assert {r["natural_key"]: r for r in exported} == by_key
    assert {r["excluded_reason"] for r in exported if r["excluded"]} == {
        "cancelled",
        "partial_share",
    }
    # typed as documented: a date is a date, an amount an integer
    arrow = {"date32[day]": "date"}
    types = {f.name: arrow.get(str(f.type), str(f.type)) for f in table.schema}
    assert types == {c.name: c.type for c in DATASETS["transactions"]}
    assert not table.schema.field("natural_key").nullable
    assert table.schema.field("price_krw").metadata[b"description"]

    with duckdb.connect() as db:
        path = str(tmp_path / "transactions.parquet")
        count, excluded, units = db.execute(
            "SELECT count(*), count(*) FILTER (WHERE excluded), "
            "max(n) FROM (SELECT excluded, count(*) OVER (PARTITION BY contract_id) AS n "
            f"FROM read_parquet('{path}'))"
        ).fetchone()  # type: ignore[misc]
        assert (count, excluded) == (len(served), sum(r["excluded"] for r in served))
        assert units == 12  # the 12 office floors of 논현동 61-3, one contract
        rows = db.execute(f"SELECT * FROM read_parquet('{path}') ORDER BY natural_key").fetchall()
        columns = [c.name for c in DATASETS["transactions"]]
        assert [as_served(dict(zip(columns, r, strict=True))) for r in rows] == sorted(
            served, key=lambda r: r["natural_key"]
        )

    rollups = pq.read_table(tmp_path / "rollups.parquet").to_pylist()
    assert rollups and all(not r["dong"] or r["sigungu_code"] for r in rollups)
    stored = molit.realestate.rollup(dong_level=None)
    assert sorted(tuple(r.values()) for r in rollups) == sorted(
        tuple(getattr(s, c.name) for c in DATASETS["rollups"]) for s in stored
    )
    kept = sum(r["samples"] for r in rollups if r["dong"] == "")
    assert kept == sum(not r["excluded"] for r in served)


def test_the_documented_duckdb_reading_runs(
    molit: Store, module_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The docs' DuckDB lines run on an export of the real MOLIT samples (``molit`` loads
    them: run first, this test would read an empty store)."""
    export(module_db_url, tmp_path / "export")
    text = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    block = re.search(r"DuckDB \(`pip install duckdb`\):\n\n```python\n(.*?)```", text, re.S)
    assert block is not None and len(block.group(1).strip().splitlines()) == 3
    monkeypatch.chdir(tmp_path)
    printed: list[Any] = []
    exec(block.group(1), {"print": printed.append})  # noqa: S102 - the docs' own example
    (relation,) = printed
    assert {row[0] for row in relation.fetchall()} >= {"office", "officetel"}


def test_the_documented_schema_is_the_written_one() -> None:
    text = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    for name, columns in DATASETS.items():
        rows = re.findall(rf"^\| `{name}` \| `(\w+)` \| (\w+) \| (yes|no) \|", text, re.M)
        assert rows == [(c.name, c.type, "yes" if c.nullable else "no") for c in columns], name


def test_export_without_pyarrow_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    done = run_svc("export", str(tmp_path / "out"), env={"SVC_DATABASE_URL": "sqlite:///nowhere"})
    assert done.returncode == 2
    assert done.stderr.strip() == "svc: error: svc export needs pyarrow: pip install 'svc[parquet]'"
    assert not (tmp_path / "out").exists()
