"""``svc_core.requestlog``: status filters, what a log line keeps, counts per key."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.requestlog import (
    PATH_MAX,
    RETENTION_SECONDS,
    LoggedCall,
    clip_path,
    clip_text,
    counts_per_key,
    month_of,
    oldest_kept_ms,
    parse_status,
    read_query,
)


@given(st.integers(min_value=100, max_value=599))
def test_an_exact_status_matches_only_itself(status: int) -> None:
    wanted = parse_status(str(status))
    assert status in wanted
    assert status - 1 not in wanted and status + 1 not in wanted


@given(st.integers(min_value=1, max_value=5), st.integers(min_value=100, max_value=599))
def test_a_class_matches_its_hundred(digit: int, status: int) -> None:
    assert (status in parse_status(f"{digit}xx")) == (status // 100 == digit)


@given(st.text(max_size=6))
def test_anything_else_is_a_400(text: str) -> None:
    is_code = len(text) == 3 and text.isascii() and text.isdigit() and "1" <= text[0] <= "5"
    is_class = len(text) == 3 and text[0] in "12345" and text[1:] == "xx"
    if is_code or is_class:
        parse_status(text)
    else:
        with pytest.raises(InvalidParams):
            parse_status(text)


@pytest.mark.parametrize("text", ["600", "099", "4XX", "4x", "١٠٠", "40", " 404", "4xx "])
def test_refused_statuses(text: str) -> None:
    with pytest.raises(InvalidParams):
        parse_status(text)


@given(st.text(), st.integers(min_value=1, max_value=600))
def test_clipped_text_fits_and_any_database_stores_it(text: str, most: int) -> None:
    out = clip_text(text, most)
    assert len(out) <= most
    assert "\x00" not in out
    out.encode("utf-8")  # no unpaired surrogate left
    if len(text) <= most and "\x00" not in text and text.isprintable() and text.isascii():
        assert out == text


@given(st.text(min_size=PATH_MAX + 1))
def test_a_long_path_is_marked_as_cut(path: str) -> None:
    out = clip_path(path)
    assert len(out) == PATH_MAX and out.endswith("…")


def test_the_query_is_kept_with_the_path() -> None:
    assert clip_path("/api/v1/x", "a=1&b=2") == "/api/v1/x?a=1&b=2"
    assert clip_path("/api/v1/x") == "/api/v1/x"


@given(st.integers(min_value=0, max_value=4_102_444_800_000))
def test_month_of_is_the_utc_month(at_ms: int) -> None:
    assert month_of(at_ms) == datetime.fromtimestamp(at_ms / 1000, UTC).strftime("%Y-%m")


def test_month_edges() -> None:
    assert month_of(1_767_225_599_999) == "2025-12"  # 2025-12-31T23:59:59.999Z
    assert month_of(1_767_225_600_000) == "2026-01"


def test_retention_is_seven_days_before_now() -> None:
    assert oldest_kept_ms(1_000_000.5) == 1_000_000_500 - RETENTION_SECONDS * 1000


calls = st.builds(
    LoggedCall,
    consumer_id=st.just("c"),
    key_id=st.sampled_from(["k1", "k2"]),
    at_ms=st.sampled_from([1_767_225_599_000, 1_767_225_600_000]),
    method=st.just("GET"),
    path=st.just("/api/v1/x"),
    status=st.sampled_from([200, 204, 304, 400, 402, 429, 500]),
    request_id=st.just("r"),
    duration_ms=st.just(1.0),
    counted=st.booleans(),
)


@given(st.lists(calls, max_size=40))
def test_counts_per_key_are_the_successful_counted_calls(batch: list[LoggedCall]) -> None:
    counts = counts_per_key(batch)
    assert sum(counts.values()) == sum(1 for c in batch if c.counted and 200 <= c.status < 300)
    for (key, month), n in counts.items():
        assert n == sum(
            1
            for c in batch
            if c.key_id == key and month_of(c.at_ms) == month and c.counted and c.status < 300
        )


def test_read_query_defaults_and_filters() -> None:
    plain = read_query({})
    assert (plain.key_id, plain.status, plain.limit, plain.offset) == (None, None, 100, 0)
    key = "0A1B2C3D-0000-4000-8000-00000000000F"
    q = read_query({"key": key, "status": "5xx", "limit": "7", "offset": "3"})
    assert q.key_id == key.lower() and q.status is not None and 503 in q.status
    assert (q.limit, q.offset) == (7, 3)
    for bad in ({"limit": "1001"}, {"key": "x"}, {"status": "2"}, {"offset": "-1"}):
        with pytest.raises(InvalidParams):
            read_query(bad)
