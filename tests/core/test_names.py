"""Names that tell the truth (issue 28): per-area names in the answer's unit, links that
name months, building uses, and when an answer's data last changed. Properties over any
field name, unit, months, uses and change times."""

from __future__ import annotations

import string
from collections import Counter
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core import parse_pulse, pulse_rows, to_json
from svc_core.cohorts.stats import AREA_UNITS
from svc_core.errors import InvalidParams, InvalidPeriod
from svc_core.models import PROPERTY_TYPES
from svc_core.periods import Month, month_window
from svc_core.realestate import listing
from svc_core.realestate.area_names import served_name, served_names
from svc_core.realestate.building_uses import UseRow, building_use_mix, use_counts
from svc_core.realestate.common import data_as_of
from svc_core.realestate.deal_links import transactions_link
from svc_core.realestate.pulse import Deal, row_columns

NAMES = st.text(alphabet=string.ascii_lowercase + "_0123456789", min_size=1, max_size=30)
UNITS = st.sampled_from(AREA_UNITS)
MONTHS = st.builds(Month, year=st.integers(1990, 2100), month=st.integers(1, 12))
USES = st.one_of(st.none(), st.sampled_from(["업무", "기타", "숙박", "교육연구", "업무,판매"]))


# per-area names -----------------------------------------------------------------------------


@given(NAMES, UNITS)
def test_only_per_area_names_change_and_they_end_in_the_unit(name: str, unit: str) -> None:
    served = served_name(name, unit)
    if name.endswith("_per_m2"):
        assert served == name[: -len("_per_m2")] + f"_per_{unit}"
    else:
        assert served == name
    assert served_name(name, "m2") == name  # m² is the stored name


@given(st.lists(NAMES, unique=True), UNITS)
def test_renaming_keeps_names_apart(names: list[str], unit: str) -> None:
    stored = [n for n in names if not n.endswith("_per_pyeong")]  # no row has both
    assert len(set(served_names(stored, unit))) == len(stored)


def test_an_unknown_unit_is_refused() -> None:
    with pytest.raises(ValueError, match="area_unit"):
        served_name("median_price_per_m2", "acre")


def test_a_future_per_area_field_follows_the_rule() -> None:
    assert served_name("median_deposit_per_m2", "pyeong") == "median_deposit_per_pyeong"
    assert served_name("avg_area_m2", "pyeong") == "avg_area_m2"


def deal(price: int, area: float, use: str | None) -> Deal:
    return Deal(
        price=price,
        monthly_rent=None,
        area=area,
        source="rtms_official",
        sigungu_code="11680",
        sigungu="강남구",
        dong=None,
        property_type="mixed_use",
        transaction_type="sale",
        month="2025-06",
        building_use=use,
    )


@given(
    st.lists(
        st.tuples(st.integers(10**6, 10**11), st.floats(1.0, 10_000.0), USES),
        min_size=2,
        max_size=20,
    ),
    UNITS,
)
def test_served_rows_carry_only_their_units_names(
    deals: list[tuple[int, float, str | None]], unit: str
) -> None:
    query = parse_pulse({"sigungu_code": "11680", "period": "2025-06", "area_unit": unit})
    [row] = pulse_rows([deal(*d) for d in deals], query)
    assert row.area_unit == unit
    served = to_json(row)
    assert tuple(served) == row_columns(unit)
    assert "area_unit" not in served
    other = "pyeong" if unit == "m2" else "m2"
    assert not [k for k in served if k.endswith(f"_per_{other}")]
    assert served[f"median_price_per_{unit}"] == row.median_price_per_m2
    assert row.building_use_mix == building_use_mix(use for _, _, use in deals)


# building uses ------------------------------------------------------------------------------


@given(st.lists(USES))
def test_a_use_mix_counts_every_sample_once(uses: list[str | None]) -> None:
    mix = building_use_mix(uses)
    assert sum(mix.values()) == len(uses)
    assert mix.get("unknown", 0) == uses.count(None)
    assert list(mix) == sorted(mix)


