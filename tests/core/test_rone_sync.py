"""R-ONE sync, pure (``svc_core.rone_sync``): answers, table choice, eras."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import GatewayError, SourceError
from svc_core.rone_sync import (
    ERAS,
    choose_tables,
    classify,
    data_document,
    era_of,
    read_page,
)


@given(year=st.integers(1990, 2100), quarter=st.integers(1, 4))
def test_every_quarter_has_one_era_split_at_2024_q3(year: int, quarter: int) -> None:
    era = era_of(f"{year}0{quarter}")
    assert era == (ERAS[0] if (year, quarter) >= (2024, 3) else ERAS[1])


def test_years_and_malformed_periods() -> None:
    assert era_of("2023") == ERAS[1] and era_of("2024") == ERAS[0]
    assert era_of("202513") is None and era_of("2025-Q1") is None


@given(
    names=st.lists(
        st.tuples(
            st.sampled_from(["A_1", "A_2", "B_7", "C_9"]),
            st.sampled_from(
                [
                    "상업용부동산 임대동향조사 오피스 공실률",
                    "상업용부동산 임대 동향조사 투자수익률",
                    "주택가격동향조사 매매가격지수",
                    "상업용부동산 임대동향조사 표본 현황",
                ]
            ),
        ),
        max_size=8,
    )
)
def test_tables_are_chosen_by_survey_and_metric_name(names: list[tuple[str, str]]) -> None:
    chosen = choose_tables({"STATBL_ID": i, "STATBL_NM": n} for i, n in names)
    ids = [t.table_id for t in chosen]
    assert ids == sorted(set(ids))
    for table in chosen:
        squashed = table.name.replace(" ", "")
        assert "임대동향" in squashed and ("공실률" in squashed or "수익률" in squashed)
    expected = {i for i, n in names if "임대동향" in n.replace(" ", "") and "현황" not in n}
    assert set(ids) == expected


def test_answers_are_read_or_refused_by_their_code() -> None:
    rows = [{"STATBL_ID": "A_1", "DTA_VAL": 1.5}]
    page = read_page(data_document(rows), "SttsApiTblData")
    assert page.total_count == 1 and list(page.rows) == rows
    assert read_page(b'{"RESULT": {"CODE": "INFO-200"}}', "SttsApiTbl").rows == ()
    with pytest.raises(GatewayError) as refused:
        read_page(b'{"RESULT": {"CODE": "INFO-100", "MESSAGE": "key"}}', "SttsApiTbl")
    assert classify(refused.value.reason_code) == "key"
    assert classify("ERROR-337") == "limit" and classify("ERROR-500") == "retry"
    for bad in (b"<html>", b"[]", json.dumps({"SttsApiTbl": [{"row": []}]}).encode()):
        with pytest.raises(SourceError):
            read_page(bad, "SttsApiTbl")
