"""The pure real-estate functions (svc_core.realestate), by property over generated
transactions: pulse rows partition the cohort, counts add up, quartiles lie between
the extremes, coverage agrees with the month rows, index rows keep one value per
series, and the queries refuse what the API refuses."""

from __future__ import annotations

import datetime
from collections import Counter
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core import convert, periods
from svc_core.cohorts import stats
from svc_core.errors import InvalidParams, InvalidPeriod
from svc_core.models import METRIC_TYPES, PROPERTY_TYPES, TRANSACTION_TYPES, Transaction
from svc_core.realestate import coverage, dimensions, freshness, indices, pulse, query, series
from svc_core.realestate.loaded import held_keys, missing_months, row_gaps
from svc_core.realestate.pulse import Deal
from tests.http.realestate_support import ALL_INDEX_FIELDS, COVERAGE_FIELDS, ROW_FIELDS

CODES = ("11680", "11110")
MONTHS = tuple(f"2025-{m:02d}" for m in range(1, 7))
SOURCES = ("rtms_official", "public_assessment")


@st.composite
def deals_(draw: st.DrawFn) -> Deal:
    """A deal; a sale may be a unit of one of two bulk contracts of its cohort and month
    (its contract id names every field the grouping rule compares), else its own."""
    ttype = draw(st.sampled_from(TRANSACTION_TYPES))
    deal = Deal(
        price=draw(st.integers(min_value=0, max_value=10**12)),
        monthly_rent=draw(st.integers(1, 10**8)) if ttype == "monthly_lease" else None,
        area=draw(st.none() | st.floats(min_value=1, max_value=5000)),
        source=draw(st.sampled_from(SOURCES)),
        sigungu_code=draw(st.sampled_from(CODES)),
        sigungu="강남구",
        dong=draw(st.none() | st.sampled_from(["역삼동", "삼성동"])),
        property_type=draw(st.sampled_from(PROPERTY_TYPES[:3])),
        transaction_type=ttype,
        month=draw(st.sampled_from(MONTHS)),
    )
    bulk = draw(st.none() | st.sampled_from(["a", "b"])) if ttype == "sale" else None
    if bulk is None:
        return deal
    fields = (deal.source, deal.sigungu_code, deal.dong, deal.property_type, deal.month)
    return deal._replace(contract_id="|".join(map(str, (bulk, *fields))))


DEALS = st.lists(deals_(), max_size=60)


def pulse_query(**params: str) -> query.PulseQuery:
    return query.parse_pulse({"sigungu_code": "11680", **params})


@settings(max_examples=80)
@given(DEALS, st.sampled_from(["sigungu", "dong"]))
def test_pulse_rows_partition_the_cohort(items: list[Deal], geo: str) -> None:
    q = pulse_query(period="2025-Q1", geo_precision=geo)
    rows = pulse.pulse_rows(items, q)
    dong_level = geo == "dong"
    chosen = [
        d
        for d in items
        if d.sigungu_code == "11680" and d.month <= "2025-03" and (d.dong or not dong_level)
    ]
    groups = Counter(
        (d.dong if dong_level else None, d.property_type, d.transaction_type) for d in chosen
    )
    contracts = Counter(
        (d.dong if dong_level else None, d.property_type, d.transaction_type)
        for d in {(d.contract_id or id(d), d.source): d for d in chosen}.values()
    )
    assert {
        (r.dong, r.property_type, r.transaction_type): (r.sample_count, r.contract_count)
        for r in rows
    } == {key: (n, contracts[key]) for key, n in groups.items() if contracts[key] >= 2}
    assert rows == sorted(rows, key=pulse.row_order)
    assert all(r.period == "2025-Q1" for r in rows)


