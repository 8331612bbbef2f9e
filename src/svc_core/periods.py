"""Period grammar: calendar months, quarters, years, rolling windows and series ranges.

Labels are strict ASCII: ``YYYY-MM`` (month 01 to 12), ``YYYY-Qn`` (n 1 to 4, capital
``Q``), ``YYYY``; years run from 1990 to 2100. No whitespace, no other spellings.

Rolling windows (``last_3m``, ``last_6m``, ``last_12m``; ``last_4q``, ``last_8q``) end at
the *latest month (quarter) with data*, which the caller passes in: RTMS reports arrive up
to 30 days late, so "today" would always show an empty last month. With no data at all
(``latest`` is None) a rolling window is empty.

Every malformed input raises ``InvalidPeriod`` (400) with a message and a hint.

Long because the whole period grammar (labels, windows, series ranges) is one
language: its parsers share error messages and hints, and a reader checks one file.
"""

from __future__ import annotations

import calendar
import datetime
import functools
import re
from collections.abc import Callable
from typing import Literal

import attrs

from svc_core.errors import InvalidPeriod

# The grammar as regular expressions, for documents that describe it (the API reference);
# the parsers below are what checks a label.
YEAR_PATTERN = "(199[0-9]|20[0-9]{2}|2100)"
MONTH_PATTERN = YEAR_PATTERN + "-(0[1-9]|1[0-2])"
QUARTER_PATTERN = YEAR_PATTERN + "-Q[1-4]"
MONTH_LIST_PATTERN = f"{MONTH_PATTERN}(,{MONTH_PATTERN}){{0,11}}"
QUARTER_LIST_PATTERN = f"{QUARTER_PATTERN}(,{QUARTER_PATTERN}){{0,11}}"

MIN_YEAR = 1990
MAX_YEAR = 2100

ROLLING_MONTHS: dict[str, int] = {"last_3m": 3, "last_6m": 6, "last_12m": 12}
ROLLING_QUARTERS: dict[str, int] = {"last_4q": 4, "last_8q": 8}

PULSE_PERIOD_HINT = (
    "Use last_3m, last_6m, last_12m, YYYY-MM (e.g. 2025-06) or YYYY-Qn (e.g. 2025-Q2)."
)
INDEX_PERIOD_HINT = "Use last_4q, last_8q, YYYY-Qn (e.g. 2025-Q2) or a year YYYY (e.g. 2025)."
SERIES_HINT = (
    "Send periods=2025-01,2025-02 (comma-separated, no spaces, at most 12) or "
    "from_period=2025-Q1&to_period=2025-Q4; all periods YYYY-MM or all YYYY-Qn."
)

PulseKind = Literal["rolling", "month", "quarter", "range"]

_MONTH = re.compile(r"([0-9]{4})-([0-9]{2})")
_QUARTER = re.compile(r"([0-9]{4})-Q([0-9])")
_YEAR = re.compile(r"[0-9]{4}")


