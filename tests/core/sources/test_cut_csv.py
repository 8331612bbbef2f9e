"""A CSV file cut short (a copy killed part way) is refused by every CSV reader's row
source, ``csv_rows``: whatever the cut, the rows read are exactly the file's first rows,
never a cut one (issue 44 item 3)."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.errors import SourceError
from svc_core.sources import CUT_SHORT, csv_rows, open_quote

CELLS = st.text(alphabet='ab,"\r\n 1.', max_size=6)
ROWS = st.lists(st.lists(CELLS, min_size=1, max_size=4), min_size=1, max_size=5)


def written(rows: list[list[str]]) -> tuple[str, list[int]]:
    """The CSV text of ``rows`` as csv.writer writes it, and where each row ends."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    ends = []
    for row in rows:
        writer.writerow(row)
        ends.append(len(out.getvalue()))
    return out.getvalue(), ends


def read(text: str) -> list[list[str]]:
    return [cells for _, cells in csv_rows(text, "f.csv")]


@given(ROWS, st.data())
def test_a_cut_file_gives_whole_rows_or_is_refused(
    rows: list[list[str]], data: st.DataObject
) -> None:
    text, ends = written(rows)
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    # a row ends after its \r\n, or after its \r: the \n alone is a blank line
    boundaries = {0, *ends, *(end - 1 for end in ends)}
    if cut in boundaries:
        whole = sum(1 for end in ends if end - 1 <= cut)
        assert read(text[:cut]) == rows[:whole]
    else:
        with pytest.raises(SourceError, match="cut short"):
            read(text[:cut])


def test_the_whole_file_reads_and_the_refusal_names_the_last_line() -> None:
    assert read('a,b\r\n"x\ny",1\r\n') == [["a", "b"], ["x\ny", "1"]]
    with pytest.raises(SourceError) as cut:
        read("a,b\r\nc,1")
    assert cut.value.line == 2 and str(cut.value).endswith(CUT_SHORT)
    with pytest.raises(SourceError) as inside:
        read('a,b\r\nc,"1\r\n')
    assert inside.value.line == 2


@given(st.lists(CELLS, min_size=1, max_size=4), st.booleans(), st.data())
def test_open_quote_is_what_the_strict_csv_reader_finds_at_the_end(
    row: list[str], quote_all: bool, data: st.DataObject
) -> None:
    """Written rows hold no stray quote, so the strict reader fails on a prefix of one
    only when the prefix ends inside a quoted cell."""
    out = io.StringIO(newline="")
    csv.writer(out, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerow(row)
    text = out.getvalue()
    prefix = text[: data.draw(st.integers(min_value=0, max_value=len(text)))]
    try:
        list(csv.reader(io.StringIO(prefix, newline=""), strict=True))
    except csv.Error:
        assert open_quote(prefix)
    else:
        assert not open_quote(prefix)
