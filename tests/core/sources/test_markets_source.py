"""The marketplace file readers: documented CSV in, records and a load report out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.errors import SourceError
from svc_core.markets import CATEGORIES, PRODUCT_TYPES, Activity, Listing
from svc_core.sources.markets import (
    ACTIVITY_COLUMNS,
    LISTING_COLUMNS,
    format_activity,
    format_listings,
    format_number,
    parse_activity,
    parse_listings,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markets"


def _read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _first_lines(report: object) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for rej in report.rejections:  # type: ignore[attr-defined]
        out.setdefault(rej.reason, []).append(rej.line)
    return out


def test_listings_fixture_reads_every_row() -> None:
    listings, report = parse_listings(_read("listings.csv"), path="listings.csv")
    assert report.path == "listings.csv"
    assert (report.read, report.accepted, report.rejected) == (15, 15, {})
    by_id = {x.listing_id: x for x in listings}
    assert by_id["gn-2"] == Listing(
        listing_id="gn-2",
        region="강남",
        category="office",
        product_type="rental",
        list_price=200.0,
        discounted_price=150.0,
    )
    assert by_id["gn-1"].discounted_price is None
    assert by_id["gn-m1"].product_type == "meeting"


def test_activity_fixture_reads_every_row() -> None:
    activities, report = parse_activity(_read("activity.csv"), path="activity.csv")
    assert (report.read, report.accepted) == (15, 15)
    first = activities[0]
    assert first == Activity(
        listing_id="gn-1",
        period="2026-05",
        views=10,
        bookings=1,
        booked_hours=50.0,
        available_hours=100.0,
    )
    assert isinstance(first.booked_hours, float)


def test_bom_any_column_order_crlf_quotes_and_blanks_around_cells() -> None:
    listings, report = parse_listings(_read("listings_bom_reordered.csv"))
    assert report.accepted == 2
    first, second = listings
    assert (first.listing_id, first.region, first.list_price, first.discounted_price) == (
        "bs-1",
        "부산 해운대",
        1200.5,
        None,
    )
    assert (second.region, second.discounted_price) == ("성수", 990.0)


def test_listing_rows_are_rejected_by_reason_with_their_lines() -> None:
    listings, report = parse_listings(_read("listings_bad_rows.csv"), path="bad.csv")
    assert [x.listing_id for x in listings] == ["ok-1", "ok-12"]
    assert report.read == 14
    assert report.accepted == 2
    assert report.rejected == {
        "bad_listing_id": 1,
        "bad_region": 2,
        "bad_category": 1,
        "bad_product_type": 1,
        "bad_list_price": 3,
        "bad_discounted_price": 2,
        "wrong_cell_count": 1,
        "duplicate_listing_id": 1,
    }
    assert _first_lines(report) == {
        "bad_listing_id": [3],
        "bad_region": [4, 14],
        "bad_category": [5],
        "bad_product_type": [6],
        "bad_list_price": [7, 8, 16],
        "bad_discounted_price": [9, 13],
        "wrong_cell_count": [10],
        "duplicate_listing_id": [11],
    }
    # the first row of a repeated id wins
    assert listings[0].region == "강남"


def test_activity_rows_are_rejected_by_reason_with_their_lines() -> None:
    activities, report = parse_activity(
        _read("activity_bad_rows.csv"), known_listings={"gn-1", "gn-2", "gn-3", "gn-4"}
    )
    assert [(a.listing_id, a.period) for a in activities] == [
        ("gn-1", "2026-05"),
        ("gn-4", "2026-06"),
    ]
    assert activities[1].booked_hours == 0.25
    assert report.read == 13
    assert _first_lines(report) == {
        "bad_period": [3, 4],
        "bad_views": [5, 13],
        "bad_bookings": [6],
        "bad_booked_hours": [7],
        # gn-m1 is unknown, but a malformed row is rejected for its format first
        "bad_available_hours": [8],
        "booked_over_available": [9],
        "duplicate_key": [10],
        "unknown_listing": [11],
        "wrong_cell_count": [12],
    }


def test_unknown_listings_are_kept_when_no_list_is_given() -> None:
    activities, report = parse_activity(_read("activity_bad_rows.csv"))
    assert ("zz-9", "2026-05") in {(a.listing_id, a.period) for a in activities}
    assert "unknown_listing" not in report.rejected


def test_a_file_that_is_not_utf8_names_path_and_line() -> None:
    with pytest.raises(SourceError) as info:
        parse_listings(_read("not_utf8.csv"), path="x/not_utf8.csv")
    assert (info.value.path, info.value.line) == ("x/not_utf8.csv", 2)
    assert "x/not_utf8.csv:2:" in str(info.value)
    assert "UTF-8" in str(info.value)


@pytest.mark.parametrize(
    ("data", "line", "words"),
    [
        (b"", 1, "empty"),
        (b"\n\n", 1, "empty"),
        (b"gn-1,2026-05,1,0,0,0\n", 1, "missing"),
        (b"listing_id,period,views,bookings,booked_hours\n", 1, "missing available_hours"),
        (b"listing_id,period,views,bookings,booked_hours,available_hours,note\n", 1, "unknown"),
        (b"listing_id,period,views,views,bookings,booked_hours,available_hours\n", 1, "repeated"),
        (b"\nlisting_id,period,views,bookings,booked_hours\n", 2, "missing"),
        (
            b"listing_id,period,views,bookings,booked_hours,available_hours\n"
            b'gn-1,2026-05,1,0,0,0\ngn-2,"2026-05,1,0,0,0\n',
            3,
            "malformed CSV",
        ),
        (
            b"listing_id,period,views,bookings,booked_hours,available_hours\n"
            b"gn-1,2026-05,1,0,0,0\ngn-\x002,2026-05,1,0,0,0\n",
            3,
            "NUL",
        ),
    ],
)
def test_unreadable_files_raise_source_error(data: bytes, line: int, words: str) -> None:
    with pytest.raises(SourceError) as info:
        parse_activity(data, path="a.csv")
    assert info.value.path == "a.csv"
    assert info.value.line == line
    assert words in str(info.value)


def test_a_quoted_cell_spanning_lines_counts_its_first_line() -> None:
    data = (
        "listing_id,region,category,product_type,list_price,discounted_price\n"
        'a-1,"강\n남",office,rental,1,\n'
        "a-2,강남,office,rental,x,\n"
    ).encode()
    _, report = parse_listings(data)
    assert _first_lines(report) == {"bad_region": [2], "bad_list_price": [4]}


def test_headers_are_the_documented_ones() -> None:
    assert ",".join(LISTING_COLUMNS) == (
        "listing_id,region,category,product_type,list_price,discounted_price"
    )
    assert ",".join(ACTIVITY_COLUMNS) == (
        "listing_id,period,views,bookings,booked_hours,available_hours"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (12000.0, "12000"),
        (9900.5, "9900.5"),
        (1e-05, "0.00001"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_format_number_is_plain_decimal(value: float, text: str) -> None:
    assert format_number(value) == text


_ID = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,20}", fullmatch=True)
_REGION = st.text(
    st.characters(codec="utf-8", categories=["L", "N", "Zs", "P"]), min_size=1, max_size=20
).filter(
    lambda s: s == s.strip() and s == __import__("unicodedata").normalize("NFC", s) and s.strip()
)
_PRICE = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
_HOURS = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def _listings(draw: st.DrawFn) -> list[Listing]:
    ids = draw(st.lists(_ID, max_size=8, unique=True))
    return [
        Listing(
            listing_id=i,
            region=draw(_REGION),
            category=draw(st.sampled_from(CATEGORIES)),
            product_type=draw(st.sampled_from(PRODUCT_TYPES)),
            list_price=draw(_PRICE),
            discounted_price=draw(st.none() | _PRICE),
        )
        for i in ids
    ]


@st.composite
def _activities(draw: st.DrawFn) -> list[Activity]:
    keys = draw(
        st.lists(
            st.tuples(_ID, st.from_regex(r"20[0-9]{2}-(0[1-9]|1[0-2])", fullmatch=True)),
            max_size=8,
            unique=True,
        )
    )
    out = []
    for listing_id, period in keys:
        a, b = sorted((draw(_HOURS), draw(_HOURS)))
        out.append(
            Activity(
                listing_id=listing_id,
                period=period,
                views=draw(st.integers(0, 10**12)),
                bookings=draw(st.integers(0, 10**12)),
                booked_hours=a,
                available_hours=b,
            )
        )
    return out


@settings(max_examples=60)
@given(_listings())
def test_listings_round_trip_through_the_file_format(listings: list[Listing]) -> None:
    parsed, report = parse_listings(format_listings(listings))
    assert parsed == listings
    assert report.read == report.accepted == len(listings)


@settings(max_examples=60)
@given(_activities())
def test_activity_round_trips_through_the_file_format(activities: list[Activity]) -> None:
    parsed, report = parse_activity(format_activity(activities))
    assert parsed == activities
    assert report.read == report.accepted == len(activities)


@settings(max_examples=100)
@given(st.binary(max_size=300))
def test_any_bytes_give_records_or_a_source_error(data: bytes) -> None:
    header = b"listing_id,period,views,bookings,booked_hours,available_hours\n"
    for blob in (data, header + data):
        try:
            activities, report = parse_activity(blob)
        except SourceError as exc:
            # a refusal of the whole file's format names no line; every other one does
            assert "not a CSV file" in str(exc) or (exc.line is not None and exc.line >= 1)
            continue
        assert report.accepted == len(activities)
        assert report.read == report.accepted + report.rejected_total
