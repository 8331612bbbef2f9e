"""Amounts spelled for a model (``svc_core.text.spoken``) and the MCP tools' texts
(``svc_core.text.narration``): the words read back as the amount, rounding is said, the
dispersion warning appears exactly when the spread is wide, and every empty answer has
one of the three reasons."""

from __future__ import annotations

import re
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from svc_core.text import narration, spoken

WORDS = re.compile(r"^(약 )?(-)?(?:([\d,]+)억)? ?(?:([\d,]+)만)?원$")
WON = st.integers(min_value=-(10**15), max_value=10**15)


def read_back(text: str) -> tuple[int, bool]:
    """The won (to the 만원) ``korean_amount`` words say, and whether they say ``약``."""
    found = WORDS.fullmatch(text)
    assert found, text
    about, minus, eok, man = found.groups()
    value = int((eok or "0").replace(",", "")) * spoken.EOK
    value += int((man or "0").replace(",", "")) * spoken.MAN
    return (-value if minus else value), about is not None


@given(WON)
def test_the_words_read_back_as_the_amount_to_the_nearest_man(won: int) -> None:
    text = spoken.korean_amount(won)
    if abs(won) < spoken.MAN:  # exact, in 원
        assert text == f"{'-' if won < 0 else ''}{abs(won):,}원"
        return
    value, about = read_back(text)
    assert abs(value - won) <= spoken.MAN // 2
    assert about == (won % spoken.MAN != 0)
    assert value % spoken.MAN == 0


@given(WON)
def test_the_exact_figure_stands_beside_the_words(won: int) -> None:
    text = spoken.amount(won)
    assert text.startswith(spoken.korean_amount(won) + " (")
    assert text.endswith(f"₩{abs(won):,})")
    assert ("-₩" in text) == (won < 0)


def test_known_amounts() -> None:
    assert spoken.amount(2_550_000_000) == "25억 5,000만원 (₩2,550,000,000)"
    assert spoken.korean_amount(445_000_000) == "4억 4,500만원"
    assert spoken.korean_amount(100_000_000) == "1억원"
    assert spoken.korean_amount(82_820_593_077) == "약 828억 2,059만원"
    assert spoken.korean_amount(8_000) == "8,000원"
    assert spoken.korean_amount(15_000) == "약 2만원"  # ties to even
    assert spoken.korean_amount(25_000) == "약 2만원"


@given(st.integers(min_value=0, max_value=10**12))
def test_per_pyeong_is_the_price_of_3_305785_m2(per_m2: int) -> None:
    exact = per_m2 * Fraction("3.305785")
    assert abs(spoken.per_pyeong(per_m2) - exact) <= Fraction(1, 2)
    assert spoken.per_pyeong(per_m2 + 1) >= spoken.per_pyeong(per_m2)


@given(st.integers(min_value=1, max_value=10**12), st.integers(min_value=0, max_value=10**13))
def test_the_dispersion_warning_appears_exactly_when_p75_is_3x_p25(p25: int, p75: int) -> None:
    warning = spoken.dispersion_warning(p25, p75)
    assert (warning is not None) == (p75 >= spoken.WIDE_SPREAD * p25)
    if warning:
        assert f"{float(Fraction(p75, p25)):.1f}x" in warning


def test_no_warning_without_both_quartiles() -> None:
    assert spoken.dispersion_warning(None, 10) is None
    assert spoken.dispersion_warning(0, 10) is None
    assert spoken.dispersion_warning(10, None) is None


@given(st.one_of(st.none(), st.text(max_size=30)), st.booleans())
def test_every_empty_answer_has_one_of_the_three_reasons(
    api_reason: str | None, district_known: bool
) -> None:
    reason = narration.empty_reason(api_reason, district_known)
    assert reason in narration.REASONS
    if not district_known:
        assert reason == narration.NOT_FOUND
    elif api_reason == "not_loaded":
        assert reason == narration.NOT_LOADED
    elif api_reason == "too_few_transactions":
        assert reason == narration.TOO_FEW
    else:
        assert reason == narration.NOT_FOUND


@given(
    st.sampled_from(narration.REASONS),
    st.dictionaries(
        st.sampled_from(["sigungu_code", "period", "property_type"]),
        st.text(alphabet="0123456789-Q", min_size=1, max_size=8),
    ),
)
def test_an_empty_text_says_its_reason_and_what_was_searched(
    reason: str, query: dict[str, str]
) -> None:
    text = narration.empty_text(reason, "The API's message.", query)
    assert text.startswith(f"No data (reason: {reason}): ")
    assert "The API's message." in text
    for name, value in query.items():
        assert f"{name}={value}" in text
    if not query:
        assert "Searched: no filters." in text


