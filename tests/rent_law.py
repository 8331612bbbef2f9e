"""The statutory rent-to-deposit conversion rate, restated by the tests as the law and the
Bank of Korea publish it: the oracle ``svc_core.realestate.rent_conversion`` and its bundled table
are checked against. It shares no code with svc.

주택임대차보호법 시행령 제9조: the annual rate may not exceed the lower of 10 % and the base
rate x 4 (contracts from 2014-01-01), + 3.5 %p (from 2016-11-30), + 2 %p (from
2020-09-29). 상가건물임대차보호법 시행령 제5조 (leases of every property type but
officetels): the lower of 12 % and the base rate x 4.5 (from 2014-01-01). Base rates: https://www.bok.or.kr/portal/singl/baseRate/list.do?dataSeCd=01
"""

from __future__ import annotations

import datetime
from fractions import Fraction

D = datetime.date
LAW_START = D(2014, 1, 1)
PLUS_35_FROM = D(2016, 11, 30)
PLUS_2_FROM = D(2020, 9, 29)
CHECKED_THROUGH = D(2025, 8, 28)
BASE_RATES: tuple[tuple[datetime.date, str], ...] = (
    (D(2013, 5, 9), "2.50"),
    (D(2014, 8, 14), "2.25"),
    (D(2014, 10, 15), "2.00"),
    (D(2015, 3, 12), "1.75"),
    (D(2015, 6, 11), "1.50"),
    (D(2016, 6, 9), "1.25"),
    (D(2017, 11, 30), "1.50"),
    (D(2018, 11, 30), "1.75"),
    (D(2019, 7, 18), "1.50"),
    (D(2019, 10, 16), "1.25"),
    (D(2020, 3, 17), "0.75"),
    (D(2020, 5, 28), "0.50"),
    (D(2021, 8, 26), "0.75"),
    (D(2021, 11, 25), "1.00"),
    (D(2022, 1, 14), "1.25"),
    (D(2022, 4, 14), "1.50"),
    (D(2022, 5, 26), "1.75"),
    (D(2022, 7, 13), "2.25"),
    (D(2022, 8, 25), "2.50"),
    (D(2022, 10, 12), "3.00"),
    (D(2022, 11, 24), "3.25"),
    (D(2023, 1, 13), "3.50"),
    (D(2024, 10, 11), "3.25"),
    (D(2024, 11, 28), "3.00"),
    (D(2025, 2, 25), "2.75"),
    (D(2025, 5, 29), "2.50"),
)


def base_rate(day: datetime.date) -> Fraction:
    """The base rate (percent) of the last decision in effect on ``day``."""
    return Fraction([pct for start, pct in BASE_RATES if start <= day][-1])


def statutory_rate(day: datetime.date, *, commercial: bool = False) -> Fraction | None:
    """The conversion rate (a fraction a year) for a contract dated ``day``: of a housing
    lease, or of a commercial one."""
    if day < LAW_START:
        return None
    base = base_rate(day)
    if commercial:
        return min(Fraction(12), base * Fraction("4.5")) / 100
    if day < PLUS_35_FROM:
        second = base * 4
    elif day < PLUS_2_FROM:
        second = base + Fraction("3.5")
    else:
        second = base + 2
    return min(Fraction(10), second) / 100


def converted(
    deposit: int, rent: int, day: datetime.date, *, commercial: bool = False
) -> int | None:
    """A lease's converted deposit: the deposit plus a year's rent at the rate, rounded
    half to even (Python's ``round`` of an exact fraction)."""
    if not rent:
        return deposit
    rate = statutory_rate(day, commercial=commercial)
    return None if rate is None else round(Fraction(deposit) + Fraction(12 * rent) / rate)