@settings(max_examples=80)
@given(DEALS)
def test_counts_add_up_and_quartiles_lie_between_the_extremes(items: list[Deal]) -> None:
    rows = pulse.pulse_rows(items, pulse_query(period="last_6m"))
    for r in rows:
        cohort = [
            d
            for d in items
            if d.sigungu_code == "11680"
            and (d.property_type, d.transaction_type) == (r.property_type, r.transaction_type)
        ]
        totals: Counter[tuple[object, str]] = Counter()
        for d in cohort:  # a bulk contract enters with its total price
            totals[(d.contract_id or id(d), d.source)] += d.price
        prices = list(totals.values())
        assert sum(r.source_mix.values()) == r.sample_count == len(cohort)
        assert min(prices) <= r.p25_price <= r.median_price <= r.p75_price <= max(prices)
        assert min(prices) <= r.avg_price <= max(prices)
        rents = [d.monthly_rent for d in cohort if d.monthly_rent is not None]
        if rents:
            assert r.p25_monthly_rent is not None and r.p75_monthly_rent is not None
            assert min(rents) <= r.p25_monthly_rent <= r.p75_monthly_rent <= max(rents)
        else:
            assert r.median_monthly_rent is None
        assert r.confidence_factors.sample_count == r.sample_count
        assert r.bulk_contracts <= r.contract_count <= r.sample_count
        assert r.confidence_factors.contract_count == r.contract_count
        assert r.contract_count == len(totals)


@settings(max_examples=60)
@given(DEALS)
def test_series_rows_are_the_month_rows_of_each_period(items: list[Deal]) -> None:
    q = query.parse_series({"sigungu_code": "11680", "periods": ",".join(MONTHS[:3])})
    rows = series.series_rows(items, q)
    by_month = [r for m in MONTHS[:3] for r in pulse.pulse_rows(items, pulse_query(period=m))]
    assert sorted(rows, key=pulse.row_order) == sorted(by_month, key=pulse.row_order)


@settings(max_examples=40)
@given(DEALS)
def test_coverage_lists_the_months_that_have_a_pulse_row(items: list[Deal]) -> None:
    q = query.parse_coverage({"sigungu_code": "11680", "granularity": "month"})
    rows = coverage.coverage_rows(items, q)
    month_rows = {m: pulse.pulse_rows(items, pulse_query(period=m)) for m in MONTHS}
    expected = {
        (p.property_type, p.transaction_type): [
            m
            for m in MONTHS
            if any(
                (r.property_type, r.transaction_type) == (p.property_type, p.transaction_type)
                for r in month_rows[m]
            )
        ]
        for rows_of_month in month_rows.values()
        for p in rows_of_month
    }
    assert {(r.property_type, r.transaction_type): list(r.periods_with_data) for r in rows} == (
        expected
    )
    for r in rows:
        assert r.period_count == len(r.periods_with_data)
        assert (r.earliest_period, r.latest_period) == (
            r.periods_with_data[0],
            r.periods_with_data[-1],
        )
        for total, field in (
            (r.total_samples, "sample_count"),
            (r.contract_count, "contract_count"),
        ):
            assert total == sum(
                getattr(p, field)
                for m in r.periods_with_data
                for p in month_rows[m]
                if (p.property_type, p.transaction_type) == (r.property_type, r.transaction_type)
            )
        assert r.bulk_contracts == sum(
            p.bulk_contracts
            for m in r.periods_with_data
            for p in month_rows[m]
            if (p.property_type, p.transaction_type) == (r.property_type, r.transaction_type)
        )


