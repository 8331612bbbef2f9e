"""Planning a sync, pure (``svc_core.sync.rtms``)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.periods import Month
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.rtms import parse_pages, parse_rtms, read_page
from svc_core.sync.rtms import (
    CONNECT_FAILURE_LIMIT,
    KEY_REASONS,
    LIMIT_REASONS,
    PER_SECOND_MARKERS,
    REQUEST_REASONS,
    RETRY_REASONS,
    VERDICTS,
    Budget,
    IngestedMonth,
    MonthState,
    Reach,
    bare_code,
    classify_gateway,
    district_status,
    gone_keys,
    month_digest,
    months,
    pages_for,
    paging_fault,
    plan,
    planned_calls,
)

month_st = st.builds(
    Month, year=st.integers(min_value=2015, max_value=2030), month=st.integers(1, 12)
)
codes_st = st.lists(st.sampled_from(["11110", "11680", "26350", "41135"]), min_size=1, unique=True)
kinds_st = st.lists(st.sampled_from(list(RtmsDataset)), min_size=1, unique=True)
status_st = st.sampled_from(["complete", "partial", "failed"])


@given(total=st.integers(min_value=0, max_value=100_000), rows=st.integers(1, 5000))
def test_pages_hold_every_item_and_no_page_is_empty_but_the_first(total: int, rows: int) -> None:
    pages = pages_for(total, rows)
    assert pages >= 1
    assert pages * rows >= total
    assert total == 0 or (pages - 1) * rows < total


@given(
    kinds=kinds_st,
    codes=codes_st,
    first=month_st,
    span=st.integers(0, 14),
    current=month_st,
    refresh=st.integers(0, 6),
    recorded=st.lists(
        st.tuples(
            st.sampled_from(list(RtmsDataset)),
            st.sampled_from(["11110", "11680"]),
            st.integers(0, 14),
            status_st,
            st.none() | st.integers(0, 5000),
        ),
        max_size=20,
    ),
    ingested=st.lists(
        st.tuples(
            st.sampled_from(list(RtmsDataset)),
            st.sampled_from(["11110", "11680"]),
            st.integers(0, 14),
        ),
        max_size=10,
    ),
)
def test_a_plan_reads_every_month_but_the_complete_ones_before_the_refresh_window(
    kinds: list[RtmsDataset],
    codes: list[str],
    first: Month,
    span: int,
    current: Month,
    refresh: int,
    recorded: list[tuple[RtmsDataset, str, int, str, int | None]],
    ingested: list[tuple[RtmsDataset, str, int]],
) -> None:
    """... and the months ``svc ingest`` loaded whole from API files that no sync read."""
    last = first.shift(span)
    states = {
        (k, c, first.shift(offset).label): MonthState(
            kind=k, sigungu_code=c, month=first.shift(offset), status=s, total_count=total
        )
        for k, c, offset, s, total in recorded
    }
    whole = {(k, c, first.shift(offset).label) for k, c, offset in ingested}
    tasks = plan(
        kinds,
        codes,
        first,
        last,
        states,
        current=current,
        refresh_months=refresh,
        page_rows=100,
        loaded_whole=whole,
    )
    chosen = {(t.kind, t.sigungu_code, t.month.label) for t in tasks}
    assert len(chosen) == len(tasks)  # no month twice
    for month in months(first, last):
        for code in codes:
            for kind in kinds:
                state = states.get((kind, code, month.label))
                done = (state is not None and state.status == "complete") or (
                    state is None and (kind, code, month.label) in whole
                )
                skip = done and month.index <= current.index - refresh
                assert ((kind, code, month.label) in chosen) is not skip
    assert [t.month for t in tasks] == sorted(t.month for t in tasks)
    assert planned_calls(tasks) >= len(tasks)
    for t in tasks:
        state = states.get((t.kind, t.sigungu_code, t.month.label))
        if state is not None and state.total_count is not None:
            assert t.calls == pages_for(state.total_count, 100)


@given(limit=st.integers(0, 50), asks=st.lists(st.integers(1, 10), max_size=30))
def test_a_budget_never_lets_calls_pass_its_limit(limit: int, asks: list[int]) -> None:
    budget = Budget(limit)
    for n in asks:
        if budget.allows(n):
            budget = budget.spend(n)
        else:
            with pytest.raises(ValueError):
                budget.spend(n)
        assert 0 <= budget.used <= limit
        assert budget.left == limit - budget.used


@given(limit=st.integers(1, 6), connected=st.lists(st.booleans(), max_size=40))
def test_a_run_is_unreachable_exactly_when_limit_calls_in_a_row_could_not_connect(
    limit: int, connected: list[bool]
) -> None:
    reach = Reach(limit)
    streak = 0
    for number, ok in enumerate(connected):
        reach = reach.after(connected=ok)
        streak = 0 if ok else streak + 1
        assert reach.failures == streak
        # the first time it says unreachable is the call that completes a run of ``limit``
        recent = connected[max(0, number + 1 - limit) : number + 1]
        assert reach.unreachable == (len(recent) == limit and not any(recent))


def test_reach_stops_after_a_few_failures_and_needs_a_positive_limit() -> None:
    reach = Reach()
    for _ in range(CONNECT_FAILURE_LIMIT - 1):
        reach = reach.after(connected=False)
    assert not reach.unreachable and reach.after(connected=False).unreachable
    assert not reach.after(connected=True).after(connected=False).unreachable
    assert 2 <= CONNECT_FAILURE_LIMIT <= 5
    with pytest.raises(ValueError):
        Reach(0)


def test_gateway_reasons_are_sorted_by_what_a_retry_can_fix() -> None:
    assert classify_gateway("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR") == "key"
    assert classify_gateway("", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR") == "key"
    assert classify_gateway("31") == "key"
    assert classify_gateway("22", "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR") == "limit"
    assert classify_gateway("05", "SERVICE_TIMEOUT_ERROR") == "retry"
    assert classify_gateway("01", "APPLICATION_ERROR") == "retry"
    # the codes the portal lists in a normal response/header, as resultCode + resultMsg
    assert classify_gateway("20", "SERVICE_ACCESS_DENIED_ERROR") == "key"
    assert classify_gateway("22", "") == "limit"
    assert classify_gateway("30", "") == "key"
    assert classify_gateway("31", "DEADLINE_HAS_EXPIRED_ERROR") == "key"
    assert classify_gateway("32", "UNREGISTERED_IP_ERROR") == "key"
    # the request itself is wrong: no other month would do better
    assert classify_gateway("11", "NO_MANDATORY_REQUEST_PARAMETERS_ERROR") == "request"
    assert classify_gateway("", "INVALID_REQUEST_PARAMETER_ERROR") == "request"
    # unknown, or no data (live empty months are 000 with totalCount 0): not retried
    assert classify_gateway("99", "UNKNOWN_ERROR") == "fail"
    assert classify_gateway("03", "NODATA_ERROR") == "fail"
    assert classify_gateway("ERROR-42", "something new") == "fail"


KNOWN = KEY_REASONS | LIMIT_REASONS | REQUEST_REASONS | RETRY_REASONS


@given(code=st.sampled_from(sorted(KNOWN)), zeros=st.integers(0, 3), message=st.text())
def test_a_known_code_decides_whatever_else_the_message_says_and_its_leading_zeros(
    code: str, zeros: int, message: str
) -> None:
    """The code decides unless the message names a per-second refusal, which is ``pace``
    whatever the code (22 is the daily limit's code too)."""
    verdict = classify_gateway(code)
    assert verdict in VERDICTS and verdict != "fail"
    per_second = any(marker in message.upper() for marker in PER_SECOND_MARKERS)
    expected = "pace" if per_second else verdict
    assert classify_gateway("0" * zeros + code + " ", message) == expected
    assert classify_gateway(code, f"{message} 초당 호출 한도 초과") == "pace"
    assert bare_code("0" * zeros + code) == code


@given(code=st.text(max_size=6), message=st.text(alphabet="abcdefghij _-.", max_size=30))
def test_an_unknown_code_without_known_words_fails_the_month(code: str, message: str) -> None:
    if bare_code(code) in KNOWN:
        return
    assert classify_gateway(code, message) == "fail"


@given(
    stored=st.sets(st.text(min_size=1, max_size=5), max_size=15),
    read=st.sets(st.text(min_size=1, max_size=5), max_size=15),
)
def test_what_changed_between_two_reads(stored: set[str], read: set[str]) -> None:
    gone = gone_keys(stored, read)
    assert set(gone) == stored - read
    assert list(gone) == sorted(gone)
    assert (month_digest(stored, ()) == month_digest(read, ())) is (stored == read)
    assert month_digest(sorted(read), ()) == month_digest(sorted(read, reverse=True), ())
    if read:
        assert month_digest(read, ()) != month_digest((), read)


small_month_st = st.builds(Month, year=st.just(2025), month=st.integers(1, 12))


@given(
    synced=st.dictionaries(small_month_st, status_st, max_size=8),
    loaded=st.dictionaries(small_month_st, st.sampled_from([True, False, None]), max_size=8),
    bounds=st.tuples(st.none() | small_month_st, st.none() | small_month_st),
)
def test_district_status_accounts_for_every_month_of_the_range_synced_ingested_or_missing(
    synced: dict[Month, str], loaded: dict[Month, bool | None], bounds: tuple[Month | None, ...]
) -> None:
    first, last = bounds
    states = [
        MonthState(
            kind=RtmsDataset.COMMERCIAL, sigungu_code="11680", month=m, status=s, attempted_at=1.0
        )
        for m, s in synced.items()
    ]
    ingested = [
        IngestedMonth(kind=RtmsDataset.COMMERCIAL, sigungu_code="11680", month=m, sources=("a.xml",),
                      complete=c)
        for m, c in loaded.items()
    ]  # fmt: skip
    rows = district_status(states, first=first, last=last, ingested=ingested)
    inside = [
        m
        for m in {*synced, *loaded}
        if (first is None or m >= first) and (last is None or m <= last)
    ]
    if not inside:
        assert rows == ()  # nothing known of the pair: it is not listed unless asked for
        return
    [row] = rows
    low = first if first is not None else min(inside)
    high = last if last is not None else max(inside)
    span = {m.label for m in months(low, high)}
    recorded = {*row.complete, *row.partial, *row.failed}
    loaded_labels = {i.month.label for i in row.ingested}
    assert recorded == {m.label for m in inside if m in synced}
    assert loaded_labels == {m.label for m in inside if m in loaded}
    assert set(row.missing) == span - recorded - loaded_labels
    assert [i.complete for i in row.ingested] == [loaded[i.month] for i in row.ingested]


def test_district_status_lists_each_month_once_and_the_gaps() -> None:
    def state(label: str, status: str, at: float) -> MonthState:
        year, month = label.split("-")
        return MonthState(
            kind=RtmsDataset.COMMERCIAL,
            sigungu_code="11680",
            month=Month(year=int(year), month=int(month)),
            status=status,
            attempted_at=at,
        )

    rows = district_status(
        [
            state("2025-01", "complete", 5),
            state("2025-04", "failed", 9),
            state("2025-03", "partial", 7),
        ],
        kinds=(RtmsDataset.COMMERCIAL, RtmsDataset.OFFICETEL_RENT),
        districts=("11680",),
    )
    assert [
        (r.kind, r.complete, r.partial, r.failed, r.missing, r.last_synced_at) for r in rows
    ] == [
        (RtmsDataset.COMMERCIAL, ("2025-01",), ("2025-03",), ("2025-04",), ("2025-02",), 9),
        (RtmsDataset.OFFICETEL_RENT, (), (), (), (), None),
    ]


MOLIT = Path(__file__).resolve().parents[1] / "fixtures" / "molit"


@given(cuts=st.lists(st.integers(1, 82), max_size=8, unique=True))
def test_a_month_read_in_pages_has_the_keys_of_the_whole_file(cuts: list[int]) -> None:
    data = (MOLIT / "NRG_11680_202506.xml").read_bytes()
    items = re.findall(rb"<item>.*?</item>", data, re.S)
    bounds = [0, *sorted(cuts), len(items)]
    pages = [
        read_page(
            b"<response><header><resultCode>000</resultCode></header><body><items>"
            + b"".join(items[a:b])
            + f"</items><totalCount>{len(items)}</totalCount></body></response>".encode()
        )
        for a, b in itertools.pairwise(bounds)
    ]
    whole = parse_rtms(data, "commercial")
    paged = parse_pages(pages, RtmsDataset.COMMERCIAL)
    assert [t.natural_key for t in paged.transactions] == [
        t.natural_key for t in whole.transactions
    ]
    assert paged.retracted_keys == whole.retracted_keys
    assert paged.report.read == whole.report.read == len(items)


# Paging an upstream may fake ----------------------------------------------------------


@given(
    items=st.lists(st.integers(0, 3), max_size=60),
    rows=st.integers(2, 12),
    stated=st.booleans(),
)
def test_pages_served_as_asked_are_never_a_fault_even_with_identical_deals(
    items: list[int], rows: int, stated: bool
) -> None:
    """Small values repeat often: identical deals on different pages are real deals."""
    pages = [items[i : i + rows] for i in range(0, len(items), rows)]
    for number, page in enumerate(pages, start=1):
        earlier = pages[: number - 1]
        if any(p == page for p in earlier):
            continue  # a month whose pages repeat item for item: not told from a fake
        assert paging_fault(number, number if stated else None, page, earlier) is None


@given(
    items=st.lists(st.integers(), min_size=2, max_size=30),
    stated=st.booleans(),
)
def test_an_upstream_serving_the_first_page_again_is_caught_on_page_two(
    items: list[int], stated: bool
) -> None:
    fault = paging_fault(2, 1 if stated else None, items, [items])
    assert fault is not None and "pageNo ignored?" in fault
    assert ("the answer is page 1" in fault) is stated
    assert ("repeats page 1" in fault) is not stated


@given(asked=st.integers(1, 1000), answered=st.integers(1, 1000))
def test_a_stated_page_number_must_be_the_one_asked(asked: int, answered: int) -> None:
    fault = paging_fault(asked, answered, [], [])
    assert (fault is None) is (asked == answered)


def test_single_items_are_never_compared() -> None:
    assert paging_fault(2, None, ["same deal"], [["same deal"]]) is None
    assert paging_fault(3, None, ["a", "b"], [["c", "d"], ["a", "b"]]) == (
        "page 3 repeats page 2 item for item (pageNo ignored?)"
    )
