"""Period grammar: strict parsing, ordering, rolling windows and series expansion."""

from __future__ import annotations

import datetime
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.errors import InvalidParams, InvalidPeriod
from svc_core.periods import (
    Month,
    Quarter,
    expand_series,
    month_range,
    parse_calendar_period,
    parse_month,
    parse_quarter,
    parse_year,
    period_end_date,
    quarter_of,
    quarter_range,
    resolve_index_period,
    resolve_pulse_period,
)

months = st.builds(
    lambda y, m: Month(year=y, month=m),
    st.integers(1990, 2100),
    st.integers(1, 12),
)
quarters = st.builds(
    lambda y, q: Quarter(year=y, q=q),
    st.integers(1990, 2100),
    st.integers(1, 4),
)


def m(label: str) -> Month:
    return parse_month(label)


# parsing -------------------------------------------------------------------------------


def test_parse_month_and_quarter() -> None:
    assert parse_month("2025-06") == Month(year=2025, month=6)
    assert parse_quarter("2025-Q2") == Quarter(year=2025, q=2)
    assert parse_year("2025") == 2025


@pytest.mark.parametrize(
    "text",
    [
        "2025-00",
        "2025-13",
        "2025-6",
        "25-06",
        "2025/06",
        " 2025-06",
        "2025-06 ",
        "2025-06\n",
        "1989-12",
        "2101-01",
        "２０２５-06",  # full-width digits are not ASCII digits
        "",
        "2025-Q1",
    ],
)
def test_parse_month_rejects(text: str) -> None:
    with pytest.raises(InvalidPeriod) as info:
        parse_month(text)
    assert info.value.hint
    assert info.value.status == 400
    assert isinstance(info.value, InvalidParams)


@pytest.mark.parametrize(
    "text", ["2025-Q0", "2025-Q5", "2025-q1", "2025Q1", "2025-Q", "2025-Q12", "1989-Q4", " 2025-Q1"]
)
def test_parse_quarter_rejects(text: str) -> None:
    with pytest.raises(InvalidPeriod):
        parse_quarter(text)


def test_messages_name_the_problem() -> None:
    with pytest.raises(InvalidPeriod, match="month 13"):
        parse_month("2025-13")
    with pytest.raises(InvalidPeriod, match="Q5"):
        parse_quarter("2025-Q5")
    with pytest.raises(InvalidPeriod, match="1990 to 2100"):
        parse_year("2101")


def test_values_validate_on_construction() -> None:
    with pytest.raises(ValueError, match="month"):
        Month(year=2025, month=13)
    with pytest.raises(ValueError, match="q"):
        Quarter(year=2025, q=0)
    with pytest.raises(ValueError, match="year"):
        Month(year=1800, month=1)


# values --------------------------------------------------------------------------------


def test_month_arithmetic_across_years() -> None:
    assert m("2025-12").next() == m("2026-01")
    assert m("2025-01").prev() == m("2024-12")
    assert m("2025-03").shift(-14) == m("2024-01")
    assert m("2024-02").last_day == datetime.date(2024, 2, 29)
    assert str(m("2025-06")) == "2025-06"


def test_quarter_months_and_bounds() -> None:
    q = parse_quarter("2025-Q4")
    assert [x.label for x in q.months()] == ["2025-10", "2025-11", "2025-12"]
    assert q.first == m("2025-10")
    assert q.last == m("2025-12")
    assert q.end_date == datetime.date(2025, 12, 31)
    assert q.next() == parse_quarter("2026-Q1")
    assert parse_quarter("2026-Q1").prev() == q
    assert quarter_of(m("2025-08")) == parse_quarter("2025-Q3")


def test_ranges() -> None:
    assert [x.label for x in month_range(m("2024-11"), m("2025-02"))] == [
        "2024-11",
        "2024-12",
        "2025-01",
        "2025-02",
    ]
    assert month_range(m("2025-02"), m("2025-01")) == ()
    assert [q.label for q in quarter_range(parse_quarter("2024-Q4"), parse_quarter("2025-Q1"))] == [
        "2024-Q4",
        "2025-Q1",
    ]


def test_period_end_date() -> None:
    assert period_end_date("2025-Q1") == datetime.date(2025, 3, 31)
    assert period_end_date("2025-Q2") == datetime.date(2025, 6, 30)
    assert period_end_date("2024") == datetime.date(2024, 12, 31)
    assert period_end_date("2024-02") == datetime.date(2024, 2, 29)


