"""Encoded answers cached per data version (issue 17, ``svc_server.http.answers``).

In-process on SQLite and PostgreSQL: a repeated call is answered from the encoded
answer without computing it again, and differs from the first only in its own
``_meta`` fields (``request_id``, ``generated_at``, ``rate_limit``), in JSON and in CSV.

Through a real ``svc serve`` (two worker processes): loads by another process (an
ingest, a retraction of a cancelled deal, ``svc demo-data`` of the first records of the
demo set; the commands run in the test's process) change the cached answers of every
worker within the data version's bound (``VERSION_TTL``, one second).
"""

from __future__ import annotations

import concurrent.futures
import csv
import functools
import io
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svc_core.envelope import PER_CALL_FIELDS
from svc_core.realestate import pulse as core_pulse
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.services.versioned import VERSION_TTL
from svc_server.store import Store, open_store
from tests.conftest import LiveServer, Templates
from tests.http.realestate_support import Api, make_app
from tests.server.test_demo_load import use_small_demo
from tests.svc_cli import run_svc

PULSE = {"sigungu_code": "11680", "property_type": "office", "transaction_type": "sale"}


def without_call_fields(body: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in body["_meta"].items() if k not in PER_CALL_FIELDS}
    return {**body, "_meta": meta}


def test_a_repeated_call_is_served_from_the_encoded_answer(
    molit_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = Api(make_app(molit_store))
    first = api.get("pulse", PULSE, **{"X-Request-ID": "first-call-0001"})
    assert first.status_code == 200
    csv_first = api.get("pulse", {**PULSE, "format": "csv"})
    assert csv_first.status_code == 200

    def not_again(*args: object, **kwargs: object) -> None:
        raise AssertionError("the answer was computed again")

    monkeypatch.setattr(core_pulse, "pulse_answer", not_again)
    second = api.get("pulse", PULSE, **{"X-Request-ID": "second-call-0002"})
    assert second.status_code == 200
    one, two = first.get_json(), second.get_json()
    assert without_call_fields(one) == without_call_fields(two)
    assert (one["_meta"]["request_id"], two["_meta"]["request_id"]) == (
        "first-call-0001",
        "second-call-0002",
    )
    assert two["_meta"]["rate_limit"]["remaining"] == one["_meta"]["rate_limit"]["remaining"] - 2
    assert second.headers["X-Request-ID"] == "second-call-0002"
    assert second.headers["Content-Type"] == "application/json"
    assert second.headers["Vary"] == "Accept, Accept-Encoding"
    assert second.headers["Content-Length"] == str(len(second.get_data()))

    csv_second = api.get("pulse", PULSE, Accept="text/csv")  # the same answer, negotiated
    assert csv_second.status_code == 200
    assert csv_second.get_data() == csv_first.get_data()
    per_call = {"X-Request-ID", "X-Svc-Generated-At", "X-RateLimit-Remaining", "X-Quota-Used"}
    for name, value in csv_first.headers.items():
        if name not in per_call:
            assert csv_second.headers[name] == value, name
    assert csv_second.headers["X-Svc-Generated-At"] == two["_meta"]["generated_at"]
    assert csv_second.headers["Content-Type"] == "text/csv; charset=utf-8"


def test_a_head_request_gets_a_cached_answers_headers_and_no_body(molit_store: Store) -> None:
    api = Api(make_app(molit_store))
    got = api.get("pulse", PULSE)
    assert got.status_code == 200
    query = "&".join(f"{k}={v}" for k, v in PULSE.items())
    for _ in range(2):  # computed, then served from the encoded answer
        head = api.client.head(f"/api/v1/real-estate/pulse?{query}", headers={"X-API-Key": api.key})
        assert head.status_code == 200 and head.get_data() == b""
        assert head.headers["Content-Length"] == got.headers["Content-Length"]
        assert head.headers["Content-Type"] == got.headers["Content-Type"]
        assert head.headers["X-Quota-Limit"] == got.headers["X-Quota-Limit"]


def test_threads_missing_one_answer_at_once_compute_it_once(
    molit_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a load every request thread misses at once: one computes each answer, the
    others wait for it and serve it (they do not each recompute the cohort)."""
    from svc_server.services import realestate as service

    real = service.pulse
    runs: list[int] = []

    @functools.wraps(real)
    def slow_pulse(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        time.sleep(0.3)  # long enough for every thread to miss meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "pulse", slow_pulse)
    api = Api(make_app(molit_store))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: api.get("pulse", PULSE), range(8)))
    assert [a.status_code for a in answers] == [200] * 8
    assert len(runs) == 1
    bodies = {json.dumps(without_call_fields(a.get_json()), sort_keys=True) for a in answers}
    assert len(bodies) == 1


def test_a_caller_of_another_plan_gets_its_own_answer(molit_store: Store) -> None:
    """The tier gate and ``_meta.tier`` follow the caller: a starter asking what a pro
    was answered is refused, and each sees its own tier."""
    app = make_app(molit_store)
    pro, starter = Api(app, plan="pro"), Api(app, plan="starter")
    dong = {**PULSE, "geo_precision": "dong"}
    assert pro.get("pulse", dong).status_code == 200
    assert starter.get("pulse", dong).status_code == 403
    assert pro.ok("pulse", PULSE)["_meta"]["tier"] == "pro"
    assert starter.ok("pulse", PULSE)["_meta"]["tier"] == "starter"


# through a real server, loads by other processes ---------------------------------------------


def rtms_json(days: range, cancelled: frozenset[int] = frozenset()) -> bytes:
    """An RTMS answer: one Gangnam office sale per day of June 2025 (``cancelled`` days
    carry the cancellation mark, which retracts a deal stored before)."""
    items = [
        {
            "sggCd": "11680",
            "sggNm": "강남구",
            "umdNm": "역삼동",
            "buildingUse": "업무",
            "dealYear": 2025,
            "dealMonth": 6,
            "dealDay": day,
            "dealAmount": f"{100_000 + day:,}",
            "buildingAr": "500.5",
            **({"cdealType": "O", "cdealDay": "25.07.01"} if day in cancelled else {}),
        }
        for day in days
    ]
    body = {"response": {"header": {"resultCode": "000"}, "body": {"items": {"item": items}}}}
    return json.dumps(body, ensure_ascii=False).encode()


def svc(server: LiveServer, *args: str) -> None:
    """``svc ARGS`` on the server's database, in this process: a process other than the
    server's workers, as an operator's command is."""
    done = run_svc(*args, env=server.env)
    assert done.returncode == 0, done.stderr


def fetch(server: LiveServer, key: str, path: str, accept: str = "application/json") -> Any:
    request = urllib.request.Request(
        server.url + path, headers={"X-API-Key": key, "Accept": accept}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            body = answer.read()
    except urllib.error.HTTPError as err:
        assert err.code == 404, err.read()
        return None
    return body.decode("utf-8-sig") if accept == "text/csv" else json.loads(body)


def settled(server: LiveServer, key: str, path: str, loaded: float, accept: str) -> Any:
    """What eight calls answer once the bound has passed since ``loaded`` (by then
    every worker has read the new data version, whichever one answers)."""
    time.sleep(max(0.0, loaded + VERSION_TTL + 0.1 - time.monotonic()))
    return [fetch(server, key, path, accept) for _ in range(8)]


def csv_samples(bodies: list[str]) -> set[int]:
    return {sum(int(r["sample_count"]) for r in csv.DictReader(io.StringIO(b))) for b in bodies}


PULSE_JUNE = (
    "/api/v1/real-estate/pulse?sigungu_code=11680&property_type=office"
    "&transaction_type=sale&period=2025-06"
)
COVERAGE = "/api/v1/real-estate/coverage"


def samples(bodies: list[Any]) -> set[int | None]:
    return {None if b is None else sum(r["sample_count"] for r in b["data"]) for b in bodies}


def test_loads_by_other_processes_reach_every_cached_answer_within_the_bound(
    sqlite_url: str,
    templates: Templates,
    tmp_path: Path,
    live_server_factory: Callable[..., LiveServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = sqlite_url
    templates.fill(url)
    store = open_store(url)
    made = consumers.create_consumer(
        store, plan="pro", now=time.time(), entropy=os.urandom(16), ids=new_id
    )
    key = str(made.api_key)
    store.close()
    server = live_server_factory(url, workers=2)
    first = tmp_path / "june.json"
    first.write_bytes(rtms_json(range(1, 6)))
    svc(server, "ingest", "rtms-commercial", str(first))
    loaded = time.monotonic()
    assert samples(settled(server, key, PULSE_JUNE, loaded, "application/json")) == {5}
    assert csv_samples(settled(server, key, PULSE_JUNE + "&format=csv", loaded, "text/csv")) == {5}
    coverage_before = settled(server, key, COVERAGE, loaded, "application/json")
    assert {len(b["data"]) for b in coverage_before} == {1}

    # A later report cancels the deal of June 1st: the store retracts it.
    cancel = tmp_path / "june-cancelled.json"
    cancel.write_bytes(rtms_json(range(1, 2), cancelled=frozenset({1})))
    svc(server, "ingest", "rtms-commercial", str(cancel))
    loaded = time.monotonic()
    assert samples(settled(server, key, PULSE_JUNE, loaded, "application/json")) == {4}
    assert csv_samples(settled(server, key, PULSE_JUNE + "&format=csv", loaded, "text/csv")) == {4}

    # The demo data set, loaded by another process, reaches coverage everywhere.
    use_small_demo(monkeypatch)
    svc(server, "demo-data")
    loaded = time.monotonic()
    after = settled(server, key, COVERAGE, loaded, "application/json")
    assert {len(b["data"]) for b in after} != {1}
    assert all("synthetic" in " ".join(b["_meta"]["known_limitations"]).lower() for b in after)
