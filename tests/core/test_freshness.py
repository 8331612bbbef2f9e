"""Completeness, what was loaded and the provisional rule
(``svc_core.realestate.freshness``): properties over any paging, order and clock."""

from __future__ import annotations

import datetime
import math

from hypothesis import given
from hypothesis import strategies as st

from svc_core import periods
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES, LoadReport, Transaction
from svc_core.realestate import freshness
from svc_core.sources import ParseResult
from svc_core.sources.datasets import RtmsDataset


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
                d.sync_name
                for d in RtmsDataset
                if ptype in d.property_types and ttype in d.transaction_types
            )
    assert freshness.kinds_of("office", "sale") == ("commercial",)
    assert freshness.kinds_of("officetel", "monthly_lease") == ("officetel-rent",)
    assert freshness.kinds_of("office", "monthly_lease") == ()


def test_quarter_labels_cover_their_months() -> None:
    assert freshness.label_months("2025-Q2") == ("2025-04", "2025-05", "2025-06")
    assert freshness.label_months("2025-06") == ("2025-06",)
    assert freshness.period_months({"2025-06": "last_3m", "2025-04": "last_3m"}) == {
        "last_3m": ("2025-04", "2025-06")
    }


# what was loaded (issue 28) ----------------------------------------------------------------

KINDS = freshness.LOAD_KINDS
CODES = ("11680", "11110", "11650")
MONTHS = ("2025-04", "2025-05", "2025-06")
keys = st.tuples(st.sampled_from(KINDS), st.sampled_from(CODES), st.sampled_from(MONTHS))
reads = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=50).map(freshness.file_read),
    st.integers(min_value=0, max_value=50).map(freshness.whole_read),
    st.builds(
        lambda total, page, items: freshness.add_page(
            None, total_count=total, page_no=page, items=items
        ),
        st.integers(min_value=1, max_value=50),
        st.integers(min_value=1, max_value=5),
        st.integers(min_value=0, max_value=50),
    ),
)


def test_every_type_pair_has_one_kind_and_a_filter_has_the_kinds_of_its_pairs() -> None:
    for ptype in PROPERTY_TYPES:
        for ttype in TRANSACTION_TYPES:
            [kind] = freshness.load_kinds(ptype, ttype)
            assert kind == (freshness.kinds_of(ptype, ttype) or (freshness.OTHER_KIND,))[0]
            assert freshness.cohort_kinds(ptype, ttype) == (kind,)
    assert freshness.load_kinds("office", "monthly_lease") == (freshness.OTHER_KIND,)
    assert freshness.cohort_kinds(None, None) == KINDS
    assert set(KINDS) == {*(d.sync_name for d in RtmsDataset), freshness.OTHER_KIND}
    assert freshness.cohort_kinds("officetel", None) == ("officetel-trade", "officetel-rent")
    assert freshness.cohort_kinds(None, "sale") == (
        "commercial",
        "officetel-trade",
        "industrial",
        "land",
    )


@given(reads, st.integers(min_value=0, max_value=50), st.integers(min_value=1, max_value=5))
def test_a_file_without_paging_figures_never_outranks_paging(
    stored: freshness.MonthRead | None, items: int, page_no: int
) -> None:
    key = ("commercial", "11680", "2025-06")
    written = freshness.after_whole_file({key: items}, {} if stored is None else {key: stored})
    if stored is None or stored.by_file:
        assert written == {key: freshness.file_read(items)} and written[key].complete
    else:
        assert written == {}  # a read with paging figures is left as it is
    file = freshness.file_read(items)
    # a page or a partial sync replaces a file's read: the source states the total
    page = freshness.add_page(file, total_count=items + 1, page_no=page_no, items=1)
    assert page.pages == {page_no: 1} and not page.by_file
    assert not freshness.partial_read(file, items + 1).complete
    assert not freshness.partial_read(file, None).complete


@given(
    st.frozensets(st.sampled_from(CODES), min_size=1),
    st.lists(st.sampled_from(MONTHS), unique=True),
    st.frozensets(st.sampled_from(KINDS)),
    st.frozensets(keys),
    st.frozensets(keys),
    keys,
)
def test_a_month_is_loaded_when_every_kind_has_a_whole_read_and_none_a_partial(
    codes: frozenset[str],
    months: list[str],
    kinds: frozenset[str],
    loaded: frozenset[freshness.MonthKey],
    incomplete: frozenset[freshness.MonthKey],
    extra: freshness.MonthKey,
) -> None:
    def got(done: frozenset[freshness.MonthKey], gaps: frozenset[freshness.MonthKey]) -> set[str]:
        return set(freshness.loaded_months(codes, months, kinds, loaded=done, incomplete=gaps))

    have = got(loaded, incomplete)
    assert have <= set(months)
    for month in months:
        whole = {k for k, c, m in loaded if m == month and c in codes}
        partial = {k for k, c, m in incomplete if m == month and c in codes}
        assert (month in have) == (kinds <= whole and not kinds & partial)
    # a further complete read never unloads a month, a further partial one never loads one
    assert got(loaded | {extra}, incomplete) >= have
    assert got(loaded, incomplete | {extra}) <= have
    any_loaded = freshness.any_loaded(codes, months, kinds, loaded)
    assert any_loaded == any(k in kinds and c in codes and m in months for k, c, m in loaded)
    if not any_loaded and kinds:
        assert have == set()


def csv_load(code: str, month: str, count: int) -> tuple[str, ParseResult]:
    """A file without paging figures holding ``count`` office sales of one month."""
    day = datetime.date.fromisoformat(f"{month}-01")
    deals = [
        Transaction(
            source="rtms_official",
            sigungu_code=code,
            sigungu="구",
            dong=None,
            property_type="office",
            transaction_type="sale",
            deal_date=day,
            price_krw=1_000_000 * (n + 1),
            monthly_rent_krw=None,
            area_m2=None,
            natural_key=f"csv:{code}:{month}:{n}",
        )
        for n in range(count)
    ]
    return "commercial", ParseResult(
        transactions=deals, report=LoadReport(path="x.csv", read=count)
    )


def api_page(code: str, month: str, total: int, page_no: int) -> tuple[str, ParseResult]:
    """Page ``page_no`` of an API answer of ``total`` items: one item."""
    _, result = csv_load(code, month, 1)
    report = LoadReport(path="x.xml", read=1, total_count=total, page_no=page_no)
    return "commercial", ParseResult(transactions=result.transactions, report=report)


loads = st.lists(
    st.one_of(
        st.builds(csv_load, st.sampled_from(CODES), st.sampled_from(MONTHS), st.integers(1, 3)),
        st.builds(
            api_page,
            st.sampled_from(CODES),
            st.sampled_from(MONTHS),
            st.integers(1, 3),
            st.integers(1, 3),
        ),
    ),
    max_size=8,
)


@given(loads)
def test_every_month_a_file_holds_is_loaded_or_incomplete_never_both(
    files: list[tuple[str, ParseResult]],
) -> None:
    loaded = freshness.loaded_of(files)
    incomplete = freshness.incomplete_of(files)
    held = {
        ("commercial", t.sigungu_code, t.period_month)
        for _, result in files
        for t in result.transactions
    }
    assert loaded | incomplete == held and not loaded & incomplete
    api_months = {
        ("commercial", t.sigungu_code, t.period_month)
        for _, result in files
        if result.report.total_count is not None
        for t in result.transactions
    }
    assert held - api_months <= loaded  # a month only files without paging hold is loaded
