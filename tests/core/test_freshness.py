"""Completeness and the provisional rule (``svc_core.realestate.freshness``): properties
over any paging, order and clock."""

from __future__ import annotations

import datetime
import math

from hypothesis import given
from hypothesis import strategies as st

from svc_core import periods
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate import freshness
from svc_core.sync import COHORTS


@st.composite
def paging(draw: st.DrawFn) -> tuple[int, int, list[int]]:
    """(total count, page size, the items of each page) of one query."""
    total = draw(st.integers(min_value=1, max_value=500))
    size = draw(st.integers(min_value=1, max_value=100))
    pages = math.ceil(total / size)
    return total, size, [min(size, total - (p - 1) * size) for p in range(1, pages + 1)]


def load(order: list[int], total: int, items: list[int]) -> freshness.MonthRead | None:
    read: freshness.MonthRead | None = None
    for page in order:
        read = freshness.add_page(read, total_count=total, page_no=page, items=items[page - 1])
    return read


@given(paging(), st.data())
def test_every_page_in_any_order_and_repetition_is_complete(
    query: tuple[int, int, list[int]], data: st.DataObject
) -> None:
    total, _, items = query
    pages = list(range(1, len(items) + 1))
    order = data.draw(st.permutations(pages))
    again = data.draw(st.lists(st.sampled_from(pages), max_size=5))
    read = load([*order, *again], total, items)
    assert read is not None and read.complete


@given(paging(), st.data())
def test_a_missing_page_leaves_the_month_incomplete(
    query: tuple[int, int, list[int]], data: st.DataObject
) -> None:
    total, _, items = query
    pages = list(range(1, len(items) + 1))
    if len(pages) < 2:
        read = freshness.add_page(None, total_count=total + 1, page_no=1, items=items[0])
        assert not read.complete  # the source holds one more item than the page
        return
    missing = data.draw(st.sampled_from(pages))
    order = data.draw(st.permutations([p for p in pages if p != missing]))
    again = data.draw(st.lists(st.sampled_from(order), max_size=5))
    read = load([*order, *again], total, items)
    assert read is not None and not read.complete


@given(paging(), st.integers(min_value=1, max_value=50))
def test_pages_of_an_older_total_do_not_count(
    query: tuple[int, int, list[int]], grown: int
) -> None:
    total, _, items = query
    read = load(list(range(1, len(items) + 1)), total, items)
    assert read is not None and read.complete
    first_again = freshness.add_page(read, total_count=total + grown, page_no=1, items=items[0])
    assert not first_again.complete
    assert freshness.add_page(
        first_again, total_count=total + grown, page_no=2, items=total + grown
    ).complete


@given(
    st.integers(min_value=0, max_value=500),
    st.one_of(st.none(), st.integers(min_value=1, max_value=500)),
)
def test_a_partial_sync_never_undoes_a_complete_read(total: int, seen: int | None) -> None:
    """(A partial read always saw a total of at least 1: an empty month is read whole.)"""
    whole = freshness.whole_read(total)
    assert whole.complete
    assert freshness.partial_read(whole, seen) == whole
    fresh = freshness.partial_read(None, seen)
    assert not fresh.complete
    page = freshness.add_page(None, total_count=total + 2, page_no=1, items=1)
    assert not freshness.partial_read(page, seen).complete


months = st.builds(
    lambda y, m: periods.Month(year=y, month=m),
    st.integers(min_value=1990, max_value=2100),
    st.integers(min_value=1, max_value=12),
)
days = st.dates(min_value=datetime.date(1990, 4, 1), max_value=datetime.date(2100, 12, 31))


@given(months, days)
def test_a_month_is_provisional_exactly_until_31_days_after_its_last_day(
    month: periods.Month, today: datetime.date
) -> None:
    provisional = freshness.is_provisional(month.label, today)
    assert provisional == ((today - month.last_day).days <= freshness.LAG_DAYS)
    if provisional:  # and on every earlier day
        assert freshness.is_provisional(month.label, today - datetime.timedelta(days=1))


@given(days)
def test_the_current_and_previous_months_are_provisional_older_ones_after_the_third(
    today: datetime.date,
) -> None:
    current = periods.Month(year=today.year, month=today.month)
    assert freshness.is_provisional(current.label, today)
    assert freshness.is_provisional(current.shift(-1).label, today)
    if freshness.is_provisional(current.shift(-2).label, today):
        assert today.day <= 3  # 31 days after the month before last: the first days only
    assert not freshness.is_provisional(current.shift(-3).label, today)


def test_every_type_pair_of_a_sync_kind_maps_back_to_it() -> None:
    for ptype in PROPERTY_TYPES:
        for ttype in TRANSACTION_TYPES:
            kinds = freshness.kinds_of(ptype, ttype)
            assert kinds == tuple(
                k for k, (ps, ts) in COHORTS.items() if ptype in ps and ttype in ts
            )
    assert freshness.kinds_of("office", "sale") == ("commercial",)
    assert freshness.kinds_of("officetel", "monthly_lease") == ("officetel-rent",)
    assert freshness.kinds_of("office", "monthly_lease") == ()


@given(
    st.sets(st.sampled_from(["11680", "11110", "11650"]), min_size=1),
    st.sets(st.sampled_from(["2025-04", "2025-05", "2025-06"]), min_size=1),
    st.sets(
        st.tuples(
            st.sampled_from(["commercial", "officetel-trade", "officetel-rent"]),
            st.sampled_from(["11680", "11110", "11650"]),
            st.sampled_from(["2025-04", "2025-05", "2025-06"]),
        )
    ),
)
def test_a_figure_is_complete_unless_one_of_its_district_months_is_incomplete(
    codes: set[str], wanted: set[str], incomplete: set[freshness.MonthKey]
) -> None:
    got = freshness.months_complete(codes, wanted, "office", "sale", incomplete)
    hit = any(k == "commercial" and c in codes and m in wanted for k, c, m in incomplete)
    assert got is not hit


def test_quarter_labels_cover_their_months() -> None:
    assert freshness.label_months("2025-Q2") == ("2025-04", "2025-05", "2025-06")
    assert freshness.label_months("2025-06") == ("2025-06",)
    assert freshness.period_months({"2025-06": "last_3m", "2025-04": "last_3m"}) == {
        "last_3m": ("2025-04", "2025-06")
    }
