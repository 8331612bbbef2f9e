"""RTMS ``cdealDay``, the cancellation date of a cancelled deal (official-apis.md §2.5:
``YY.MM.DD``, e.g. ``26.04.30``), kept on its excluded record."""

from __future__ import annotations

import datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from svc_core.sources import cancellation_date
from svc_core.sources.rtms import parse_rtms

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@given(st.dates(datetime.date(2000, 1, 1), datetime.date(2099, 12, 31)))
def test_a_published_date_reads_back_in_every_spelling(day: datetime.date) -> None:
    short = f"{day.year % 100:02d}.{day.month:02d}.{day.day:02d}"
    assert cancellation_date(short) == day
    assert cancellation_date(f" {short} ") == day
    assert cancellation_date(day.isoformat()) == day
    assert cancellation_date(day.strftime("%Y%m%d")) == day
    assert cancellation_date(day.strftime("%Y.%m.%d")) == day


@given(st.text(max_size=12))
def test_anything_else_is_no_date_and_never_an_error(text: str) -> None:
    found = cancellation_date(text)
    assert found is None or 1990 <= found.year <= 2100


def test_blank_and_impossible_dates_are_none() -> None:
    for raw in (None, "", " ", "26.02.30", "26.13.01", "2026", "O", "26-4"):
        assert cancellation_date(raw) is None
    assert cancellation_date("26.04.30") == datetime.date(2026, 4, 30)


def test_a_cancelled_item_keeps_its_cdeal_day() -> None:
    result = parse_rtms((FIXTURES / "molit" / "NRG_11680_202506.xml").read_bytes(), "commercial")
    cancelled = sorted(str(e.cancelled_on) for e in result.excluded if e.reason == "cancelled")
    assert cancelled == ["2025-06-27", "2025-07-01", "2025-07-02"]
    assert all(e.cancelled_on is None for e in result.excluded if e.reason != "cancelled")
    old = parse_rtms((FIXTURES / "rtms" / "nrg_old_korean_tags.xml").read_bytes(), "commercial")
    [dated] = [e for e in old.excluded if e.reason == "cancelled"]  # 해제사유발생일 21.04.02
    assert dated.cancelled_on == datetime.date(2021, 4, 2)