@given(months)
def test_month_label_round_trips(month: Month) -> None:
    assert parse_month(month.label) == month
    assert Month.from_index(month.index) == month
    assert month in quarter_of(month).months()


@given(months, months)
def test_month_order_matches_label_order(a: Month, b: Month) -> None:
    assert (a < b) == (a.label < b.label)
    assert (a == b) == (a.label == b.label)


@given(quarters, quarters)
def test_quarter_order_matches_label_order(a: Quarter, b: Quarter) -> None:
    assert (a < b) == (a.label < b.label)
    assert parse_quarter(a.label) == a


@given(months, st.integers(-200, 200))
def test_shift_is_invertible(month: Month, k: int) -> None:
    shifted_index = month.index + k
    if Month(year=1990, month=1).index <= shifted_index <= Month(year=2100, month=12).index:
        assert month.shift(k).shift(-k) == month
        assert month.shift(k).index - month.index == k


@given(months, months)
def test_month_range_is_consecutive(a: Month, b: Month) -> None:
    got = month_range(a, b)
    assert len(got) == max(0, b.index - a.index + 1)
    assert all(y.index - x.index == 1 for x, y in itertools.pairwise(got))


# pulse periods -------------------------------------------------------------------------


def test_rolling_windows_end_at_latest_month_with_data() -> None:
    window = resolve_pulse_period("last_3m", m("2025-02"))
    assert window.kind == "rolling"
    assert window.label == "last_3m"
    assert window.months == ("2024-12", "2025-01", "2025-02")
    assert (window.window_from, window.window_to) == ("2024-12", "2025-02")
    assert len(resolve_pulse_period("last_6m", m("2025-02")).months) == 6
    twelve = resolve_pulse_period("last_12m", m("2025-02"))
    assert twelve.months[0] == "2024-03"
    assert twelve.months[-1] == "2025-02"


def test_rolling_window_without_data_is_empty() -> None:
    window = resolve_pulse_period("last_6m", None)
    assert window.months == ()
    assert window.window_from is None
    assert window.window_to is None


def test_calendar_pulse_periods() -> None:
    month = resolve_pulse_period("2025-06", None)
    assert (month.kind, month.months) == ("month", ("2025-06",))
    quarter = resolve_pulse_period("2025-Q2", m("2020-01"))
    assert quarter.kind == "quarter"
    assert quarter.months == ("2025-04", "2025-05", "2025-06")
    assert (quarter.window_from, quarter.window_to) == ("2025-04", "2025-06")


@pytest.mark.parametrize(
    "text", ["last_2m", "last_4q", "2025", "2025-13", "2025-Q5", "LAST_3M", "", "last_3m "]
)
def test_pulse_period_rejects(text: str) -> None:
    with pytest.raises(InvalidPeriod) as info:
        resolve_pulse_period(text, m("2025-06"))
    assert info.value.hint


@given(months, st.sampled_from(["last_3m", "last_6m", "last_12m"]))
def test_rolling_window_properties(latest: Month, label: str) -> None:
    window = resolve_pulse_period(label, latest)
    available = latest.index - Month(year=1990, month=1).index + 1
    assert window.window_to == latest.label
    assert len(window.months) == min(int(label[5:-1]), available)
    assert list(window.months) == sorted(window.months)


@given(quarters, st.sampled_from(["last_4q", "last_8q"]))
def test_rolling_quarters_properties(latest: Quarter, label: str) -> None:
    window = resolve_index_period(label, latest)
    available = latest.index - Quarter(year=1990, q=1).index + 1
    assert window.window_to == latest.label
    assert len(window.periods) == min(int(label[5:-1]), available)


def test_rolling_windows_stop_at_the_start_of_the_calendar() -> None:
    assert resolve_pulse_period("last_12m", m("1990-03")).months == (
        "1990-01",
        "1990-02",
        "1990-03",
    )
    assert resolve_index_period("last_8q", parse_quarter("1990-Q2")).periods == (
        "1990-Q1",
        "1990-Q2",
    )


# index periods -------------------------------------------------------------------------