@settings(max_examples=60)
@given(DEALS, st.sampled_from(["quarter", "month"]))
def test_coverage_of_every_district_is_ordered_busiest_first(
    items: list[Deal], granularity: str
) -> None:
    rows = coverage.coverage_rows(items, query.parse_coverage({"granularity": granularity}))
    totals = [r.total_samples for r in rows]
    assert totals == sorted(totals, reverse=True)
    assert sum(totals) <= len(items)
    assert {r.sigungu_code for r in rows} <= set(CODES)


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=12))
def test_the_median_of_periods_is_the_middle_of_the_totals(totals: list[int]) -> None:
    ordered = sorted(totals)
    n = len(ordered)
    twice = ordered[(n - 1) // 2] + ordered[n // 2]
    assert abs(2 * stats.median(totals) - twice) <= 1


VALUES = st.lists(
    st.builds(
        indices.IndexValue,
        sigungu_code=st.sampled_from(["11680", "99999"]),
        sigungu=st.just("강남구"),
        property_type=st.sampled_from(PROPERTY_TYPES),
        metric_type=st.sampled_from(METRIC_TYPES),
        period=st.sampled_from(["2025-Q1", "2025-Q2"]),
        period_end_date=st.just("2025-06-30"),
        value_pct=st.floats(min_value=-50, max_value=50),
        survey_class=st.sampled_from(["", "오피스", "중대형 상가", "소규모 상가", "일반 상가"]),
        era=st.sampled_from(["", "linked", "2024Q3~", "2022~"]),
    ),
    max_size=30,
)


@given(VALUES)
def test_index_rows_keep_one_value_per_series_and_cap_only_income_yield(
    values: list[indices.IndexValue],
) -> None:
    kept = indices.chosen_values("11680", values)
    rows = indices.index_rows("11680", kept)
    every = indices.chosen_values("11680", values, every_series=True)
    assert len(every) == len(
        {(v.property_type, v.metric_type, v.period, v.survey_class, v.era) for v in values}
    )
    keys = [(r.property_type, r.metric_type, r.period) for r in rows]
    assert (
        len(keys)
        == len(set(keys))
        == len({(v.property_type, v.metric_type, v.period) for v in values})
    )
    for r in rows:
        own = [
            v
            for v in values
            if v.sigungu_code == "11680"
            and (v.property_type, v.metric_type, v.period)
            == (r.property_type, r.metric_type, r.period)
        ]
        if own:  # the most preferred series of the code's own values, the last of equals
            best = min(indices.preference("11680", v) for v in own)
            chosen = [v for v in own if indices.preference("11680", v) == best][-1]
            assert (r.value_pct, r.survey_class or "", r.era or "") == (
                chosen.value_pct,
                chosen.survey_class,
                chosen.era,
            )
        if r.metric_type == "income_yield":
            assert r.annualized_cap_rate == round(r.value_pct * 4, 6)
        else:
            assert r.annualized_cap_rate is None


@given(DEALS)
def test_dimension_counts_add_up_to_the_samples(items: list[Deal]) -> None:
    districts = coverage.rollup_of(items, dong_level=False)
    dongs = coverage.rollup_of(items, dong_level=True)
    data, mix = dimensions.dimension_counts(districts, dongs, {"11680": "강남구"})
    total = len(items)
    for part in (data.sigungus, data.property_types, data.transaction_types):
        assert sum(v.sample_count for v in part) == total
        assert [v.sample_count for v in part] == sorted(
            (v.sample_count for v in part), reverse=True
        )
    assert sum(mix.values()) == total
    assert sum(v.sample_count for v in data.gu_dongs) == sum(1 for d in items if d.dong)


def transaction(month: int, price: int, key: str) -> Transaction:
    return Transaction(
        source="rtms_official",
        sigungu_code="11680",
        sigungu="강남구",
        dong="역삼동",
        property_type="office",
        transaction_type="sale",
        deal_date=datetime.date(2025, month, 3),
        price_krw=price,
        monthly_rent_krw=None,
        area_m2=100.0,
        natural_key=key,
    )


def test_rows_convert_to_spec_order_json() -> None:
    items = [transaction(6, 100, "a"), transaction(6, 301, "b")]
    [row] = convert.to_json(pulse.pulse_rows(items, pulse_query(period="2025-06")))
    assert tuple(row) == ROW_FIELDS
    assert row["median_price"] == 200  # (100 + 301) / 2 = 200.5, half to even
    assert row["confidence_factors"]["sample_count"] == 2
    [cov] = convert.to_json(coverage.coverage_rows(items, query.parse_coverage({})))
    assert tuple(cov) == COVERAGE_FIELDS
    assert cov["periods_with_data"] == ["2025-Q2"]
    value = indices.IndexValue(
        sigungu_code="11680",
        sigungu="강남구",
        property_type="office",
        metric_type="income_yield",
        period="2025-Q2",
        period_end_date="2025-06-30",
        value_pct=1.25,
    )
    [index] = convert.to_json(indices.index_rows("11680", [value]))
    assert tuple(index) == ALL_INDEX_FIELDS
    assert index["annualized_cap_rate"] == 5.0


def test_a_rolling_window_ends_at_the_latest_month_of_the_records() -> None:
    items = [transaction(1, 10, "a"), transaction(1, 20, "b"), transaction(9, 5, "c")]
    assert pulse.pulse_rows(items, pulse_query(period="last_3m")) == []
    assert pulse.pulse_rows(items, pulse_query(period="last_12m"))[0].sample_count == 3


# queries ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "error", "text"),
    [
        ({}, InvalidParams, "'sigungu_code' is required"),
        ({"sigungu_code": ""}, InvalidParams, "'sigungu_code' is required"),
        ({"sigungu_code": "1168"}, InvalidParams, "5-digit district code"),
        ({"sigungu_code": "１１６８０"}, InvalidParams, "5-digit district code"),
        ({"sigungu_code": "11680", "property_type": "villa"}, InvalidParams, "must be one of"),
        ({"sigungu_code": "11680", "dong": " 역삼동"}, InvalidParams, "legal dong"),
        ({"sigungu_code": "11680", "dong": "역삼동\u3000"}, InvalidParams, "legal dong"),
        ({"sigungu_code": "11680", "dong": "동" * 41}, InvalidParams, "legal dong"),
        ({"sigungu_code": "11680", "period": "2025-13"}, InvalidPeriod, "month 13"),
        ({"sigungu_code": "11680", "period": "last_5m"}, InvalidPeriod, "Invalid period"),
        ({"sigungu_code": "11680", "colour": "red"}, InvalidParams, "Unknown query parameter"),
    ],
)
def test_pulse_parameters_are_refused_as_the_api_refuses_them(
    params: dict[str, str], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        query.parse_pulse(params)


def test_the_first_malformed_parameter_in_declaration_order_is_reported() -> None:
    with pytest.raises(InvalidParams, match="sigungu_code"):
        query.parse_pulse({"sigungu_code": "x", "property_type": "villa", "period": "nope"})
    with pytest.raises(InvalidParams, match="property_type"):
        query.parse_pulse({"sigungu_code": "11680", "property_type": "villa", "period": "nope"})


def test_dong_needs_dong_precision_and_defaults_apply() -> None:
    with pytest.raises(InvalidParams, match="needs geo_precision=dong"):
        query.parse_pulse({"sigungu_code": "11680", "dong": "역삼동", "period": ""})
    plain = query.parse_pulse({"sigungu_code": "11680", "period": ""})
    assert plain.cohort.dong is None and plain.period == "last_6m"
    assert plain.cohort.geo_precision == "sigungu"
    fine = query.parse_pulse({"sigungu_code": "11680", "dong": "역삼동", "geo_precision": "dong"})
    assert fine.cohort.dong == "역삼동"
    cov = query.parse_coverage({"limit": ""})
    assert (cov.limit, cov.granularity, cov.cohort.sigungu_code) == (200, "quarter", "")
    with pytest.raises(InvalidParams, match="from 1 to 500"):
        query.parse_coverage({"limit": "501"})
    assert query.parse_indices({"sigungu_code": "11680"}).period == "last_4q"
    assert query.parse_dimensions({}).geo_precision == "sigungu"


def test_series_periods_keep_the_grammar_messages() -> None:
    with pytest.raises(InvalidPeriod, match="periods list is empty"):
        query.parse_series({"sigungu_code": "11680", "periods": ""})
    with pytest.raises(InvalidPeriod, match="not both"):
        query.parse_series(
            {"sigungu_code": "11680", "periods": "2025-01", "from_period": "2025-01"}
        )
    q = query.parse_series(
        {"sigungu_code": "11680", "from_period": "2025-Q1", "to_period": "2025-Q2"}
    )
    assert q.periods == ("2025-Q1", "2025-Q2")


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "property_type": st.sampled_from(PROPERTY_TYPES),
            "transaction_type": st.sampled_from(TRANSACTION_TYPES),
            "geo_precision": st.sampled_from(query.GEO_PRECISIONS),
            "period": st.sampled_from(["last_3m", "2025-06", "2025-Q2", ""]),
        },
    )
)
def test_valid_pulse_parameters_parse_and_echo(params: dict[str, Any]) -> None:
    q = query.parse_pulse({"sigungu_code": "11680", **params})
    echo = q.cohort.echo()
    assert echo["sigungu_code"] == "11680"
    assert echo["property_type"] == params.get("property_type")
    assert echo["geo_precision"] == params.get("geo_precision", "sigungu")
    assert q.period == (params.get("period") or "last_6m")