ROW = st.fixed_dictionaries(
    {
        "sigungu_code": st.just("11680"),
        "sigungu": st.just("강남구"),
        "property_type": st.sampled_from(["office", "retail", "officetel"]),
        "transaction_type": st.sampled_from(["sale", "monthly_lease"]),
        "period": st.sampled_from(["2025-06", "2025-Q2"]),
        "sample_count": st.integers(min_value=2, max_value=500),
        "contract_count": st.integers(min_value=2, max_value=500),
        "confidence": st.sampled_from(["low", "medium", "high"]),
        "p25_price": st.integers(min_value=1, max_value=10**11),
        "median_price": st.integers(min_value=1, max_value=10**11),
        "p75_price": st.integers(min_value=1, max_value=10**12),
        "median_price_per_m2": st.one_of(st.none(), st.integers(min_value=1, max_value=10**9)),
        "bulk_contracts": st.integers(min_value=0, max_value=5),
        "largest_contract_units": st.integers(min_value=1, max_value=40),
        "complete": st.booleans(),
        "provisional": st.booleans(),
        "months_loaded": st.integers(min_value=0, max_value=3),
        "months_expected": st.just(3),
    }
)


@given(st.lists(ROW, max_size=20), st.lists(st.sampled_from(["2025-04", "2025-05"]), max_size=2))
def test_a_figures_text_tells_each_row_and_its_warnings(
    rows: list[dict[str, object]], incomplete: list[str]
) -> None:
    meta = {
        "query": {"window_from": "2025-04", "window_to": "2025-06"},
        "incomplete_periods": incomplete,
        "data_as_of": "2026-09-21T14:13:20Z",
    }
    text = narration.figures_text(rows, meta)
    assert text.startswith(f"{len(rows)} cohorts. Months covered: 2025-04 to 2025-06.")
    assert "Data as of 2026-09-21T14:13:20Z." in text
    assert ("Incomplete periods" in text) == bool(incomplete)
    shown = rows[: narration.ROWS_SHOWN]
    for row in shown:
        line = narration.row_text(row)
        assert line in text
        assert spoken.amount(int(row["median_price"])) in line  # type: ignore[call-overload]
        assert ("INCOMPLETE" in line) == (row["complete"] is False)
        assert ("PROVISIONAL" in line) == bool(row["provisional"])
        assert ("bulk contract" in line) == bool(row["bulk_contracts"])
        wide = row["p75_price"] >= spoken.WIDE_SPREAD * row["p25_price"]  # type: ignore[operator]
        assert ("WIDE DISPERSION" in line) == wide
        if row["median_price_per_m2"] is not None and row["transaction_type"] == "sale":
            assert "평당" in line
    assert ("more rows in the structured content" in text) == (len(rows) > narration.ROWS_SHOWN)


def test_an_indices_text_states_the_survey_its_quarters_and_the_cap_rate_method() -> None:
    rows = [
        {
            "sigungu_code": "11680",
            "sigungu": "강남구",
            "property_type": "office",
            "metric_type": "income_yield",
            "period": "2025-Q2",
            "value_pct": "1.05",
            "annualized_cap_rate": "4.20",
        }
    ]
    meta = {
        "query": {"window_from": "2024-Q3", "window_to": "2025-Q2"},
        "cap_rate_method": "annualized_cap_rate = value_pct x 4 ...",
    }
    text = narration.indices_text(rows, meta)
    assert "R-ONE" in text and "quarters 2024-Q3 to 2025-Q2" in text and "era" in text
    assert "office income_yield 2025-Q2: 1.05% (annualized cap rate 4.20%)" in text
    assert text.endswith("Cap-rate method: annualized_cap_rate = value_pct x 4 ...")


def test_an_indices_text_names_each_value_s_series_and_unit() -> None:
    """A rent level is thousand won per m² and an index is points, not percentages; each
    value says the survey class and era of the table it was read from."""
    base = {"sigungu_code": "11680", "sigungu": "강남구", "property_type": "retail"}
    rows = [
        {
            **base,
            "metric_type": "rent_level",
            "period": "2025-Q1",
            "value_pct": "25.5",
            "survey_class": "중대형 상가",
            "era": "2024년3분기~",
            "floor": None,
        },
        {
            **base,
            "metric_type": "rent_index",
            "period": "2025-Q1",
            "value_pct": "101.2",
            "survey_class": "중대형 상가",
            "era": "시계열",
            "floor": None,
        },
    ]
    text = narration.indices_text(rows, {"query": {}})
    assert (
        "rent_level 2025-Q1: 25.5 thousand won per m² (천원/㎡) a month [class 중대형 상가, era 2024년3분기~]"
        in text
    )
    assert "rent_index 2025-Q1: 101.2 (index points) [class 중대형 상가, era 시계열]" in text
    assert "25.5%" not in text and "101.2%" not in text