def test_index_periods() -> None:
    latest = parse_quarter("2025-Q1")
    four = resolve_index_period("last_4q", latest)
    assert four.periods == ("2024-Q2", "2024-Q3", "2024-Q4", "2025-Q1")
    assert (four.window_from, four.window_to) == ("2024-Q2", "2025-Q1")
    assert len(resolve_index_period("last_8q", latest).periods) == 8
    assert resolve_index_period("last_4q", None).periods == ()
    assert resolve_index_period("2025-Q3", None).periods == ("2025-Q3",)
    year = resolve_index_period("2024", latest)
    assert year.periods == ("2024", "2024-Q1", "2024-Q2", "2024-Q3", "2024-Q4")


@pytest.mark.parametrize("text", ["last_3m", "2025-06", "2025-Q0", "20245", "1989", "last_12q"])
def test_index_period_rejects(text: str) -> None:
    with pytest.raises(InvalidPeriod) as info:
        resolve_index_period(text, parse_quarter("2025-Q1"))
    assert "last_4q" in (info.value.hint or "")


# series --------------------------------------------------------------------------------


def test_series_list_is_sorted_and_deduplicated() -> None:
    assert expand_series("2025-03,2025-01,2025-03", None, None) == ("2025-01", "2025-03")
    assert expand_series("2025-Q2,2024-Q4", None, None) == ("2024-Q4", "2025-Q2")


def test_series_range_expands_inclusively() -> None:
    assert expand_series(None, "2024-11", "2025-02") == ("2024-11", "2024-12", "2025-01", "2025-02")
    assert expand_series(None, "2024-Q3", "2025-Q1") == ("2024-Q3", "2024-Q4", "2025-Q1")
    assert expand_series(None, "2025-05", "2025-05") == ("2025-05",)
    twelve = expand_series(None, "2024-01", "2024-12")
    assert len(twelve) == 12


@pytest.mark.parametrize(
    ("periods", "from_period", "to_period", "message"),
    [
        ("", None, None, "empty"),
        (",".join(f"2024-{i:02d}" for i in range(1, 13)) + ",2025-01", None, None, "at most 12"),
        ("2025-13", None, None, "month 13"),
        ("2025-01,", None, None, "empty item"),
        ("2025-01, 2025-02", None, None, "not a period"),
        ("2025-01,2025-Q1", None, None, "mix"),
        ("last_3m", None, None, "Rolling"),
        ("2025-01,last_6m", None, None, "Rolling"),
        (None, "2025-01", None, "to_period is missing"),
        (None, None, "2025-01", "from_period is missing"),
        (None, "2024-01", "2025-01", "13 periods"),
        (None, "2022-Q1", "2025-Q1", "13 periods"),
        (None, "2025-01", "2025-Q2", "mix"),
        (None, "2025-03", "2025-01", "after"),
        (None, None, None, "Give periods"),
        ("2025-01", "2025-01", "2025-02", "not both"),
        ("2025", None, None, "not a period"),
    ],
)
def test_series_rejects(
    periods: str | None, from_period: str | None, to_period: str | None, message: str
) -> None:
    with pytest.raises(InvalidPeriod, match=message) as info:
        expand_series(periods, from_period, to_period)
    assert info.value.hint
    assert info.value.code == "INVALID_PARAMS"


def test_series_limit_is_a_parameter() -> None:
    assert len(expand_series(None, "2020-Q1", "2024-Q4", max_periods=20)) == 20
    with pytest.raises(InvalidPeriod):
        expand_series("2025-01,2025-02,2025-03", None, None, max_periods=2)


def test_huge_range_is_refused_without_expanding() -> None:
    with pytest.raises(InvalidPeriod, match="1332 periods"):
        expand_series(None, "1990-01", "2100-12")


@settings(max_examples=200)
@given(months, st.integers(0, 30))
def test_series_range_properties(first: Month, extra: int) -> None:
    if first.index + extra > Month(year=2100, month=12).index:
        return
    last = first.shift(extra)
    if extra + 1 > 12:
        with pytest.raises(InvalidPeriod):
            expand_series(None, first.label, last.label)
        return
    got = expand_series(None, first.label, last.label)
    assert len(got) == extra + 1
    assert got[0] == first.label
    assert got[-1] == last.label
    assert expand_series(",".join(reversed(got)), None, None) == got


@given(st.text(max_size=12))
def test_calendar_period_parser_never_crashes(text: str) -> None:
    try:
        period = parse_calendar_period(text)
    except InvalidPeriod:
        return
    assert period.label == text