@given(
    st.lists(
        st.builds(
            UseRow,
            st.sampled_from(PROPERTY_TYPES),
            st.one_of(st.just(""), USES),
            st.integers(1, 1000),
        )
    )
)
def test_use_counts_sum_rollup_rows_most_samples_first(rows: list[UseRow]) -> None:
    counted = use_counts(rows)
    expected: Counter[tuple[str, str]] = Counter()
    for r in rows:
        expected[(r.property_type, r.building_use or "unknown")] += r.samples
    assert {(c.property_type, c.value): c.sample_count for c in counted} == expected
    assert [c.sample_count for c in counted] == sorted(
        (c.sample_count for c in counted), reverse=True
    )


# links ------------------------------------------------------------------------------------


LAST = Month(year=2100, month=12)


@given(
    MONTHS,
    st.integers(0, 11),  # a row spans a month, a quarter or a rolling window of up to 12
    st.sampled_from(PROPERTY_TYPES),
    st.one_of(st.none(), st.sampled_from(["unit", "whole_building"])),
    st.one_of(st.none(), st.text(min_size=1, max_size=10).filter(lambda t: t.strip() == t)),
)
def test_a_link_names_the_first_and_last_month_and_reads_back(
    first: Month, span: int, ptype: str, btype: str | None, dong: str | None
) -> None:
    if first.index + span > LAST.index:
        return
    labels = [first.shift(n).label for n in range(span + 1)]
    link = transactions_link(
        "https://api.example.com/api/v1/real-estate/transactions",
        sigungu_code="11680",
        months=labels,
        property_type=ptype,
        transaction_type="sale",
        filters={"building_type": btype},
        dong=dong,
    )
    query = dict(parse_qsl(urlsplit(link).query, keep_blank_values=True))
    assert (query["from"], query["to"]) == (labels[0], labels[-1])
    assert "period" not in query
    assert query.get("building_type") == btype and query.get("dong") == dong
    if not dong or not dong.isprintable():
        return
    parsed = listing.parse_transactions_query(query)
    assert (parsed.month_from, parsed.month_to) == (labels[0], labels[-1])
    assert parsed.cohort.dong == dong and parsed.cohort.building_type == btype


@given(MONTHS, st.integers(0, 40))
def test_a_month_window_holds_every_month_of_its_range(first: Month, extra: int) -> None:
    if first.index + extra > LAST.index:
        return
    last = first.shift(extra)
    if extra + 1 > listing.RANGE_MAX_MONTHS:
        with pytest.raises(InvalidPeriod, match="at most"):
            month_window(first.label, last.label, max_months=listing.RANGE_MAX_MONTHS, hint="")
        return
    window = month_window(first.label, last.label, max_months=listing.RANGE_MAX_MONTHS, hint="")
    assert len(window.months) == extra + 1
    assert (window.window_from, window.window_to) == (first.label, last.label)
    assert list(window.months) == sorted(window.months)
    if extra:
        with pytest.raises(InvalidPeriod, match="after"):
            month_window(last.label, first.label, max_months=99, hint="")


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "from": st.sampled_from(["2025-01", "2025-13", ""]),
            "to": st.sampled_from(["2025-06", "2024-01"]),
            "period": st.sampled_from(["last_6m", "2025-06", ""]),
        },
    )
)
def test_from_and_to_go_together_and_never_with_a_period(extra: dict[str, str]) -> None:
    query = {"sigungu_code": "11680", **extra}
    has_range = "from" in extra or "to" in extra
    valid = not has_range or (
        extra.get("from") == "2025-01" and extra.get("to") == "2025-06" and not extra.get("period")
    )
    if valid:
        parsed = listing.parse_transactions_query(query)
        assert (parsed.month_from is None) == (not has_range)
    else:
        with pytest.raises(InvalidParams):
            listing.parse_transactions_query(query)


# when the data changed -------------------------------------------------------------------


STAMPS = st.dictionaries(
    st.sampled_from(["11110", "11680", "11140", "41190", "41192"]),
    st.integers(0, 4_000_000_000),
)


@given(STAMPS, st.lists(st.sampled_from(["11110", "11680", "11140", "41190", "41192"])))
def test_data_as_of_is_the_latest_change_of_the_answers_districts(
    changed: dict[str, int], codes: list[str]
) -> None:
    found = data_as_of(changed, codes)
    times = [changed[c] for c in codes if c in changed]
    if not times:
        assert found is None
    else:
        assert found == datetime.fromtimestamp(max(times), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    everywhere = data_as_of(changed, None)
    assert (everywhere is None) == (not changed)
    if found is not None:
        assert everywhere is not None and everywhere >= found  # ISO text sorts as time
