"""Properties of the webhook input parsers: paging, relayed times and logged errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.paging import read_page
from svc_server.delivery import attempt as delivery
from svc_server.delivery.sender import SendResult
from svc_server.services.events import _instant


@given(limit=st.one_of(st.none(), st.text(max_size=12), st.integers(-5, 300).map(str)))
def test_limit_is_a_plain_decimal_from_1_to_200_or_400(limit: str | None) -> None:
    params = {} if limit is None else {"limit": limit}
    try:
        page = read_page(params)
        got, offset = page.limit, page.offset
    except InvalidParams:
        assert limit is not None
        assert not (limit.isascii() and limit.isdigit() and 1 <= int(limit) <= 200)
        return
    assert offset == 0
    assert got == (50 if limit is None else int(limit))
    assert 1 <= got <= 200


@given(offset=st.one_of(st.text(max_size=12), st.integers(-5, 2**32).map(str)))
def test_offset_is_a_plain_decimal_up_to_2_31_minus_1_or_400(offset: str) -> None:
    try:
        got = read_page({"offset": offset}).offset
    except InvalidParams:
        assert not (offset.isascii() and offset.isdigit() and int(offset) <= 2**31 - 1)
        return
    assert got == int(offset)


@given(
    at=st.datetimes(
        min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
    ),
    offset_minutes=st.integers(-12 * 60, 14 * 60),
)
def test_relayed_iso_times_and_unix_seconds_agree(at: datetime, offset_minutes: int) -> None:
    local = at.astimezone(timezone(timedelta(minutes=offset_minutes)))
    seconds = int(at.timestamp() // 1)
    assert _instant(local.isoformat(), "t") == seconds
    assert _instant(at.isoformat().replace("+00:00", "Z"), "t") == seconds
    assert _instant(seconds, "t") == seconds
    assert _instant(str(seconds), "t") == seconds


@given(value=st.one_of(st.text(max_size=30), st.floats(), st.booleans(), st.lists(st.none())))
@example(value="²")  # a Unicode digit that int() refuses: once a 500
@example(value=" ١٢٣ ")
def test_relayed_times_are_parsed_or_refused_with_400(value: object) -> None:
    try:
        got = _instant(value, "trial_end")
    except InvalidParams:
        return
    assert isinstance(got, int)
    assert 0 <= got < 253402300800


def test_naive_times_are_refused() -> None:
    with pytest.raises(InvalidParams, match="time zone"):
        _instant("2026-10-01T00:00:00", "trial_end")


@given(
    status=st.one_of(st.none(), st.integers(100, 599)),
    error=st.one_of(st.none(), st.text(max_size=50)),
    excerpt=st.one_of(st.none(), st.text(max_size=2000)),
)
def test_logged_errors_are_printable_and_bounded(
    status: int | None, error: str | None, excerpt: str | None
) -> None:
    ok = status is not None and 200 <= status <= 299
    result = SendResult(
        ok=ok,
        http_status=status,
        duration_ms=1,
        error=None if ok else error,
        response_excerpt=excerpt,
        address=None,
    )
    text = delivery.error_text(result)
    if ok:
        assert text is None
        return
    assert text is not None
    assert text.isprintable()
    assert text == text.strip()
    assert len(text) <= 2 * delivery.ERROR_EXCERPT + 2
    if excerpt and excerpt.strip() and excerpt.isprintable() and len(excerpt) < 100:
        assert text.endswith(": " + " ".join(excerpt.split()))