@given(st.integers(min_value=1, max_value=10**12), st.booleans())
def test_a_page_of_deals_says_how_to_get_the_next(price: int, more: bool) -> None:
    deal = {
        "contract_date": "2025-06-03",
        "sigungu": "강남구",
        "dong": "대치동",
        "property_type": "office",
        "transaction_type": "sale",
        "building_type": "unit",
        "price_krw": price,
        "building_area_m2": 21.26,
    }
    meta = {"next_cursor": "abc"} if more else {}
    text = narration.deals_text([deal], meta)
    assert f"price {spoken.amount(price)}" in text and "21.26 m²" in text
    assert ("cursor=abc" in text) == more
    assert ("This is the last page." in text) == (not more)


def test_retired_district_codes_carry_their_validity_and_replacements() -> None:
    text = narration.regions_text(
        [
            {
                "sigungu_code": "41190",
                "full_name": "경기도 부천시",
                "full_name_roman": "Gyeonggi-do Bucheon-si",
                "in_use": False,
                "valid_from": "1988-04-23",
                "valid_to": "2024-01-01",
                "replaced_by": ["41192", "41194"],
                "replaces": [],
            }
        ]
    )
    assert text == (
        "One place matches.\n- 경기도 부천시 (Gyeonggi-do Bucheon-si): code 41190, "
        "retired: valid 1988-04-23 to 2024-01-01, replaced by 41192, 41194"
    )


def test_a_change_is_stated_with_its_contracts_and_significance() -> None:
    change = {
        "base_period": "2024-Q2",
        "change_pct": 12.0,
        "contract_count": 9,
        "base_contract_count": 7,
        "interval_low_pct": -20.5,
        "interval_high_pct": 61.25,
        "significant": False,
        "reason": None,
    }
    assert narration.change_text(change, "median price") == (
        "median price up 12 % on 2024-Q2, 9 contracts against 7: not significant "
        "(95% interval -20.5 % to 61.25 %)"
    )
    down = {**change, "change_pct": -30.0, "interval_high_pct": -4.1, "significant": True}
    assert narration.change_text(down, "median").startswith("median down 30 % on 2024-Q2")
    assert narration.change_text(down, "median").endswith(
        "significant (95% interval -20.5 % to -4.1 %)"
    )
    thin = {**change, "interval_low_pct": None, "interval_high_pct": None}
    assert narration.change_text(thin, "median").endswith(
        "not significant (too few contracts for an interval)"
    )
    unknown = {**change, "change_pct": None, "reason": "not_loaded"}
    assert narration.change_text(unknown, "median") == (
        "median change on 2024-Q2 unknown: that period was never loaded"
    )


def test_a_dong_and_a_market_area_say_what_holds_them_and_what_to_call() -> None:
    dong = {
        "sigungu_code": "11680",
        "full_name": "서울특별시 강남구",
        "full_name_roman": "Seoul Gangnam-gu",
        "in_use": True,
        "kind": "dong",
        "dong": {"dong_code": "1168010100", "name": "역삼동", "name_roman": "Yeoksamdong",
                 "in_use": True},
        "next": "/api/v1/real-estate/pulse?sigungu_code=11680&geo_precision=dong"
        "&dong=%EC%97%AD%EC%82%BC%EB%8F%99",
    }  # fmt: skip
    area = {
        "sigungu_code": "A510003",
        "full_name": "서울>도심",
        "kind": "market_area",
        "districts": ["11110", "11140"],
        "next": "/api/v1/real-estate/indices?sigungu_code=A510003",
    }
    assert narration.regions_text([dong, area]).split("\n") == [
        "2 candidates:",
        "- Legal dong 역삼동 (Yeoksamdong), code 1168010100, in 서울특별시 강남구 "
        "(Seoul Gangnam-gu): code 11680. Next: market_pulse with sigungu_code=11680, "
        "geo_precision=dong, dong=역삼동",
        "- R-ONE market area 서울>도심: code A510003, standing for districts 11110, 11140. "
        "Next: indices with sigungu_code=A510003",
    ]