def test_every_declaration_has_a_description_and_ascii_pattern() -> None:
    for decls in (
        query.PULSE_PARAMS,
        query.SERIES_PARAMS,
        query.COVERAGE_PARAMS,
        query.INDICES_PARAMS,
        query.DIMENSIONS_PARAMS,
    ):
        assert len({p.name for p in decls}) == len(decls)
        for p in decls:
            assert p.description.endswith(".")
            assert p.pattern is None or p.pattern.isascii()


@settings(max_examples=60)
@given(DEALS, st.sampled_from(["last_6m", "last_3m", "2025-Q1", "2025-03"]), st.data())
def test_a_row_is_complete_exactly_when_every_month_of_its_period_is_loaded(
    items: list[Deal], period: str, data: st.DataObject
) -> None:
    """Against any set of loaded district-months (issue 28): ``months_loaded`` counts the
    period's months loaded for the row's kind, ``complete`` says they are all, and
    ``_meta.incomplete_periods`` (``missing_months``) gathers the others."""
    every = sorted(
        (kind, code, month) for kind in freshness.LOAD_KINDS for code in CODES for month in MONTHS
    )
    loaded = frozenset(data.draw(st.sets(st.sampled_from(every))))
    today = datetime.date(2030, 1, 1)
    q = pulse_query(period=period)
    rows = pulse.pulse_rows(items, q, today=today, loaded=loaded)
    window = periods.resolve_pulse_period(period, pulse.latest_month(items))
    missing: set[str] = set()
    for row in rows:
        [kind] = freshness.load_kinds(row.property_type, row.transaction_type)
        have = [m for m in window.months if (kind, "11680", m) in loaded]
        missing |= set(window.months) - set(have)
        assert (row.months_loaded, row.months_expected) == (len(have), len(window.months))
        assert row.complete == (row.months_loaded == row.months_expected)
    period_of = {m: window.label for m in window.months}
    gaps = row_gaps(rows, period_of, loaded=loaded, incomplete=())
    assert missing_months(gaps) == sorted(missing)
    # without loaded, the months the deals hold count, as a whole-file load records them
    held = held_keys(pulse.deals(items))
    assert pulse.pulse_rows(items, q, today=today) == pulse.pulse_rows(
        items, q, today=today, loaded=held
    )
    months_q1 = series.series_rows(
        items, query.parse_series({"sigungu_code": "11680", "periods": "2025-01,2025-02"})
    )
    finished = series.series_rows(
        items,
        query.parse_series({"sigungu_code": "11680", "periods": "2025-01,2025-02"}),
        today=today,
        loaded=loaded,
    )
    assert [attrs.evolve(r, **UNFINISHED) for r in finished] == months_q1
    assert all(r.months_expected == 1 for r in finished)


UNFINISHED: dict[str, Any] = {
    "complete": True,
    "provisional": False,
    "transactions_url": None,
    "months_loaded": 0,
    "months_expected": 0,
    "change_vs_previous": None,
    "change_vs_year_ago": None,
    "change_vs_previous_per_m2": None,
    "change_vs_year_ago_per_m2": None,
}
"""The fields ``finish_rows`` (and, before it, the changes over time) set, as they are
before."""
