"""``svc_core.accounts.requestlog``: status filters, what a log line keeps, counts per key."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.accounts.requestlog import (
    PATH_MAX,
    RETENTION_SECONDS,
    RawCall,
    clip_path,
    clip_text,
    counts_per_key,
    from_raw,
    month_of,
    newest_per_account,
    oldest_kept_ms,
    parse_status,
    read_query,
)
from svc_core.errors import InvalidParams


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


calls = st.tuples(
    st.sampled_from(["c1", "c2", "c3"]),
    st.sampled_from(["k1", "k2"]),
    st.sampled_from([1_767_225_599_000, 1_767_225_600_000]),
    st.just("GET"),
    st.just("/api/v1/x"),
    st.just(""),
    st.sampled_from([200, 204, 304, 400, 402, 429, 500]),
    st.text(max_size=3),
    st.just(1.0),
    st.booleans(),
    st.none(),
)


@given(st.lists(calls, max_size=40))
def test_counts_per_key_are_the_successful_counted_calls(batch: list[RawCall]) -> None:
    counts = counts_per_key(batch)
    lines = [from_raw(c) for c in batch]
    assert sum(counts.values()) == sum(1 for c in lines if c.counted and 200 <= c.status < 300)
    for (key, month), n in counts.items():
        assert n == sum(
            1
            for c in lines
            if c.key_id == key and month_of(c.at_ms) == month and c.counted and c.status < 300
        )


@given(st.lists(calls, max_size=40), st.integers(min_value=1, max_value=10))
def test_a_batch_keeps_the_newest_lines_of_each_account(batch: list[RawCall], keep: int) -> None:
    kept = newest_per_account(batch, keep)
    for account in {c[0] for c in batch}:
        mine = [c for c in batch if c[0] == account]
        assert [c for c in kept if c[0] == account] == mine[-keep:]
    assert len(kept) == sum(min(keep, sum(c[0] == a for c in batch)) for a in {c[0] for c in batch})


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


@given(st.binary(max_size=600), st.binary(max_size=100), st.text(max_size=20))
def test_from_raw_decodes_any_wsgi_bytes_into_storable_text(
    path: bytes, query: bytes, method: str
) -> None:
    raw = (
        "c",
        "k",
        5,
        method,
        path.decode("latin-1"),
        query.decode("latin-1"),
        404,
        "r",
        1.26,
        False,
        "NOT_FOUND",
    )
    line = from_raw(raw)
    assert len(line.path) <= PATH_MAX and len(line.method) <= 16
    assert "\x00" not in line.path + line.method
    line.path.encode("utf-8")
    assert (line.status, line.error_code, line.duration_ms, line.counted) == (
        404,
        "NOT_FOUND",
        1.3,
        False,
    )
    if b"\x00" not in path + query and len(path) + len(query) < PATH_MAX // 4:
        try:
            text = path.decode("utf-8") + ("?" + query.decode("utf-8") if query else "")
        except UnicodeDecodeError:
            return
        if text.isprintable():
            assert line.path == text


def test_from_raw_reads_utf8_paths() -> None:
    korean = "/api/v1/강남".encode().decode("latin-1")
    line = from_raw(("c", "k", 1, "GET", korean, "a=%ED", 200, "r", 0.04, True, None))
    assert line.path == "/api/v1/강남?a=%ED" and line.duration_ms == 0.0
