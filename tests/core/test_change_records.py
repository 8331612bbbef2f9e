"""The pure parts of the change feed (issue 31): the diff a load's writes make, the feed's
cursors and ``since``, page cursors, ``data_version`` and the endpoints' filters."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import InvalidBody, InvalidParams
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate import change_feed, changes
from svc_core.realestate.common import data_version
from svc_core.webhooks.event_filters import filter_keeps, validate_filters

DIGESTS = st.text("0123456789abcdef", min_size=64, max_size=64)
MOVED = st.tuples(
    st.sampled_from(changes.MOVES),
    st.sampled_from(PROPERTY_TYPES),
    st.sampled_from(TRANSACTION_TYPES),
    st.just("commercial"),
)


@given(DIGESTS, DIGESTS, st.lists(MOVED, max_size=30))
def test_a_diff_exists_exactly_when_the_digests_differ(
    before: str, after: str, moved: list[changes.Moved]
) -> None:
    found = changes.diff(before, after, moved)
    if before == after:
        assert found is None
        return
    assert found is not None
    for what in ("added", "retracted", "changed"):
        assert getattr(found, what) == sum(1 for m in moved if m[0] == what)
    assert set(found.property_types) == {m[1] for m in moved}
    assert set(found.transaction_types) == {m[2] for m in moved}
    assert list(found.property_types) == [t for t in PROPERTY_TYPES if t in found.property_types]
    assert (found.digest_before, found.digest_after) == (before, after)


def test_a_load_that_changes_nothing_has_no_diff() -> None:
    moved: list[changes.Moved] = [("added", "office", "sale", "commercial")]
    assert changes.diff("a" * 64, "a" * 64, moved) is None
    assert hashlib.sha256(b"").hexdigest() == changes.EMPTY_DIGEST
    with pytest.raises(ValueError):
        changes.diff("a" * 64, "b" * 64, [("moved", "office", "sale", "commercial")])


def test_each_type_pair_has_one_source_kind() -> None:
    assert changes.source_kind("office", "sale") == "commercial"
    assert changes.source_kind("officetel", "sale") == "officetel-trade"
    assert changes.source_kind("officetel", "monthly_lease") == "officetel-rent"
    assert changes.source_kind("office", "monthly_lease") == "other"


IDS = st.integers(min_value=0, max_value=2**62 - 1)


@given(IDS)
def test_a_cursor_holds_its_id(after: int) -> None:
    text = changes.encode_cursor(after)
    assert changes.decode_cursor(text) == after
    assert changes.parse_since(text) == changes.Since(after_id=after)


@given(st.text(max_size=80))
def test_anything_else_is_a_400_never_a_crash(text: str) -> None:
    try:
        since = changes.parse_since(text)
    except InvalidParams:
        return
    assert since.after_id is not None or since.at is not None or text == ""


@pytest.mark.parametrize("bad", [-1, 2**62, True, 1.0])
def test_only_ids_make_cursors(bad: Any) -> None:
    with pytest.raises(ValueError):
        changes.encode_cursor(bad)


def test_since_takes_a_time_with_a_zone() -> None:
    assert changes.parse_since("2026-11-01T09:00:00+09:00") == changes.Since(at=1793491200)
    assert changes.parse_since(None) == changes.Since()
    for bad in ("2026-11-01T00:00:00", "2026-11-31T00:00:00Z", "2026-11-01"):
        with pytest.raises(InvalidParams):
            changes.parse_since(bad)


def record(change_id: int, **fields: Any) -> changes.ChangeRecord:
    values: dict[str, Any] = {
        "id": change_id,
        "changed_at": 1_790_000_000,
        "load_id": "load",
        "load_kind": "rtms-commercial",
        "source_kind": "commercial",
        "sigungu_code": "11680",
        "month": "2025-06",
        "property_types": ("office",),
        "transaction_types": ("sale",),
        "added": 1,
        "retracted": 0,
        "changed": 0,
        "digest_before": "a" * 64,
        "digest_after": "b" * 64,
        "complete": True,
        **fields,
    }
    return changes.ChangeRecord(**values)


@given(
    st.lists(st.integers(0, 2**62 - 2), max_size=10, unique=True).map(sorted),
    st.booleans(),
    IDS,
)
def test_page_cursors_resume_after_what_the_page_saw(ids: list[int], more: bool, top: int) -> None:
    page = [record(i + 1) for i in ids]
    top = max([top, *(r.id for r in page)])
    next_cursor, latest = change_feed.page_cursors(page, more=more, top=top, since=changes.Since())
    assert latest is not None
    if more and page:
        assert next_cursor is not None
        assert changes.decode_cursor(next_cursor) == page[-1].id == changes.decode_cursor(latest)
    else:
        assert next_cursor is None
        assert changes.decode_cursor(latest) == top


@given(st.dictionaries(st.sampled_from(["11680", "11110", "26110"]), IDS))
def test_data_version_is_the_latest_change_of_the_answers_districts(
    versions: dict[str, int],
) -> None:
    assert data_version(versions, None) == (max(versions.values()) if versions else None)
    for code in ("11680", "11110"):
        assert data_version(versions, [code]) == versions.get(code)
        other = {**versions, "26110": versions.get("26110", 0) + 1}  # another district moves
        assert data_version(other, [code]) == data_version(versions, [code])


FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "sigungu_codes": st.lists(st.sampled_from(["11680", "11110", "26110"]), min_size=1),
        "property_types": st.lists(st.sampled_from(PROPERTY_TYPES), min_size=1),
        "transaction_types": st.lists(st.sampled_from(TRANSACTION_TYPES), min_size=1),
    },
)


@given(
    FILTERS,
    st.sampled_from(["11680", "11110", "26110"]),
    st.lists(st.sampled_from(PROPERTY_TYPES), min_size=1, unique=True),
    st.lists(st.sampled_from(TRANSACTION_TYPES), min_size=1, unique=True),
)
def test_a_filter_keeps_what_each_of_its_lists_names(
    filters: dict[str, list[str]], code: str, ptypes: list[str], ttypes: list[str]
) -> None:
    checked = validate_filters(filters)
    assert set(checked) == set(filters)
    change = changes.record_json(
        record(1, sigungu_code=code, property_types=tuple(ptypes), transaction_types=tuple(ttypes)),
        "https://svc.example.com",
    )
    expected = (
        code in filters.get("sigungu_codes", [code])
        and bool(set(ptypes) & set(filters.get("property_types", ptypes)))
        and bool(set(ttypes) & set(filters.get("transaction_types", ttypes)))
    )
    assert filter_keeps(checked, change) is expected
    assert (
        changes.matches(
            record(
                1, sigungu_code=code, property_types=tuple(ptypes), transaction_types=tuple(ttypes)
            ),
            sigungu_codes=filters.get("sigungu_codes", ()),
            property_types=filters.get("property_types", ()),
            transaction_types=filters.get("transaction_types", ()),
        )
        is expected
    )


def test_a_renumbered_district_matches_under_its_old_code() -> None:
    # 41190 (부천시) was replaced by 41192/41194/41196 in 2024 (svc_core.regions)
    change = changes.record_json(record(1, sigungu_code="41192"), "https://svc.example.com")
    assert filter_keeps({"sigungu_codes": ["41190"]}, change)
    assert not filter_keeps({"sigungu_codes": ["11680"]}, change)


@pytest.mark.parametrize(
    "bad",
    [
        [],
        "11680",
        {"districts": ["11680"]},
        {"sigungu_codes": []},
        {"sigungu_codes": "11680"},
        {"sigungu_codes": ["1168"]},
        {"sigungu_codes": ["１１６８０"]},
        {"sigungu_codes": [11680]},
        {"sigungu_codes": ["11680"] * 101},
        {"property_types": ["castle"]},
        {"transaction_types": ["sale", None]},
    ],
)
def test_malformed_filters_are_refused(bad: object) -> None:
    with pytest.raises(InvalidBody):
        validate_filters(bad)


def test_empty_filters_keep_everything_and_repeats_are_dropped() -> None:
    assert validate_filters(None) == {} == validate_filters({})
    assert validate_filters({"property_types": ["office", "office", "retail"]}) == {
        "property_types": ["office", "retail"]
    }