def _check_year(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or not MIN_YEAR <= value <= MAX_YEAR:
        raise ValueError(f"{attribute.name} must be an integer from {MIN_YEAR} to {MAX_YEAR}")


def _in_range(low: int, high: int) -> Callable[[object, attrs.Attribute[int], int], None]:
    def check(_: object, attribute: attrs.Attribute[int], value: int) -> None:
        if type(value) is not int or not low <= value <= high:
            raise ValueError(f"{attribute.name} must be an integer from {low} to {high}")

    return check


@attrs.frozen(kw_only=True, order=True)
class Month:
    """A calendar month; orders chronologically."""

    year: int = attrs.field(validator=_check_year)
    month: int = attrs.field(validator=_in_range(1, 12))

    @classmethod
    def of(cls, day: datetime.date) -> Month:
        """The month containing ``day``."""
        return cls(year=day.year, month=day.month)

    @property
    def label(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def index(self) -> int:
        """Months since January of year 0: consecutive months differ by one."""
        return self.year * 12 + self.month - 1

    @classmethod
    def from_index(cls, index: int) -> Month:
        return cls(year=index // 12, month=index % 12 + 1)

    @property
    def last_day(self) -> datetime.date:
        days = calendar.monthrange(self.year, self.month)[1]
        return datetime.date(self.year, self.month, days)

    @property
    def quarter(self) -> Quarter:
        return quarter_of(self)

    def shift(self, months: int) -> Month:
        """The month ``months`` later (earlier when negative)."""
        return Month.from_index(self.index + months)

    def next(self) -> Month:
        return self.shift(1)

    def prev(self) -> Month:
        return self.shift(-1)

    def __str__(self) -> str:
        return self.label


@attrs.frozen(kw_only=True, order=True)
class Quarter:
    """A calendar quarter (Q1 = January to March); orders chronologically."""

    year: int = attrs.field(validator=_check_year)
    q: int = attrs.field(validator=_in_range(1, 4))

    @property
    def label(self) -> str:
        return f"{self.year:04d}-Q{self.q}"

    @property
    def index(self) -> int:
        """Quarters since Q1 of year 0: consecutive quarters differ by one."""
        return self.year * 4 + self.q - 1

    @classmethod
    def from_index(cls, index: int) -> Quarter:
        return cls(year=index // 4, q=index % 4 + 1)

    def months(self) -> tuple[Month, Month, Month]:
        first = self.first
        return (first, first.next(), first.shift(2))

    @property
    def first(self) -> Month:
        return Month(year=self.year, month=3 * self.q - 2)

    @property
    def last(self) -> Month:
        return Month(year=self.year, month=3 * self.q)

    @property
    def end_date(self) -> datetime.date:
        return self.last.last_day

    def shift(self, quarters: int) -> Quarter:
        return Quarter.from_index(self.index + quarters)

    def next(self) -> Quarter:
        return self.shift(1)

    def prev(self) -> Quarter:
        return self.shift(-1)

    def __str__(self) -> str:
        return self.label


def quarter_of(month: Month) -> Quarter:
    """The quarter containing ``month``."""
    return Quarter(year=month.year, q=(month.month - 1) // 3 + 1)


def month_range(first: Month, last: Month) -> tuple[Month, ...]:
    """Months from ``first`` to ``last`` inclusive; empty when ``first`` is after ``last``."""
    return tuple(Month.from_index(i) for i in range(first.index, last.index + 1))


def quarter_range(first: Quarter, last: Quarter) -> tuple[Quarter, ...]:
    """Quarters from ``first`` to ``last`` inclusive; empty when ``first`` is after ``last``."""
    return tuple(Quarter.from_index(i) for i in range(first.index, last.index + 1))


def _year(text: str, whole: str, hint: str) -> int:
    year = int(text)
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise InvalidPeriod(
            f"Period {whole!r} has year {year}: years run from {MIN_YEAR} to {MAX_YEAR}.",
            hint=hint,
        )
    return year


def parse_month(text: str, *, hint: str = PULSE_PERIOD_HINT) -> Month:
    """Parse ``YYYY-MM`` strictly."""
    m = _MONTH.fullmatch(text)
    if m is None:
        raise InvalidPeriod(f"{_show(text)} is not a month of the form YYYY-MM.", hint=hint)
    year = _year(m.group(1), text, hint)
    month = int(m.group(2))
    if not 1 <= month <= 12:
        raise InvalidPeriod(f"Period {text!r} has month {m.group(2)}: use 01 to 12.", hint=hint)
    return Month(year=year, month=month)


def parse_quarter(text: str, *, hint: str = PULSE_PERIOD_HINT) -> Quarter:
    """Parse ``YYYY-Qn`` strictly (capital Q, n from 1 to 4)."""
    m = _QUARTER.fullmatch(text)
    if m is None:
        raise InvalidPeriod(f"{_show(text)} is not a quarter of the form YYYY-Qn.", hint=hint)
    year = _year(m.group(1), text, hint)
    q = int(m.group(2))
    if not 1 <= q <= 4:
        raise InvalidPeriod(f"Period {text!r} has quarter Q{q}: use Q1 to Q4.", hint=hint)
    return Quarter(year=year, q=q)


def parse_year(text: str, *, hint: str = INDEX_PERIOD_HINT) -> int:
    """Parse ``YYYY`` strictly."""
    if _YEAR.fullmatch(text) is None:
        raise InvalidPeriod(f"{_show(text)} is not a year of the form YYYY.", hint=hint)
    return _year(text, text, hint)


def parse_calendar_period(text: str, *, hint: str = SERIES_HINT) -> Month | Quarter:
    """A ``YYYY-MM`` month or a ``YYYY-Qn`` quarter."""
    if "-Q" in text:
        return parse_quarter(text, hint=hint)
    if _MONTH.fullmatch(text) is not None:
        return parse_month(text, hint=hint)
    if text in ROLLING_MONTHS or text in ROLLING_QUARTERS:
        raise InvalidPeriod(
            f"Rolling window {text!r} is not allowed here: name calendar periods.", hint=hint
        )
    raise InvalidPeriod(f"{_show(text)} is not a period of the form YYYY-MM or YYYY-Qn.", hint=hint)


def period_end_date(label: str) -> datetime.date:
    """Last day of a ``YYYY-MM``, ``YYYY-Qn`` or ``YYYY`` period."""
    if "-Q" in label:
        return parse_quarter(label).end_date
    if "-" in label:
        return parse_month(label).last_day
    return datetime.date(parse_year(label), 12, 31)


def _show(text: str) -> str:
    """Quote a user value for a message, cut to a readable length."""
    if len(text) > 40:
        return repr(text[:40]) + "..."
    return repr(text)


@attrs.frozen(kw_only=True)
class PeriodWindow:
    """A resolved pulse period.

    ``months`` are the ``YYYY-MM`` labels the window covers (oldest first; empty for a
    rolling window when there is no data at all); ``window_from``/``window_to`` are the
    first and last of them, None when empty.
    """

    label: str
    kind: PulseKind
    months: tuple[str, ...]
    window_from: str | None
    window_to: str | None


def _window(label: str, kind: PulseKind, months: tuple[Month, ...]) -> PeriodWindow:
    labels = tuple(m.label for m in months)
    return PeriodWindow(
        label=label,
        kind=kind,
        months=labels,
        window_from=labels[0] if labels else None,
        window_to=labels[-1] if labels else None,
    )


def rolling_months(label: str, latest: Month) -> tuple[Month, ...]:
    """The months of ``last_3m``/``last_6m``/``last_12m`` ending at ``latest`` inclusive
    (cut at January 1990, where the calendar starts)."""
    start = max(latest.index + 1 - ROLLING_MONTHS[label], Month(year=MIN_YEAR, month=1).index)
    return month_range(Month.from_index(start), latest)


def rolling_quarters(label: str, latest: Quarter) -> tuple[Quarter, ...]:
    """The quarters of ``last_4q``/``last_8q`` ending at ``latest`` inclusive (cut at 1990)."""
    start = max(latest.index + 1 - ROLLING_QUARTERS[label], Quarter(year=MIN_YEAR, q=1).index)
    return quarter_range(Quarter.from_index(start), latest)


@functools.lru_cache(maxsize=512)
def resolve_pulse_period(text: str, latest: Month | None) -> PeriodWindow:
    """Resolve a pulse ``period`` parameter to the months it covers.

    Remembered (the answer is immutable): every pulse call resolves the same few periods
    against the same latest month. A refusal raises and is not remembered.
    """
    if text in ROLLING_MONTHS:
        months = rolling_months(text, latest) if latest is not None else ()
        return _window(text, "rolling", months)
    if "-Q" in text:
        return _window(text, "quarter", parse_quarter(text).months())
    if _MONTH.fullmatch(text) is not None:
        return _window(text, "month", (parse_month(text),))
    raise InvalidPeriod(f"Invalid period {_show(text)}.", hint=PULSE_PERIOD_HINT)


def month_window(first: str, last: str, *, max_months: int, hint: str) -> PeriodWindow:
    """The inclusive range of months ``first``..``last`` (each ``YYYY-MM``) as a window
    labelled ``first..last``; ``InvalidPeriod`` when ``first`` is after ``last`` or the
    range holds more than ``max_months`` months (``hint`` says what to send)."""
    start, end = parse_month(first, hint=hint), parse_month(last, hint=hint)
    span = end.index - start.index + 1
    if span < 1:
        raise InvalidPeriod(f"from {first} is after to {last}.", hint=hint)
    if span > max_months:
        raise InvalidPeriod(
            f"The range {first}..{last} holds {span} months; at most {max_months} are allowed.",
            hint=hint,
        )
    return _window(f"{first}..{last}", "range", month_range(start, end))


@attrs.frozen(kw_only=True)
class IndexWindow:
    """A resolved indices period: the index period labels it covers, oldest first.

    A rolling window and ``YYYY-Qn`` cover quarter labels. A year ``YYYY`` covers the
    annual label ``YYYY`` (rows a source publishes per year) and the year's four quarters,
    so a year query finds quarterly series too.
    """

    label: str
    periods: tuple[str, ...]
    window_from: str | None
    window_to: str | None


def resolve_index_period(text: str, latest: Quarter | None) -> IndexWindow:
    """Resolve an indices ``period`` parameter (``last_4q``, ``last_8q``, ``YYYY-Qn``, ``YYYY``)."""
    if text in ROLLING_QUARTERS:
        quarters = rolling_quarters(text, latest) if latest is not None else ()
        labels = tuple(q.label for q in quarters)
        return IndexWindow(
            label=text,
            periods=labels,
            window_from=labels[0] if labels else None,
            window_to=labels[-1] if labels else None,
        )
    if "-Q" in text:
        quarter = parse_quarter(text, hint=INDEX_PERIOD_HINT)
        return IndexWindow(
            label=text, periods=(quarter.label,), window_from=quarter.label, window_to=quarter.label
        )
    if _YEAR.fullmatch(text) is not None:
        year = parse_year(text)
        year_quarters = tuple(Quarter(year=year, q=q).label for q in range(1, 5))
        return IndexWindow(
            label=text,
            periods=(text, *year_quarters),
            window_from=year_quarters[0],
            window_to=year_quarters[-1],
        )
    raise InvalidPeriod(f"Invalid period {_show(text)}.", hint=INDEX_PERIOD_HINT)


def _kind(period: Month | Quarter) -> str:
    return "month" if isinstance(period, Month) else "quarter"


def expand_series(
    periods: str | None,
    from_period: str | None,
    to_period: str | None,
    max_periods: int = 12,
) -> tuple[str, ...]:
    """The calendar periods of a pulse/series request, oldest first, without repeats.

    Exactly one of ``periods`` (a comma-separated list) and the inclusive range
    ``from_period``..``to_period`` must be given. Every period is ``YYYY-MM`` or
    ``YYYY-Qn``, all of one kind, no rolling windows, at most ``max_periods`` of them
    (counted as listed, or after expanding the range). A repeated period in a list is kept
    once. Every violation raises ``InvalidPeriod``.
    """
    has_range = from_period is not None or to_period is not None
    if periods is not None and has_range:
        raise InvalidPeriod(
            "Give either periods or from_period and to_period, not both.", hint=SERIES_HINT
        )
    if periods is not None:
        return _expand_list(periods, max_periods)
    if from_period is None and to_period is None:
        raise InvalidPeriod("Give periods, or from_period and to_period.", hint=SERIES_HINT)
    if from_period is None or to_period is None:
        missing = "from_period" if from_period is None else "to_period"
        raise InvalidPeriod(
            f"{missing} is missing: from_period and to_period go together.", hint=SERIES_HINT
        )
    return _expand_range(from_period, to_period, max_periods)


def _expand_list(periods: str, max_periods: int) -> tuple[str, ...]:
    if periods == "":
        raise InvalidPeriod("The periods list is empty.", hint=SERIES_HINT)
    items = periods.split(",")
    if len(items) > max_periods:
        raise InvalidPeriod(
            f"{len(items)} periods requested; at most {max_periods} are allowed.", hint=SERIES_HINT
        )
    parsed: list[Month | Quarter] = []
    for item in items:
        if item == "":
            raise InvalidPeriod("The periods list has an empty item.", hint=SERIES_HINT)
        parsed.append(parse_calendar_period(item))
    kinds = {_kind(p) for p in parsed}
    if len(kinds) > 1:
        raise InvalidPeriod(
            "Periods mix months and quarters: use one kind per request.", hint=SERIES_HINT
        )
    return tuple(p.label for p in sorted(set(parsed), key=lambda p: p.index))


def _expand_range(from_period: str, to_period: str, max_periods: int) -> tuple[str, ...]:
    first = parse_calendar_period(from_period)
    last = parse_calendar_period(to_period)
    if isinstance(first, Month) and isinstance(last, Month):
        span = last.index - first.index + 1
        labels: tuple[str, ...] | None = None
        if 1 <= span <= max_periods:
            labels = tuple(m.label for m in month_range(first, last))
    elif isinstance(first, Quarter) and isinstance(last, Quarter):
        span = last.index - first.index + 1
        labels = None
        if 1 <= span <= max_periods:
            labels = tuple(q.label for q in quarter_range(first, last))
    else:
        raise InvalidPeriod(
            "from_period and to_period mix a month and a quarter: use one kind.", hint=SERIES_HINT
        )
    if span < 1:
        raise InvalidPeriod(
            f"from_period {from_period} is after to_period {to_period}.", hint=SERIES_HINT
        )
    if labels is None:
        raise InvalidPeriod(
            f"The range {from_period}..{to_period} holds {span} periods; "
            f"at most {max_periods} are allowed.",
            hint=SERIES_HINT,
        )
    return labels
