"""Issue 42's pure parts: rejected records counted per district-month
(``traces.rejected_rows``), the months of a listing never loaded
(``traces.unloaded_months``), the place a natural key names (``sources.key_place``), a
reader keeping its rejected records with the types it can tell, and the MCP texts with
no template holes (``narration``: nothing spoken as ``None``, a place said once, a
one-unit contract not called bulk, never-loaded and rejected months named)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from svc_core.realestate import freshness, traces
from svc_core.sources import KeyMaker, key_place
from svc_core.sources.rtms import parse_rtms
from svc_core.text import narration
from tests.http.realestate_support import FIXTURES

CODES = st.sampled_from(["11140", "11680", "41190", "?"])
MONTHS = st.sampled_from(["2025-05", "2025-06", "2025-07", "unknown"])
REASONS = st.sampled_from(["invalid_amount", "invalid_date", "invalid_rent"])


@given(st.lists(st.tuples(CODES, MONTHS, REASONS, st.integers(min_value=0, max_value=5))))
def test_rejected_rows_count_each_district_month_once(
    counts: list[tuple[str, str, str, int]],
) -> None:
    rows = traces.rejected_rows(counts)
    places = [(r["sigungu_code"], r["month"]) for r in rows]
    assert places == sorted(set(places))
    for row in rows:
        expected = [n for c, m, _, n in counts if (c, m) == (row["sigungu_code"], row["month"])]
        assert row["count"] == sum(expected) > 0
        assert sum(row["reasons"].values()) == row["count"]
        assert all(n > 0 for n in row["reasons"].values())
    assert {(c, m) for c, m, _, n in counts if n > 0} == set(places)


MONTH_LIST = ["2025-01", "2025-02", "2025-03", "2025-04"]
KINDS = list(freshness.LOAD_KINDS)


@given(
    st.sets(
        st.tuples(
            st.sampled_from(KINDS), st.sampled_from(["11680", "11140"]), st.sampled_from(MONTH_LIST)
        )
    ),
    st.lists(st.sampled_from(KINDS), min_size=1, unique=True),
)
def test_unloaded_months_are_those_with_nothing_loaded_for_the_kinds(
    loaded: set[tuple[str, str, str]], kinds: list[str]
) -> None:
    out = traces.unloaded_months("11680", MONTH_LIST, kinds, loaded)
    assert out == [m for m in MONTH_LIST if m in out]  # in order
    for month in MONTH_LIST:
        held = any((k, "11680", month) in loaded for k in kinds)
        assert (month in out) == (not held)


@given(CODES, MONTHS, st.dictionaries(st.sampled_from("abc"), st.text(max_size=5)))
def test_a_key_names_its_district_and_month(code: str, month: str, fields: dict[str, str]) -> None:
    for prefix in ("rtms:commercial", "rtms_csv:officetel-rent", "samples"):
        key = KeyMaker().key(prefix, code, month, fields)
        assert key_place(key) == (code, month)
    assert key_place("nonsense") == ("?", "unknown")


def test_a_reader_keeps_its_rejected_record_with_what_it_can_tell() -> None:
    result = parse_rtms(
        (FIXTURES / "rtms" / "nrg_11140_202506_rejected.xml").read_bytes(),
        "commercial",
        path="x.xml",
    )
    (rejected,) = result.rejected
    assert result.report.rejected == {"invalid_amount": 1}
    assert (rejected.sigungu_code, rejected.month) == ("11140", "2025-06")
    assert (rejected.property_type, rejected.transaction_type) == ("mixed_use", "sale")
    assert rejected.reason == "invalid_amount" and "27,0000000" in rejected.detail
    assert rejected.line == 2
    assert rejected.natural_key not in {t.natural_key for t in result.transactions}


MAYBE_INT = st.one_of(st.none(), st.integers(min_value=0, max_value=40))
ROW = st.fixed_dictionaries(
    {
        "sigungu_code": st.just("11680"),
        "sigungu": st.sampled_from(["강남구", "성남시 분당구"]),
        "gu": st.one_of(st.none(), st.sampled_from(["강남구", "분당구"])),
        "dong": st.one_of(st.none(), st.just("역삼동")),
        "property_type": st.just("office"),
        "transaction_type": st.just("sale"),
        "period": st.just("2025-06"),
        "sample_count": st.integers(min_value=2, max_value=50),
        "contract_count": MAYBE_INT,
        "confidence": st.just("low"),
        "median_price": st.integers(min_value=1, max_value=10**10),
        "bulk_contracts": MAYBE_INT,
        "largest_contract_units": MAYBE_INT,
        "complete": st.one_of(st.none(), st.booleans()),
        "months_loaded": MAYBE_INT,
        "months_expected": MAYBE_INT,
    }
)


@given(ROW)
def test_a_row_text_has_no_template_holes(row: dict[str, object]) -> None:
    text = narration.row_text(row)
    assert "None" not in text
    words = narration.place_name(row).split()
    assert len(words) == len(set(words))  # 강남구 강남구 역삼동 never
    if row["bulk_contracts"] and row["largest_contract_units"] is not None:
        assert f"the largest of {row['largest_contract_units']} units" in text


@given(st.integers(min_value=1, max_value=40))
def test_a_contract_of_one_unit_is_not_called_bulk(units: int) -> None:
    deal = {
        "contract_date": "2025-06-02",
        "sigungu": "강남구",
        "dong": "역삼동",
        "property_type": "office",
        "transaction_type": "sale",
        "price_krw": 10**9,
        "units": units,
    }
    text = narration.deal_text(deal)
    assert ("bulk contract" in text) == (units > 1)
    assert "of 1 units" not in text


@given(
    st.lists(st.sampled_from(MONTH_LIST), unique=True),
    st.lists(st.sampled_from(MONTH_LIST), unique=True),
    st.lists(st.integers(min_value=1, max_value=9), max_size=3),
)
def test_a_text_names_never_loaded_periods_apart_from_loaded_empty_ones(
    unloaded: list[str], missing: list[str], rejected: list[int]
) -> None:
    meta = {
        "unloaded_periods": unloaded,
        "missing_periods": missing,
        "rejected_rows": [{"month": "2025-06", "count": n} for n in rejected],
    }
    text = narration.figures_text([], meta)
    assert ("NOT LOADED: " + ", ".join(unloaded) in text) == bool(unloaded)
    loaded_empty = [p for p in missing if p not in unloaded]
    assert ("without a cohort of enough contracts" in text) == bool(loaded_empty)
    assert ("REJECTED at load" in text) == bool(rejected)
    assert "None" not in text
