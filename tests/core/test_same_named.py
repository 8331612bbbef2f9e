"""SameNamed: a view copies the fields it shares by name with its source."""

from __future__ import annotations

from typing import NamedTuple

import attrs

from svc_core.same_named import SameNamed


@attrs.frozen(kw_only=True)
class _Record:
    code: str
    price: int
    month: str


class _View(NamedTuple):
    code: str
    price: int
    label: str


def test_shared_fields_are_copied_and_the_given_ones_win() -> None:
    view = SameNamed(_View, _Record)
    record = _Record(code="11680", price=7, month="2025-06")
    assert view.names == ("code", "price")
    assert view(record, label="June") == _View(code="11680", price=7, label="June")
    assert view(record, label="June", price=8).price == 8


def test_a_single_shared_field_is_copied_whole() -> None:
    @attrs.frozen
    class One:
        code: str

    assert SameNamed(One, _Record)(_Record(code="11680", price=7, month="2025-06")) == One("11680")
